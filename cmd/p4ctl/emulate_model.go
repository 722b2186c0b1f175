package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"

	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/experiment"
	"github.com/p4rcm/p4rcm/stats"
)

// The model beside the emulation: emulate compare runs the simulator on
// the same scenario, schemes and seeds (p4ctl experiment's study, one
// run per seed, since the simulator repeats itself exactly) and sets
// each scheme's mean FCT beside the emulated one, so that a reader sees
// at once where real packets depart from the model. Both means are over
// the flows that both completed, run by run: a scenario cut off by its
// stop time reports the flows that finished before it, and one flow
// finishing just before the stop in one and just after it in the other
// would move a mean over all completed flows by more than the emulation
// departs (15% on a k=4 fat tree, for one 1 MB flow).

// flowFCTs keeps the FCT of every flow of every run, emulated and
// modelled, by scheme: 0 for a flow that did not complete.
type flowFCTs struct {
	mu       sync.Mutex
	scheme   map[string]string // schemeKey -> the scheme's name
	emulated map[string][]seedFCTs
	model    map[string]map[uint64][]int64
}

// seedFCTs is one emulated run's FCTs, with its seed.
type seedFCTs struct {
	seed uint64
	fct  []int64
}

func newFlowFCTs(schemes []string, cfgs []sim.Config) *flowFCTs {
	f := &flowFCTs{scheme: map[string]string{}, emulated: map[string][]seedFCTs{}, model: map[string]map[uint64][]int64{}}
	for i := range cfgs {
		f.scheme[schemeKey(&cfgs[i])] = schemes[i]
	}
	return f
}

// fcts is each flow's FCT in res, 0 where it did not complete.
func fcts(res *sim.Results) []int64 {
	out := make([]int64, len(res.Flows))
	for i, fl := range res.Flows {
		if fl.Finish > 0 {
			out[i] = fl.FCT
		}
	}
	return out
}

// addEmulated takes an emulated run of cfg.
func (f *flowFCTs) addEmulated(cfg *sim.Config, res *sim.Results) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := f.scheme[schemeKey(cfg)]
	f.emulated[name] = append(f.emulated[name], seedFCTs{cfg.Seed, fcts(res)})
}

// addModel takes a simulated run of cfg.
func (f *flowFCTs) addModel(cfg *sim.Config, res *sim.Results) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := f.scheme[schemeKey(cfg)]
	if f.model[name] == nil {
		f.model[name] = map[uint64][]int64{}
	}
	f.model[name][cfg.Seed] = fcts(res)
}

// runModel runs spec's study in the simulator, keeping its runs' FCTs in
// f.
func runModel(ctx context.Context, spec experiment.Spec, f *flowFCTs) error {
	spec.Emulated, spec.Repeat, spec.Progress = false, 0, nil
	spec.Jobs = 0
	spec.Runner = func(_ context.Context, cfg sim.Config) (*sim.Results, error) {
		res, err := sim.Run(cfg)
		if err == nil {
			f.addModel(&cfg, res)
		}
		return res, err
	}
	_, err := experiment.Run(ctx, spec)
	return err
}

// common is the mean FCT, us, of the flows that completed in both a and
// b, in each, and how many there were.
func common(a, b []int64) (ma, mb float64, n int) {
	if len(a) != len(b) {
		return 0, 0, 0
	}
	for i := range a {
		if a[i] > 0 && b[i] > 0 {
			ma += float64(a[i])
			mb += float64(b[i])
			n++
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	return ma / float64(n) / 1e6, mb / float64(n) / 1e6, n
}

// write prints, for each scheme, the mean FCT of the flows completed both
// emulated and in the model, run by run: the emulated mean with its 95%
// interval over the runs, the model's on the same flows, and the
// departure.
func (f *flowFCTs) write(w io.Writer, schemes []string) error {
	fmt.Fprintln(w, "\nthe model beside it: mean FCT, us, of the flows completed both emulated and simulated on the same seed (p4ctl experiment), ± half the 95% interval over the runs")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scheme\tflows\temulated\tmodel\temulated vs model")
	for _, s := range schemes {
		var emu, mod []float64
		flows := 0
		for _, run := range f.emulated[s] {
			e, m, n := common(run.fct, f.model[s][run.seed])
			if n == 0 {
				continue
			}
			emu, mod = append(emu, e), append(mod, m)
			flows += n
		}
		if len(emu) == 0 {
			fmt.Fprintf(tw, "%s\t0\t-\t-\t-\n", s)
			continue
		}
		e, m := stats.MeanInterval(emu, 0.95), stats.MeanInterval(mod, 0.95)
		text := fmt.Sprintf("%.3f", e.Mean)
		if e.Defined() {
			text += fmt.Sprintf(" ± %.3f", e.HalfWidth())
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%.3f\t%+.1f%%\n", s, float64(flows)/float64(len(emu)), text, m.Mean, 100*(e.Mean/m.Mean-1))
	}
	return tw.Flush()
}
