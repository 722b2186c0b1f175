package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/p4rcm/p4rcm/sim/experiment"
)

// The model beside the emulation: emulate compare runs the simulator on
// the same scenario, schemes and seeds (p4ctl experiment's study, one
// run per seed, since the simulator repeats itself exactly) and sets
// each scheme's mean FCT over all flows beside the emulated one, so that
// a reader sees at once where real packets depart from the model.

// modelStudy runs spec's study in the simulator.
func modelStudy(ctx context.Context, spec experiment.Spec) (*experiment.Study, error) {
	spec.Runner, spec.Emulated, spec.Repeat, spec.Progress = nil, false, 0, nil
	spec.Jobs = 0
	return experiment.Run(ctx, spec)
}

// meanFCT is scheme's mean FCT over all flows in study's only point, us,
// with its interval; nil if it has none.
func meanFCT(study *experiment.Study, scheme string) *experiment.MetricStats {
	if len(study.Points) != 1 {
		return nil
	}
	for _, r := range study.Points[0].SizeClasses {
		if r.Scheme == scheme && r.Class == "all" {
			return r.Metric("mean_fct_us")
		}
	}
	return nil
}

// writeModel prints the emulated and the modelled mean FCT of each scheme
// with their 95% intervals and the emulated one's departure from the
// model.
func writeModel(w io.Writer, schemes []string, emulated, model *experiment.Study) error {
	fmt.Fprintln(w, "\nthe model beside it: mean FCT of all flows, us, emulated and simulated on the same seeds (p4ctl experiment), ± half the 95% interval")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scheme\temulated\tmodel\temulated vs model")
	for _, s := range schemes {
		e, m := meanFCT(emulated, s), meanFCT(model, s)
		if e == nil || m == nil || e.Mean == nil || m.Mean == nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\n", s)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+.1f%%\n", s, fctInterval(e), fctInterval(m), 100*(*e.Mean / *m.Mean - 1))
	}
	return tw.Flush()
}

// fctInterval is a metric's mean, with half its interval where it has
// one.
func fctInterval(m *experiment.MetricStats) string {
	iv := m.Interval()
	if !iv.Defined() {
		return fmt.Sprintf("%.3f", *m.Mean)
	}
	return fmt.Sprintf("%.3f ± %.3f", *m.Mean, iv.HalfWidth())
}
