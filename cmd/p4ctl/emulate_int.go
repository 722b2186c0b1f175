//go:build linux

package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/p4rcm/p4rcm/emulate"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/stats"
)

// The queue an emulated run's data packets found at the switch port
// facing their receiver, from the INT its last switch pushed into them
// (emulate --int, and always under hpcc): rcm.p4 counts no queue peaks,
// and this is the bottleneck of an incast.

// writeINTQueue is emulate's line for one run, if its packets carried
// INT.
func writeINTQueue(w io.Writer, out *emulate.Outcome) error {
	q := out.LastHopQueue()
	if q.Samples == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "INT: at the switch ports facing the receivers, %d data packets found %.1f KB queued behind them on average, %.1f KB at most\n",
		q.Samples, q.Mean()/1e3, float64(q.Max)/1e3)
	return err
}

// intQueues gathers, run by run, each scheme's queue at the receivers'
// ports, for emulate compare.
type intQueues struct {
	scheme    map[string]string // schemeKey -> the scheme's name
	order     []string
	mean, max map[string][]float64
}

func newINTQueues(schemes []string, cfgs []sim.Config) *intQueues {
	q := &intQueues{scheme: map[string]string{}, order: schemes, mean: map[string][]float64{}, max: map[string][]float64{}}
	for i := range cfgs {
		q.scheme[schemeKey(&cfgs[i])] = schemes[i]
	}
	return q
}

// schemeKey tells apart the configurations of the schemes a comparison
// runs, whatever the seed: the hosts' scheme, PFC, and RCM with or
// without SAR.
func schemeKey(cfg *sim.Config) string {
	rcm := "-"
	if cfg.RCM != nil {
		rcm = fmt.Sprintf("sar=%v", cfg.RCM.SAR)
	}
	return fmt.Sprintf("%s/pfc=%v/%s", cfg.CC, cfg.PFC, rcm)
}

// add takes a run of cfg.
func (q *intQueues) add(cfg *sim.Config, out *emulate.Outcome) {
	s := out.LastHopQueue()
	name, ok := q.scheme[schemeKey(cfg)]
	if !ok || s.Samples == 0 {
		return
	}
	q.mean[name] = append(q.mean[name], s.Mean())
	q.max[name] = append(q.max[name], float64(s.Max))
}

// write prints each scheme's mean and largest queue over its runs, with
// 95% intervals, if any run's packets carried INT.
func (q *intQueues) write(w io.Writer) error {
	if len(q.mean) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nqueue at the switch ports facing the receivers, KB, from the INT the data packets carried (means over runs, ± half their 95% interval)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scheme\truns\tmean queue\tlargest queue")
	for _, name := range q.order {
		if len(q.mean[name]) == 0 {
			fmt.Fprintf(tw, "%s\t0\t-\t-\n", name)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", name, len(q.mean[name]), kbInterval(q.mean[name]), kbInterval(q.max[name]))
	}
	return tw.Flush()
}

// kbInterval is the mean of xs (bytes) in KB, with half its 95% interval
// when there are two or more.
func kbInterval(xs []float64) string {
	iv := stats.MeanInterval(xs, stats.DefaultLevel)
	if !iv.Defined() {
		return fmt.Sprintf("%.2f", iv.Mean/1e3)
	}
	return fmt.Sprintf("%.2f ± %.2f", iv.Mean/1e3, iv.HalfWidth()/1e3)
}
