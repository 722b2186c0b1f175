package rcm

// Window is RCC's send window on one output port (paper section 3.4,
// eq. 3-6): of every W bytes the port sends, harmful flows may send W_c and
// the rest W_nc = W - W_c. Once harmful flows have sent W_c, they wait for
// the window to complete; a window completes when W bytes have gone or
// after the time W takes at line rate, so W_c/W caps the harmful flows'
// share of the port's rate. (Whether they may still go when nothing else
// waits is the scheduler's choice, see dataplane.)
//
// The first cut after RCC starts sets W_c to the harmful flows' measured
// share of what the port sent (the paper estimates W_c and W_nc from what
// each kind sent since congestion was found), so that a cut of eq. 5 by
// F_b G_d, at most a half, slows them by at most a half. While congestion
// lasts each further cut compounds, down to MinShare of W; once it is
// gone, W_c recovers half way to W per step, and RCC quits when it is
// back.
type Window struct {
	w, minWc float64
	// limit is Params.Limit: false, an ablation, lets harmful packets go
	// as if W_c were W, while W_c itself is computed as usual.
	limit  bool
	period int64 // ps: W at line rate
	gd     float64
	// Wc is the harmful flows' share of the window, bytes.
	Wc     float64
	Active bool
	// cut says W_c has been cut since RCC started: the first cut sets it
	// from the measured share.
	cut    bool
	start  int64
	sentC  float64
	sentNC float64
	// Cuts counts rate cuts, for reports.
	Cuts int
}

// NewWindow makes the window of a port of the given rate.
func NewWindow(p *Params, rate float64) Window {
	w := p.Window * rate / p.RefRate
	return Window{w: w, minWc: p.MinShare * w, period: int64(w * 8 / rate * 1e12), gd: p.Gd, Wc: w, limit: p.Limit}
}

// Start turns RCC on, if it is off, with W_c = W: nothing is held back
// until the first cut.
func (x *Window) Start(now int64) {
	if !x.Active {
		x.Active, x.Wc, x.cut = true, x.w, false
		x.begin(now)
	}
}

// Cut applies a congestion degree q (eq. 4-5), starting RCC if it is off.
// The first cut since RCC started sets W_c from share (0..1): the harmful
// flows' part of the port's traffic, measured since the congestion was
// found.
func (x *Window) Cut(now int64, q uint8, share float64) {
	x.Start(now)
	if !x.cut {
		x.Wc, x.cut = min(1, share)*x.w, true
	}
	x.Wc = max(x.minWc, x.Wc*(1-float64(q)*x.gd))
	x.Cuts++
}

// Recover moves W_c half way back to W and reports whether it is back
// (within the least share), when RCC may quit.
func (x *Window) Recover() bool {
	x.Wc += (x.w - x.Wc) / 2
	return x.w-x.Wc < x.minWc
}

// Exit ends RCC.
func (x *Window) Exit() { x.Active, x.Wc = false, x.w }

func (x *Window) begin(now int64) { x.start, x.sentC, x.sentNC = now, 0, 0 }

// roll starts a new window when the current one is complete.
func (x *Window) roll(now int64) {
	if now >= x.start+x.period || x.sentC+x.sentNC >= x.w {
		x.begin(now)
	}
}

// MayHarmful reports whether a harmful packet may go now.
func (x *Window) MayHarmful(now int64) bool {
	x.roll(now)
	return x.sentC < x.Wc || !x.limit
}

// HarmfulAt is the earliest time at or after at when a harmful packet may
// go, leaving the window as it is.
func (x *Window) HarmfulAt(at int64) int64 {
	if at >= x.start+x.period || x.sentC+x.sentNC >= x.w || x.sentC < x.Wc || !x.limit {
		return at
	}
	return x.start + x.period
}

// PreferHarmful reports whether, with both kinds waiting, the next packet
// should be harmful: it keeps the harmful share of the window near W_c/W.
func (x *Window) PreferHarmful() bool {
	return x.sentC*x.w <= x.Wc*(x.sentC+x.sentNC) || !x.limit
}

// OnSent counts a packet the port sent.
func (x *Window) OnSent(bytes float64, harmful bool) {
	if harmful {
		x.sentC += bytes
	} else {
		x.sentNC += bytes
	}
}
