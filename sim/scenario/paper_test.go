package scenario_test

// The RCM paper's micro-benchmarks (Figures 6-8) as tests of direction:
// each runs a built-in preset under DCQCN and under RCM and checks that
// RCM changes the outcome the way the paper reports. docs/rcm.md records
// the figures these runs give.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/internal/race"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/report"
	"github.com/p4rcm/p4rcm/sim/scenario"
)

// runPreset runs a preset under scheme with the given overrides.
func runPreset(t *testing.T, preset, scheme string, sets ...string) *sim.Results {
	t.Helper()
	s, err := scenario.LoadPreset(preset)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set("scheme", scheme); err != nil {
		t.Fatal(err)
	}
	for _, kv := range sets {
		path, value, _ := strings.Cut(kv, "=")
		if err := s.Set(path, value); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Faults) > 0 {
		t.Fatalf("%s under %s: faults %v", preset, scheme, res.Faults)
	}
	return res
}

// classRate is the mean rate in Gb/s at which the flows of class c
// delivered data in rate samples ending in (from, to], times in us.
func classRate(r *sim.Results, c string, from, to float64) float64 {
	var bytes int64
	seen := map[int64]bool{}
	for _, s := range r.RateSamples {
		t := float64(s.Time) / 1e6
		if t <= from || t > to || r.Flows[s.Flow].Class != c {
			continue
		}
		bytes += s.Bytes
		seen[s.Time] = true
	}
	if len(seen) == 0 {
		return 0
	}
	// Samples end every interval; the window covers len(seen) of them.
	interval := (to - from) / float64(len(seen))
	return float64(bytes) * 8 / (float64(len(seen)) * interval * 1e3)
}

// Figure 6: a 20 us burst joins four incast flows at the last switch.
// Under DCQCN the burst keeps about half the port while it lasts; under
// RCM the last switch finds it within microseconds and cuts it to half or
// less, and the incast flows get the port back.
func TestPaperFig6IncastBurst(t *testing.T) {
	race.SkipLong(t)
	const start = 150.0 // the burst's start, us
	rates := map[string][3]float64{}
	for _, scheme := range []string{"dcqcn", "rcm"} {
		r := runPreset(t, "rcm-incast-burst", scheme)
		rates[scheme] = [3]float64{
			classRate(r, "burst", start+2, start+10),  // before any reaction
			classRate(r, "burst", start+10, start+20), // after
			classRate(r, "incast", start+10, start+20),
		}
		t.Logf("%s: burst %.1f Gb/s at first, %.1f from +10 us to +20 us; incast then %.1f", scheme, rates[scheme][0], rates[scheme][1], rates[scheme][2])
	}
	d, r := rates["dcqcn"], rates["rcm"]
	if d[0] < 35 || r[0] < 35 {
		t.Errorf("the burst should first take about half the port: %.1f (dcqcn), %.1f (rcm) Gb/s", d[0], r[0])
	}
	if d[1] < 0.8*d[0] {
		t.Errorf("DCQCN: the burst fell from %.1f to %.1f Gb/s; the paper has it keep its half", d[0], d[1])
	}
	if r[1] > 0.6*r[0] {
		t.Errorf("RCM: the burst went from %.1f to %.1f Gb/s; want it cut to about half or less", r[0], r[1])
	}
	if r[2] < d[2]+15 {
		t.Errorf("RCM: the incast flows got %.1f Gb/s, DCQCN %.1f; want them to regain the port", r[2], d[2])
	}
}

// Figure 7: PFC spreads an incast back to the ToR that a victim flow
// shares with two of the incast senders. The victim gets about a third
// of the ToR's uplink under DCQCN with PFC; RCM slows the incast flows
// at the ToR instead, and the victim gets at least 1.5 times as much.
func TestPaperFig7IncastVictim(t *testing.T) {
	race.SkipLong(t)
	victim := map[string]float64{}
	for _, scheme := range []string{"pfc", "dcqcn", "rcm"} {
		r := runPreset(t, "rcm-incast-victim", scheme)
		for _, f := range r.Flows {
			if f.Class == "victim" {
				victim[scheme] = float64(f.Delivered) * 8 / float64(r.End-f.Start) * 1e3 // Gb/s
			}
		}
		t.Logf("%s: victim %.1f Gb/s", scheme, victim[scheme])
	}
	if victim["rcm"] < 1.5*victim["dcqcn"] {
		t.Errorf("victim: %.1f Gb/s under RCM, %.1f under DCQCN; want at least 1.5x", victim["rcm"], victim["dcqcn"])
	}
	if victim["pfc"] > 35 {
		t.Errorf("victim under PFC alone: %.1f Gb/s; the paper's head-of-line blocking leaves it about 25", victim["pfc"])
	}
}

// Figure 8: hot spots. Background flows get more throughput under RCM
// than under DCQCN (the paper: 12.2% more).
func TestPaperFig8HotSpot(t *testing.T) {
	race.SkipLong(t)
	// The gain moves with the seed (+4% to +15% on single runs of the
	// preset), so the test pools three, as the paper's figure pools its
	// flows.
	goodput := map[string]float64{}
	for _, scheme := range []string{"dcqcn", "rcm"} {
		for seed := 1; seed <= 3; seed++ {
			r := runPreset(t, "rcm-hotspot", scheme, "workload.duration=2ms", fmt.Sprintf("seed=%d", seed))
			s := report.Summarize(r, report.SummaryOptions{})
			for _, c := range s.Classes {
				if c.Class == "background" {
					goodput[scheme] += c.GoodputGbps / 3
				}
			}
		}
		t.Logf("%s: background flows %.2f Gb/s (mean of seeds 1-3)", scheme, goodput[scheme])
	}
	gain := goodput["rcm"]/goodput["dcqcn"] - 1
	t.Logf("background gain %s", fmt.Sprintf("%+.1f%%", 100*gain))
	if gain < 0.05 {
		t.Errorf("background flows: %.2f Gb/s under RCM, %.2f under DCQCN (%+.1f%%); want RCM at least 5%% ahead", goodput["rcm"], goodput["dcqcn"], 100*gain)
	}
}
