package experiment

import (
	"math"
	"slices"

	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/report"
	"github.com/p4rcm/p4rcm/stats"
)

// SizeClass is a range of flow sizes: LoBytes <= size < HiBytes, HiBytes
// 0 meaning no upper bound.
type SizeClass struct {
	Name    string `json:"name"`
	Label   string `json:"label"`
	LoBytes int64  `json:"lo_bytes"`
	HiBytes int64  `json:"hi_bytes"`
}

// Contains tells whether a flow of size bytes is in the class.
func (c SizeClass) Contains(size int64) bool {
	return size >= c.LoBytes && (c.HiBytes == 0 || size < c.HiBytes)
}

// SizeClasses are the flow-size classes of the RCM paper's evaluation,
// where regional congestion hurts mice and elephants differently, and all
// flows. 1 MB is 1,000,000 bytes, as in sim/report.
var SizeClasses = []SizeClass{
	{Name: "mice", Label: "< 1 MB", LoBytes: 0, HiBytes: 1_000_000},
	{Name: "medium", Label: "1-10 MB", LoBytes: 1_000_000, HiBytes: 10_000_000},
	{Name: "elephants", Label: ">= 10 MB", LoBytes: 10_000_000},
	{Name: "all", Label: "all sizes"},
}

// MiceClass is the name of the size class of the FCT CDF plot.
const MiceClass = "mice"

// Row groups.
const (
	GroupSize  = "size"
	GroupClass = "class"
)

// Metric is one figure each run gives for a class of flows. The study's
// statistics take the run as the sample: a metric's mean and interval are
// over runs, never over the flows pooled from several runs, which are
// not independent (flows of one run share its queues).
type Metric struct {
	// Name is the metric's key in CSV and JSON; Label its name for
	// people.
	Name, Label string
	// Dir says which way is better.
	Dir stats.Direction
	// ClassOnly metrics exist for flow classes (labels), not size classes.
	ClassOnly bool
	// of reads the metric from a run's figures for a class; false when
	// the run has no value (no completed flow of the class).
	of func(c classFigures) (float64, bool)
}

// classFigures are one run's figures for one class of flows.
type classFigures struct {
	fct     report.FCTStats
	goodput *float64
}

// fctMetric is a metric of the completed flows' FCT statistics.
func fctMetric(name, label string, get func(report.FCTStats) float64) Metric {
	return Metric{Name: name, Label: label, Dir: stats.LowerIsBetter, of: func(c classFigures) (float64, bool) {
		return get(c.fct), c.fct.Count > 0
	}}
}

// Metrics are the per-run metrics every comparison reports, in the order
// of CSV rows and JSON lists. FCTs are in microseconds.
var Metrics = []Metric{
	fctMetric("mean_fct_us", "mean FCT", func(s report.FCTStats) float64 { return s.MeanFCTNs / 1e3 }),
	fctMetric("p50_fct_us", "p50 FCT", func(s report.FCTStats) float64 { return s.P50FCTNs / 1e3 }),
	fctMetric("p95_fct_us", "p95 FCT", func(s report.FCTStats) float64 { return s.P95FCTNs / 1e3 }),
	fctMetric("p99_fct_us", "p99 FCT", func(s report.FCTStats) float64 { return s.P99FCTNs / 1e3 }),
	fctMetric("mean_slowdown", "mean slowdown", func(s report.FCTStats) float64 { return s.MeanSlowdown }),
	fctMetric("p50_slowdown", "p50 slowdown", func(s report.FCTStats) float64 { return s.P50Slowdown }),
	fctMetric("p95_slowdown", "p95 slowdown", func(s report.FCTStats) float64 { return s.P95Slowdown }),
	fctMetric("p99_slowdown", "p99 slowdown", func(s report.FCTStats) float64 { return s.P99Slowdown }),
	{Name: "goodput_gbps", Label: "goodput Gb/s", Dir: stats.HigherIsBetter, ClassOnly: true,
		of: func(c classFigures) (float64, bool) {
			if c.goodput == nil {
				return 0, false
			}
			return *c.goodput, true
		}},
}

// MetricByName finds a metric of Metrics.
func MetricByName(name string) (Metric, bool) {
	i := slices.IndexFunc(Metrics, func(m Metric) bool { return m.Name == name })
	if i < 0 {
		return Metric{}, false
	}
	return Metrics[i], true
}

// Row is one scheme's figures for one class of flows at one point.
type Row struct {
	// Group is "size" for a flow-size class, "class" for a flow class
	// label (the scenario's workload or flow "class").
	Group  string `json:"group"`
	Class  string `json:"class"`
	Scheme string `json:"scheme"`
	// Runs is the number of the scheme's good runs; Flows counts the
	// class's flows in them, Completed those that completed and
	// Incomplete the others.
	Runs       int `json:"runs"`
	Flows      int `json:"flows"`
	Completed  int `json:"completed"`
	Incomplete int `json:"incomplete"`
	// Metrics are the class's metrics, in the order of Metrics (the
	// class-only ones for flow classes only).
	Metrics []MetricStats `json:"metrics"`
}

// Metric finds one of the row's metrics by name; nil if it has none.
func (r Row) Metric(name string) *MetricStats {
	for i := range r.Metrics {
		if r.Metrics[i].Metric == name {
			return &r.Metrics[i]
		}
	}
	return nil
}

// MetricStats is a metric over the runs of one scheme: each run's value,
// their mean and its confidence interval, and the paired comparison with
// the baseline's runs. Figures that cannot be given (no run with a
// value; an interval of one run) are null in JSON.
type MetricStats struct {
	Metric string `json:"metric"`
	// Values are the runs' values in seed (then repetition) order.
	Values []RunValue `json:"values"`
	Mean   *float64   `json:"mean"`
	// SD is the runs' standard deviation; CILo and CIHi the interval of
	// the mean (Student t), from two runs on.
	SD   *float64 `json:"sd"`
	CILo *float64 `json:"ci_lo"`
	CIHi *float64 `json:"ci_hi"`
	// VsBaseline compares the scheme with the baseline, absent in the
	// baseline's own row.
	VsBaseline *Change `json:"vs_baseline,omitempty"`

	iv stats.Interval
}

// RunValue is one run's value of a metric.
type RunValue struct {
	Seed  uint64  `json:"seed"`
	Rep   int     `json:"rep,omitempty"`
	Value float64 `json:"value"`
}

// Interval is the metric's mean and interval over runs.
func (m *MetricStats) Interval() stats.Interval { return m.iv }

// Change is a scheme's metric against the baseline's, paired by seed (and
// repetition): the mean of the per-seed differences and its interval, in
// the metric's unit and relative to the baseline's mean over the same
// seeds in percent, the paired t test's p-value and its verdict.
type Change struct {
	Pairs   int      `json:"pairs"`
	Diff    *float64 `json:"diff"`
	DiffLo  *float64 `json:"diff_lo"`
	DiffHi  *float64 `json:"diff_hi"`
	Pct     *float64 `json:"pct"`
	PctLo   *float64 `json:"pct_lo"`
	PctHi   *float64 `json:"pct_hi"`
	P       *float64 `json:"p_value"`
	Verdict string   `json:"verdict"`

	paired stats.Paired
}

// Paired is the comparison as the stats package gives it.
func (c *Change) Paired() stats.Paired { return c.paired }

// Compare (re)computes SizeClasses and FlowClasses from Runs, Schemes,
// Baseline and Level; Run calls it, and a hand-made or edited Result can
// too. Nothing depends on the order of Runs.
func (r *Result) Compare() {
	if r.Level == 0 {
		r.Level = stats.DefaultLevel
	}
	byScheme := goodRuns(r)
	r.SizeClasses = []Row{}
	for _, c := range SizeClasses {
		for _, s := range r.Schemes {
			row := r.row(byScheme[s], GroupSize, c.Name, func(f *sim.FlowRecord) bool { return c.Contains(f.Size) })
			row.Scheme = s
			r.SizeClasses = append(r.SizeClasses, row)
		}
	}

	// Flow classes: every label a flow of a good run carries, by name.
	seen, hasLabel := map[string]bool{}, false
	for _, rs := range byScheme {
		for _, run := range rs {
			for i := range run.Results.Flows {
				l := run.Results.Flows[i].Class
				seen[l], hasLabel = true, hasLabel || l != ""
			}
		}
	}
	r.FlowClasses = []Row{}
	if hasLabel {
		labels := make([]string, 0, len(seen))
		for l := range seen {
			labels = append(labels, l)
		}
		slices.Sort(labels)
		for _, l := range labels {
			for _, s := range r.Schemes {
				row := r.row(byScheme[s], GroupClass, l, func(f *sim.FlowRecord) bool { return f.Class == l })
				row.Scheme = s
				r.FlowClasses = append(r.FlowClasses, row)
			}
		}
	}
	r.changes(r.SizeClasses)
	r.changes(r.FlowClasses)
}

// goodRuns groups the good runs by scheme, in seed (then repetition)
// order.
func goodRuns(r *Result) map[string][]*RunResult {
	runs := make([]*RunResult, 0, len(r.Runs))
	for i := range r.Runs {
		if r.Runs[i].OK() {
			runs = append(runs, &r.Runs[i])
		}
	}
	order := runOrder(r.Schemes)
	slices.SortStableFunc(runs, func(a, b *RunResult) int { return order(*a, *b) })
	by := map[string][]*RunResult{}
	for _, run := range runs {
		by[run.Scheme] = append(by[run.Scheme], run)
	}
	return by
}

// row computes one class's metrics over runs, each run's from its own
// flows that match.
func (r *Result) row(runs []*RunResult, group, class string, match func(*sim.FlowRecord) bool) Row {
	row := Row{Group: group, Class: class, Runs: len(runs)}
	figs := make([]classFigures, len(runs))
	for i, run := range runs {
		var flows []sim.FlowRecord
		for j := range run.Results.Flows {
			if f := &run.Results.Flows[j]; match(f) {
				flows = append(flows, *f)
			}
		}
		sum := report.Summarize(&sim.Results{Flows: flows}, report.SummaryOptions{EqualCountBins: -1})
		row.Flows += sum.Flows
		row.Completed += sum.FCT.Count
		row.Incomplete += sum.Incomplete
		figs[i].fct = sum.FCT
		if group == GroupClass && len(flows) > 0 {
			figs[i].goodput = classGoodput(run, class)
		}
	}
	for _, m := range Metrics {
		if m.ClassOnly && group != GroupClass {
			continue
		}
		ms := MetricStats{Metric: m.Name, Values: []RunValue{}}
		var xs []float64
		for i, run := range runs {
			if v, ok := m.of(figs[i]); ok {
				ms.Values = append(ms.Values, RunValue{Seed: run.Seed, Rep: run.Rep, Value: v})
				xs = append(xs, v)
			}
		}
		ms.iv = stats.MeanInterval(xs, r.Level)
		ms.Mean, ms.SD, ms.CILo, ms.CIHi = num(ms.iv.Mean), num(ms.iv.SD), num(ms.iv.Lo), num(ms.iv.Hi)
		row.Metrics = append(row.Metrics, ms)
	}
	return row
}

// classGoodput is the run's goodput of a flow class (report's
// definition: what the class's flows got while active), nil if the run
// has none of its flows.
func classGoodput(run *RunResult, class string) *float64 {
	sum := run.Summary
	if sum == nil {
		s := report.Summarize(run.Results, report.SummaryOptions{EqualCountBins: -1})
		sum = &s
	}
	for _, c := range sum.Classes {
		if c.Class == class {
			g := c.GoodputGbps
			return &g
		}
	}
	return nil
}

// changes compares each row's metrics with the baseline's row of the
// same class, pairing the runs by seed and repetition.
func (r *Result) changes(rows []Row) {
	for i := range rows {
		row := &rows[i]
		if row.Scheme == r.Baseline {
			continue
		}
		j := slices.IndexFunc(rows, func(b Row) bool { return b.Class == row.Class && b.Scheme == r.Baseline })
		if j < 0 {
			continue
		}
		for k := range row.Metrics {
			m := &row.Metrics[k]
			base := rows[j].Metric(m.Metric)
			metric, _ := MetricByName(m.Metric)
			m.VsBaseline = pairUp(m.Values, base.Values, r.Level, metric.Dir)
		}
	}
}

// pairUp compares xs with base on the runs both have, nil when they
// share none.
func pairUp(xs, base []RunValue, level float64, dir stats.Direction) *Change {
	byKey := make(map[pairKey]float64, len(base))
	for _, b := range base {
		byKey[pairKey{b.Seed, b.Rep}] = b.Value
	}
	var a, b []float64
	for _, x := range xs {
		if v, ok := byKey[pairKey{x.Seed, x.Rep}]; ok {
			a, b = append(a, x.Value), append(b, v)
		}
	}
	if len(a) == 0 {
		return nil
	}
	p := stats.PairedT(a, b, level, dir)
	c := &Change{Pairs: len(a), Diff: num(p.Diff.Mean), DiffLo: num(p.Diff.Lo), DiffHi: num(p.Diff.Hi),
		P: num(p.P), Verdict: string(p.Verdict), paired: p}
	pct, lo, hi := p.Change()
	c.Pct, c.PctLo, c.PctHi = num(pct), num(lo), num(hi)
	return c
}

// num is x for JSON: nil for NaN and infinities, which JSON cannot hold
// and which here mean "cannot be given".
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
