package experiment

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/p4rcm/p4rcm/sim/report"
	"github.com/p4rcm/p4rcm/stats"
)

// The report page stands alone: styles inline, plots embedded as data
// URIs, links only to files in the experiment's directory. Everything
// taken from the scenario or the runs goes through html/template's
// escaping.
var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>p4rcm experiment {{.Name}}</title>
{{template "style"}}
</head>
<body>
<h1>p4rcm experiment: {{.Name}}</h1>
{{if .Description}}<p>{{.Description}}</p>{{end}}
{{if .Point}}<p>Point: <b>{{.Point}}</b>{{if .Up}} of the study <a href="../report.html">{{.Name}}</a>{{end}}.</p>{{end}}
<p>Schemes {{.Schemes}}; {{.Seeds}}; baseline <b>{{.Baseline}}</b>; {{.RunCount}} runs in {{.Wall}} s.
Size classes: {{.SizeLegend}}. {{.StatsLegend}}
Data: <a href="comparison.csv">comparison.csv</a>, <a href="comparison.json">comparison.json</a>.</p>
{{if .Failed}}<h2 class="failed">Failed runs</h2>
<ul>{{range .Failed}}<li class="failed">{{.}}</li>{{end}}</ul>{{end}}
<h2>Flow completion time by flow size</h2>
<table>
<tr><th class="name">class</th><th class="name">scheme</th><th>runs</th><th>flows</th><th>incomplete</th><th>mean FCT us</th><th>p50 FCT us</th><th>p99 FCT us</th><th>mean slowdown</th><th>p50 slowdown</th><th>p99 slowdown</th><th>FCT vs {{.Baseline}}</th><th>slowdown vs {{.Baseline}}</th></tr>
{{range .Sizes}}{{template "row" .}}{{end}}</table>
{{if .Classes}}<h2>By flow class</h2>
<table>
<tr><th class="name">class</th><th class="name">scheme</th><th>runs</th><th>flows</th><th>incomplete</th><th>mean FCT us</th><th>p50 FCT us</th><th>p99 FCT us</th><th>mean slowdown</th><th>p50 slowdown</th><th>p99 slowdown</th><th>FCT vs {{.Baseline}}</th><th>slowdown vs {{.Baseline}}</th><th>goodput Gb/s</th><th>goodput vs {{.Baseline}}</th></tr>
{{range .Classes}}{{template "row" .}}{{end}}</table>{{end}}
<h2>Plots</h2>
{{range .Figures}}<figure>
<img src="{{.Src}}" alt="{{.Title}}">
<figcaption>{{.Title}} (<a href="{{.PNG}}">PNG</a>, <a href="{{.SVG}}">SVG</a>)</figcaption>
</figure>
{{else}}<p>No plots: no run completed a flow.</p>
{{end}}<h2>Runs</h2>
<table>
<tr><th class="name">run</th><th>hosts</th><th>flows</th><th>completed</th><th>drops</th><th>retransmitted packets</th><th>wall s</th><th class="name">status</th><th class="name">files</th></tr>
{{range .Runs}}<tr><td class="name">{{.Name}}</td><td>{{.Hosts}}</td><td>{{.Flows}}</td><td>{{.Completed}}</td><td>{{.Drops}}</td><td>{{.Retransmits}}</td><td>{{.Wall}}</td><td class="name{{if .Failed}} failed{{end}}">{{.Status}}</td><td class="name">{{if .Dir}}<a href="{{.Dir}}/">{{.Dir}}/</a>:{{range .Files}} <a href="{{.Href}}">{{.Name}}</a>{{end}}{{else}}-{{end}}</td></tr>
{{end}}</table>
</body>
</html>
{{define "style"}}<style>
body { font-family: sans-serif; margin: 2em; max-width: 80em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f0f0f0; }
td.name, th.name { text-align: left; }
td.better { color: #060; }
td.worse { color: #a00; }
tr.first td { border-top: 2px solid #888; }
.failed { color: #a00; }
figure { margin: 1.5em 0; }
img { max-width: 100%; border: 1px solid #ddd; }
</style>{{end}}
{{define "row"}}<tr{{if .First}} class="first"{{end}}><td class="name">{{.Class}}</td><td class="name">{{.Scheme}}</td><td>{{.Runs}}</td><td>{{.Flows}}</td><td>{{.Incomplete}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}<td{{with .FCTChange.Class}} class="{{.}}"{{end}}>{{.FCTChange.Text}}</td><td{{with .SlowChange.Class}} class="{{.}}"{{end}}>{{.SlowChange.Text}}</td>{{if .HasGoodput}}<td>{{.Goodput}}</td><td{{with .GoodputChange.Class}} class="{{.}}"{{end}}>{{.GoodputChange.Text}}</td>{{end}}</tr>
{{end}}`))

// pageData is what the page template shows, formatted as the text
// report formats it, so the two read the same.
type pageData struct {
	Name, Description              string
	Point                          string
	Up                             bool // the point is one of a sweep, whose page is one directory up
	Schemes, Seeds, Baseline, Wall string
	SizeLegend, StatsLegend        string
	RunCount                       int
	Failed                         []string
	Sizes, Classes                 []pageRow
	Figures                        []pageFigure
	Runs                           []pageRun
}

// pageRow is one row of a comparison table; First starts a class, for
// the rule between classes.
type pageRow struct {
	First                   bool
	Class, Scheme           string
	Runs, Flows, Incomplete int
	Cells                   []string
	FCTChange, SlowChange   pageChange
	HasGoodput              bool
	Goodput                 string
	GoodputChange           pageChange
}

// pageChange is a change against the baseline and its CSS class, "better"
// or "worse", to colour it.
type pageChange struct{ Text, Class string }

// pageFigure is an embedded plot with links to its files.
type pageFigure struct {
	Title, PNG, SVG string
	Src             template.URL
}

// pageRun is one row of the runs table.
type pageRun struct {
	Name, Hosts, Flows, Completed, Wall, Status, Dir string
	// Drops and Retransmits are the run's drops and go-back-N
	// retransmissions (LDCP and lossy runs have them).
	Drops, Retransmits string
	Failed             bool
	Files              []pageLink
}

// pageLink is a link to a file of a run's directory.
type pageLink struct{ Name, Href string }

// WriteHTML writes a point's report page: the scenario's name and
// description, the comparison tables, figs embedded as PNG data URIs with
// links to their PNG and SVG files, and a table of the runs with links to
// their directories. Links are relative to the point's directory, where
// WritePointDir puts the page; the page needs nothing else.
func WriteHTML(w io.Writer, r *Result, figs []Figure) error {
	d := pageData{Name: r.Scenario, Description: r.Description, Point: PointName(r.Point), Up: len(r.Point) > 0,
		Schemes: strings.Join(r.Schemes, ", "), Seeds: seedsText(r.Seeds, r.Repeat), Baseline: r.Baseline,
		Wall: fmt.Sprintf("%.2f", r.WallSeconds), RunCount: len(r.Runs), StatsLegend: statsLegend(r)}
	d.SizeLegend = sizeLegend()
	for _, f := range r.Failed() {
		d.Failed = append(d.Failed, f.Name()+": "+f.Error)
	}
	d.Sizes = pageRows(r.SizeClasses, r.Baseline, false)
	d.Classes = pageRows(r.FlowClasses, r.Baseline, true)
	d.Figures = pageFigures(figs)
	for i := range r.Runs {
		d.Runs = append(d.Runs, pageRunOf(&r.Runs[i], ""))
	}
	return pageTemplate.Execute(w, d)
}

// sizeLegend names the size classes.
func sizeLegend() string {
	var legend []string
	for _, c := range SizeClasses {
		if c.Name != "all" {
			legend = append(legend, c.Name+" "+c.Label)
		}
	}
	return strings.Join(legend, ", ")
}

// statsLegend says what the figures of a point are.
func statsLegend(r *Result) string {
	if runsPerScheme(r) < 2 {
		return "Changes are against the baseline's mean: negative is better for times. One run per scheme: no interval or significance can be given (they need at least 2 seeds)."
	}
	return fmt.Sprintf("Figures are means over runs, ± half their %s interval (Student t). Changes are against the baseline, paired by seed: the mean difference in percent of the baseline's mean, its %s interval, and the paired t test's verdict (n.s.: no significant difference).",
		levelText(r.Level), levelText(r.Level))
}

// pageFigures embeds figures as data URIs.
func pageFigures(figs []Figure) []pageFigure {
	var out []pageFigure
	for _, f := range figs {
		out = append(out, pageFigure{Title: f.Title, PNG: f.Name + ".png", SVG: f.Name + ".svg",
			// Trusted: our own base64 of our own PNG.
			Src: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(f.PNG))})
	}
	return out
}

// pageRunOf formats a run's row; up is the path from the page to the
// run's point directory ("" on the point's own page).
func pageRunOf(run *RunResult, up string) pageRun {
	pr := pageRun{Name: run.Name(), Hosts: countText(run.Hosts), Flows: countText(run.Flows), Completed: "-", Wall: "-",
		Status: "ok", Dir: run.Dir, Drops: "-", Retransmits: "-"}
	if sum := run.Summary; sum != nil {
		pr.Completed = strconv.Itoa(sum.Completed)
		pr.Drops = strconv.FormatInt(sum.Drops.Total, 10)
		pr.Retransmits = fmt.Sprintf("%d by %d flows", sum.Run.Retransmits, sum.Run.RetransmitFlows)
	}
	if run.WallSeconds > 0 {
		pr.Wall = fmt.Sprintf("%.2f", run.WallSeconds)
	}
	if !run.OK() {
		pr.Status, pr.Failed = "FAILED: "+run.Error, true
	}
	if run.Results == nil {
		pr.Dir = ""
	}
	if pr.Dir != "" {
		pr.Dir = up + pr.Dir
		for _, name := range []string{report.SummaryTextFile, report.FlowsFile, report.PortsFile} {
			pr.Files = append(pr.Files, pageLink{Name: name, Href: pr.Dir + "/" + name})
		}
	}
	return pr
}

// pageRows formats rows for a table; goodput adds that column, which
// only flow classes have.
func pageRows(rows []Row, baseline string, goodput bool) []pageRow {
	out := make([]pageRow, 0, len(rows))
	for i, row := range rows {
		pr := pageRow{First: i == 0 || rows[i-1].Class != row.Class, Class: row.Class, Scheme: row.Scheme,
			Runs: row.Runs, Flows: row.Flows, Incomplete: row.Incomplete, HasGoodput: goodput, Goodput: "-"}
		if row.Group == GroupClass {
			pr.Class = classText(row.Class)
		}
		pr.Cells = []string{meanText(row.Metric("mean_fct_us"), 3, true), meanText(row.Metric("p50_fct_us"), 3, false),
			meanText(row.Metric("p99_fct_us"), 3, false), meanText(row.Metric("mean_slowdown"), 2, true),
			meanText(row.Metric("p50_slowdown"), 2, false), meanText(row.Metric("p99_slowdown"), 2, false)}
		pr.FCTChange = pageChangeOf(row, baseline, row.Metric("mean_fct_us"))
		pr.SlowChange = pageChangeOf(row, baseline, row.Metric("mean_slowdown"))
		if g := row.Metric("goodput_gbps"); g != nil {
			pr.Goodput = meanText(g, 3, true)
			pr.GoodputChange = pageChangeOf(row, baseline, g)
		}
		out = append(out, pr)
	}
	return out
}

// pageChangeOf formats a change and colours it by its verdict, or, with
// one run per scheme, by its sign and the metric's direction.
func pageChangeOf(row Row, baseline string, m *MetricStats) pageChange {
	pc := pageChange{Text: changeText(row, baseline, m)}
	if m == nil || m.VsBaseline == nil || row.Scheme == baseline {
		return pc
	}
	c := m.VsBaseline
	switch stats.Verdict(c.Verdict) {
	case stats.Better:
		pc.Class = "better"
	case stats.Worse:
		pc.Class = "worse"
	case stats.TooFew:
		metric, _ := MetricByName(m.Metric)
		if c.Diff != nil && *c.Diff != 0 {
			if (*c.Diff < 0) == (metric.Dir == stats.LowerIsBetter) {
				pc.Class = "better"
			} else {
				pc.Class = "worse"
			}
		}
	}
	return pc
}

// The study page of a sweep: its curves, the changes against the
// baseline at every point, each point's table with a link to its own
// page, and every run.
var studyTemplate = template.Must(template.Must(pageTemplate.Clone()).New("study").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>p4rcm study {{.Name}}</title>
{{template "style"}}
</head>
<body>
<h1>p4rcm study: {{.Name}}</h1>
{{if .Description}}<p>{{.Description}}</p>{{end}}
<p>Swept: {{range .Vary}}<b>{{.}}</b>; {{end}}{{.PointCount}} points. Schemes {{.Schemes}}; {{.Seeds}}; baseline <b>{{.Baseline}}</b>; {{.RunCount}} runs in {{.Wall}} s. Study {{.ID}}.
Size classes: {{.SizeLegend}}. {{.StatsLegend}}
Data: <a href="study.csv">study.csv</a>, <a href="study.json">study.json</a>.</p>
{{if .Failed}}<h2 class="failed">Failed runs</h2>
<ul>{{range .Failed}}<li class="failed">{{.}}</li>{{end}}</ul>{{end}}
<h2>Curves</h2>
{{range .Figures}}<figure>
<img src="{{.Src}}" alt="{{.Title}}">
<figcaption>{{.Title}} (<a href="{{.PNG}}">PNG</a>, <a href="{{.SVG}}">SVG</a>)</figcaption>
</figure>
{{end}}
{{range .Summaries}}<h2>{{.Title}}</h2>
<table>
<tr>{{range .Head}}<th class="name">{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .Names}}<td class="name">{{.}}</td>{{end}}{{range .Changes}}<td{{with .Class}} class="{{.}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table>
{{end}}
{{range .Points}}<h2>{{.Name}}</h2>
<p><a href="{{.Dir}}/report.html">{{.Dir}}/report.html</a>: plots, the goodput of flow classes and the runs of this point.</p>
<table>
<tr><th class="name">class</th><th class="name">scheme</th><th>runs</th><th>flows</th><th>incomplete</th><th>mean FCT us</th><th>p50 FCT us</th><th>p99 FCT us</th><th>mean slowdown</th><th>p50 slowdown</th><th>p99 slowdown</th><th>FCT vs {{$.Baseline}}</th><th>slowdown vs {{$.Baseline}}</th></tr>
{{range .Sizes}}{{template "row" .}}{{end}}</table>
{{end}}
<h2>Runs</h2>
<table>
<tr><th class="name">point</th><th class="name">run</th><th>hosts</th><th>flows</th><th>completed</th><th>drops</th><th>retransmitted packets</th><th>wall s</th><th class="name">status</th><th class="name">files</th></tr>
{{range .Runs}}<tr><td class="name">{{.Point}}</td><td class="name">{{.Name}}</td><td>{{.Hosts}}</td><td>{{.Flows}}</td><td>{{.Completed}}</td><td>{{.Drops}}</td><td>{{.Retransmits}}</td><td>{{.Wall}}</td><td class="name{{if .Failed}} failed{{end}}">{{.Status}}</td><td class="name">{{if .Dir}}<a href="{{.Dir}}/">{{.Dir}}/</a>:{{range .Files}} <a href="{{.Href}}">{{.Name}}</a>{{end}}{{else}}-{{end}}</td></tr>
{{end}}</table>
</body>
</html>
`))

// studyData is what the study page shows.
type studyData struct {
	Name, Description, ID          string
	Vary                           []string
	PointCount, RunCount           int
	Schemes, Seeds, Baseline, Wall string
	SizeLegend, StatsLegend        string
	Failed                         []string
	Figures                        []pageFigure
	Summaries                      []studySummary
	Points                         []studyPoint
	Runs                           []studyRun
}

// studySummary is a table of one metric's change at every point: a row
// per point and class, a column per scheme.
type studySummary struct {
	Title string
	Head  []string
	Rows  []struct {
		Names   []string
		Changes []pageChange
	}
}

type studyPoint struct {
	Name, Dir string
	Sizes     []pageRow
}

type studyRun struct {
	Point string
	pageRun
}

// WriteStudyHTML writes a sweep's report page, which WriteDir puts at the
// top of the study's directory; links go to the points' directories.
func WriteStudyHTML(w io.Writer, st *Study, curves []Figure) error {
	first := st.Points[0]
	d := studyData{Name: st.Scenario, Description: st.Description, ID: st.ID, PointCount: len(st.Points),
		Schemes: strings.Join(st.Schemes, ", "), Seeds: seedsText(st.Seeds, st.Repeat), Baseline: st.Baseline,
		Wall: fmt.Sprintf("%.2f", st.WallSeconds), SizeLegend: sizeLegend(), StatsLegend: statsLegend(first),
		Figures: pageFigures(curves)}
	for _, v := range st.Vary {
		d.Vary = append(d.Vary, v.Path+" = "+strings.Join(v.Values, ", "))
	}
	for _, f := range st.Failed() {
		d.Failed = append(d.Failed, f.Name()+": "+f.Error)
	}
	for _, part := range []struct {
		title, metric string
		rows          func(*Result) []Row
	}{
		{"Mean FCT against " + st.Baseline, "mean_fct_us", func(r *Result) []Row { return r.SizeClasses }},
		{"Goodput against " + st.Baseline, "goodput_gbps", func(r *Result) []Row { return r.FlowClasses }},
	} {
		if len(st.Schemes) < 2 || len(part.rows(first)) == 0 {
			continue
		}
		sum := studySummary{Title: part.title}
		for _, v := range st.Vary {
			sum.Head = append(sum.Head, v.Path)
		}
		sum.Head = append(sum.Head, "class")
		for _, s := range st.Schemes {
			if s != st.Baseline {
				sum.Head = append(sum.Head, s)
			}
		}
		for _, r := range st.Points {
			rows := part.rows(r)
			for i := 0; i < len(rows); i += len(st.Schemes) {
				var line struct {
					Names   []string
					Changes []pageChange
				}
				for _, a := range r.Point {
					line.Names = append(line.Names, a.Value)
				}
				line.Names = append(line.Names, classText(rows[i].Class))
				for _, row := range rows[i : i+len(st.Schemes)] {
					if row.Scheme != st.Baseline {
						line.Changes = append(line.Changes, pageChangeOf(row, st.Baseline, row.Metric(part.metric)))
					}
				}
				sum.Rows = append(sum.Rows, line)
			}
		}
		d.Summaries = append(d.Summaries, sum)
	}
	for i, r := range st.Points {
		dir := pointDir(i, len(st.Points), r.Point)
		d.Points = append(d.Points, studyPoint{Name: PointName(r.Point), Dir: dir, Sizes: pageRows(r.SizeClasses, st.Baseline, false)})
		for j := range r.Runs {
			d.Runs = append(d.Runs, studyRun{Point: PointName(r.Point), pageRun: pageRunOf(&r.Runs[j], dir+"/")})
			d.RunCount++
		}
	}
	return studyTemplate.ExecuteTemplate(w, "study", d)
}
