package scenario

import (
	"sort"
	"testing"

	"github.com/p4rcm/p4rcm/internal/race"
	"github.com/p4rcm/p4rcm/sim"
)

// ns3Slice is the ns-3 RDMA simulator's own result on the first 2 ms of
// the benchmark input (the 1,389 flows of websearch30_10ms.flows.txt that
// start before 2.002 s), for each scheme with its reference configuration
// (testdata/ns3): FCT slowdown (fct / standalone fct of its fct.txt) at
// the 50th, 95th and 99th percentiles, sorted slowdowns at index
// floor(p n). Recorded with that simulator (commit 9f4be2a) built on this
// project's machine class; docs/validation.md gives the full input's.
var ns3Slice = []struct {
	scheme string
	flows  int
	pct    [3]float64
}{
	{"dcqcn", 1389, [3]float64{1.0353, 3.4109, 5.2342}},
	{"hpcc", 1389, [3]float64{1.1098, 2.3042, 3.2339}},
	{"dctcp", 1389, [3]float64{1.0480, 2.3017, 3.4819}},
	{"timely", 1389, [3]float64{1.0444, 3.8032, 7.8489}},
}

// TestNS3SliceAgreement holds each scheme to the ns-3 simulator's
// slowdowns on the slice: every percentile within 10%, the goal the
// full input meets too (docs/validation.md). A change to a scheme, the
// switch model or the NIC that moves the model away from the reference
// fails it without ns-3 at hand.
func TestNS3SliceAgreement(t *testing.T) {
	race.SkipLong(t)
	for _, ref := range ns3Slice {
		t.Run(ref.scheme, func(t *testing.T) {
			s, err := LoadPreset("bench-fat320")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Set("scheme", ref.scheme); err != nil {
				t.Fatal(err)
			}
			cfg, err := s.Build()
			if err != nil {
				t.Fatal(err)
			}
			var slice = cfg.Flows[:0:0]
			for _, f := range cfg.Flows {
				if f.Start < 2_002_000_000_000 {
					f.ID = len(slice)
					slice = append(slice, f)
				}
			}
			cfg.Flows = slice
			n, err := sim.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			n.Run()
			r := n.Results()
			if len(r.Flows) != ref.flows || r.Completed != ref.flows {
				t.Fatalf("%d flows, %d completed; ns-3 ran %d", len(r.Flows), r.Completed, ref.flows)
			}
			slow := make([]float64, len(r.Flows))
			for i, f := range r.Flows {
				slow[i] = float64(f.FCT) / float64(f.Ideal)
			}
			sort.Float64s(slow)
			for i, p := range []float64{0.5, 0.95, 0.99} {
				got := slow[int(p*float64(len(slow)))]
				diff := got/ref.pct[i] - 1
				t.Logf("p%.0f: %.4f, ns-3 %.4f (%+.1f%%)", 100*p, got, ref.pct[i], 100*diff)
				if diff > 0.10 || diff < -0.10 {
					t.Errorf("p%.0f slowdown %.4f, ns-3's %.4f: %+.1f%%, more than 10%% apart", 100*p, got, ref.pct[i], 100*diff)
				}
			}
		})
	}
}
