package fluid

import "math"

// MarkProbability is equation (5): the probability that the bottleneck
// ECN-marks a packet when its queue holds q bytes.
func (p Params) MarkProbability(q float64) float64 {
	m := newModel(p)
	return m.mark(q / p.PacketSize)
}

// mark is equation (5) with q in packets.
func (m *model) mark(q float64) float64 {
	switch {
	case q <= m.kmin:
		return 0
	case q <= m.kmax:
		// Only reachable when kmax > kmin, so the division is safe.
		return (q - m.kmin) / (m.kmax - m.kmin) * m.pmax
	default:
		return 1
	}
}

// Every term of equations (7)-(9) is a function of (1-p)^x for some packet
// count x. Evaluating (1-p)^x as math.Pow loses all precision when p is tiny
// (1-p rounds to 1), and the increase terms divide two quantities that both
// vanish as p -> 0. So everything goes through L = -ln(1-p) = -log1p(-p),
// which is accurate for tiny p, and (1-p)^x = exp(-x L).

// logSurvival returns L = -ln(1-p) for p in [0, 1]; +Inf at p = 1.
func logSurvival(p float64) float64 {
	if p >= 1 {
		return math.Inf(1)
	}
	return -math.Log1p(-p)
}

// marked returns 1 - (1-p)^x: the probability that at least one of x
// packets is marked. It is the probability that a CNP interval tau (x =
// tau R_C) brings a CNP, and the DCTCP-style fraction that alpha follows
// (x = tau' R_C). It vanishes at p = 0 and at x = 0.
func marked(x, l float64) float64 {
	if x == 0 || l == 0 {
		return 0
	}
	return -math.Expm1(-x * l) // 1 at l = +Inf
}

// unmarked returns (1-p)^x, the probability that x packets in a row go
// unmarked.
func unmarked(x, l float64) float64 {
	if x == 0 {
		return 1 // also at p = 1, where exp(-0*Inf) would be NaN
	}
	return math.Exp(-x * l)
}

// runRate returns x p / ((1-p)^(-x) - 1). Multiplied by R_C/x it is the
// rate at which runs of x unmarked packets complete, i.e. how often a byte
// counter of x packets (x = B) or a timer of x packets' time (x = T R_C)
// expires between marks. Both numerator and denominator vanish as p -> 0
// and the ratio tends to 1: with no marks every counter of x packets
// expires once per x packets. Written as (p/L) * (u/expm1(u)) with u = x L,
// both factors are accurate for tiny p and tiny u, and the result is 0 at
// p = 1.
func runRate(x, p, l float64) float64 {
	switch {
	case p == 0:
		return 1
	case math.IsInf(l, 1):
		return 0
	}
	r := p / l // -> 1 as p -> 0
	u := x * l
	if u == 0 {
		return r
	}
	return r * u / math.Expm1(u) // expm1 overflows to +Inf for huge u: 0
}

// signal is what the bottleneck reports back: the marking probability
// p(t - tau*) with the quantities derived from it that do not depend on a
// flow's rate.
type signal struct {
	p, l       float64
	byteEvents float64 // byte-counter expiries per packet sent
	byteAI     float64 // (1-p)^(F B): the byte counter is past fast recovery
}

func (m *model) signal(p float64) signal {
	l := logSurvival(p)
	return signal{
		p:          p,
		l:          l,
		byteEvents: runRate(m.b, p, l) / m.b,
		byteAI:     unmarked(m.f*m.b, l),
	}
}

// rhs is the right-hand side of equations (7)-(9) for one flow, in packets/s
// and seconds: rc, rt, alpha are the flow's state at time t, rd its rate
// R_C(t - tau*) and s the signal p(t - tau*).
func (m *model) rhs(rc, rt, alpha, rd float64, s *signal) (dRC, dRT, dAlpha float64) {
	cnp := marked(m.tau*rd, s.l)          // P(a CNP in an interval tau)
	alphaTarget := marked(m.tauP*rd, s.l) // P(a mark in an alpha interval tau')

	// Rate-increase events per second: byte counter and timer.
	byteEv := rd * s.byteEvents
	nt := m.t * rd // packets per timer period
	timerEv := runRate(nt, s.p, s.l) / m.t
	// Additive increase happens on events that follow F unmarked periods.
	ai := m.rai * (byteEv*s.byteAI + timerEv*unmarked(m.f*nt, s.l))

	gap := rt - rc
	dAlpha = m.g / m.tauP * (alphaTarget - alpha)
	dRT = -gap/m.tau*cnp + ai
	dRC = -rc*alpha/(2*m.tau)*cnp + gap/2*(byteEv+timerEv)
	return dRC, dRT, dAlpha
}
