// Package dctcp implements DCTCP for RDMA as the ns-3 RDMA simulator of
// the HPCC paper runs it (CC_MODE 8): the rate-based adaptation of DCTCP
// (Alizadeh et al., SIGCOMM 2010) in which switches mark packets above a
// queue threshold, the receiver echoes each mark on its ACK, and the
// sender keeps the fraction F of marked packets per window in a moving
// average alpha = (1 - g) alpha + g F. The first marked ACK of a window
// cuts the rate by alpha/2 and starts a congestion-window-reduced state
// that lasts until what was in flight at the cut is acknowledged; every
// window without a cut adds DCTCP_RATE_AI (one MTU per RTT as a rate).
//
// The sender is clock-agnostic: it takes ACKs as they come, none of its
// methods reads a clock, sleeps or starts a goroutine, and it allocates
// nothing after construction.
package dctcp

import (
	"math"

	"github.com/p4rcm/p4rcm/internal/preset"
)

// Params are the DCTCP settings of one NIC, with the ns-3 simulator's
// names beside each, and the step marking its switches apply. Rates are
// bits per second, sizes bytes.
type Params struct {
	Name string

	// G is alpha's gain (EWMA_GAIN; 1/16).
	G float64
	// RAI is the additive increase per window (DCTCP_RATE_AI).
	RAI float64
	// MinRate is the floor of the rate (MIN_RATE).
	MinRate float64

	// KMin, KMax (bytes at RefRate) and PMax are the marking curve the
	// switches apply (KMIN_MAP, KMAX_MAP, PMAX_MAP); DCTCP marks every
	// packet above one threshold, KMin = KMax with PMax 1.
	KMin, KMax float64
	PMax       float64
	RefRate    float64
}

const kb = 1000.0

// NS3 is DCTCP as the ns-3 RDMA simulator's run.py configures it at 100
// Gb/s: g = 1/16, DCTCP_RATE_AI 615 Mb/s (one 1 KB packet per 13 us RTT),
// MIN_RATE 1 Gb/s, marking every packet above 300 KB of queue (30 KB per
// 10 Gb/s).
func NS3() Params {
	return Params{
		Name:    "ns3",
		G:       1.0 / 16,
		RAI:     615e6,
		MinRate: 1e9,
		KMin:    300 * kb,
		KMax:    300 * kb,
		PMax:    1,
		RefRate: 100e9,
	}
}

var presets = preset.New("DCTCP", map[string]func() Params{"ns3": NS3})

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
		return preset.Bad("dctcp", field, format, args...)
	}
	switch {
	case !(p.G > 0 && p.G <= 1):
		return bad("g", "must be in (0, 1], got %g", p.G)
	case !(p.RAI > 0 && p.RAI < math.Inf(1)):
		return bad("rai", "must be a positive rate, got %g b/s", p.RAI)
	case !(p.MinRate > 0 && p.MinRate < math.Inf(1)):
		return bad("min_rate", "must be a positive rate, got %g b/s", p.MinRate)
	case !(p.KMin >= 0 && p.KMin < math.Inf(1)):
		return bad("kmin", "must be a finite number of bytes, 0 or more, got %g", p.KMin)
	case !(p.KMax >= p.KMin && p.KMax < math.Inf(1)):
		return bad("kmax", "must be finite and at least kmin (%g), got %g", p.KMin, p.KMax)
	case !(p.PMax > 0 && p.PMax <= 1):
		return bad("pmax", "must be in (0, 1], got %g", p.PMax)
	case !(p.RefRate > 0 && p.RefRate < math.Inf(1)):
		return bad("ref_rate", "must be a positive rate, got %g b/s", p.RefRate)
	}
	return nil
}

// Sender is the DCTCP rate controller of one flow.
type Sender struct {
	p        *Params
	lineRate float64
	mtu      int64
	rate     float64
	alpha    float64
	// lastUpdate is the send sequence that ends the window alpha is being
	// counted over; zero until the first ACK.
	lastUpdate int64
	marked     int // marked ACKs in the window
	batch      int // packets the window holds
	// cwr is the congestion-window-reduced state, which lasts until
	// everything below highSeq is acknowledged.
	cwr     bool
	highSeq int64
}

// NewSender returns the sender of a flow that starts at line rate with
// alpha 1, sending packets of mtu bytes of payload.
func NewSender(p *Params, lineRate float64, mtu int) Sender {
	return Sender{p: p, lineRate: lineRate, mtu: int64(mtu), rate: lineRate, alpha: 1}
}

// Rate is the rate the flow is paced at now, bits per second.
func (s *Sender) Rate() float64 { return s.rate }

// Alpha is the moving average of the marked fraction.
func (s *Sender) Alpha() float64 { return s.alpha }

// OnAck takes an ACK of everything below ackSeq that echoes a mark (ce)
// or not, when the flow has sent everything below sndNxt. It returns
// whether the rate changed.
func (s *Sender) OnAck(ackSeq, sndNxt int64, ce bool) bool {
	if ce {
		s.marked++
	}
	newWindow := false
	if ackSeq > s.lastUpdate {
		newWindow = true
		if s.lastUpdate != 0 {
			f := math.Min(1, float64(s.marked)/float64(s.batch))
			s.alpha = (1-s.p.G)*s.alpha + s.p.G*f
			s.marked = 0
			s.batch = int((sndNxt-ackSeq)/s.mtu) + 1
		} else {
			s.batch = int(sndNxt/s.mtu) + 1
		}
		s.lastUpdate = sndNxt
	}
	if s.cwr && ackSeq > s.highSeq {
		s.cwr = false
	}
	old := s.rate
	if ce && !s.cwr {
		s.rate = math.Max(s.p.MinRate, s.rate*(1-s.alpha/2))
		s.cwr, s.highSeq = true, sndNxt
	}
	if !s.cwr && newWindow {
		s.rate = math.Min(s.lineRate, s.rate+s.p.RAI)
	}
	return s.rate != old
}
