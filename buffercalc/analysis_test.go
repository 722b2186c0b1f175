package buffercalc

import (
	"errors"
	"testing"
)

func TestAnalyzeTrident2(t *testing.T) {
	p, err := LookupPreset("trident2")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(Input{Name: p.Name, Size: p.Buffer, Ports: p.Ports, Priorities: p.Priorities,
		Link: p.Link(), Headroom: p.Headroom, Beta: 8, ECN: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if a.Static.XOFF.KB != 24.47 || a.Static.ECN.KB != 0.76 || a.Static.ECNFeasible {
		t.Errorf("static: t_PFC %v KB, t_ECN %v KB feasible %v; want 24.47, 0.76, infeasible",
			a.Static.XOFF.KB, a.Static.ECN.KB, a.Static.ECNFeasible)
	}
	if a.Dynamic == nil || a.Dynamic.ECN.KB != 21.75 || !a.Dynamic.ECNFeasible {
		t.Errorf("dynamic beta 8: %+v, want t_ECN 21.75 KB, feasible", a.Dynamic)
	}
	if !a.Headroom.Given || a.Headroom.Used.KB != 22.4 || a.Headroom.Fitted == nil {
		t.Errorf("headroom: %+v, want the given 22.4 KB with a fitted cable", a.Headroom)
	}
	if len(a.Sweep) != len(StandardBetas) || a.Sweep[len(a.Sweep)-1].ECN != a.Dynamic.ECN {
		t.Errorf("sweep does not end at beta 8 with the same bound as --beta 8")
	}
	if a.MinStandardBeta != 1.0/8 {
		t.Errorf("smallest standard beta for a one-MTU t_ECN = %g, want 1/8", a.MinStandardBeta)
	}
	// Kmin 5 KB: over the static bound, under the beta-8 bound.
	if c := a.ECNCheck; c == nil || c.Static || c.Dynamic == nil || !*c.Dynamic {
		t.Errorf("ECN check of 5 KB = %+v, want static violated, dynamic ok", c)
	}
}

func TestEveryPresetAnalyses(t *testing.T) {
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			a, err := Analyze(Input{Name: p.Name, Size: p.Buffer, Ports: p.Ports, Priorities: p.Priorities,
				Link: p.Link(), Headroom: p.Headroom})
			if err != nil {
				t.Fatal(err)
			}
			if a.Static.XOFF.Bytes <= 0 || a.Headroom.Used.Bytes <= 0 {
				t.Errorf("non-positive thresholds: %+v", a.Static)
			}
			if p.Source == "" || p.Description == "" {
				t.Error("preset without description or source")
			}
		})
	}
}

func TestAnalyzeNamesTheModelWhenItsHeadroomDoesNotFit(t *testing.T) {
	p, _ := LookupPreset("tomahawk")
	_, err := Analyze(Input{Size: p.Buffer, Ports: p.Ports, Priorities: 8, Link: p.Link()})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "headroom" {
		t.Fatalf("err = %v, want a headroom FieldError", err)
	}
}

func TestLookupPresetUnknown(t *testing.T) {
	_, err := LookupPreset("trident9")
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "preset" {
		t.Fatalf("err = %v, want a preset FieldError", err)
	}
}
