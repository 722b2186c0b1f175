package experiment

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteComparisonText writes the comparison for people: a headline, one
// table with a line per size class and scheme (completed flows, mean, p50
// and p99 FCT in microseconds, mean, p50 and p99 slowdown, and the changes of
// the mean FCT and mean slowdown against the baseline, "-12.3%" being
// better), the mean goodput of each flow class per scheme if the flows
// have classes, and each run's wall time or error, with its drops and
// go-back-N retransmissions when any run had some. Statistics of an empty
// set show as "-".
func WriteComparisonText(w io.Writer, r *Result) error {
	var buf bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&buf, format, args...) }
	p("experiment %s: schemes %s; seeds %s; baseline %s\n", r.Scenario, strings.Join(r.Schemes, ", "), joinSeeds(r.Seeds, ", "), r.Baseline)
	var classes []string
	for _, c := range SizeClasses {
		if c.Name != "all" {
			classes = append(classes, c.Name+" "+c.Label)
		}
	}
	p("size classes: %s; FCT in us\n\n", strings.Join(classes, ", "))

	incomplete := false
	for _, row := range r.SizeClasses {
		incomplete = incomplete || row.Incomplete > 0
	}
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	t := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	t("class\tscheme\tflows\t")
	if incomplete {
		t("incomplete\t")
	}
	t("mean FCT\tp50 FCT\tp99 FCT\tmean slowdown\tp50 slowdown\tp99 slowdown\tFCT vs %s\tslowdown vs %s\n", r.Baseline, r.Baseline)
	for _, row := range r.SizeClasses {
		t("%s\t%s\t%d\t", row.Class, row.Scheme, row.Count)
		if incomplete {
			t("%d\t", row.Incomplete)
		}
		t("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", usText(row, row.MeanFCTNs), usText(row, row.P50FCTNs), usText(row, row.P99FCTNs),
			slowText(row, row.MeanSlowdown), slowText(row, row.P50Slowdown), slowText(row, row.P99Slowdown),
			changeText(row, r.Baseline, row.MeanFCTChangePct), changeText(row, r.Baseline, row.MeanSlowdownChangePct))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if incomplete {
		p("flows counts the completed flows, whose FCTs these are; the incomplete ones (greedy, or cut off by stop) have none: each run's flows.csv gives the bytes they delivered and, when rates are sampled, rates.csv and the throughput plot their rate over time\n")
	}

	if len(r.FlowClasses) > 0 {
		p("\ngoodput Gb/s per flow class (mean over runs)\n")
		tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		t("class\t%s\n", strings.Join(r.Schemes, "\t"))
		for i := 0; i < len(r.FlowClasses); i += len(r.Schemes) {
			t("%s", classText(r.FlowClasses[i].Class))
			for _, row := range r.FlowClasses[i : i+len(r.Schemes)] {
				if row.GoodputGbps == nil {
					t("\t-")
				} else {
					t("\t%.3f", *row.GoodputGbps)
				}
			}
			t("\n")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	p("\n")
	tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	// Drops and go-back-N show only when some run had them (lossy and
	// LDCP runs), so that lossless comparisons keep their short table.
	lossy := false
	for i := range r.Runs {
		if sum := r.Runs[i].Summary; sum != nil && (sum.Drops.Total > 0 || sum.Run.Retransmits > 0) {
			lossy = true
		}
	}
	t("run\thosts\tflows\tcompleted\t")
	if lossy {
		t("drops\tretransmits\t")
	}
	t("wall s\tstatus\n")
	for i := range r.Runs {
		run := &r.Runs[i]
		completed, wall := "-", "-"
		drops, retx := "-", "-"
		if run.Summary != nil {
			completed = strconv.Itoa(run.Summary.Completed)
			drops = strconv.FormatInt(run.Summary.Drops.Total, 10)
			retx = fmt.Sprintf("%d by %d flows", run.Summary.Run.Retransmits, run.Summary.Run.RetransmitFlows)
		}
		if run.WallSeconds > 0 {
			wall = fmt.Sprintf("%.2f", run.WallSeconds)
		}
		status := "ok"
		if !run.OK() {
			status = "FAILED: " + run.Error
		}
		t("%s\t%s\t%s\t%s\t", run.Name(), countText(run.Hosts), countText(run.Flows), completed)
		if lossy {
			t("%s\t%s\t", drops, retx)
		}
		t("%s\t%s\n", wall, status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	p("wall time %.2f s for %d runs\n", r.WallSeconds, len(r.Runs))
	_, err := w.Write(buf.Bytes())
	return err
}

// usText shows a time in microseconds, "-" without completed flows
// (whose zero statistics mean nothing).
func usText(row Row, ns float64) string {
	if row.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", ns/1e3)
}

// slowText shows a slowdown, "-" without completed flows.
func slowText(row Row, x float64) string {
	if row.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

// changeText shows a change against the baseline, "+4.0%" or "-12.3%";
// the baseline's own row says so rather than "+0.0%".
func changeText(row Row, baseline string, c *float64) string {
	switch {
	case c == nil:
		return "-"
	case row.Scheme == baseline:
		return "baseline"
	}
	return fmt.Sprintf("%+.1f%%", *c)
}

// classText shows a flow class label, "(none)" for flows without one.
func classText(c string) string {
	if c == "" {
		return "(none)"
	}
	return c
}

// countText shows a count of a run that may not have been built, "-".
func countText(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// joinSeeds lists seeds for headlines.
func joinSeeds(seeds []uint64, sep string) string {
	s := make([]string, len(seeds))
	for i, seed := range seeds {
		s[i] = strconv.FormatUint(seed, 10)
	}
	return strings.Join(s, sep)
}

// csvHeader is the header of WriteComparisonCSV.
var csvHeader = []string{"group", "class", "scheme", "runs", "flows", "completed", "incomplete",
	"mean_fct_us", "p50_fct_us", "p95_fct_us", "p99_fct_us", "mean_slowdown", "p50_slowdown", "p95_slowdown", "p99_slowdown",
	"mean_fct_change_pct", "mean_slowdown_change_pct", "goodput_gbps"}

// WriteComparisonCSV writes one row per class and scheme: the size classes
// (group "size") then the flow classes (group "class"), under csvHeader's
// names. Times are microseconds with six decimals (the simulator's
// picoseconds), changes in percent with three, goodput in Gb/s with six,
// slowdowns in the shortest form that reads back as the same float64; a
// statistic of no completed flows, an undefined change and the goodput of
// a size class are empty. The output depends only on the runs' results,
// not on wall times or run order.
func WriteComparisonCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	us := func(row Row, ns float64) string {
		if row.Count == 0 {
			return ""
		}
		return strconv.FormatFloat(ns/1e3, 'f', 6, 64)
	}
	num := func(row Row, x float64) string {
		if row.Count == 0 {
			return ""
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	opt := func(x *float64, decimals int) string {
		if x == nil {
			return ""
		}
		return strconv.FormatFloat(*x, 'f', decimals, 64)
	}
	for _, rows := range [][]Row{r.SizeClasses, r.FlowClasses} {
		for _, row := range rows {
			rec := []string{row.Group, row.Class, row.Scheme, strconv.Itoa(row.Runs), strconv.Itoa(row.Flows),
				strconv.Itoa(row.Count), strconv.Itoa(row.Incomplete),
				us(row, row.MeanFCTNs), us(row, row.P50FCTNs), us(row, row.P95FCTNs), us(row, row.P99FCTNs),
				num(row, row.MeanSlowdown), num(row, row.P50Slowdown), num(row, row.P95Slowdown), num(row, row.P99Slowdown),
				opt(row.MeanFCTChangePct, 3), opt(row.MeanSlowdownChangePct, 3), opt(row.GoodputGbps, 6)}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes r as indented JSON: everything but the raw results
// (flows, ports, samples), which are in each run's directory. Empty lists
// are written as [], never null.
func WriteJSON(w io.Writer, r *Result) error {
	c := *r
	c.Schemes, c.Seeds, c.Runs = nonNil(c.Schemes), nonNil(c.Seeds), nonNil(c.Runs)
	c.SizeClasses, c.FlowClasses = nonNil(c.SizeClasses), nonNil(c.FlowClasses)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&c); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// nonNil returns s, or an empty slice for nil, so that JSON has [] and
// never null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
