package dcqcn

import (
	"fmt"
	"sort"
	"strings"
)

// Params are the DCQCN settings of one NIC: the reaction point (RP) rate
// controller, the notification point (NP) CNP generator, and the RED/ECN
// marking the switches should apply for them. Times are picoseconds, rates
// bits per second, sizes bytes.
type Params struct {
	Name string

	// G is the alpha gain g: on a CNP alpha = (1-g) alpha + g; without one,
	// alpha = (1-g) alpha every AlphaInterval.
	G float64
	// InitialAlpha is alpha when the first CNP arrives (1 in the paper).
	InitialAlpha float64
	// AlphaInterval is K in the paper (the alpha timer, restarted by every
	// CNP) or, with a DecreaseInterval, the period of the slotted alpha
	// update of the ConnectX implementation (dce_tcp_rtt).
	AlphaInterval int64
	// DecreaseInterval selects the rate-decrease style. Zero cuts the rate
	// on every CNP, as the paper's RP does (Figure 7). A positive value
	// checks every DecreaseInterval, from the first CNP, whether a CNP came
	// in the last period and cuts once if so, with alpha updated in slots
	// of AlphaInterval: the ConnectX state machine of the Mellanox document
	// (rate_reduce_monitor_period), which the ns-3 RDMA simulator follows.
	DecreaseInterval int64
	// RateOnFirstCNP, when positive, is the fraction of the current rate set
	// (as both rate and target) on a flow's first CNP; the first cut then
	// waits for the next decrease check. 1 leaves the rate unchanged, as the
	// ns-3 simulator's default. Zero treats the first CNP like any other.
	// It applies to the slotted (DecreaseInterval > 0) mode only.
	RateOnFirstCNP float64
	// ClampTarget sets R_T = R_C on every cut. Without it, R_T is kept when
	// no rate increase happened since the last cut (clamp_tgt_rate = 0).
	ClampTarget bool
	// Timer is T, the rate-increase timer, restarted by every cut.
	Timer int64
	// ByteCounter is B: a rate-increase event every B bytes sent. Zero
	// disables it; the timer alone then drives the increase stages.
	ByteCounter int64
	// F is the number of fast-recovery steps after a cut.
	F int
	// RAI and RHAI are the additive and hyper-increase steps of R_T, given
	// at RefRate; with ScaleWithRate they scale with the NIC line rate.
	RAI, RHAI float64
	// MinRate is the floor of R_C.
	MinRate float64
	// RefRate is the line rate RAI, RHAI and the marking thresholds are
	// given for.
	RefRate float64
	// ScaleWithRate scales RAI and RHAI by lineRate/RefRate.
	ScaleWithRate bool

	// CNPInterval is N: the NP sends at most one CNP per flow every N, the
	// first one at once. Zero means no separate CNPs: every ACK of a marked
	// packet carries the CNP flag (the ns-3 simulator's style).
	CNPInterval int64

	// KMin, KMax (bytes) and PMax are the RED/ECN marking curve the
	// parameter set was designed with, at RefRate; switches scale the byte
	// thresholds with the link rate.
	KMin, KMax float64
	PMax       float64
}

const (
	us = int64(1e6) // picoseconds
	kb = 1000.0
)

// Paper is the parameter set of the DCQCN paper (Zhu et al., SIGCOMM 2015,
// sections 3, 5.2 and 6.1, Table 3) at 40 Gb/s: Kmin 5 KB, Kmax 200 KB,
// Pmax 1%, g 1/256, K = T = 55 us, B = 10 MB, F = 5, R_AI 40 Mb/s, CNPs at
// most every 50 us. The paper does not give R_HAI; this set takes ten times
// R_AI, the ratio of the ConnectX defaults.
func Paper() Params {
	return Params{
		Name:          "paper",
		G:             1.0 / 256,
		InitialAlpha:  1,
		AlphaInterval: 55 * us,
		ClampTarget:   true,
		Timer:         55 * us,
		ByteCounter:   10_000_000,
		F:             5,
		RAI:           40e6,
		RHAI:          400e6,
		MinRate:       40e6,
		RefRate:       40e9,
		ScaleWithRate: true,
		CNPInterval:   50 * us,
		KMin:          5 * kb,
		KMax:          200 * kb,
		PMax:          0.01,
	}
}

// HPCC is the DCQCN configuration of the ns-3 RDMA simulator of the HPCC
// paper (Li et al., SIGCOMM 2019), as used for the benchmark of
// ../shared/bench: alpha slots of 1 us, decrease checks every 4 us, timer
// 300 us, F = 1, R_AI 5 Mb/s and R_HAI 50 Mb/s per 25 Gb/s of line rate,
// min rate 1 Gb/s, the rate unchanged on the first CNP, g = 1/256, no byte
// counter, every ACK of a marked packet carrying the CNP flag; RED/ECN Kmin
// 400 KB, Kmax 1600 KB, Pmax 0.2 at 100 Gb/s.
func HPCC() Params {
	return Params{
		Name:             "hpcc",
		G:                1.0 / 256,
		InitialAlpha:     1,
		AlphaInterval:    1 * us,
		DecreaseInterval: 4 * us,
		RateOnFirstCNP:   1,
		Timer:            300 * us,
		F:                1,
		RAI:              5e6,
		RHAI:             50e6,
		MinRate:          1e9,
		RefRate:          25e9,
		ScaleWithRate:    true,
		KMin:             400 * kb / 4, // 400 KB at 100 Gb/s, given per 25 Gb/s
		KMax:             1600 * kb / 4,
		PMax:             0.2,
	}
}

// Mellanox is the ConnectX default configuration, as NVIDIA documents the
// DCQCN parameters of its adapters (sysfs roce_rp/roce_np and mlxconfig):
// rpg_time_reset 300 us, rpg_byte_reset 32767 B, rpg_threshold 1,
// rpg_ai_rate 5 Mb/s, rpg_hai_rate 50 Mb/s, rpg_min_rate 1 Mb/s,
// dce_tcp_g 1019 (alpha keeps 1019/1024 of its value, so g = 5/1024),
// dce_tcp_rtt 1 us, rate_reduce_monitor_period 4 us, initial alpha
// 1023/1024, clamp_tgt_rate 0, min_time_between_cnps 4 us. The adapters
// leave the marking to the switch; this set carries the paper's curve
// scaled to 100 Gb/s.
func Mellanox() Params {
	return Params{
		Name:             "mellanox",
		G:                5.0 / 1024,
		InitialAlpha:     1023.0 / 1024,
		AlphaInterval:    1 * us,
		DecreaseInterval: 4 * us,
		RateOnFirstCNP:   1,
		Timer:            300 * us,
		ByteCounter:      32767,
		F:                1,
		RAI:              5e6,
		RHAI:             50e6,
		MinRate:          1e6,
		RefRate:          100e9,
		CNPInterval:      4 * us,
		KMin:             5 * kb * 2.5,
		KMax:             200 * kb * 2.5,
		PMax:             0.01,
	}
}

var presets = map[string]func() Params{"paper": Paper, "hpcc": HPCC, "mellanox": Mellanox}

// PresetNames lists the named parameter sets in sorted order.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preset returns a named parameter set.
func Preset(name string) (Params, error) {
	f, ok := presets[strings.ToLower(name)]
	if !ok {
		return Params{}, fmt.Errorf("unknown DCQCN parameter set %q (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	return f(), nil
}

// Validate checks the parameters, naming the first bad field. Every check
// is written so that NaN fails it.
// ParamError names the parameter Validate rejects by its scenario key
// ("g", "min_rate").
type ParamError struct {
	Field, Msg string
}

func (e *ParamError) Error() string { return "dcqcn " + e.Field + ": " + e.Msg }

func (p *Params) Validate() error {
	bad := func(field string, format string, args ...any) error {
		return &ParamError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case !(p.G > 0 && p.G < 1):
		return bad("g", "must be between 0 and 1, got %g", p.G)
	case !(p.InitialAlpha > 0 && p.InitialAlpha <= 1):
		return bad("initial_alpha", "must be in (0, 1], got %g", p.InitialAlpha)
	case p.AlphaInterval <= 0:
		return bad("alpha_interval", "must be positive")
	case p.DecreaseInterval < 0:
		return bad("decrease_interval", "must not be negative")
	case !(p.RateOnFirstCNP >= 0 && p.RateOnFirstCNP <= 1):
		return bad("rate_on_first_cnp", "must be in [0, 1], got %g", p.RateOnFirstCNP)
	case p.Timer <= 0:
		return bad("timer", "must be positive")
	case p.ByteCounter < 0:
		return bad("byte_counter", "must not be negative")
	case p.F < 0:
		return bad("f", "must not be negative")
	case !(p.RAI > 0):
		return bad("rai", "must be positive")
	case !(p.RHAI > 0):
		return bad("rhai", "must be positive")
	case !(p.MinRate > 0):
		return bad("min_rate", "must be positive")
	case !(p.RefRate > 0):
		return bad("ref_rate", "must be positive")
	case p.CNPInterval < 0:
		return bad("cnp_interval", "must not be negative")
	case !(p.KMin >= 0):
		return bad("kmin", "must not be negative, got %g bytes", p.KMin)
	case !(p.KMax >= p.KMin):
		return bad("kmax", "%g bytes is below kmin, %g bytes", p.KMax, p.KMin)
	case !(p.PMax >= 0 && p.PMax <= 1):
		return bad("pmax", "must be in [0, 1], got %g", p.PMax)
	}
	return nil
}

// Steps returns R_AI and R_HAI for a NIC of the given line rate.
func (p *Params) Steps(lineRate float64) (rai, rhai float64) {
	if p.ScaleWithRate {
		s := lineRate / p.RefRate
		return p.RAI * s, p.RHAI * s
	}
	return p.RAI, p.RHAI
}
