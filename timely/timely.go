// Package timely implements the sender of TIMELY, RTT-based congestion
// control for the datacenter (Mittal et al., SIGCOMM 2015), as the ns-3
// RDMA simulator of the HPCC paper runs it (CC_MODE 7): each data packet
// carries its send time, the receiver echoes it in the ACK, and once per
// round trip the sender compares the RTT with the last round's:
//
//	rtt < T_low                 rate + delta (+ N delta after five rises)
//	rtt > T_high                rate (1 - beta (1 - T_high / rtt))
//	gradient <= 0               rate + delta (likewise)
//	gradient > 0                rate (1 - beta gradient)
//
// where the gradient is the moving average (gain alpha) of the RTT's
// change per round, divided by the least RTT. ACKs within a round change
// nothing.
//
// The sender is clock-agnostic: OnAck takes the RTT the caller measured
// from the echoed time, none of its methods reads a clock, sleeps or
// starts a goroutine, and it allocates nothing after construction.
package timely

import (
	"math"

	"github.com/p4rcm/p4rcm/internal/preset"
)

// Params are the TIMELY settings of one NIC. Times are picoseconds, rates
// bits per second. The ns-3 simulator's names are beside each; T_low,
// T_high, alpha, beta and the least RTT are attributes of its RdmaHw that
// its configuration file does not reach.
type Params struct {
	Name string

	// Alpha is the gain of the RTT difference's moving average
	// (TimelyAlpha).
	Alpha float64
	// Beta is the multiplicative decrease factor (TimelyBeta).
	Beta float64
	// TLow and THigh bound the gradient's region: below TLow the rate
	// always rises, above THigh it always falls (TimelyTLow, TimelyTHigh).
	TLow, THigh int64
	// MinRTT normalises the gradient (TimelyMinRtt).
	MinRTT int64
	// RAI is the additive step delta and RHAI the hyper-active one, taken
	// after HAIThresh rises in a row, both at RefRate (RATE_AI, RATE_HAI;
	// the ns-3 simulator takes five rises).
	RAI, RHAI float64
	HAIThresh int
	// MinRate is the floor of the rate (MIN_RATE).
	MinRate float64
	// RefRate is the line rate RAI and RHAI are given for; ScaleWithRate
	// scales them by lineRate/RefRate, as the ns-3 simulator's run.py does
	// (RATE_AI 10 Mb/s and RATE_HAI 50 Mb/s per 10 Gb/s).
	RefRate       float64
	ScaleWithRate bool
}

const us = int64(1e6) // picoseconds

// NS3 is TIMELY as the ns-3 RDMA simulator runs it at 100 Gb/s: alpha
// 0.875, beta 0.8, T_low 50 us, T_high 500 us, least RTT 20 us, RATE_AI
// 100 Mb/s, RATE_HAI 500 Mb/s after five rises, MIN_RATE 1 Gb/s.
func NS3() Params {
	return Params{
		Name:          "ns3",
		Alpha:         0.875,
		Beta:          0.8,
		TLow:          50 * us,
		THigh:         500 * us,
		MinRTT:        20 * us,
		RAI:           100e6,
		RHAI:          500e6,
		HAIThresh:     5,
		MinRate:       1e9,
		RefRate:       100e9,
		ScaleWithRate: true,
	}
}

var presets = preset.New("TIMELY", map[string]func() Params{"ns3": NS3})

// PresetNames lists the named parameter sets in sorted order.
func PresetNames() []string { return presets.Names() }

// Preset returns a named parameter set.
func Preset(name string) (Params, error) { return presets.Get(name) }

// ParamError names the parameter Validate rejects by its scenario key.
type ParamError = preset.ParamError

// Validate checks the parameters, naming the first bad field by its
// scenario key in a *ParamError. Every check is written so that NaN fails
// it.
func (p *Params) Validate() error {
	bad := func(field string, format string, args ...any) error {
		return preset.Bad("timely", field, format, args...)
	}
	switch {
	case !(p.Alpha > 0 && p.Alpha <= 1):
		return bad("alpha", "must be in (0, 1], got %g", p.Alpha)
	case !(p.Beta > 0 && p.Beta <= 1):
		return bad("beta", "must be in (0, 1], got %g", p.Beta)
	case p.TLow <= 0:
		return bad("t_low", "must be positive")
	case p.THigh <= p.TLow:
		return bad("t_high", "must be above t_low")
	case p.MinRTT <= 0:
		return bad("min_rtt", "must be positive")
	case !(p.RAI > 0 && p.RAI < math.Inf(1)):
		return bad("rai", "must be a positive rate, got %g b/s", p.RAI)
	case !(p.RHAI > 0 && p.RHAI < math.Inf(1)):
		return bad("rhai", "must be a positive rate, got %g b/s", p.RHAI)
	case p.HAIThresh < 0:
		return bad("hai_thresh", "must not be negative, got %d", p.HAIThresh)
	case !(p.MinRate > 0 && p.MinRate < math.Inf(1)):
		return bad("min_rate", "must be a positive rate, got %g b/s", p.MinRate)
	case !(p.RefRate > 0 && p.RefRate < math.Inf(1)):
		return bad("ref_rate", "must be a positive rate, got %g b/s", p.RefRate)
	}
	return nil
}

// Sender is the TIMELY rate controller of one flow.
type Sender struct {
	p         *Params
	lineRate  float64
	rai, rhai float64
	rate      float64
	stage     int // rises in a row
	// lastUpdate is the send sequence after which the next round begins;
	// zero until the first ACK.
	lastUpdate int64
	lastRTT    int64
	rttDiff    float64
}

// NewSender returns the sender of a flow that starts at line rate.
func NewSender(p *Params, lineRate float64) Sender {
	s := Sender{p: p, lineRate: lineRate, rate: lineRate, rai: p.RAI, rhai: p.RHAI}
	if p.ScaleWithRate {
		s.rai, s.rhai = p.RAI*lineRate/p.RefRate, p.RHAI*lineRate/p.RefRate
	}
	return s
}

// Rate is the rate the flow is paced at now, bits per second.
func (s *Sender) Rate() float64 { return s.rate }

// Gradient is the normalised RTT gradient of the last round.
func (s *Sender) Gradient() float64 { return s.rttDiff / float64(s.p.MinRTT) }

// OnAck takes an ACK of everything below ackSeq whose echoed send time
// gives rtt (picoseconds), when the flow has sent everything below
// sndNxt. It returns whether the rate changed.
func (s *Sender) OnAck(ackSeq, sndNxt, rtt int64) bool {
	if ackSeq <= s.lastUpdate {
		return false // within the round
	}
	changed := false
	if s.lastUpdate != 0 {
		diff := (1-s.p.Alpha)*s.rttDiff + s.p.Alpha*float64(rtt-s.lastRTT)
		gradient := diff / float64(s.p.MinRTT)
		var r float64
		switch {
		case rtt < s.p.TLow, rtt <= s.p.THigh && gradient <= 0:
			step := s.rai
			if s.stage >= s.p.HAIThresh {
				step = s.rhai
			}
			r = math.Min(s.rate+step, s.lineRate)
			s.stage++
		case rtt > s.p.THigh:
			r = math.Max(s.p.MinRate, s.rate*(1-s.p.Beta*(1-float64(s.p.THigh)/float64(rtt))))
			s.stage = 0
		default:
			r = math.Max(s.p.MinRate, s.rate*math.Max(0, 1-s.p.Beta*gradient))
			s.stage = 0
		}
		changed = r != s.rate
		s.rate, s.rttDiff = r, diff
	}
	if sndNxt > s.lastUpdate {
		s.lastUpdate, s.lastRTT = sndNxt, rtt
	}
	return changed
}
