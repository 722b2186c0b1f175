package main

import (
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/sim"
)

// The model's line sets the emulated and the modelled mean FCT over the
// flows both completed, run by run: a flow only one of them completed
// (cut off by the stop time in the other) counts in neither.
func TestModelLineOverFlowsBothCompleted(t *testing.T) {
	cfgs := []sim.Config{{CC: "dcqcn", Seed: 1}}
	f := newFlowFCTs([]string{"dcqcn"}, cfgs)
	us := func(xs ...int64) *sim.Results {
		r := &sim.Results{}
		for _, x := range xs {
			fl := sim.FlowRecord{FCT: x * 1e6}
			if x > 0 {
				fl.Finish = 1
			}
			r.Flows = append(r.Flows, fl)
		}
		return r
	}
	f.addModel(&cfgs[0], us(10, 0, 30, 40))
	f.addEmulated(&cfgs[0], us(12, 20, 0, 44)) // flows 0 and 3 in both: 28 against 25
	f.addEmulated(&cfgs[0], us(11, 20, 0, 41)) // 26 against 25
	var b strings.Builder
	if err := f.write(&b, []string{"dcqcn"}); err != nil {
		t.Fatal(err)
	}
	want := "dcqcn   2      27.000 ± 12.706  25.000  +8.0%"
	if !strings.Contains(b.String(), want) {
		t.Errorf("got\n%s\nwant a line %q", b.String(), want)
	}
}
