package experiment

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/report"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is one plot of the experiment, rendered both as PNG (for the
// HTML page, which embeds it) and as SVG (for papers and zooming).
type Figure struct {
	// Name is the file name without extension: NAME.png and NAME.svg.
	Name  string
	Title string
	PNG   []byte
	SVG   []byte
}

// Plot sizes and the number of bins of the slowdown plot.
const (
	plotWidth  = 7 * vg.Inch
	plotHeight = 4.2 * vg.Inch
	// SlowdownBins is the number of equal-count size bins of the slowdown
	// plot, as in the summary.json of sim/report.
	SlowdownBins = report.DefaultEqualCountBins
	// maxCDFPoints caps the points of a CDF line, so that the SVG stays
	// small; the points kept are evenly spaced in rank.
	maxCDFPoints = 1000
	// maxRateFlows is how many flows the throughput plot draws when the
	// flows have no class.
	maxRateFlows = 8
)

// Figures draws the experiment's plots from the good runs: FCT slowdown
// against flow size, the CDF of the mice flows' FCT, and, when the runs
// sampled flow rates, the throughput over time of each flow class (or of
// the first flows) for each scheme. A plot without data is left out. The
// figures come in that order, deterministically.
func Figures(r *Result) ([]Figure, error) {
	var figs []Figure
	byScheme := goodRuns(r)
	for _, fig := range []func(*Result, map[string][]*RunResult) (*Figure, error){slowdownFigure, miceCDFFigure} {
		f, err := fig(r, byScheme)
		if err != nil {
			return nil, err
		}
		if f != nil {
			figs = append(figs, *f)
		}
	}
	for _, s := range r.Schemes {
		f, err := throughputFigure(r, s, byScheme[s])
		if err != nil {
			return nil, err
		}
		if f != nil {
			figs = append(figs, *f)
		}
	}
	return figs, nil
}

// completedFlows pools the completed flows of runs that match.
func completedFlows(runs []*RunResult, match func(*sim.FlowRecord) bool) []sim.FlowRecord {
	var out []sim.FlowRecord
	for _, run := range runs {
		for i := range run.Results.Flows {
			if f := &run.Results.Flows[i]; f.Finish != 0 && match(f) {
				out = append(out, *f)
			}
		}
	}
	return out
}

// slowdownFigure: mean slowdown in equal-count size bins, one line per
// scheme, on a log size axis. Each bin sits at the geometric mean of its
// smallest and largest size.
func slowdownFigure(r *Result, byScheme map[string][]*RunResult) (*Figure, error) {
	p := newPlot(fmt.Sprintf("%s: FCT slowdown by flow size (%d equal-count bins)", r.Scenario, SlowdownBins),
		"flow size (log scale)", "mean FCT slowdown")
	var xs, ys []float64
	for i, s := range r.Schemes {
		flows := completedFlows(byScheme[s], func(*sim.FlowRecord) bool { return true })
		if len(flows) == 0 {
			continue
		}
		sum := report.Summarize(&sim.Results{Flows: flows}, report.SummaryOptions{EqualCountBins: SlowdownBins})
		pts := make(plotter.XYs, len(sum.EqualBins))
		for j, b := range sum.EqualBins {
			pts[j].X = math.Sqrt(float64(b.MinBytes) * float64(b.MaxBytes))
			pts[j].Y = b.MeanSlowdown
			xs, ys = append(xs, pts[j].X), append(ys, pts[j].Y)
		}
		if err := addLine(p, s, i, pts, markedLine); err != nil {
			return nil, err
		}
	}
	if len(xs) == 0 {
		return nil, nil
	}
	logAxis(&p.X, xs, sizeLabel)
	linearFromZero(&p.Y, ys, legendRoom)
	placeLegend(p, true, true)
	return render(p, "slowdown-vs-size")
}

// miceCDFFigure: the CDF of the mice flows' FCT per scheme, on a log
// time axis.
func miceCDFFigure(r *Result, byScheme map[string][]*RunResult) (*Figure, error) {
	mice := SizeClasses[slices.IndexFunc(SizeClasses, func(c SizeClass) bool { return c.Name == MiceClass })]
	p := newPlot(fmt.Sprintf("%s: FCT of mice flows (%s)", r.Scenario, mice.Label), "FCT (us, log scale)", "fraction of flows")
	var xs []float64
	for i, s := range r.Schemes {
		flows := completedFlows(byScheme[s], func(f *sim.FlowRecord) bool { return mice.Contains(f.Size) })
		if len(flows) == 0 {
			continue
		}
		fct := make([]float64, len(flows))
		for j, f := range flows {
			fct[j] = float64(f.FCT) / 1e6
		}
		slices.Sort(fct)
		n := len(fct)
		k := min(n, maxCDFPoints)
		pts := make(plotter.XYs, k)
		for j := range k {
			idx := j
			if k < n {
				idx = j * (n - 1) / (k - 1)
			}
			pts[j].X, pts[j].Y = fct[idx], float64(idx+1)/float64(n)
		}
		xs = append(xs, fct[0], fct[n-1])
		if err := addLine(p, s, i, pts, stepLine); err != nil {
			return nil, err
		}
	}
	if len(xs) == 0 {
		return nil, nil
	}
	logAxis(&p.X, xs, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) })
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = plot.TickerFunc(linearTicks)
	placeLegend(p, false, false)
	return render(p, "mice-fct-cdf")
}

// throughputFigure: the scheme's first good run with rate samples, summed
// per flow class in Gb/s over time; per flow (the first few) when no
// sampled flow has a class.
func throughputFigure(r *Result, scheme string, runs []*RunResult) (*Figure, error) {
	var run *RunResult
	for _, c := range runs {
		if len(c.Results.RateSamples) > 0 {
			run = c
			break
		}
	}
	if run == nil {
		return nil, nil
	}
	samples := run.Results.RateSamples
	interval := run.RateInterval
	if interval <= 0 {
		var err error
		if interval, err = report.InferRateInterval(samples); err != nil {
			return nil, fmt.Errorf("experiment: throughput of %s: %w", run.Name(), err)
		}
	}
	class := make(map[int]string, len(run.Results.Flows))
	for _, f := range run.Results.Flows {
		class[f.ID] = f.Class
	}
	byClass := false
	sampled := map[int]bool{}
	for _, s := range samples {
		byClass = byClass || class[s.Flow] != ""
		sampled[s.Flow] = true
	}
	ids := make([]int, 0, len(sampled))
	for id := range sampled {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if len(ids) > maxRateFlows {
		ids = ids[:maxRateFlows]
	}
	// series name -> sample time -> bytes in the interval ending then.
	series := map[string]map[int64]int64{}
	var names []string
	for _, s := range samples {
		var name string
		switch {
		case byClass:
			name = classText(class[s.Flow])
		case slices.Contains(ids, s.Flow):
			name = "flow " + strconv.Itoa(s.Flow)
		default:
			continue
		}
		if series[name] == nil {
			series[name] = map[int64]int64{}
			names = append(names, name)
		}
		series[name][s.Time] += s.Bytes
	}
	if byClass {
		slices.Sort(names)
	} else {
		slices.SortFunc(names, func(a, b string) int {
			x, _ := strconv.Atoi(a[len("flow "):])
			y, _ := strconv.Atoi(b[len("flow "):])
			return cmp.Compare(x, y)
		})
	}
	last := samples[len(samples)-1].Time
	unit, scale := "us", 1e6
	if last >= 2e9 {
		unit, scale = "ms", 1e9
	}
	what := "per flow class"
	if !byClass {
		what = "per flow"
	}
	p := newPlot(fmt.Sprintf("%s: throughput %s, %s (seed %d)", r.Scenario, what, scheme, run.Seed), "time ("+unit+")", "Gb/s")
	var ys []float64
	for i, name := range names {
		times := make([]int64, 0, len(series[name]))
		for t := range series[name] {
			times = append(times, t)
		}
		slices.Sort(times)
		pts := make(plotter.XYs, len(times))
		for j, t := range times {
			pts[j].X = float64(t) / scale
			pts[j].Y = float64(series[name][t]) * 8 / float64(interval) * 1e3
			ys = append(ys, pts[j].Y)
		}
		if err := addLine(p, name, i, pts, plainLine); err != nil {
			return nil, err
		}
	}
	p.X.Min = 0
	p.X.Tick.Marker = plot.TickerFunc(linearTicks)
	linearFromZero(&p.Y, ys, legendRoom)
	placeLegend(p, true, false)
	return render(p, "throughput-"+scheme)
}

// newPlot starts a plot with a grid, which makes values on log axes
// readable.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(8) // the title's ascenders stay inside the image
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// placeLegend puts the legend in a corner of the data area, clear of the
// frame and the axis: gonum places it against the image's edge.
func placeLegend(p *plot.Plot, top, left bool) {
	p.Legend.Top, p.Legend.Left = top, left
	p.Legend.XOffs = -vg.Points(12)
	if left {
		p.Legend.XOffs = vg.Points(12)
	}
	p.Legend.YOffs = vg.Points(4)
	if top {
		p.Legend.YOffs = -vg.Points(4)
	}
}

// lineKind says how addLine draws a series.
type lineKind int

const (
	plainLine  lineKind = iota
	markedLine          // a glyph at each point
	stepLine            // steps, as an empirical CDF is
)

// addLine adds a named series in the i-th colour and dash pattern, so
// that a scheme looks the same in every plot and lines stay apart in
// black and white.
func addLine(p *plot.Plot, name string, i int, pts plotter.XYs, kind lineKind) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("experiment: plotting %s: %w", name, err)
	}
	l.Color = plotutil.Color(i)
	l.Dashes = plotutil.Dashes(i)
	l.Width = vg.Points(1.5)
	if kind == stepLine {
		l.StepStyle = plotter.PostStep
	}
	p.Add(l)
	if kind != markedLine {
		p.Legend.Add(name, l)
		return nil
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("experiment: plotting %s: %w", name, err)
	}
	s.Color = plotutil.Color(i)
	s.Shape = plotutil.Shape(i)
	p.Add(s)
	p.Legend.Add(name, l, s)
	return nil
}

// logAxis makes a log axis from the nice value (1, 2 or 5 times a power
// of ten) at or below the smallest positive value to the one at or above
// the largest, so that it ends near the data rather than a decade beyond.
// Ticks are labelled by label at each decade and, when the axis spans
// at most three decades, at 2 and 5 times them too; unlabelled ticks mark
// the other whole multiples.
func logAxis(a *plot.Axis, values []float64, label func(float64) string) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 1, 10
	}
	a.Scale = plot.LogScale{}
	a.Min, a.Max = niceBelow(lo), niceAbove(hi)
	if a.Max <= a.Min {
		a.Max = niceAbove(a.Min * 1.5)
	}
	a.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick { return logTicks(lo, hi, label) })
}

// niceSteps are the mantissas of the nice values of axes.
var niceSteps = []float64{1, 2, 5, 10}

// niceAbove is the least of 1, 2 and 5 times a power of ten at or above v
// (v > 0); niceBelow the greatest at or below.
func niceAbove(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range niceSteps {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

func niceBelow(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for i := len(niceSteps) - 1; i >= 0; i-- {
		if niceSteps[i]*p <= v*(1+1e-9) {
			return niceSteps[i] * p
		}
	}
	return p
}

// logTicks ticks every whole multiple of each power of ten in [lo, hi],
// labelling the decades, and 2 and 5 times them on axes of up to three
// decades.
func logTicks(lo, hi float64, label func(float64) string) []plot.Tick {
	fine := math.Log10(hi/lo) <= 3
	var ticks []plot.Tick
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi; p *= 10 {
		for m := 1; m <= 9; m++ {
			v := float64(m) * p
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || fine && (m == 2 || m == 5) {
				t.Label = label(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// legendRoom is the headroom above the data of a plot with its legend at
// the top, so that the legend does not hide the highest points.
const legendRoom = 1.3

// linearFromZero starts a linear axis at zero and ends it at headroom
// times the largest value, with nice ticks.
func linearFromZero(a *plot.Axis, values []float64, headroom float64) {
	hi := 0.0
	for _, v := range values {
		hi = math.Max(hi, v)
	}
	if hi <= 0 {
		hi = 1
	}
	a.Min, a.Max = 0, hi*headroom
	a.Tick.Marker = plot.TickerFunc(linearTicks)
}

// linearTicks labels five to ten nice values (multiples of 1, 2 or 5
// times a power of ten) between lo and hi, printed as short as they
// are ("250", "0.5", never "250.00"), with an unlabelled tick between
// each two.
func linearTicks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', -1, 64)}}
	}
	p := math.Pow(10, math.Floor(math.Log10((hi-lo)/5)))
	step := p
	for _, m := range niceSteps {
		if (hi-lo)/(m*p) <= 10 {
			step = m * p
			break
		}
	}
	var ticks []plot.Tick
	for i := math.Ceil(lo / step * 2); i/2*step <= hi*(1+1e-9); i++ {
		v := i / 2 * step
		t := plot.Tick{Value: v}
		if math.Mod(i, 2) == 0 {
			// Rounded to the step's precision, so that sums of floats
			// print as the numbers they stand for.
			scale := math.Pow(10, float64(max(0, -int(math.Floor(math.Log10(step))))))
			t.Label = strconv.FormatFloat(math.Round(v*scale)/scale, 'f', -1, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// sizeLabel writes a power of ten of bytes with a unit: "100B", "10KB".
func sizeLabel(v float64) string {
	for _, u := range []struct {
		div  float64
		unit string
	}{{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}} {
		if v >= u.div {
			return strconv.FormatFloat(v/u.div, 'f', -1, 64) + u.unit
		}
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + "B"
}

// render draws p as PNG and SVG.
func render(p *plot.Plot, name string) (*Figure, error) {
	f := &Figure{Name: name, Title: p.Title.Text}
	img := vgimg.New(plotWidth, plotHeight)
	p.Draw(draw.New(img))
	var png bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&png); err != nil {
		return nil, fmt.Errorf("experiment: rendering %s.png: %w", name, err)
	}
	svg := vgsvg.New(plotWidth, plotHeight)
	p.Draw(draw.New(svg))
	var sv bytes.Buffer
	if _, err := svg.WriteTo(&sv); err != nil {
		return nil, fmt.Errorf("experiment: rendering %s.svg: %w", name, err)
	}
	f.PNG, f.SVG = png.Bytes(), sv.Bytes()
	return f, nil
}
