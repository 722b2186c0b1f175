package experiment

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/p4rcm/p4rcm/sim/report"
)

// csvHeader is the header of WriteComparisonCSV: one row per class,
// scheme and metric. WriteStudyCSV puts a column per swept path before
// it.
var csvHeader = []string{"group", "class", "scheme", "runs", "flows", "completed", "incomplete",
	"metric", "n", "mean", "sd", "ci_lo", "ci_hi",
	"pairs", "diff", "diff_lo", "diff_hi", "change_pct", "change_lo_pct", "change_hi_pct", "p_value", "verdict"}

// WriteComparisonCSV writes a point's comparison in long form, one row
// per class, scheme and metric (Metrics), the size classes (group "size")
// first, then the flow classes (group "class"): the class's flows over the
// scheme's good runs, the metric's mean over the n runs that have it, its
// standard deviation and confidence interval, and against the baseline
// the pairs compared, the mean paired difference and its interval in the
// metric's unit and in percent of the baseline's mean, the p-value and
// the verdict. Numbers are written in the shortest form that reads back
// as the same float64; what cannot be given (an interval of one run, the
// baseline against itself) is empty. The output depends only on the
// runs' results, not on wall times or run order.
func WriteComparisonCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	if err := writeRows(cw, nil, r); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// WriteStudyCSV writes every point's comparison as WriteComparisonCSV
// does, in one file, each row led by the point's values, a column per
// swept path.
func WriteStudyCSV(w io.Writer, st *Study) error {
	cw := csv.NewWriter(w)
	var head []string
	for _, v := range st.Vary {
		head = append(head, v.Path)
	}
	if err := cw.Write(append(head, csvHeader...)); err != nil {
		return err
	}
	for _, r := range st.Points {
		lead := make([]string, len(r.Point))
		for i, a := range r.Point {
			lead[i] = a.Value
		}
		if err := writeRows(cw, lead, r); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeRows writes a point's rows, each led by lead.
func writeRows(cw *csv.Writer, lead []string, r *Result) error {
	for _, rows := range [][]Row{r.SizeClasses, r.FlowClasses} {
		for _, row := range rows {
			for _, m := range row.Metrics {
				rec := append(append([]string(nil), lead...), row.Group, row.Class, row.Scheme, strconv.Itoa(row.Runs),
					strconv.Itoa(row.Flows), strconv.Itoa(row.Completed), strconv.Itoa(row.Incomplete),
					m.Metric, strconv.Itoa(len(m.Values)), opt(m.Mean), opt(m.SD), opt(m.CILo), opt(m.CIHi))
				if c := m.VsBaseline; c != nil {
					rec = append(rec, strconv.Itoa(c.Pairs), opt(c.Diff), opt(c.DiffLo), opt(c.DiffHi),
						opt(c.Pct), opt(c.PctLo), opt(c.PctHi), opt(c.P), c.Verdict)
				} else {
					rec = append(rec, "", "", "", "", "", "", "", "", "")
				}
				if err := cw.Write(rec); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// opt is a number for CSV, empty for nil.
func opt(x *float64) string {
	if x == nil {
		return ""
	}
	return strconv.FormatFloat(*x, 'g', -1, 64)
}

// WriteJSON writes a point's comparison as indented JSON: everything but
// the raw results (flows, ports, samples), which are in each run's
// directory. Empty lists are written as [], never null.
func WriteJSON(w io.Writer, r *Result) error {
	c := *r
	c.Vary, c.Schemes, c.Seeds, c.Runs = report.NonNil(c.Vary), report.NonNil(c.Schemes), report.NonNil(c.Seeds), report.NonNil(c.Runs)
	c.SizeClasses, c.FlowClasses = report.NonNil(c.SizeClasses), report.NonNil(c.FlowClasses)
	return report.WriteJSON(w, &c)
}

// studyJSON is study.json: the study, and at each point its comparison
// and its runs (their summaries are in the point's comparison.json).
type studyJSON struct {
	*Study
	Points []pointJSON `json:"points"`
}

type pointJSON struct {
	Point       []Assignment `json:"point"`
	Dir         string       `json:"dir"`
	SizeClasses []Row        `json:"size_classes"`
	FlowClasses []Row        `json:"flow_classes"`
	Runs        []runJSON    `json:"runs"`
}

type runJSON struct {
	Index       int     `json:"index"`
	Scheme      string  `json:"scheme"`
	Seed        uint64  `json:"seed"`
	Rep         int     `json:"rep,omitempty"`
	Dir         string  `json:"dir,omitempty"`
	WallSeconds float64 `json:"wall_seconds"`
	Error       string  `json:"error,omitempty"`
}

// WriteStudyJSON writes a swept study as indented JSON.
func WriteStudyJSON(w io.Writer, st *Study) error {
	out := studyJSON{Study: st, Points: []pointJSON{}}
	for i, r := range st.Points {
		p := pointJSON{Point: report.NonNil(r.Point), Dir: pointDir(i, len(st.Points), r.Point),
			SizeClasses: report.NonNil(r.SizeClasses), FlowClasses: report.NonNil(r.FlowClasses), Runs: []runJSON{}}
		for _, run := range r.Runs {
			p.Runs = append(p.Runs, runJSON{Index: run.Index, Scheme: run.Scheme, Seed: run.Seed, Rep: run.Rep,
				Dir: run.Dir, WallSeconds: run.WallSeconds, Error: run.Error})
		}
		out.Points = append(out.Points, p)
	}
	c := *st
	c.Vary, c.Schemes, c.Seeds = report.NonNil(c.Vary), report.NonNil(c.Schemes), report.NonNil(c.Seeds)
	out.Study = &c
	return report.WriteJSON(w, out)
}
