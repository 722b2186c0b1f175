package dcqcn_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/dcqcn"
)

func TestPresetNamesSorted(t *testing.T) {
	want := []string{"hpcc", "mellanox", "paper"}
	if got := dcqcn.PresetNames(); !slices.Equal(got, want) {
		t.Fatalf("PresetNames() = %v, want %v", got, want)
	}
}

func TestPresetsValidate(t *testing.T) {
	for _, name := range dcqcn.PresetNames() {
		t.Run(name, func(t *testing.T) {
			p, err := dcqcn.Preset(name)
			if err != nil {
				t.Fatalf("Preset(%q): %v", name, err)
			}
			if p.Name != name {
				t.Errorf("Preset(%q).Name = %q", name, p.Name)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("Preset(%q).Validate() = %v", name, err)
			}
		})
	}
}

func TestPresetLookup(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"paper", "paper"},
		{"Paper", "paper"},
		{"HPCC", "hpcc"},
		{"MeLLaNoX", "mellanox"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			p, err := dcqcn.Preset(tc.in)
			if err != nil {
				t.Fatalf("Preset(%q): %v", tc.in, err)
			}
			if p.Name != tc.want {
				t.Errorf("Preset(%q).Name = %q, want %q", tc.in, p.Name, tc.want)
			}
		})
	}
}

func TestPresetUnknownListsNames(t *testing.T) {
	for _, name := range []string{"", "dctcp", "paper ", "hpc"} {
		t.Run(name, func(t *testing.T) {
			p, err := dcqcn.Preset(name)
			if err == nil {
				t.Fatalf("Preset(%q) = %+v, want an error", name, p)
			}
			msg := err.Error()
			if !strings.Contains(msg, `"`+name+`"`) {
				t.Errorf("error %q does not quote the unknown name %q", msg, name)
			}
			if !strings.Contains(msg, "hpcc, mellanox, paper") {
				t.Errorf("error %q does not list the known names", msg)
			}
			if p != (dcqcn.Params{}) {
				t.Errorf("Preset(%q) returned non-zero params %+v with its error", name, p)
			}
		})
	}
}

// TestPresetReturnsCopy checks that a caller changing a preset does not
// change what the next caller gets.
func TestPresetReturnsCopy(t *testing.T) {
	a, _ := dcqcn.Preset("hpcc")
	a.G, a.F = 0.5, 99
	b, _ := dcqcn.Preset("hpcc")
	if b.G != 1.0/256 || b.F != 1 {
		t.Fatalf("second Preset(hpcc) sees the first caller's change: G %g F %d", b.G, b.F)
	}
}

// TestPresetDocumentedValues pins the values the presets' doc comments
// state, so the comments and the code cannot drift apart.
func TestPresetDocumentedValues(t *testing.T) {
	type vals struct {
		g, alpha0               float64
		alphaInt, decInt, timer int64
		firstCNP                float64
		clamp, scale            bool
		bc                      int64
		f                       int
		rai, rhai, minRate, ref float64
		cnp                     int64
		kmin, kmax, pmax        float64
	}
	tests := []struct {
		p    dcqcn.Params
		want vals
	}{
		{dcqcn.Paper(), vals{
			g: 1.0 / 256, alpha0: 1, alphaInt: 55 * us, decInt: 0, timer: 55 * us,
			clamp: true, scale: true, bc: 10_000_000, f: 5,
			rai: 40e6, rhai: 400e6, minRate: 40e6, ref: 40e9, cnp: 50 * us,
			kmin: 5e3, kmax: 200e3, pmax: 0.01,
		}},
		{dcqcn.HPCC(), vals{
			g: 1.0 / 256, alpha0: 1, alphaInt: 1 * us, decInt: 4 * us, timer: 300 * us,
			firstCNP: 1, scale: true, bc: 0, f: 1,
			rai: 5e6, rhai: 50e6, minRate: 1e9, ref: 25e9, cnp: 0,
			kmin: 100e3, kmax: 400e3, pmax: 0.2,
		}},
		{dcqcn.Mellanox(), vals{
			g: 5.0 / 1024, alpha0: 1023.0 / 1024, alphaInt: 1 * us, decInt: 4 * us, timer: 300 * us,
			firstCNP: 1, bc: 32767, f: 1,
			rai: 5e6, rhai: 50e6, minRate: 1e6, ref: 100e9, cnp: 4 * us,
			kmin: 12.5e3, kmax: 500e3, pmax: 0.01,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.p.Name, func(t *testing.T) {
			p, w := tc.p, tc.want
			got := vals{
				g: p.G, alpha0: p.InitialAlpha, alphaInt: p.AlphaInterval, decInt: p.DecreaseInterval,
				timer: p.Timer, firstCNP: p.RateOnFirstCNP, clamp: p.ClampTarget, scale: p.ScaleWithRate,
				bc: p.ByteCounter, f: p.F, rai: p.RAI, rhai: p.RHAI, minRate: p.MinRate, ref: p.RefRate,
				cnp: p.CNPInterval, kmin: p.KMin, kmax: p.KMax, pmax: p.PMax,
			}
			// Compare with a tolerance for the byte thresholds, which the
			// presets compute (5 * 1000 * 2.5 and the like).
			if !near(got.kmin, w.kmin, 1e-12) || !near(got.kmax, w.kmax, 1e-12) {
				t.Errorf("kmin/kmax = %g/%g, want %g/%g", got.kmin, got.kmax, w.kmin, w.kmax)
			}
			got.kmin, got.kmax = w.kmin, w.kmax
			if got != w {
				t.Errorf("preset %s:\n got  %+v\n want %+v", p.Name, got, w)
			}
		})
	}
}

func TestValidateNamesBadField(t *testing.T) {
	tests := []struct {
		name  string
		set   func(p *dcqcn.Params)
		field string // "" for valid
	}{
		{"g zero", func(p *dcqcn.Params) { p.G = 0 }, "g"},
		{"g one", func(p *dcqcn.Params) { p.G = 1 }, "g"},
		{"g negative", func(p *dcqcn.Params) { p.G = -0.1 }, "g"},
		{"g NaN", func(p *dcqcn.Params) { p.G = math.NaN() }, "g"},
		{"initial alpha zero", func(p *dcqcn.Params) { p.InitialAlpha = 0 }, "initial_alpha"},
		{"initial alpha above one", func(p *dcqcn.Params) { p.InitialAlpha = 1.01 }, "initial_alpha"},
		{"initial alpha NaN", func(p *dcqcn.Params) { p.InitialAlpha = math.NaN() }, "initial_alpha"},
		{"alpha interval zero", func(p *dcqcn.Params) { p.AlphaInterval = 0 }, "alpha_interval"},
		{"alpha interval negative", func(p *dcqcn.Params) { p.AlphaInterval = -us }, "alpha_interval"},
		{"decrease interval negative", func(p *dcqcn.Params) { p.DecreaseInterval = -1 }, "decrease_interval"},
		{"rate on first cnp negative", func(p *dcqcn.Params) { p.RateOnFirstCNP = -0.5 }, "rate_on_first_cnp"},
		{"rate on first cnp above one", func(p *dcqcn.Params) { p.RateOnFirstCNP = 1.5 }, "rate_on_first_cnp"},
		{"timer zero", func(p *dcqcn.Params) { p.Timer = 0 }, "timer"},
		{"byte counter negative", func(p *dcqcn.Params) { p.ByteCounter = -1 }, "byte_counter"},
		{"f negative", func(p *dcqcn.Params) { p.F = -1 }, "f"},
		{"rai zero", func(p *dcqcn.Params) { p.RAI = 0 }, "rai"},
		{"rhai negative", func(p *dcqcn.Params) { p.RHAI = -1 }, "rhai"},
		{"min rate zero", func(p *dcqcn.Params) { p.MinRate = 0 }, "min_rate"},
		{"ref rate zero", func(p *dcqcn.Params) { p.RefRate = 0 }, "ref_rate"},
		{"cnp interval negative", func(p *dcqcn.Params) { p.CNPInterval = -1 }, "cnp_interval"},
		{"kmin negative", func(p *dcqcn.Params) { p.KMin = -1 }, "kmin"},
		{"kmax below kmin", func(p *dcqcn.Params) { p.KMin, p.KMax = 10, 9 }, "kmax"},
		{"pmax negative", func(p *dcqcn.Params) { p.PMax = -0.01 }, "pmax"},
		{"pmax above one", func(p *dcqcn.Params) { p.PMax = 1.01 }, "pmax"},
		{"first of two bad fields", func(p *dcqcn.Params) { p.Timer, p.G = 0, 2 }, "g"},

		{"initial alpha one", func(p *dcqcn.Params) { p.InitialAlpha = 1 }, ""},
		{"paper mode", func(p *dcqcn.Params) { p.DecreaseInterval = 0 }, ""},
		{"no byte counter", func(p *dcqcn.Params) { p.ByteCounter = 0 }, ""},
		{"f zero", func(p *dcqcn.Params) { p.F = 0 }, ""},
		{"cnp on every ack", func(p *dcqcn.Params) { p.CNPInterval = 0 }, ""},
		{"step marking", func(p *dcqcn.Params) { p.KMin, p.KMax, p.PMax = 1000, 1000, 1 }, ""},
		{"no marking ramp", func(p *dcqcn.Params) { p.PMax = 0 }, ""},
		{"rate on first cnp bounds", func(p *dcqcn.Params) { p.RateOnFirstCNP = 1 }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := dcqcn.Paper()
			tc.set(&p)
			err := p.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error naming %s", tc.field)
			}
			if prefix := "dcqcn " + tc.field + ":"; !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("Validate() = %q, want it to start with %q", err, prefix)
			}
		})
	}
}

// TestValidateRejectsNaN: Validate's range checks are written as
// "x < lo || x > hi", which a NaN passes; only g and initial_alpha use the
// negated form that rejects NaN. A NaN reaches Params from a scenario file
// (YAML ".nan" for pmax, rate_on_first_cnp) and then poisons every rate.
func TestValidateRejectsNaN(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		field string
		set   func(p *dcqcn.Params)
	}{
		{"rate_on_first_cnp", func(p *dcqcn.Params) { p.RateOnFirstCNP = nan }},
		{"rai", func(p *dcqcn.Params) { p.RAI = nan }},
		{"rhai", func(p *dcqcn.Params) { p.RHAI = nan }},
		{"min_rate", func(p *dcqcn.Params) { p.MinRate = nan }},
		{"ref_rate", func(p *dcqcn.Params) { p.RefRate = nan }},
		{"kmin", func(p *dcqcn.Params) { p.KMin = nan }},
		{"kmax", func(p *dcqcn.Params) { p.KMax = nan }},
		{"pmax", func(p *dcqcn.Params) { p.PMax = nan }},
	}
	for _, tc := range tests {
		p := dcqcn.Paper()
		tc.set(&p)
		err := p.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), "dcqcn "+tc.field+":") {
			t.Errorf("NaN in %s: Validate() = %v, want an error naming %s", tc.field, err, tc.field)
		}
	}
}

func TestSteps(t *testing.T) {
	tests := []struct {
		p              dcqcn.Params
		lineRate       float64
		wantAI, wantHA float64
	}{
		{dcqcn.Paper(), 40e9, 40e6, 400e6},
		{dcqcn.Paper(), 100e9, 100e6, 1e9},
		{dcqcn.Paper(), 10e9, 10e6, 100e6},
		{dcqcn.HPCC(), 25e9, 5e6, 50e6},
		{dcqcn.HPCC(), 100e9, 20e6, 200e6},
		{dcqcn.HPCC(), 400e9, 80e6, 800e6},
		// Mellanox does not scale: the steps are per NIC whatever its rate.
		{dcqcn.Mellanox(), 25e9, 5e6, 50e6},
		{dcqcn.Mellanox(), 400e9, 5e6, 50e6},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%gG", tc.p.Name, tc.lineRate/1e9), func(t *testing.T) {
			ai, hai := tc.p.Steps(tc.lineRate)
			if !near(ai, tc.wantAI, 1e-12) || !near(hai, tc.wantHA, 1e-12) {
				t.Errorf("Steps(%g) = %g, %g, want %g, %g", tc.lineRate, ai, hai, tc.wantAI, tc.wantHA)
			}
		})
	}
}
