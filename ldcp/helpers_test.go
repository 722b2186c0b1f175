package ldcp_test

import (
	"math"
	"testing"

	"github.com/p4rcm/p4rcm/ldcp"
)

// Times are picoseconds.
const (
	ns = int64(1000)
	us = int64(1_000_000)
)

// path100G is a 100 Gb/s path with an 8 us base RTT and 1000-byte
// packets: a BDP of exactly 100 packets.
var path100G = ldcp.Path{LineRate: 100e9, RTT: 8 * us, MSS: 1000}

const mss = 1000

// near reports whether a and b agree to a relative tolerance.
func near(a, b, rel float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// newSender makes a sender or fails the test.
func newSender(t testing.TB, p *ldcp.Params, path ldcp.Path) *ldcp.Sender {
	t.Helper()
	s, err := ldcp.NewSender(p, path)
	if err != nil {
		t.Fatalf("NewSender: %v", err)
	}
	return &s
}

// stable returns a draft sender in the stable stage with window cw.
func stable(t testing.TB, p *ldcp.Params, cw float64) *ldcp.Sender {
	t.Helper()
	s := newSender(t, p, path100G)
	ldcp.SetWindow(s, cw)
	return s
}

// wantWindow checks cw exactly.
func wantWindow(t *testing.T, s *ldcp.Sender, want float64) {
	t.Helper()
	if got := s.Window(); got != want {
		t.Errorf("Window() = %.17g, want %.17g", got, want)
	}
}

// sendN sends n full packets at now, failing if the window refuses one.
func sendN(t *testing.T, s *ldcp.Sender, now int64, n int) []ldcp.Packet {
	t.Helper()
	pks := make([]ldcp.Packet, 0, n)
	for i := range n {
		if !s.CanSend(now, mss) {
			t.Fatalf("packet %d of %d: CanSend = false (window %g, in flight %d)", i, n, s.Window(), s.InFlight())
		}
		pks = append(pks, s.OnSend(now, mss, false))
	}
	return pks
}
