//go:build linux

package agent

import (
	"sync"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/flow"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/roce"
)

// ldcpRTT is the base RTT the LDCP tests give their senders: at testRate
// a BDP of 9.9 full frames (1,086 bytes on the wire), so an initial window
// of 10 packets. The veths and the forwarder return an ACK well within a
// frame's time, so the window limits the flows only below one packet,
// where the RTT/cw timer paces them; the tests read the window's
// decisions, not the rate.
const ldcpRTT = 4300 * time.Microsecond

const ldcpIW = 10

// ldcpRig runs the tests' two agents under LDCP with the draft's
// parameters (alpha 1, beta 1/2, per-packet ACKs, IW one BDP).
func ldcpRig(t *testing.T, flows []flow.Flow, alt alter) *rig {
	t.Helper()
	p := ldcp.Draft()
	p.RefRate = testRate // times are not used by the window sender
	return newRigWith(t, func(c *Config) {
		c.LDCP = &p
		c.BaseRTT = func(int) time.Duration { return ldcpRTT }
	}, flows, alt)
}

// sent is what the forwarder saw of a data packet's first copy.
type sent struct {
	ecn    uint8
	ackReq bool
}

// watch returns an alter that records the first copy of each of host 0's
// data packets and each ACK host 1 returns, and otherwise does what then
// does (nil: pass everything).
func watch(mu *sync.Mutex, data map[uint32]sent, becn map[uint32]bool, then alter) alter {
	return func(from int, f []byte) bool {
		var p roce.Packet
		if roce.Parse(f, &p) == nil {
			mu.Lock()
			switch {
			case from == 0 && p.Opcode != roce.OpAck && p.Opcode != roce.OpCNP:
				if _, ok := data[p.PSN]; !ok {
					data[p.PSN] = sent{p.ECN, p.AckReq}
				}
			case from == 1 && p.Opcode == roce.OpAck && p.Syndrome == roce.SyndromeAck && becn != nil:
				becn[p.PSN] = becn[p.PSN] || p.BECN
			}
			mu.Unlock()
		}
		return then == nil || then(from, f)
	}
}

// window is flow id's LDCP window on host 0 now, packets.
func (r *rig) window(id int) float64 {
	a := r.agents[0]
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byQP[uint32(id)].lw.Window()
}

// TestLDCPFirstRTTNotECT: fast start's first IW packets leave Not-ECT,
// so that a WRED queue at K drops them rather than queue them, except the
// last of them, ECN-capable and asking for an ACK; every packet after
// them is ECN-capable.
func TestLDCPFirstRTTNotECT(t *testing.T) {
	var mu sync.Mutex
	data := map[uint32]sent{}
	r := ldcpRig(t, []flow.Flow{{ID: 1, Src: 0, Dst: 1, Size: 30_000}}, watch(&mu, data, nil, nil))
	res := r.wait(t, 1, 10*time.Second)[1]
	mu.Lock()
	defer mu.Unlock()
	if len(data) != 30 || res.Retransmits != 0 {
		t.Fatalf("%d packets seen, %d sent again; want 30 once each", len(data), res.Retransmits)
	}
	for psn := range uint32(30) {
		got := data[psn]
		want := sent{roce.ECT0, psn == ldcpIW-1 || psn == 29}
		if psn < ldcpIW-1 {
			want.ecn = roce.NotECT
		}
		if got != want {
			t.Errorf("packet %d: ECN %d AckReq %v; want ECN %d AckReq %v", psn, got.ecn, got.ackReq, want.ecn, want.ackReq)
		}
	}
}

// TestLDCPECEHalvesWindow: a flow of 20 packets, the last 10 marked CE on
// the way. Fast start ends at a window of IW = 10 when packet 9's ACK
// comes; the receiver echoes each mark in its ACK's BECN bit, and each
// ECE ACK takes beta = 1/2 packet off (eq. 1): ten of them, a round's
// worth, halve the window to 5. Unmarked, the window would grow.
func TestLDCPECEHalvesWindow(t *testing.T) {
	var mu sync.Mutex
	data, becn := map[uint32]sent{}, map[uint32]bool{}
	r := ldcpRig(t, []flow.Flow{{ID: 1, Src: 0, Dst: 1, Size: 20_000}}, watch(&mu, data, becn, func(from int, f []byte) bool {
		if op, n, ok := psn(f); ok && from == 0 && op != roce.OpAck && n >= ldcpIW {
			markCE(f)
		}
		return true
	}))
	res := r.wait(t, 1, 10*time.Second)[1]
	if w := r.window(1); w != ldcpIW/2 {
		t.Errorf("window %g after 10 ECE ACKs from %d; want %d", w, ldcpIW, ldcpIW/2)
	}
	if res.CNPs != 10 || res.Retransmits != 0 {
		t.Errorf("flow: %d ECE ACKs, %d retransmits; want 10 and 0", res.CNPs, res.Retransmits)
	}
	mu.Lock()
	defer mu.Unlock()
	for psn := range uint32(20) {
		if becn[psn] != (psn >= ldcpIW) {
			t.Errorf("ACK of packet %d: BECN %v, want %v", psn, becn[psn], psn >= ldcpIW)
		}
	}
}

// TestLDCPFastStartLossGoBackN drops the first copies of fast start's
// packets 3 to 6, as a WRED queue drops Not-ECT packets: the receiver
// NAKs the gap once, the sender enters the stable stage with the three
// packets acknowledged before the loss as its window and goes back to
// packet 3, and the flow completes without waiting for a timeout.
func TestLDCPFastStartLossGoBackN(t *testing.T) {
	var mu sync.Mutex
	data := map[uint32]sent{}
	dropped := map[uint32]bool{}
	drop := func(from int, f []byte) bool {
		var p roce.Packet
		if from != 0 || roce.Parse(f, &p) != nil || p.Opcode == roce.OpAck || p.PSN < 3 || p.PSN > 6 {
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		if dropped[p.PSN] {
			return true
		}
		dropped[p.PSN] = true
		return false
	}
	r := ldcpRig(t, []flow.Flow{{ID: 1, Src: 0, Dst: 1, Size: 40_000}}, watch(&mu, data, nil, drop))
	res := r.wait(t, 1, 10*time.Second)[1]
	s0, s1 := r.agents[0].Stats(), r.agents[1].Stats()
	if s1.NAKsSent != 1 || s0.Timeouts != 0 {
		t.Errorf("NAKs %d, timeouts %d; want 1 NAK and no timeout", s1.NAKsSent, s0.Timeouts)
	}
	if res.Retransmits < 4 || res.Delivered != 40_000 {
		t.Errorf("flow: %d retransmits, %d bytes delivered; want at least the 4 dropped sent again, all delivered", res.Retransmits, res.Delivered)
	}
	a := r.agents[0]
	a.mu.Lock()
	lw := a.byQP[1].lw
	a.mu.Unlock()
	if lw.NAKs != 1 || lw.Stage() != ldcp.Stable {
		t.Errorf("sender: %d go-backs, stage %v; want 1, stable", lw.NAKs, lw.Stage())
	}
	mu.Lock()
	defer mu.Unlock()
	for psn := range uint32(7) {
		if psn >= 3 && data[psn].ecn != roce.NotECT {
			t.Errorf("dropped packet %d left with ECN %d: a first-RTT packet is Not-ECT", psn, data[psn].ecn)
		}
	}
}

// ScaleLDCP is Scale's rule: times x k, the reference rate / k, bytes and
// the dimensionless settings kept.
func TestScaleLDCP(t *testing.T) {
	p := ldcp.Draft()
	p.CNPInterval = 4_000_000 // 4 us
	s, err := ScaleLDCP(p, 100e6)
	if err != nil {
		t.Fatal(err)
	}
	const k = 1000
	if s.ProbeTimeout != p.ProbeTimeout*k || s.CNPInterval != p.CNPInterval*k || s.RefRate != 100e6 {
		t.Errorf("times and rate: %+v", s)
	}
	want := s
	want.Name, want.ProbeTimeout, want.CNPInterval, want.RefRate = p.Name, p.ProbeTimeout, p.CNPInterval, p.RefRate
	if want != p {
		t.Errorf("kept fields changed:\n got %+v\nwant %+v", want, p)
	}
	if DefaultBaseRTT(100e6) != 8*time.Millisecond {
		t.Errorf("default base RTT at 100 Mb/s: %v, want 8 us x 1000", DefaultBaseRTT(100e6))
	}
	if _, err := ScaleLDCP(p, 0); err == nil {
		t.Error("a rate of 0 scaled")
	}
}
