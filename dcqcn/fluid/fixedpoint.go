package fluid

import (
	"errors"
	"fmt"
)

// FixedPointResult is the equilibrium of N identical flows, equation (10).
type FixedPointResult struct {
	N int
	// P is the marking probability at the fixed point.
	P float64
	// RC is each flow's current rate C/N and RT its target rate, bits/s.
	RC, RT float64
	// Alpha is each flow's alpha.
	Alpha float64
	// Q is the queue in bytes whose marking probability (5) is P.
	Q float64
	// Saturated is set when no queue length marks with probability P:
	// P > Pmax, where (5) jumps from Pmax to 1 at Kmax, or Kmin == Kmax
	// (cut-off marking, which knows only 0 and 1). Q is then Kmax, the
	// queue the marking curve runs out at. The delayed fluid system has no
	// resting point in that case; with PaperParams(40e9) and N >= 11 flows
	// Simulate shows the queue cycling between empty and 20-30% above
	// Kmax every 1.4-1.7 ms, with the link about 96% busy.
	Saturated bool
}

// State returns the per-flow state of the fixed point, to start Simulate
// from it.
func (f FixedPointResult) State() FlowState {
	return FlowState{RC: f.RC, RT: f.RT, Alpha: f.Alpha}
}

// FixedPoint solves equation (10) for n flows sharing the bottleneck: every
// flow at R_C = C/n and all derivatives (6)-(9) zero.
//
// With r = C/n, c = 1-(1-p)^(tau r) and the increase-event rates
// x = byte + timer and y = byte (1-p)^(F B) + timer (1-p)^(F T r), where
// byte = r p/((1-p)^(-B)-1) and timer = r p/((1-p)^(-T r)-1):
//
//	dalpha/dt = 0  gives  alpha = 1 - (1-p)^(tau' r)
//	dR_T/dt = 0    gives  R_T - r = tau R_AI y / c
//	dR_C/dt = 0    gives  r alpha c / (2 tau) = (R_T - r) x / 2
//
// and substituting the first two into the third leaves one equation in p,
//
//	h(p) = r alpha(p) c(p)^2 - tau^2 R_AI x(p) y(p) = 0.
//
// The first product rises from 0 with p and the second falls (x and y are
// decreasing in p), h(0) < 0 < h(1) = r, so the root is unique, as the
// paper states; it is found by bisection on [0, 1] to full float64
// precision. The fixed point ignores the clamp R_T <= line rate; for n = 1
// at C = line rate R_T comes out above the line rate.
func FixedPoint(p Params, n int) (FixedPointResult, error) {
	if err := p.Validate(); err != nil {
		return FixedPointResult{}, err
	}
	if n < 1 {
		return FixedPointResult{}, fmt.Errorf("fluid: %d flows, want at least 1", n)
	}
	m := newModel(p)
	r := m.c / float64(n)
	if r > m.line*(1+1e-12) {
		return FixedPointResult{}, fmt.Errorf("fluid: C/N = %g b/s exceeds the line rate %g b/s: the flows cannot fill the link",
			m.toBits(r), p.LineRate)
	}
	h := func(pr float64) (val, alpha, c, y float64) {
		s := m.signal(pr)
		c = marked(m.tau*r, s.l)
		alpha = marked(m.tauP*r, s.l)
		byteEv := r * s.byteEvents
		timerEv := runRate(m.t*r, pr, s.l) / m.t
		x := byteEv + timerEv
		y = byteEv*s.byteAI + timerEv*unmarked(m.f*m.t*r, s.l)
		return r*alpha*c*c - m.tau*m.tau*m.rai*x*y, alpha, c, y
	}
	lo, hi := 0.0, 1.0
	if v, _, _, _ := h(lo); !(v < 0) {
		return FixedPointResult{}, errors.New("fluid: h(0) >= 0, no fixed point with p > 0")
	}
	// Bisection halves [lo, hi] until the two are adjacent floats; from
	// [0, 1] that is about 60 halvings for p near 1e-3 and at most ~1100
	// for any positive double.
	for range 2200 {
		mid := lo + (hi-lo)/2
		if mid == lo || mid == hi {
			break
		}
		if v, _, _, _ := h(mid); v < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	pr := hi
	_, alpha, c, y := h(pr)
	res := FixedPointResult{
		N:     n,
		P:     pr,
		RC:    m.toBits(r),
		RT:    m.toBits(r + m.tau*m.rai*y/c),
		Alpha: alpha,
	}
	if pr > m.pmax || m.kmax == m.kmin {
		res.Q = p.Kmax
		res.Saturated = true
	} else {
		// Invert the middle branch of (5).
		res.Q = p.Kmin + pr/m.pmax*(p.Kmax-p.Kmin)
	}
	return res, nil
}
