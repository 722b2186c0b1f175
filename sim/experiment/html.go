package experiment

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/p4rcm/p4rcm/sim/report"
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
<style>
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
</style>
</head>
<body>
<h1>p4rcm experiment: {{.Name}}</h1>
{{if .Description}}<p>{{.Description}}</p>{{end}}
<p>Schemes {{.Schemes}}; seeds {{.Seeds}}; baseline <b>{{.Baseline}}</b>; {{.RunCount}} runs in {{.Wall}} s.
Size classes: {{.SizeLegend}}. Changes are against the baseline's mean: negative is better.
Data: <a href="comparison.csv">comparison.csv</a>, <a href="comparison.json">comparison.json</a>.</p>
{{if .Failed}}<h2 class="failed">Failed runs</h2>
<ul>{{range .Failed}}<li class="failed">{{.}}</li>{{end}}</ul>{{end}}
<h2>Flow completion time by flow size</h2>
<table>
<tr><th class="name">class</th><th class="name">scheme</th><th>runs</th><th>flows</th><th>incomplete</th><th>mean FCT us</th><th>p50 FCT us</th><th>p99 FCT us</th><th>mean slowdown</th><th>p50 slowdown</th><th>p99 slowdown</th><th>FCT vs {{.Baseline}}</th><th>slowdown vs {{.Baseline}}</th></tr>
{{range .Sizes}}{{template "row" .}}{{end}}</table>
{{if .Classes}}<h2>By flow class</h2>
<table>
<tr><th class="name">class</th><th class="name">scheme</th><th>runs</th><th>flows</th><th>incomplete</th><th>mean FCT us</th><th>p50 FCT us</th><th>p99 FCT us</th><th>mean slowdown</th><th>p50 slowdown</th><th>p99 slowdown</th><th>FCT vs {{.Baseline}}</th><th>slowdown vs {{.Baseline}}</th><th>goodput Gb/s</th></tr>
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
{{define "row"}}<tr{{if .First}} class="first"{{end}}><td class="name">{{.Class}}</td><td class="name">{{.Scheme}}</td><td>{{.Runs}}</td><td>{{.Flows}}</td><td>{{.Incomplete}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}<td{{with .FCTChange.Class}} class="{{.}}"{{end}}>{{.FCTChange.Text}}</td><td{{with .SlowChange.Class}} class="{{.}}"{{end}}>{{.SlowChange.Text}}</td>{{if .HasGoodput}}<td>{{.Goodput}}</td>{{end}}</tr>
{{end}}`))

// pageData is what the page template shows, formatted as the text
// report formats it, so the two read the same.
type pageData struct {
	Name, Description              string
	Schemes, Seeds, Baseline, Wall string
	SizeLegend                     string
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

// WriteHTML writes the experiment's report page: the scenario's name and
// description, the comparison tables, figs embedded as PNG data URIs with
// links to their PNG and SVG files, and a table of the runs with links to
// their directories. Links are relative to the experiment's directory,
// where WriteDir puts the page; the page needs nothing else.
func WriteHTML(w io.Writer, r *Result, figs []Figure) error {
	d := pageData{Name: r.Scenario, Description: r.Description, Schemes: strings.Join(r.Schemes, ", "),
		Seeds: joinSeeds(r.Seeds, ", "), Baseline: r.Baseline, Wall: fmt.Sprintf("%.2f", r.WallSeconds), RunCount: len(r.Runs)}
	var legend []string
	for _, c := range SizeClasses {
		if c.Name != "all" {
			legend = append(legend, c.Name+" "+c.Label)
		}
	}
	d.SizeLegend = strings.Join(legend, ", ")
	for _, f := range r.Failed() {
		d.Failed = append(d.Failed, f.Name()+": "+f.Error)
	}
	d.Sizes = pageRows(r.SizeClasses, r.Baseline, false)
	d.Classes = pageRows(r.FlowClasses, r.Baseline, true)
	for _, f := range figs {
		d.Figures = append(d.Figures, pageFigure{Title: f.Title, PNG: f.Name + ".png", SVG: f.Name + ".svg",
			// Trusted: our own base64 of our own PNG.
			Src: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(f.PNG))})
	}
	for i := range r.Runs {
		run := &r.Runs[i]
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
			for _, name := range []string{report.SummaryTextFile, report.FlowsFile, report.PortsFile} {
				pr.Files = append(pr.Files, pageLink{Name: name, Href: pr.Dir + "/" + name})
			}
		}
		d.Runs = append(d.Runs, pr)
	}
	return pageTemplate.Execute(w, d)
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
		pr.Cells = []string{usText(row, row.MeanFCTNs), usText(row, row.P50FCTNs), usText(row, row.P99FCTNs),
			slowText(row, row.MeanSlowdown), slowText(row, row.P50Slowdown), slowText(row, row.P99Slowdown)}
		pr.FCTChange = pageChangeOf(row, baseline, row.MeanFCTChangePct)
		pr.SlowChange = pageChangeOf(row, baseline, row.MeanSlowdownChangePct)
		if row.GoodputGbps != nil {
			pr.Goodput = fmt.Sprintf("%.3f", *row.GoodputGbps)
		}
		out = append(out, pr)
	}
	return out
}

// pageChangeOf formats a change and picks its colour.
func pageChangeOf(row Row, baseline string, c *float64) pageChange {
	pc := pageChange{Text: changeText(row, baseline, c)}
	if c != nil && row.Scheme != baseline {
		switch {
		case *c < 0:
			pc.Class = "better"
		case *c > 0:
			pc.Class = "worse"
		}
	}
	return pc
}
