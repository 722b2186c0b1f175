package ldcp

// RateSender is the rate-based variant of section 3.2, for a NIC whose
// RoCE transport is fixed and whose congestion control sees only CNPs and
// RTT probes. It keeps a window of cw packets and sends at cw packets per
// RTT: additive increase of alpha each time an RTT probe's response shows
// that an RTT has passed, a decrease of beta on every CNP. Below one
// packet the sub-packet rules apply (gamma per response, max(gamma,
// eta*cw) per CNP), so that the rate floor is gamma packets per RTT. One
// probe is out at a time: the next goes when the response comes back or
// ProbeTimeout passes. The flow starts at IW BDPs (line rate for IW 1),
// without fast start's marks, which a fixed transport cannot set. The
// zero RateSender is not usable; make one with NewRateSender.
type RateSender struct {
	p        *Params
	w        windows
	wireBits float64 // bits of a full packet on the wire
	lineRate float64

	cw  float64
	rtt int64 // the last probe's RTT, ps (the base RTT before the first)

	probeOut bool
	probeAt  int64 // when the outstanding probe went

	// Counters for reports.
	CNPs          int64
	Responses     int64 // probe responses that raised the window
	ProbeTimeouts int64
}

// NewRateSender returns the rate sender of a flow on the given path, at
// a window of IW BDPs (one packet if IW is 0). p must outlive it.
func NewRateSender(p *Params, path Path) (RateSender, error) {
	if err := p.Validate(); err != nil {
		return RateSender{}, err
	}
	if err := path.Validate(); err != nil {
		return RateSender{}, err
	}
	r := RateSender{p: p, w: newWindows(p, &path), wireBits: 8 * float64(path.wire()),
		lineRate: path.LineRate, rtt: path.RTT, cw: 1}
	if r.w.iw > 0 {
		r.cw = float64(r.w.iw)
	}
	return r, nil
}

// Window is cw, packets.
func (r *RateSender) Window() float64 { return r.cw }

// RTT is the RTT the rate is computed with: the last probe's, or the base
// RTT before the first response.
func (r *RateSender) RTT() int64 { return r.rtt }

// Rate is the sending rate, bits per second: cw full packets per RTT,
// capped at the line rate.
func (r *RateSender) Rate() float64 {
	return min(r.lineRate, r.cw*r.wireBits*1e12/float64(r.rtt))
}

// OnCNP takes a congestion notification at now: cw - beta with cw >= 1
// (never below gamma), max(gamma, eta*cw) below one packet.
func (r *RateSender) OnCNP(now int64) {
	r.CNPs++
	r.cw = r.p.shrink(r.cw, 1)
}

// ProbeDue reports whether an RTT probe should go at now: none is out, or
// the one out has waited ProbeTimeout for its response.
func (r *RateSender) ProbeDue(now int64) bool {
	return !r.probeOut || now-r.probeAt >= r.p.ProbeTimeout
}

// NextProbeTime is when the next probe is due: now if ProbeDue, else the
// outstanding probe's timeout.
func (r *RateSender) NextProbeTime(now int64) int64 {
	if r.ProbeDue(now) {
		return now
	}
	return r.probeAt + r.p.ProbeTimeout
}

// OnProbeSent records a probe sent at now; a probe still out is given up.
func (r *RateSender) OnProbeSent(now int64) {
	if r.probeOut && now-r.probeAt >= r.p.ProbeTimeout {
		r.ProbeTimeouts++
	}
	r.probeOut, r.probeAt = true, now
}

// OnProbeResponse takes, at now, the response to the probe sent at
// sentAt. The response to the outstanding probe sets the RTT to
// now-sentAt and adds alpha to the window (gamma below one packet); the
// response to a probe given up, or to none, is ignored.
func (r *RateSender) OnProbeResponse(now, sentAt int64) {
	if !r.probeOut || sentAt != r.probeAt || now < sentAt {
		return
	}
	r.probeOut = false
	r.rtt = max(1, now-sentAt)
	r.Responses++
	if r.cw >= 1 {
		r.cw += r.p.Alpha
	} else {
		r.cw += r.p.Gamma
	}
	r.cw = min(r.w.max, r.cw)
}
