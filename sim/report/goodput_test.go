package report

import (
	"math"
	"testing"

	"github.com/p4rcm/p4rcm/sim"
)

// TestClassGoodputCountsIncompleteFlows: a long-running flow that never
// completes still shows what it got.
func TestClassGoodputCountsIncompleteFlows(t *testing.T) {
	r := &sim.Results{End: 1_000_000, Flows: []sim.FlowRecord{
		// 1000 B in 1000 ns: 8 Gb/s.
		{ID: 0, Size: 1000, Start: 0, Finish: 1_000_000, FCT: 1_000_000, Ideal: 500_000, Slowdown: 2, Delivered: 1000, Class: "x"},
		// 500 B by the end of the run at 1000 ns: 4 Gb/s.
		{ID: 1, Size: 1 << 40, Start: 0, Delivered: 500, Class: "x"},
		// Started at the very end: no time active, not counted.
		{ID: 2, Size: 1 << 40, Start: 1_000_000, Class: "x"},
	}}
	s := Summarize(r, SummaryOptions{})
	if len(s.Classes) != 1 {
		t.Fatalf("classes %+v", s.Classes)
	}
	if g := s.Classes[0].GoodputGbps; math.Abs(g-6) > 1e-9 {
		t.Errorf("class goodput %.6f Gb/s, want 6", g)
	}
}
