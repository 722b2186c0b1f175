package hpcc

// MaxHops is the most switches a telemetry stack records: five, the
// switches between two hosts of a three-tier fat tree. The ns-3 simulator
// sizes its header for five hops too and ignores a longer stack.
const MaxHops = 5

// Hop is one switch's telemetry for a data packet, written as the packet
// left the egress port.
type Hop struct {
	// Time is when the packet left, picoseconds.
	Time int64
	// TxBytes is what the port had sent before the packet, bytes on the
	// wire, all frames counted.
	TxBytes int64
	// QLen is what was queued at the port behind the packet, bytes.
	QLen int64
	// Rate is the port's line rate, bits per second.
	Rate float64
}

// Path is what a sender knows of its path.
type Path struct {
	// LineRate is the NIC's rate, bits per second: the most the sender
	// sends at.
	LineRate float64
	// BaseRTT is T, picoseconds: the span of the utilisation's moving
	// average (the ns-3 simulator's is the fabric's longest base RTT).
	BaseRTT int64
	// Window is W = B T, bytes: the queue term's scale (the ns-3
	// simulator's is the fabric's largest BDP).
	Window float64
}

// hopState is a hop's reference rate, utilisation and additive stage,
// kept with MultiRate.
type hopState struct {
	u     float64
	rc    float64
	stage int
}

// Sender is the HPCC reaction point of one flow. Its fields come in the
// order an ACK reads them: the rates and the utilisation in the first
// cache line, the units and the update's state in the second, the last
// samples in the next two, and MultiRate's per-hop state at the end, so
// that an ACK reads four lines however long the path.
type Sender struct {
	p    *Params
	path Path
	ai   float64
	rate float64 // what the NIC paces at
	rc   float64 // the reference rate of the last full update
	u    float64 // the single-rate utilisation's moving average
	// txUnit and qUnit are the telemetry's units of bytes sent and
	// queued (INTMulti applied).
	txUnit, qUnit divisor
	// lastUpdate is the send sequence after which the next full update
	// falls: an ACK beyond it means a round trip's feedback has arrived.
	// Zero until the first ACK, whose telemetry only starts the record.
	lastUpdate int64
	stage      int32 // additive increases since the last multiplicative step
	nhops      int32
	last       [MaxHops]sample // the telemetry of the last ACK, encoded
	hops       [MaxHops]hopState
}

// sample is a hop's telemetry as the ns-3 simulator's header carries it:
// whole nanoseconds, bytes sent in txUnits, bytes queued rounded down to
// a qUnit. A sender keeps the last of each hop encoded, so that an ACK
// encodes only its own.
type sample struct {
	ns, tx, qlen int64
}

// NewSender returns the sender of a flow that starts at line rate.
func NewSender(p *Params, path Path) Sender {
	s := Sender{p: p, path: path, ai: p.AI(path.LineRate), rate: path.LineRate, rc: path.LineRate, u: 1,
		txUnit: newDivisor(128 * int64(p.INTMulti)), qUnit: newDivisor(80 * int64(p.INTMulti))}
	for i := range s.hops {
		s.hops[i] = hopState{u: 1, rc: path.LineRate}
	}
	return s
}

// Rate is the rate the flow is paced at now, bits per second.
func (s *Sender) Rate() float64 { return s.rate }

// Utilisation is the single-rate utilisation estimate U (1 before any
// feedback); with MultiRate, the most utilised hop's.
func (s *Sender) Utilisation() float64 {
	if !s.p.MultiRate {
		return s.u
	}
	u := 0.0
	for i := 0; i < int(s.nhops); i++ {
		u = max(u, s.hops[i].u)
	}
	return u
}

// OnAck takes an ACK of everything below ackSeq, carrying the telemetry
// of the data packet it answers, when the flow has sent everything below
// sndNxt. It returns whether the rate changed.
func (s *Sender) OnAck(ackSeq, sndNxt int64, hops []Hop) bool {
	if ackSeq > s.lastUpdate {
		return s.update(sndNxt, hops, false)
	}
	if s.p.FastReact {
		return s.update(sndNxt, hops, true)
	}
	return false
}

// update is the ns-3 simulator's UpdateRateHp: a full update, or with
// fast a reaction that leaves the reference rates where they are.
func (s *Sender) update(sndNxt int64, hops []Hop, fast bool) bool {
	if s.lastUpdate == 0 {
		// The first feedback: nothing to take differences from yet.
		s.lastUpdate = sndNxt
		for i, h := range hops[:min(len(hops), MaxHops)] {
			s.last[i] = s.encode(h)
		}
		s.nhops = int32(min(len(hops), MaxHops))
		return false
	}
	if len(hops) > MaxHops {
		return false
	}
	T := float64(s.path.BaseRTT)
	var U float64
	var dt int64
	var updated [MaxHops]bool
	any := false
	for i, h := range hops {
		if s.p.SampleFeedback && fast && h.QLen == 0 {
			continue
		}
		old, cur := &s.last[i], s.encode(h)
		tau := (cur.ns - old.ns) * 1000
		if tau <= 0 {
			continue // no time between the two samples: nothing to rate
		}
		updated[i], any = true, true
		txRate := float64((cur.tx-old.tx)*s.txUnit.d) * 8e12 / float64(tau)
		q := float64(min(cur.qlen, old.qlen))
		u := txRate/h.Rate + q*s.path.LineRate/h.Rate/s.path.Window
		if !s.p.MultiRate {
			if u > U {
				U, dt = u, tau
			}
		} else {
			w := min(tau, s.path.BaseRTT)
			st := &s.hops[i]
			st.u = (st.u*(T-float64(w)) + u*float64(w)) / T
		}
		*old = cur
	}
	s.nhops = max(s.nhops, int32(len(hops)))
	changed := false
	if any {
		var next float64
		var nextStage int
		var perHop [MaxHops]hopState
		if !s.p.MultiRate {
			w := min(dt, s.path.BaseRTT)
			s.u = (s.u*(T-float64(w)) + U*float64(w)) / T
			next, nextStage = s.step(s.rc, int(s.stage), s.u)
		} else {
			next = s.path.LineRate
			for i := range hops {
				st := &s.hops[i]
				if updated[i] {
					perHop[i].rc, perHop[i].stage = s.step(st.rc, st.stage, st.u)
					next = min(next, perHop[i].rc)
				} else {
					next = min(next, st.rc)
				}
			}
		}
		changed = next != s.rate
		s.rate = next
		if !fast {
			s.rc, s.stage = next, int32(nextStage)
			if s.p.MultiRate {
				for i := range hops {
					if updated[i] {
						s.hops[i].rc, s.hops[i].stage = perHop[i].rc, perHop[i].stage
					}
				}
			}
		}
	}
	if !fast && sndNxt > s.lastUpdate {
		s.lastUpdate = sndNxt
	}
	return changed
}

// step is one rate decision from reference rate rc at additive stage
// stage and utilisation u: multiplicative towards eta when u is at or
// above it or after MIThresh additive steps, else additive; bounded by
// MinRate and the line rate.
func (s *Sender) step(rc float64, stage int, u float64) (float64, int) {
	c := u / s.p.Eta
	var r float64
	if c >= 1 || stage >= s.p.MIThresh {
		r, stage = rc/c+s.ai, 0
	} else {
		r, stage = rc+s.ai, stage+1
	}
	// Bounded by compares, not the builtins, which on every ACK spend
	// twenty instructions on NaN and signed zeros: r is never either
	// here, and a NaN would pass through both forms alike.
	if r < s.p.MinRate {
		r = s.p.MinRate
	}
	if r > s.path.LineRate {
		r = s.path.LineRate
	}
	return r, stage
}

// encode is h as the ns-3 simulator's header carries it.
func (s *Sender) encode(h Hop) sample {
	return sample{ns: h.Time / 1000, tx: s.txUnit.div(h.TxBytes), qlen: s.qUnit.div(h.QLen) * s.qUnit.d}
}
