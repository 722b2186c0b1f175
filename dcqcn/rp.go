// Package dcqcn implements the host side of DCQCN (Zhu et al.,
// "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015):
// the reaction point (RP) that sets a flow's sending rate from congestion
// notification packets (CNPs), and the notification point (NP) that sends
// them when ECN-marked packets arrive. The state machines follow the paper
// (section 3.1, Figures 6 and 7) and the ConnectX description in Mellanox's
// "Understanding DC-QCN Algorithm for RoCE Congestion Control".
//
// Both are clock-agnostic: every method takes the current time and none
// reads a clock or starts a goroutine. The RP is lazy: its timers (alpha
// decay, decrease checks, rate-increase timer) are applied in time order
// when the flow next asks for its rate, so a simulator needs no event per
// flow timer and a real NIC agent can call it from its send loop.
package dcqcn

import "math"

// RP is the reaction point of one flow.
type RP struct {
	p        *Params
	lineRate float64
	rai      float64
	rhai     float64

	rate   float64 // R_C
	target float64 // R_T
	alpha  float64

	limited bool // a CNP has arrived: the rate limiter is in use

	// Alpha. In slotted mode alphaAt is the end of the last applied slot
	// and alphaCNP says a CNP arrived in the slot that follows. In the
	// paper's mode alphaAt is when the alpha timer was last restarted.
	alphaAt  int64
	alphaCNP bool

	// Slotted decrease: decreaseAt is the next check that has a CNP to act
	// on (0: none pending); decreaseOrigin aligns the checks.
	decreaseAt     int64
	decreaseOrigin int64

	// Increase: the timer's next expiry (0: stopped), the stages counted
	// since the last cut, and bytes towards the byte counter.
	timerAt   int64
	timeStage int
	byteStage int
	bytes     int64
	increased bool // an increase event happened since the last cut

	// Counters for reports.
	CNPs      int
	Cuts      int
	Increases int
}

// NewRP returns the RP of a flow on a NIC of the given line rate; the flow
// starts at line rate (DCQCN has no slow start). p must be valid and
// outlive the RP.
func NewRP(p *Params, lineRate float64) RP {
	rai, rhai := p.Steps(lineRate)
	return RP{p: p, lineRate: lineRate, rai: rai, rhai: rhai,
		rate: lineRate, target: lineRate, alpha: p.InitialAlpha}
}

// Rate is R_C after applying every timer due by now.
func (r *RP) Rate(now int64) float64 {
	r.advance(now)
	return r.rate
}

// Target is R_T after applying every timer due by now.
func (r *RP) Target(now int64) float64 {
	r.advance(now)
	return r.target
}

// Alpha is alpha as of now.
func (r *RP) Alpha(now int64) float64 {
	r.advance(now)
	if r.p.DecreaseInterval > 0 {
		r.alphaTo(now)
	} else if r.limited {
		return r.alpha * r.decay(now)
	}
	return r.alpha
}

// OnCNP handles a congestion notification arriving at now.
func (r *RP) OnCNP(now int64) {
	r.advance(now)
	r.CNPs++
	p := r.p
	if p.DecreaseInterval == 0 {
		// The paper: cut at once with the current alpha, then update alpha
		// and restart the alpha timer, the increase timer and the byte counter.
		if r.limited {
			r.alpha *= r.decay(now)
		}
		r.limited = true
		r.cut(now)
		r.alpha = (1-p.G)*r.alpha + p.G
		r.alphaAt = now
		return
	}
	// ConnectX: note the CNP for the alpha slot and the next decrease check.
	if !r.limited {
		r.limited = true
		r.alpha = p.InitialAlpha
		r.alphaAt = now
		r.alphaCNP = false // the first CNP starts the slots; it is not counted in one
		// Checks fall 1 ns after alpha slot ends so that alpha is updated first.
		r.decreaseOrigin = now + 1000
		r.decreaseAt = r.decreaseOrigin + p.DecreaseInterval
		if p.RateOnFirstCNP > 0 {
			r.rate = max(p.MinRate, p.RateOnFirstCNP*r.rate)
			r.target = r.rate
			return
		}
		// Like any other CNP: a cut at the first check.
		return
	}
	r.alphaTo(now)
	r.alphaCNP = true
	if r.decreaseAt == 0 {
		k := (now-r.decreaseOrigin)/p.DecreaseInterval + 1
		r.decreaseAt = r.decreaseOrigin + k*p.DecreaseInterval
	}
}

// OnSent counts bytes sent for the byte counter.
func (r *RP) OnSent(now int64, bytes int) {
	if r.p.ByteCounter == 0 || !r.limited {
		return
	}
	r.advance(now)
	// The byte counter, like the timer, runs from the first cut: before it
	// there is nothing to recover from.
	if r.timerAt == 0 {
		return
	}
	r.bytes += int64(bytes)
	for r.bytes >= r.p.ByteCounter {
		r.bytes -= r.p.ByteCounter
		r.increase()
		r.byteStage++
	}
}

// advance applies, in time order, the decrease checks and timer expiries
// due by now.
func (r *RP) advance(now int64) {
	for {
		next := r.timerAt
		isCut := false
		if r.decreaseAt != 0 && (next == 0 || r.decreaseAt <= next) {
			next, isCut = r.decreaseAt, true
		}
		if next == 0 || next > now {
			return
		}
		if isCut {
			r.decreaseAt = 0
			r.alphaTo(next)
			r.cut(next)
		} else {
			r.timerAt = next + r.p.Timer
			r.increase()
			r.timeStage++
		}
	}
}

// cut is the rate decrease: R_T = R_C (subject to ClampTarget),
// R_C = R_C (1 - alpha/2), and a restart of the increase machinery.
func (r *RP) cut(now int64) {
	if r.p.ClampTarget || r.increased {
		r.target = r.rate
	}
	r.rate = max(r.p.MinRate, r.rate*(1-r.alpha/2))
	r.timerAt = now + r.p.Timer
	r.timeStage, r.byteStage, r.bytes = 0, 0, 0
	r.increased = false
	r.Cuts++
}

// increase is one rate-increase event. The phase is decided by the stage
// counts before this event, as QCN does: fast recovery while both are
// below F, hyper increase once both exceed F, additive increase between.
// Without a byte counter the timer's count stands for both.
func (r *RP) increase() {
	t, b := r.timeStage, r.byteStage
	if r.p.ByteCounter == 0 {
		b = t
	}
	switch {
	case max(t, b) < r.p.F:
		// fast recovery: half way back to the target
	case min(t, b) > r.p.F:
		r.target = min(r.lineRate, r.target+r.rhai)
	default:
		r.target = min(r.lineRate, r.target+r.rai)
	}
	r.rate = (r.rate + r.target) / 2
	r.increased = true
	r.Increases++
}

// alphaTo applies the slotted alpha updates whose slots end by now.
func (r *RP) alphaTo(now int64) {
	if !r.limited {
		return
	}
	k := (now - r.alphaAt) / r.p.AlphaInterval
	if k <= 0 {
		return
	}
	g := r.p.G
	if r.alphaCNP {
		r.alpha = (1-g)*r.alpha + g
		k--
		r.alphaCNP = false
	}
	if k > 0 {
		r.alpha *= math.Pow(1-g, float64(k))
	}
	r.alphaAt += (now - r.alphaAt) / r.p.AlphaInterval * r.p.AlphaInterval
}

// decay is the paper's alpha timer: the factor (1-g)^k for the k whole
// alpha intervals since the timer was last restarted.
func (r *RP) decay(now int64) float64 {
	k := (now - r.alphaAt) / r.p.AlphaInterval
	if k <= 0 {
		return 1
	}
	return math.Pow(1-r.p.G, float64(k))
}
