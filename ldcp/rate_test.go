package ldcp_test

import (
	"testing"

	"github.com/p4rcm/p4rcm/ldcp"
)

func newRate(t *testing.T, p *ldcp.Params) *ldcp.RateSender {
	t.Helper()
	r, err := ldcp.NewRateSender(p, path100G)
	if err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestRateStartsAtLineRate: a window of one BDP per base RTT is the line
// rate.
func TestRateStartsAtLineRate(t *testing.T) {
	p := ldcp.Draft()
	r := newRate(t, &p)
	if r.Window() != 100 || r.Rate() != 100e9 || r.RTT() != 8*us {
		t.Errorf("window %g rate %g RTT %d, want 100 100e9 8us", r.Window(), r.Rate(), r.RTT())
	}
	p.IW = 0
	r = newRate(t, &p)
	// One 1000-byte packet per 8 us: 1 Gb/s.
	if r.Window() != 1 || r.Rate() != 1e9 {
		t.Errorf("IW 0: window %g rate %g, want 1 1e9", r.Window(), r.Rate())
	}
}

// TestRateMD: each CNP takes beta off the window; the rate is the window
// over the RTT. Below one packet a CNP halves it, down to gamma.
func TestRateMD(t *testing.T) {
	p := ldcp.Draft()
	r := newRate(t, &p)
	ldcp.SetRateWindow(r, 10)
	r.OnCNP(0)
	r.OnCNP(0)
	if r.Window() != 9 || r.Rate() != 9e9 { // 9 * 8000 bits / 8 us
		t.Errorf("after two CNPs window %g rate %g, want 9 9e9", r.Window(), r.Rate())
	}
	ldcp.SetRateWindow(r, 1.25)
	want := []float64{0.75, 0.375, 0.1875, 0.09375, 0.0625, 0.0625}
	for i, w := range want {
		r.OnCNP(0)
		if r.Window() != w {
			t.Errorf("CNP %d: window %g, want %g", i, r.Window(), w)
		}
	}
	if r.Rate() != 62.5e6 || r.CNPs != 8 {
		t.Errorf("rate at gamma %g (want 62.5e6), CNPs %d", r.Rate(), r.CNPs)
	}
}

// TestRateAI: each response to the outstanding RTT probe adds alpha (gamma
// below one packet) and sets the RTT the rate is computed with.
func TestRateAI(t *testing.T) {
	p := ldcp.Draft()
	p.Alpha = 0.5
	r := newRate(t, &p)
	ldcp.SetRateWindow(r, 10)
	t0 := 3 * us
	if !r.ProbeDue(t0) || r.NextProbeTime(t0) != t0 {
		t.Fatal("no probe due at the start")
	}
	r.OnProbeSent(t0)
	if r.ProbeDue(t0+us) || r.NextProbeTime(t0+us) != t0+p.ProbeTimeout {
		t.Error("a second probe due while one is out")
	}
	r.OnProbeResponse(t0+10*us, t0)
	if r.Window() != 10.5 || r.RTT() != 10*us || r.Rate() != 8.4e9 { // 10.5*8000/10us
		t.Errorf("after a response: window %g RTT %d rate %g, want 10.5 10us 8.4e9", r.Window(), r.RTT(), r.Rate())
	}
	if !r.ProbeDue(t0 + 10*us) {
		t.Error("no probe due after the response")
	}
	// A response to no outstanding probe, or to an old one, is ignored.
	r.OnProbeResponse(t0+11*us, t0)
	r.OnProbeSent(t0 + 20*us)
	r.OnProbeResponse(t0+25*us, t0)
	if r.Window() != 10.5 || r.Responses != 1 {
		t.Errorf("stale responses moved the window to %g", r.Window())
	}
	ldcp.SetRateWindow(r, 0.25)
	r.OnProbeResponse(t0+30*us, t0+20*us)
	if r.Window() != 0.3125 {
		t.Errorf("sub-packet AI: window %g, want 0.3125", r.Window())
	}
	// The window is capped at MaxWindow BDPs, the rate at line rate.
	ldcp.SetRateWindow(r, 199.9)
	r.OnProbeSent(t0 + 40*us)
	r.OnProbeResponse(t0+48*us, t0+40*us)
	if r.Window() != 200 || r.Rate() != 100e9 {
		t.Errorf("capped: window %g rate %g", r.Window(), r.Rate())
	}
}

// TestRateProbeTimeout: a probe without a response for ProbeTimeout is
// given up: the next one is due, with no increase.
func TestRateProbeTimeout(t *testing.T) {
	p := ldcp.Draft()
	r := newRate(t, &p)
	ldcp.SetRateWindow(r, 10)
	r.OnProbeSent(0)
	if r.ProbeDue(p.ProbeTimeout - 1) {
		t.Error("probe due before its timeout")
	}
	if !r.ProbeDue(p.ProbeTimeout) {
		t.Fatal("probe not due at its timeout")
	}
	r.OnProbeSent(p.ProbeTimeout)
	r.OnProbeResponse(p.ProbeTimeout+us, 0) // the lost probe's late response
	if r.Window() != 10 || r.ProbeTimeouts != 1 {
		t.Errorf("window %g timeouts %d, want 10 1", r.Window(), r.ProbeTimeouts)
	}
	r.OnProbeResponse(p.ProbeTimeout+9*us, p.ProbeTimeout)
	if r.Window() != 11 {
		t.Errorf("window %g, want 11", r.Window())
	}
}
