package scenario_test

// The RCM paper's micro-benchmarks (Figures 6-8) as tests of direction:
// each runs a built-in preset under DCQCN and under RCM and checks that
// RCM changes the outcome the way the paper reports. docs/rcm.md records
// the figures these runs give.

import (
	"context"
	"testing"

	"github.com/p4rcm/p4rcm/internal/race"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/experiment"
	"github.com/p4rcm/p4rcm/sim/scenario"
	"github.com/p4rcm/p4rcm/stats"
)

// runPreset runs a preset under scheme with the given overrides.
func runPreset(t *testing.T, preset, scheme string, sets ...string) *sim.Results {
	t.Helper()
	s, err := scenario.LoadPreset(preset)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAll(append([]string{"scheme=" + scheme}, sets...)...); err != nil {
		t.Fatal(err)
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
// reproduce with either marking curve tried, and there the burst keeps
// what it takes under RCM as under DCQCN. docs/rcm.md records those runs;
// they are not tests, since no breakage of RCM changes them.
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
}

// Figure 7: PFC spreads an incast back to the ToR that a victim flow
// shares with two of the incast senders. The victim gets about a third
// of the ToR's uplink under DCQCN with PFC; RCM slows the incast flows
// at the ToR instead, and the victim gets at least 1.5 times as much.
// Under PFC alone the paper's victim gets about 25 Gb/s (the model:
// 23.44 on every seed, the preset having no random draw that matters):
// more than 30 says the pauses did not reach the victim's path, less
// than 20 that they held it back beyond its share of the paused uplink.
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
	if victim["pfc"] < 20 || victim["pfc"] > 30 {
		t.Errorf("victim under PFC alone: %.2f Gb/s; the paper's head-of-line blocking leaves it about 25 (20 to 30)", victim["pfc"])
	}
}

// study runs a preset as a study of schemes and variants over seeds, with
// the overrides sets, and returns its one point.
func study(t *testing.T, preset string, seeds []uint64, schemes []string, variants []experiment.Variant, sets ...string) *experiment.Result {
	t.Helper()
	s, err := scenario.LoadPreset(preset)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAll(sets...); err != nil {
		t.Fatal(err)
	}
	st, err := experiment.Run(context.Background(), experiment.Spec{Scenario: s, Schemes: schemes, Variants: variants, Seeds: seeds})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	return st.Points[0]
}

// without is the variant of rcm with the given mechanisms off.
func without(name string, knobs ...string) experiment.Variant {
	v := experiment.Variant{Name: name, Scheme: "rcm"}
	for _, k := range knobs {
		v.Set = append(v.Set, experiment.Assignment{Path: "rcm." + k, Value: "false"})
	}
	return v
}

// metricOf is a class's metric of one scheme; group "size" or "class".
func metricOf(t *testing.T, r *experiment.Result, group, class, scheme, metric string) *experiment.MetricStats {
	t.Helper()
	rows := r.SizeClasses
	if group == experiment.GroupClass {
		rows = r.FlowClasses
	}
	for _, row := range rows {
		if row.Class == class && row.Scheme == scheme {
			if m := row.Metric(metric); m != nil && m.Mean != nil {
				return m
			}
		}
	}
	t.Fatalf("no %s of %s %s", metric, class, scheme)
	return nil
}

// pairedGain compares scheme a with scheme b on a metric, seed by seed,
// in percent of the baseline's mean over the same seeds (so that shares
// of a gain add up), by the paired t test at 95%.
func pairedGain(t *testing.T, r *experiment.Result, group, class, metric, a, b string, dir stats.Direction) (pct, lo, hi float64, v stats.Verdict) {
	t.Helper()
	x, y := metricOf(t, r, group, class, a, metric), metricOf(t, r, group, class, b, metric)
	base := metricOf(t, r, group, class, r.Baseline, metric)
	if len(x.Values) != len(y.Values) || len(x.Values) != len(base.Values) {
		t.Fatalf("%s and %s: %d and %d runs", a, b, len(x.Values), len(y.Values))
	}
	xs, ys := make([]float64, len(x.Values)), make([]float64, len(y.Values))
	for i := range xs {
		xs[i], ys[i] = x.Values[i].Value, y.Values[i].Value
	}
	p := stats.PairedT(xs, ys, 0.95, dir)
	s := 100 / *base.Mean
	return p.Diff.Mean * s, p.Diff.Lo * s, p.Diff.Hi * s, p.Verdict
}

// seedsFrom is n seeds from first on.
func seedsFrom(first uint64, n int) []uint64 {
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = first + uint64(i)
	}
	return seeds
}

// The seeds of the Figure 8 and 9 studies. Eight each: with them the
// interval of every assertion below clears its bound by about four
// standard errors on the unbroken model (docs/validation.md has the
// margins, and the harmless changes under which they hold).
var fig8Seeds, fig9Seeds = seedsFrom(1, 8), seedsFrom(1, 8)

// Figure 8: hot spots, on 54 hosts (k = 6) with 3 ms of arrivals, the
// background and hot flows' goodput paired by seed. The paper: background
// flows get 12.2% more under RCM than under DCQCN, and the hot flows
// slightly less. The test asks for RCM's background gain to be better
// with its whole 95% interval above +5%; for SAR's share of it (RCM
// against RCM without SAR, paired) to be above zero with its whole
// interval, SAR carrying most of the gain in the model; and for the hot
// flows, which RCM paces as the harmful ones, not to lose more than 5%
// (the interval's low end), whatever the model gives them above that.
// The other mechanisms' shares are too close to zero for a pass/fail
// bound on affordable seeds, and are measured in docs/rcm.md's ablation
// table instead.
func TestPaperFig8HotSpot(t *testing.T) {
	race.SkipLong(t)
	t.Parallel()
	r := study(t, "rcm-hotspot", fig8Seeds, []string{"dcqcn", "rcm", "no-sar"},
		[]experiment.Variant{without("no-sar", "sar")}, "workload.duration=3ms")
	const g = "goodput_gbps"
	gain := metricOf(t, r, experiment.GroupClass, "background", "rcm", g).VsBaseline
	hot := metricOf(t, r, experiment.GroupClass, "hot", "rcm", g).VsBaseline
	sar, sarLo, sarHi, sarV := pairedGain(t, r, experiment.GroupClass, "background", g, "rcm", "no-sar", stats.HigherIsBetter)
	t.Logf("background goodput against DCQCN over seeds %v: RCM %+.1f%% [%+.1f, %+.1f], SAR's share %+.1f points [%+.1f, %+.1f]; hot flows %+.1f%% [%+.1f, %+.1f]",
		fig8Seeds, *gain.Pct, *gain.PctLo, *gain.PctHi, sar, sarLo, sarHi, *hot.Pct, *hot.PctLo, *hot.PctHi)
	if gain.Verdict != string(stats.Better) || *gain.PctLo < 5 {
		t.Errorf("RCM gains %+.1f%% [%+.1f, %+.1f] for background flows; want better, the interval above +5%% (the paper: 12.2%%)", *gain.Pct, *gain.PctLo, *gain.PctHi)
	}
	if sarV != stats.Better {
		t.Errorf("SAR adds %+.1f points [%+.1f, %+.1f] to the background flows' goodput; want RCM significantly ahead of RCM without SAR", sar, sarLo, sarHi)
	}
	if *hot.PctLo < -5 {
		t.Errorf("the hot flows' goodput changes by %+.1f%% [%+.1f, %+.1f] under RCM; want no loss beyond 5%%", *hot.Pct, *hot.PctLo, *hot.PctHi)
	}
}

// Figure 9, the paper's headline, web-search FCT, as a study on the
// 54-host fat tree of the paper's shape (preset default: the same links,
// buffers, DCQCN and load as rcm-fct-websearch, k = 6 instead of 12,
// where the runs fit the test budget; docs/rcm.md has the 432-host
// study), the mice flows' mean FCT paired by seed. The paper: more than
// 10% shorter under RCM (the model over 20 seeds: 17.7% [15.7, 19.7]).
// The test asks for RCM to be better than DCQCN with the whole 95%
// interval of the change below -5%, a bound eight seeds clear by six
// standard errors where the paper's 10% would leave three, and for SAR's
// share of the gain (RCM against RCM without SAR, paired) to be above
// zero with its whole interval: in the model SAR carries about half of
// it. RCC's hold and CFR's heavy-hitter test earn shares of a few
// points whose intervals reach zero on some seed sets; docs/rcm.md's
// ablation table measures them, Figure 7 and the focused tests test them.
func TestPaperFig9WebSearch(t *testing.T) {
	race.SkipLong(t)
	t.Parallel()
	r := study(t, "default", fig9Seeds, []string{"dcqcn", "rcm", "no-sar"},
		[]experiment.Variant{without("no-sar", "sar")})
	const m = "mean_fct_us"
	full := metricOf(t, r, experiment.GroupSize, "mice", "rcm", m).VsBaseline
	sar, sarLo, sarHi, sarV := pairedGain(t, r, experiment.GroupSize, "mice", m, "rcm", "no-sar", stats.LowerIsBetter)
	t.Logf("mice mean FCT against DCQCN over seeds %v: RCM %+.1f%% [%+.1f, %+.1f] (%s); SAR's share %+.1f points [%+.1f, %+.1f]",
		fig9Seeds, *full.Pct, *full.PctLo, *full.PctHi, full.Verdict, sar, sarLo, sarHi)
	if full.Verdict != string(stats.Better) || *full.PctHi > -fig9Bound {
		t.Errorf("RCM changes the mice flows' mean FCT by %+.1f%% [%+.1f, %+.1f], %s; want better, the interval below -%.0f%% (the paper: more than 10%% shorter)",
			*full.Pct, *full.PctLo, *full.PctHi, full.Verdict, fig9Bound)
	}
	if sarV != stats.Better {
		t.Errorf("SAR changes the mice FCT by %+.1f points [%+.1f, %+.1f]; want RCM significantly ahead of RCM without it", sar, sarLo, sarHi)
	}
}

// fig9Bound is the least gain, in percent, the whole interval of RCM's
// change of the mice flows' mean FCT must show in Figure 9.
const fig9Bound = 5.0
