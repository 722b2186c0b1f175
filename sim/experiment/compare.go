package experiment

import (
	"slices"

	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/report"
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

// Row is one scheme's figures for one class of flows, pooled over the
// scheme's good runs (all its seeds that ran without faults).
type Row struct {
	// Group is "size" for a flow-size class, "class" for a flow class
	// label (the scenario's workload or flow "class").
	Group  string `json:"group"`
	Class  string `json:"class"`
	Scheme string `json:"scheme"`
	// Runs is the number of good runs pooled, Flows the flows of the class
	// in them and Incomplete those that did not complete; the statistics
	// (report's definitions: nearest-rank percentiles, times in ns) cover
	// the FCTStats.Count completed ones.
	Runs       int `json:"runs"`
	Flows      int `json:"flows"`
	Incomplete int `json:"incomplete"`
	report.FCTStats
	// MeanFCTChangePct and MeanSlowdownChangePct are the changes of the
	// means against the baseline scheme's, in percent: negative is
	// better. Nil when either side has no completed flows.
	MeanFCTChangePct      *float64 `json:"mean_fct_change_pct"`
	MeanSlowdownChangePct *float64 `json:"mean_slowdown_change_pct"`
	// GoodputGbps, for flow classes only, is the mean over the good runs
	// of each run's report.ClassStats.GoodputGbps: what the class's flows
	// got while active, completed or not.
	GoodputGbps *float64 `json:"goodput_gbps,omitempty"`
}

// Row groups.
const (
	GroupSize  = "size"
	GroupClass = "class"
)

// Compare (re)computes SizeClasses and FlowClasses from Runs, Schemes and
// Baseline; Run calls it, and a hand-made or edited Result can too. Runs
// of one scheme are pooled in seed order, so the figures do not depend on
// the order of Runs.
func (r *Result) Compare() {
	byScheme := goodRuns(r)
	r.SizeClasses = []Row{}
	for _, c := range SizeClasses {
		for _, s := range r.Schemes {
			row := pool(byScheme[s], func(f *sim.FlowRecord) bool { return c.Contains(f.Size) })
			row.Group, row.Class, row.Scheme = GroupSize, c.Name, s
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
				row := pool(byScheme[s], func(f *sim.FlowRecord) bool { return f.Class == l })
				row.Group, row.Class, row.Scheme = GroupClass, l, s
				row.GoodputGbps = goodput(byScheme[s], l)
				r.FlowClasses = append(r.FlowClasses, row)
			}
		}
	}
	changes(r.SizeClasses, r.Baseline)
	changes(r.FlowClasses, r.Baseline)
}

// goodRuns groups the good runs by scheme, in seed order, which is the
// order their flows are pooled in.
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

// pool computes the statistics of the flows of runs that match.
func pool(runs []*RunResult, match func(*sim.FlowRecord) bool) Row {
	var flows []sim.FlowRecord
	for _, run := range runs {
		for i := range run.Results.Flows {
			if f := &run.Results.Flows[i]; match(f) {
				flows = append(flows, *f)
			}
		}
	}
	sum := report.Summarize(&sim.Results{Flows: flows}, report.SummaryOptions{EqualCountBins: -1})
	return Row{Runs: len(runs), Flows: sum.Flows, Incomplete: sum.Incomplete, FCTStats: sum.FCT}
}

// goodput is the mean over runs of the class's goodput, nil without runs.
func goodput(runs []*RunResult, class string) *float64 {
	if len(runs) == 0 {
		return nil
	}
	total := 0.0
	for _, run := range runs {
		sum := run.Summary
		if sum == nil {
			s := report.Summarize(run.Results, report.SummaryOptions{EqualCountBins: -1})
			sum = &s
		}
		for _, c := range sum.Classes {
			if c.Class == class {
				total += c.GoodputGbps
			}
		}
	}
	g := total / float64(len(runs))
	return &g
}

// changes fills in each row's change against the baseline's row of the
// same class.
func changes(rows []Row, baseline string) {
	for i := range rows {
		row := &rows[i]
		row.MeanFCTChangePct, row.MeanSlowdownChangePct = nil, nil
		j := slices.IndexFunc(rows, func(b Row) bool { return b.Class == row.Class && b.Scheme == baseline })
		if j < 0 || rows[j].Count == 0 || row.Count == 0 {
			continue
		}
		base := rows[j]
		row.MeanFCTChangePct = change(row.MeanFCTNs, base.MeanFCTNs)
		row.MeanSlowdownChangePct = change(row.MeanSlowdown, base.MeanSlowdown)
	}
}

// change is (x - base) / base in percent, nil when base is zero.
func change(x, base float64) *float64 {
	if base == 0 {
		return nil
	}
	c := (x - base) / base * 100
	return &c
}
