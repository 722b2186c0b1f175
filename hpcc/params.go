package hpcc

import (
	"math"

	"github.com/p4rcm/p4rcm/internal/preset"
)

// Params are the HPCC settings of one NIC, each with the name the ns-3
// RDMA simulator's configuration file gives it. Rates are bits per
// second.
type Params struct {
	Name string

	// Eta is the target utilisation of the most utilised hop (U_TARGET;
	// the paper's eta, 0.95).
	Eta float64
	// MIThresh is how many additive increases may follow one another while
	// the utilisation stays below Eta before a multiplicative step is
	// taken (MI_THRESH; the paper's maxStage). Zero makes every full
	// update multiplicative, as the ns-3 runs of the paper do.
	MIThresh int
	// RAI is the additive increase W_AI as a rate, at RefRate (RATE_AI).
	RAI float64
	// MinRate is the floor of the rate (MIN_RATE).
	MinRate float64
	// RefRate is the line rate RAI is given for; ScaleWithRate scales it by
	// lineRate/RefRate, as the ns-3 simulator's run.py does (RATE_AI = 10
	// Mb/s per 25 Gb/s).
	RefRate       float64
	ScaleWithRate bool
	// FastReact adjusts the rate on every ACK from the reference rate of
	// the last full update (FAST_REACT), rather than only once per RTT.
	FastReact bool
	// SampleFeedback ignores, in fast reactions, hops whose queue is empty
	// (SAMPLE_FEEDBACK).
	SampleFeedback bool
	// MultiRate keeps a reference rate and a utilisation per hop and sends
	// at the least of the hops' rates (MULTI_RATE); without it one
	// utilisation, the most utilised hop's, drives one rate.
	MultiRate bool
	// INTMulti scales the units of the telemetry's byte and queue fields
	// (INT_MULTI): 128 x INTMulti bytes sent and 80 x INTMulti bytes
	// queued per unit, so that faster links fit the fields' widths.
	INTMulti int
}

// NS3 is the HPCC configuration of the ns-3 RDMA simulator's run.py as
// the HPCC paper ran it at 100 Gb/s ("hp95"): eta 0.95, MI_THRESH 0,
// RATE_AI 40 Mb/s (10 Mb/s per 25 Gb/s), MIN_RATE 1 Gb/s, FAST_REACT 1,
// SAMPLE_FEEDBACK 0, MULTI_RATE 0 and INT_MULTI 4 (1 per 25 Gb/s).
func NS3() Params {
	return Params{
		Name:          "ns3",
		Eta:           0.95,
		MIThresh:      0,
		RAI:           40e6,
		MinRate:       1e9,
		RefRate:       100e9,
		ScaleWithRate: true,
		FastReact:     true,
		INTMulti:      4,
	}
}

// Paper is NS3 with the paper's maxStage of 5 additive increases before a
// multiplicative one (section 3.3, "MI_THRESH 5").
func Paper() Params {
	p := NS3()
	p.Name = "paper"
	p.MIThresh = 5
	return p
}

var presets = preset.New("HPCC", map[string]func() Params{"ns3": NS3, "paper": Paper})

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
		return preset.Bad("hpcc", field, format, args...)
	}
	switch {
	case !(p.Eta > 0 && p.Eta <= 1):
		return bad("eta", "must be in (0, 1], got %g (the paper uses 0.95)", p.Eta)
	case p.MIThresh < 0:
		return bad("mi_thresh", "must not be negative, got %d", p.MIThresh)
	case !(p.RAI > 0 && p.RAI < math.Inf(1)):
		return bad("rai", "must be a positive rate, got %g b/s", p.RAI)
	case !(p.MinRate > 0 && p.MinRate < math.Inf(1)):
		return bad("min_rate", "must be a positive rate, got %g b/s", p.MinRate)
	case !(p.RefRate > 0 && p.RefRate < math.Inf(1)):
		return bad("ref_rate", "must be a positive rate, got %g b/s", p.RefRate)
	case p.INTMulti < 1 || p.INTMulti > 1<<16:
		return bad("int_multi", "must be 1 to 65536, got %d", p.INTMulti)
	}
	return nil
}

// AI is the additive increase for a NIC of the given line rate.
func (p *Params) AI(lineRate float64) float64 {
	if p.ScaleWithRate {
		return p.RAI * lineRate / p.RefRate
	}
	return p.RAI
}
