package experiment

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/p4rcm/p4rcm/stats"
)

// WriteStudyText writes the study for people: without a sweep, what
// WriteComparisonText writes; with one, each point's tables under its
// values, a summary of the mean FCT changes at every point, and one table
// of all runs.
func WriteStudyText(w io.Writer, st *Study) error {
	if !st.Swept() {
		return WriteComparisonText(w, st.Points[0])
	}
	var buf bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&buf, format, args...) }
	paths := make([]string, len(st.Vary))
	for i, v := range st.Vary {
		paths[i] = v.Path + " = " + strings.Join(v.Values, ", ")
	}
	p("study %s: %d points (%s); schemes %s; %s; baseline %s\n", st.Scenario, len(st.Points), strings.Join(paths, "; "),
		strings.Join(st.Schemes, ", "), seedsText(st.Seeds, st.Repeat), st.Baseline)
	p("%s%s\n", variantsText(st.Variants), legend(st.Points[0]))
	for i, r := range st.Points {
		p("\npoint %d of %d: %s\n", i+1, len(st.Points), PointName(r.Point))
		if err := writeTables(&buf, r); err != nil {
			return err
		}
	}
	if err := writeSweepSummary(&buf, st); err != nil {
		return err
	}
	p("\n")
	var runs []*RunResult
	var names []string
	for _, r := range st.Points {
		for i := range r.Runs {
			runs = append(runs, &r.Runs[i])
			names = append(names, PointName(r.Point))
		}
	}
	if err := writeRunsTable(&buf, runs, names); err != nil {
		return err
	}
	p("%s\n", wallText(st.WallSeconds, st.ReportSeconds, len(runs)))
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteComparisonText writes one point's comparison for people: a
// headline, one table with a line per size class and scheme (completed
// flows; mean, p50 and p99 FCT in microseconds; mean, p50 and p99
// slowdown; the changes of the mean FCT and mean slowdown against the
// baseline, "-12.3%" being better), the goodput of each flow class per
// scheme if the flows have classes, and each run's wall time or error,
// with its drops and go-back-N retransmissions when any run had some.
//
// Every figure is the mean over the scheme's runs of each run's own
// figure. From two runs on, means carry "± h" (half their confidence
// interval) and changes their interval and the paired test's verdict
// ("better", "worse", "n.s."); with one, the text says that no interval
// can be given. Statistics of an empty set show as "-".
func WriteComparisonText(w io.Writer, r *Result) error {
	var buf bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&buf, format, args...) }
	p("experiment %s: schemes %s; %s; baseline %s\n", r.Scenario, strings.Join(r.Schemes, ", "), seedsText(r.Seeds, r.Repeat), r.Baseline)
	p("%s%s\n\n", variantsText(r.Variants), legend(r))
	if err := writeTables(&buf, r); err != nil {
		return err
	}
	p("\n")
	runs := make([]*RunResult, len(r.Runs))
	for i := range r.Runs {
		runs[i] = &r.Runs[i]
	}
	if err := writeRunsTable(&buf, runs, nil); err != nil {
		return err
	}
	p("%s\n", wallText(r.WallSeconds, r.ReportSeconds, len(r.Runs)))
	_, err := w.Write(buf.Bytes())
	return err
}

// variantsText says what each variant is, a line each: "variant no-sar:
// rcm with rcm.sar=false".
func variantsText(vs []Variant) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "variant %s: %s", v.Name, v.Scheme)
		for i, a := range v.Set {
			sep := ", "
			if i == 0 {
				sep = " with "
			}
			fmt.Fprintf(&b, "%s%s=%s", sep, a.Path, a.Value)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// wallText is the study's wall time, and how much of it went into
// comparing, plotting and writing rather than running.
func wallText(wall, report float64, runs int) string {
	s := fmt.Sprintf("wall time %.2f s for %d runs", wall, runs)
	if report > 0 && wall > 0 {
		s += fmt.Sprintf(", %.2f s of it (%.1f%%) comparing, plotting and writing", report, 100*report/wall)
	}
	return s
}

// legend says what the tables hold.
func legend(r *Result) string {
	var classes []string
	for _, c := range SizeClasses {
		if c.Name != "all" {
			classes = append(classes, c.Name+" "+c.Label)
		}
	}
	s := fmt.Sprintf("size classes: %s; FCT in us", strings.Join(classes, ", "))
	if runsPerScheme(r) > 1 {
		by := "seed"
		if r.Repeat > 1 {
			by = "seed and repetition"
		}
		s += fmt.Sprintf("\nfigures are means over runs, ± half their %s interval (Student t); changes against %s are paired by %s: mean [%s interval] and the paired t test's verdict (n.s.: no significant difference)",
			levelText(r.Level), r.Baseline, by, levelText(r.Level))
	}
	return s
}

// runsPerScheme is the number of runs each scheme has at a point.
func runsPerScheme(r *Result) int { return len(r.Seeds) * max(1, r.Repeat) }

// seedsText is "seeds 1, 2, 3" and, with repetitions, "x 5 repetitions".
func seedsText(seeds []uint64, repeat int) string {
	s := "seeds " + joinSeeds(seeds, ", ")
	if repeat > 1 {
		s += fmt.Sprintf(" x %d repetitions", repeat)
	}
	return s
}

// levelText is "95%".
func levelText(level float64) string {
	if level == 0 {
		level = stats.DefaultLevel
	}
	return strconv.FormatFloat(level*100, 'f', -1, 64) + "%"
}

// writeTables writes a point's size-class table and, if the flows have
// classes, its goodput table.
func writeTables(buf *bytes.Buffer, r *Result) error {
	p := func(format string, args ...any) { fmt.Fprintf(buf, format, args...) }
	incomplete := false
	used := map[string]bool{} // classes that hold a flow under some scheme
	for _, row := range r.SizeClasses {
		incomplete = incomplete || row.Incomplete > 0
		used[row.Class] = used[row.Class] || row.Completed+row.Incomplete > 0
	}
	var empty []string
	for _, row := range r.SizeClasses {
		if !used[row.Class] && !slices.Contains(empty, row.Class) {
			empty = append(empty, row.Class)
		}
	}
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	t := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	t("class\tscheme\tflows\t")
	if incomplete {
		t("incomplete\t")
	}
	t("mean FCT\tp50 FCT\tp99 FCT\tmean slowdown\tp50 slowdown\tp99 slowdown\tFCT vs %s\tslowdown vs %s\n", r.Baseline, r.Baseline)
	for _, row := range r.SizeClasses {
		if !used[row.Class] {
			continue
		}
		t("%s\t%s\t%d\t", row.Class, row.Scheme, row.Completed)
		if incomplete {
			t("%d\t", row.Incomplete)
		}
		t("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			meanText(row.Metric("mean_fct_us"), 3, true), meanText(row.Metric("p50_fct_us"), 3, false), meanText(row.Metric("p99_fct_us"), 3, false),
			meanText(row.Metric("mean_slowdown"), 2, true), meanText(row.Metric("p50_slowdown"), 2, false), meanText(row.Metric("p99_slowdown"), 2, false),
			changeText(row, r.Baseline, row.Metric("mean_fct_us")), changeText(row, r.Baseline, row.Metric("mean_slowdown")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(empty) > 0 {
		p("no flow of the scenario is in %s: left out\n", strings.Join(empty, " or "))
	}
	if incomplete {
		p("flows counts the completed flows, whose FCTs these are; the incomplete ones (greedy, or cut off by stop) have none: each run's flows.csv gives the bytes they delivered and, when rates are sampled, rates.csv and the throughput plot their rate over time\n")
	}
	if runsPerScheme(r) < 2 {
		if r.Emulated {
			// On real packets two runs of one seed differ as much as
			// two schemes may: repetitions are the samples.
			p("one run per scheme: no interval or significance can be given (they need at least 2 runs; on real packets the machine, not the seed, is the noise: give --repeat 5 or more for intervals narrow enough to decide)\n")
		} else {
			p("one run per scheme: no interval or significance can be given (they need at least 2 seeds; give --seeds 5 or more for intervals narrow enough to decide)\n")
		}
	}

	if len(r.FlowClasses) > 0 {
		p("\ngoodput Gb/s per flow class\n")
		tw = tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
		t("class\tscheme\truns\tgoodput\tvs %s\n", r.Baseline)
		for _, row := range r.FlowClasses {
			g := row.Metric("goodput_gbps")
			t("%s\t%s\t%d\t%s\t%s\n", classText(row.Class), row.Scheme, len(g.Values), meanText(g, 3, true), changeText(row, r.Baseline, g))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// writeSweepSummary writes the change of each size class's mean FCT (and
// each flow class's goodput) against the baseline at every point.
func writeSweepSummary(buf *bytes.Buffer, st *Study) error {
	if len(st.Schemes) < 2 {
		return nil
	}
	for _, part := range []struct {
		title, metric string
		rows          func(*Result) []Row
	}{
		{"mean FCT", "mean_fct_us", func(r *Result) []Row { return r.SizeClasses }},
		{"goodput", "goodput_gbps", func(r *Result) []Row { return r.FlowClasses }},
	} {
		if len(part.rows(st.Points[0])) == 0 {
			continue
		}
		fmt.Fprintf(buf, "\n%s against %s at each point\n", part.title, st.Baseline)
		tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
		for _, v := range st.Vary {
			fmt.Fprintf(tw, "%s\t", v.Path)
		}
		fmt.Fprintf(tw, "class")
		for _, s := range st.Schemes {
			if s != st.Baseline {
				fmt.Fprintf(tw, "\t%s", s)
			}
		}
		fmt.Fprintln(tw)
		for _, r := range st.Points {
			rows := part.rows(r)
			for i := 0; i < len(rows); i += len(st.Schemes) {
				for _, a := range r.Point {
					fmt.Fprintf(tw, "%s\t", a.Value)
				}
				fmt.Fprintf(tw, "%s", classText(rows[i].Class))
				for _, row := range rows[i : i+len(st.Schemes)] {
					if row.Scheme != st.Baseline {
						fmt.Fprintf(tw, "\t%s", changeText(row, st.Baseline, row.Metric(part.metric)))
					}
				}
				fmt.Fprintln(tw)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// writeRunsTable lists runs with their size, wall time and status, with
// drops and go-back-N retransmissions when some run had them (lossy and
// LDCP runs), so that lossless comparisons keep their short table; points
// names each run's point, nil without sweep.
func writeRunsTable(buf *bytes.Buffer, runs []*RunResult, points []string) error {
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	t := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	lossy := false
	for _, run := range runs {
		if sum := run.Summary; sum != nil && (sum.Drops.Total > 0 || sum.Run.Retransmits > 0) {
			lossy = true
		}
	}
	if points != nil {
		t("point\t")
	}
	t("run\thosts\tflows\tcompleted\t")
	if lossy {
		t("drops\tretransmits\t")
	}
	t("wall s\tstatus\n")
	for i, run := range runs {
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
		if points != nil {
			t("%s\t", points[i])
		}
		t("%s\t%s\t%s\t%s\t", run.Name(), countText(run.Hosts), countText(run.Flows), completed)
		if lossy {
			t("%s\t%s\t", drops, retx)
		}
		t("%s\t%s\n", wall, status)
	}
	return tw.Flush()
}

// meanText shows a metric's mean with the given decimals, "-" without
// values, and "± h" after it when withCI and the interval is defined.
func meanText(m *MetricStats, decimals int, withCI bool) string {
	if m == nil || m.Mean == nil {
		return "-"
	}
	s := strconv.FormatFloat(*m.Mean, 'f', decimals, 64)
	if iv := m.Interval(); withCI && iv.Defined() {
		s += " ± " + strconv.FormatFloat(iv.HalfWidth(), 'f', decimals, 64)
	}
	return s
}

// changeText shows a change against the baseline: "+4.0%" for one pair,
// "-12.3% [-14.0, -10.6] better" from two; the baseline's own row says
// "baseline".
func changeText(row Row, baseline string, m *MetricStats) string {
	switch {
	case m == nil || m.Mean == nil:
		return "-"
	case row.Scheme == baseline:
		return "baseline"
	case m.VsBaseline == nil || m.VsBaseline.Pct == nil:
		return "-"
	}
	c := m.VsBaseline
	s := fmt.Sprintf("%+.1f%%", *c.Pct)
	if c.PctLo == nil || c.PctHi == nil {
		return s
	}
	verdict := c.Verdict
	if verdict == string(stats.Same) {
		verdict = "n.s."
	}
	return fmt.Sprintf("%s %s %s", s, interval(*c.PctLo, *c.PctHi), verdict)
}

// interval is a change's interval in percent, "[-14.0, -10.6]", both
// bounds with one decimal, or three where a bound would round to zero
// with one ("[-12.900, +0.013]"), so that a bound just past zero does
// not read as zero beside a verdict it decides, and the two read alike.
// A bound below a thousandth of a percent, floating-point noise of equal
// runs, is "0.0" (or "0.000").
func interval(lo, hi float64) string {
	decimals := 1
	for _, x := range []float64{lo, hi} {
		if math.Round(x*10) == 0 && math.Abs(x) >= 0.001 {
			decimals = 3
		}
	}
	return "[" + signed(lo, decimals) + ", " + signed(hi, decimals) + "]"
}

// signed is a percentage bound with its sign and that many decimals,
// unsigned when it rounds to zero.
func signed(x float64, decimals int) string {
	scale := math.Pow(10, float64(decimals))
	if math.Round(x*scale) == 0 {
		return fmt.Sprintf("%.*f", decimals, 0.0)
	}
	return fmt.Sprintf("%+.*f", decimals, x)
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
