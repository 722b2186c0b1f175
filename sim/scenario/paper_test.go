package scenario_test

// The RCM paper's micro-benchmarks (Figures 6-8) as tests of direction:
// each runs a built-in preset under DCQCN and under RCM and checks that
// RCM changes the outcome the way the paper reports. docs/rcm.md records
// the figures these runs give.

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/internal/race"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/experiment"
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

// burstRates runs the Figure 6 set-up of preset under scheme and returns
// the burst's rate in its first 8 us (before any reaction) and from +10 to
// +20 us, the incast flows' total rate in that second window and before
// the burst (80-150 us), all Gb/s.
func burstRates(t *testing.T, preset, scheme string, sets ...string) [4]float64 {
	t.Helper()
	const start = 150.0 // the burst's start, us
	r := runPreset(t, preset, scheme, sets...)
	out := [4]float64{
		classRate(r, "burst", start+2, start+10),
		classRate(r, "burst", start+10, start+20),
		classRate(r, "incast", start+10, start+20),
		classRate(r, "incast", 80, start),
	}
	t.Logf("%s %v under %s: burst %.1f Gb/s at first, %.1f from +10 us to +20 us; incast %.1f then, %.1f before the burst",
		preset, sets, scheme, out[0], out[1], out[2], out[3])
	return out
}

// Figure 6: a 20 us burst joins four incast flows at the last switch.
// The paper: under DCQCN the burst keeps about half the port while it
// lasts; under RCM the last switch finds it within microseconds and cuts
// it to about a quarter, and the incast flows get the port back.
//
// The model shows that with the DCQCN paper's parameters and a steep
// 40-100 KB curve (rcm-incast-burst-dcqcn-paper), not under the settings
// the RCM paper names: with the Mellanox 100G defaults the figure does not
// reproduce with either marking curve tried (docs/rcm.md), and the test
// asserts what the model gives there.
func TestPaperFig6IncastBurst(t *testing.T) {
	race.SkipLong(t)
	t.Run("dcqcn-paper settings", func(t *testing.T) {
		d := burstRates(t, "rcm-incast-burst-dcqcn-paper", "dcqcn")
		r := burstRates(t, "rcm-incast-burst-dcqcn-paper", "rcm")
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
	})
	// The Mellanox defaults cut every 4 us while CNPs come; with NVIDIA's
	// switch curve (150-1500 KB) the queue behind PFC's 100 KB ingress
	// limit still reaches the marking range, the incast flows fall to a
	// few Gb/s in all before the burst, and the burst then takes almost
	// the whole port under either scheme: nothing is left for RCM to
	// protect.
	t.Run("mellanox, NVIDIA curve", func(t *testing.T) {
		for _, scheme := range []string{"dcqcn", "rcm"} {
			x := burstRates(t, "rcm-incast-burst", scheme)
			if x[3] > 20 || x[0] < 80 || x[1] < 0.9*x[0] {
				t.Errorf("%s: incast %.1f Gb/s before the burst, burst %.1f then %.1f; the model gives under 20, over 80, kept", scheme, x[3], x[0], x[1])
			}
		}
	})
	// With the Mellanox set's own curve (the DCQCN paper's, scaled to
	// 100 Gb/s) the incast flows keep the port busy before the burst, the
	// port is already a root holding them back as its harmful flows, and
	// the burst arrives as a new flow that RCC does not count among them:
	// it keeps its half under RCM as under DCQCN.
	t.Run("mellanox, DCQCN paper curve", func(t *testing.T) {
		sets := []string{"switch.ecn.kmin=12.5KB", "switch.ecn.kmax=500KB", "switch.ecn.pmax=0.01"}
		for _, scheme := range []string{"dcqcn", "rcm"} {
			x := burstRates(t, "rcm-incast-burst", scheme, sets...)
			if x[3] < 80 || x[0] < 35 || x[1] < 0.8*x[0] {
				t.Errorf("%s: incast %.1f Gb/s before the burst, burst %.1f then %.1f; the model gives over 80, about half the port, kept", scheme, x[3], x[0], x[1])
			}
		}
	})
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

// hotspotGoodput is the background flows' goodput (Gb/s per flow),
// averaged over seeds 1..seeds, of the hot-spot preset on a k-port fat
// tree with dur of arrivals, under scheme with sets.
func hotspotGoodput(t *testing.T, k, seeds int, dur, scheme string, sets ...string) float64 {
	t.Helper()
	sum := 0.0
	var per []float64
	for seed := 1; seed <= seeds; seed++ {
		all := append([]string{fmt.Sprintf("topology.k=%d", k), "workload.duration=" + dur, fmt.Sprintf("seed=%d", seed)}, sets...)
		r := runPreset(t, "rcm-hotspot", scheme, all...)
		s := report.Summarize(r, report.SummaryOptions{})
		for _, c := range s.Classes {
			if c.Class == "background" {
				sum += c.GoodputGbps / float64(seeds)
				per = append(per, c.GoodputGbps)
			}
		}
	}
	t.Logf("k=%d, %s of arrivals, %s %v: background flows %.2f Gb/s (seeds %.2f)", k, dur, scheme, sets, sum, per)
	return sum
}

// Figure 8: hot spots. Background flows get more throughput under RCM
// than under DCQCN (the paper: 12.2% more). Each of RCC and SAR must
// contribute: RCM ahead of RCM without RCC (rcm.rcc=false: no packet
// held) and of RCM without SAR (rcm-rcc), and with both off the gain is
// gone. On 54 hosts (k = 6), 3 ms of arrivals, seeds 1-6.
func TestPaperFig8HotSpot(t *testing.T) {
	race.SkipLong(t)
	t.Parallel()
	const k, seeds, dur = 6, 6, "3ms"
	base := hotspotGoodput(t, k, seeds, dur, "dcqcn")
	gain := func(scheme string, sets ...string) float64 {
		return hotspotGoodput(t, k, seeds, dur, scheme, sets...)/base - 1
	}
	full, noSAR, noRCC, none := gain("rcm"), gain("rcm-rcc"), gain("rcm", "rcm.rcc=false"), gain("rcm-rcc", "rcm.rcc=false")
	t.Logf("background gain over DCQCN: RCM %+.1f%%, without SAR %+.1f%%, without RCC %+.1f%%, without either %+.1f%%",
		100*full, 100*noSAR, 100*noRCC, 100*none)
	if full < 0.08 {
		t.Errorf("RCM gains %+.1f%% for background flows; want at least 8%% (the paper: 12.2%%)", 100*full)
	}
	if full-noSAR < 0.04 {
		t.Errorf("SAR adds %.1f points (%+.1f%% without it); want at least 4", 100*(full-noSAR), 100*noSAR)
	}
	if full-noRCC < 0.02 {
		t.Errorf("RCC adds %.1f points (%+.1f%% without it); want at least 2", 100*(full-noRCC), 100*noRCC)
	}
	if math.Abs(none) > 0.02 {
		t.Errorf("with RCC and SAR off RCM still moves background goodput by %+.1f%%; want within 2%%", 100*none)
	}
}

// Figure 8 on the paper's 432 hosts (k = 12), 2.5 ms of arrivals, seeds
// 1-2: RCM ahead of DCQCN, and SAR's share of it. (RCC's share, 1.2
// points here by a run by hand, is asserted on 54 hosts, where the seeds
// to resolve it fit the test budget.)
func TestPaperFig8HotSpot432(t *testing.T) {
	race.SkipLong(t)
	t.Parallel()
	const k, seeds, dur = 12, 2, "2500us"
	base := hotspotGoodput(t, k, seeds, dur, "dcqcn")
	full := hotspotGoodput(t, k, seeds, dur, "rcm")/base - 1
	noSAR := hotspotGoodput(t, k, seeds, dur, "rcm-rcc")/base - 1
	t.Logf("background gain over DCQCN: RCM %+.1f%%, without SAR %+.1f%%", 100*full, 100*noSAR)
	if full < 0.08 {
		t.Errorf("RCM gains %+.1f%% for background flows; want at least 8%% (the paper: 12.2%%)", 100*full)
	}
	if full-noSAR < 0.04 {
		t.Errorf("SAR adds %.1f points (%+.1f%% without it); want at least 4", 100*(full-noSAR), 100*noSAR)
	}
}

// Figure 9, the paper's headline: the 432-host web-search FCT comparison
// (preset rcm-fct-websearch) as a study over seeds 1-3, the mice flows'
// mean FCT paired by seed. RCM must be better than DCQCN with the whole
// 95% interval of the change below -fig9Bound (the paper: more than 10%
// shorter); with RCC and SAR off (CRD, CFR and CNs still running) the
// gain must be gone: the mean change within 4% of DCQCN. docs/rcm.md
// records the figures and the mechanisms whose removal fails the test.
func TestPaperFig9WebSearch(t *testing.T) {
	race.SkipLong(t)
	t.Parallel()
	s, err := scenario.LoadPreset("rcm-fct-websearch")
	if err != nil {
		t.Fatal(err)
	}
	off := experiment.Variant{Name: "rcm-off", Scheme: "rcm-rcc", Set: []experiment.Assignment{{Path: "rcm.rcc", Value: "false"}}}
	st, err := experiment.Run(context.Background(), experiment.Spec{Scenario: s, Schemes: []string{"dcqcn", "rcm", "rcm-off"},
		Variants: []experiment.Variant{off}, Seeds: []uint64{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	r := st.Points[0]
	change := func(scheme string) *experiment.Change {
		for _, row := range r.SizeClasses {
			if row.Class == "mice" && row.Scheme == scheme {
				return row.Metric("mean_fct_us").VsBaseline
			}
		}
		t.Fatalf("no mice row for %s", scheme)
		return nil
	}
	full, none := change("rcm"), change("rcm-off")
	t.Logf("mice mean FCT against DCQCN over seeds 1-3: RCM %+.1f%% [%+.1f, %+.1f] (%s); RCC and SAR off %+.1f%% [%+.1f, %+.1f] (%s)",
		*full.Pct, *full.PctLo, *full.PctHi, full.Verdict, *none.Pct, *none.PctLo, *none.PctHi, none.Verdict)
	if full.Verdict != "better" || *full.PctHi > -fig9Bound {
		t.Errorf("RCM changes the mice flows' mean FCT by %+.1f%% [%+.1f, %+.1f], %s; want better, the interval below -%.0f%% (the paper: more than 10%% shorter)",
			*full.Pct, *full.PctLo, *full.PctHi, full.Verdict, fig9Bound)
	}
	if math.Abs(*none.Pct) > 4 {
		t.Errorf("with RCC and SAR off the mice FCT moves by %+.1f%%; want within 4%% of DCQCN", *none.Pct)
	}
}

// fig9Bound is the least gain, in percent, the whole interval of RCM's
// change of the mice flows' mean FCT must show in Figure 9.
const fig9Bound = 5.0
