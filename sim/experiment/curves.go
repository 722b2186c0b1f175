package experiment

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// curveMetrics are the metrics a sweep draws against the swept value, one
// figure each with a panel per size class.
var curveMetrics = []string{"mean_fct_us", "p99_fct_us", "mean_slowdown"}

// tileWidth and tileHeight size one panel of a curve figure.
const (
	tileWidth  = 5 * vg.Inch
	tileHeight = 3.6 * vg.Inch
)

// Curves draws a sweep's metrics against its first swept value: for each
// of curveMetrics a figure with a panel per size class, and, when flows
// have classes, one of goodput with a panel per flow class. Each scheme
// is a line through its means at the points, in a band of their
// confidence interval where one can be given. Further swept values make
// further lines, one per scheme and combination of their values. A
// numeric swept value is a numeric axis; any other places the values
// evenly, in order.
func Curves(st *Study) ([]Figure, error) {
	if !st.Swept() {
		return nil, nil
	}
	var figs []Figure
	for _, name := range curveMetrics {
		m, _ := MetricByName(name)
		var panels []curvePanel
		for _, c := range SizeClasses {
			title := c.Name + " (" + c.Label + ")"
			if c.HiBytes == 0 && c.LoBytes == 0 {
				title = "all flows"
			}
			panels = append(panels, curvePanel{title: title,
				rows: func(r *Result) []Row { return r.SizeClasses }, class: c.Name})
		}
		f, err := curveFigure(st, m, panels)
		if err != nil {
			return nil, err
		}
		figs = append(figs, *f)
	}
	if len(st.Points[0].FlowClasses) > 0 {
		m, _ := MetricByName("goodput_gbps")
		var panels []curvePanel
		rows := st.Points[0].FlowClasses
		for i := 0; i < len(rows); i += len(st.Schemes) {
			panels = append(panels, curvePanel{title: "class " + classText(rows[i].Class),
				rows: func(r *Result) []Row { return r.FlowClasses }, class: rows[i].Class})
		}
		f, err := curveFigure(st, m, panels)
		if err != nil {
			return nil, err
		}
		figs = append(figs, *f)
	}
	return figs, nil
}

// curvePanel is one panel of a curve figure: a class of rows.
type curvePanel struct {
	title string
	rows  func(*Result) []Row
	class string
}

// curveLine is one line of a panel: a scheme at the points that share
// the values of the swept paths past the first.
type curveLine struct {
	name       string
	color      int
	x, y       []float64
	lo, hi     []float64 // NaN where no interval can be given
	hasAnyBand bool
}

// curveFigure draws metric m in a panel per class, two panels a row.
func curveFigure(st *Study, m Metric, panels []curvePanel) (*Figure, error) {
	first := st.Vary[0]
	xs, numeric := sweptAxis(first.Values)
	unit := ""
	if strings.HasSuffix(m.Name, "_us") {
		unit = " (us)"
	}
	cols := min(2, len(panels))
	rows := (len(panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for pi, panel := range panels {
		p := newPlot(panel.title, first.Path, m.Label+unit)
		lines := curveLines(st, m, panel, xs)
		var ys []float64
		for _, l := range lines {
			if err := addCurve(p, l, pi == 0); err != nil {
				return nil, err
			}
			for i := range l.y {
				ys = append(ys, l.y[i])
				if !math.IsNaN(l.hi[i]) {
					ys = append(ys, l.hi[i])
				}
			}
		}
		if numeric {
			p.X.Tick.Marker = plot.TickerFunc(linearTicks)
			lo, hi := xs[0], xs[len(xs)-1]
			pad := (hi - lo) * 0.05
			if pad == 0 {
				pad = math.Max(math.Abs(lo)*0.05, 0.5)
			}
			p.X.Min, p.X.Max = lo-pad, hi+pad
		} else {
			p.NominalX(first.Values...)
			p.X.Min, p.X.Max = -0.5, float64(len(xs))-0.5
		}
		linearFromZero(&p.Y, ys, legendRoom)
		if pi == 0 {
			placeLegend(p, true, true)
		}
		grid[pi/cols][pi%cols] = p
	}
	title := fmt.Sprintf("%s: %s against %s", st.Scenario, m.Label, first.Path)
	return renderGrid(grid, "curve-"+strings.ReplaceAll(m.Name, "_", "-"), title)
}

// sweptAxis places the swept values on the x axis: at their numbers if
// every one is a plain number, else at 0, 1, 2, ...
func sweptAxis(values []string) ([]float64, bool) {
	xs := make([]float64, len(values))
	numeric := true
	for i, v := range values {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			numeric = false
			break
		}
		xs[i] = x
	}
	if !numeric {
		for i := range xs {
			xs[i] = float64(i)
		}
	}
	return xs, numeric
}

// curveLines collects a panel's lines: per scheme and combination of the
// swept values past the first, the metric's mean and interval at each
// value of the first.
func curveLines(st *Study, m Metric, panel curvePanel, xs []float64) []curveLine {
	nFirst := len(st.Vary[0].Values)
	rest := len(st.Points) / nFirst // combinations of the other paths
	var lines []curveLine
	for si, scheme := range st.Schemes {
		for c := range rest {
			l := curveLine{name: scheme, color: si*rest + c}
			if rest > 1 {
				l.name += ", " + PointName(st.Points[c].Point[1:])
			}
			for v := range nFirst {
				// The first path varies slowest: point v*rest + c.
				r := st.Points[v*rest+c]
				row := findRow(panel.rows(r), panel.class, scheme)
				if row == nil {
					continue
				}
				ms := row.Metric(m.Name)
				if ms == nil || ms.Mean == nil {
					continue
				}
				iv := ms.Interval()
				l.x, l.y = append(l.x, xs[v]), append(l.y, *ms.Mean)
				lo, hi := math.NaN(), math.NaN()
				if iv.Defined() {
					lo, hi = iv.Lo, iv.Hi
					l.hasAnyBand = true
				}
				l.lo, l.hi = append(l.lo, lo), append(l.hi, hi)
			}
			if len(l.x) > 0 {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// findRow finds the row of a class and scheme.
func findRow(rows []Row, class, scheme string) *Row {
	for i := range rows {
		if rows[i].Class == class && rows[i].Scheme == scheme {
			return &rows[i]
		}
	}
	return nil
}

// addCurve draws a line with a glyph at each point, over its interval as
// a translucent band (between consecutive points that both have one).
func addCurve(p *plot.Plot, l curveLine, legend bool) error {
	if l.hasAnyBand {
		for i := 0; i+1 < len(l.x); i++ {
			if math.IsNaN(l.lo[i]) || math.IsNaN(l.lo[i+1]) {
				continue
			}
			band, err := plotter.NewPolygon(plotter.XYs{{X: l.x[i], Y: l.lo[i]}, {X: l.x[i+1], Y: l.lo[i+1]},
				{X: l.x[i+1], Y: l.hi[i+1]}, {X: l.x[i], Y: l.hi[i]}})
			if err != nil {
				return fmt.Errorf("experiment: plotting %s: %w", l.name, err)
			}
			band.Color = translucent(plotutil.Color(l.color))
			band.LineStyle.Width = 0
			p.Add(band)
		}
		// Error bars as well, so that a lone point's interval shows and
		// bands read in black and white.
		var bars plotter.YErrors
		var pts plotter.XYs
		for i := range l.x {
			if !math.IsNaN(l.lo[i]) {
				pts = append(pts, plotter.XY{X: l.x[i], Y: l.y[i]})
				bars = append(bars, struct{ Low, High float64 }{l.y[i] - l.lo[i], l.hi[i] - l.y[i]})
			}
		}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{pts, bars})
		if err != nil {
			return fmt.Errorf("experiment: plotting %s: %w", l.name, err)
		}
		eb.Color = plotutil.Color(l.color)
		p.Add(eb)
	}
	pts := make(plotter.XYs, len(l.x))
	for i := range l.x {
		pts[i] = plotter.XY{X: l.x[i], Y: l.y[i]}
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("experiment: plotting %s: %w", l.name, err)
	}
	line.Color = plotutil.Color(l.color)
	line.Dashes = plotutil.Dashes(l.color)
	line.Width = vg.Points(1.5)
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("experiment: plotting %s: %w", l.name, err)
	}
	s.Color = plotutil.Color(l.color)
	s.Shape = plotutil.Shape(l.color)
	p.Add(line, s)
	if legend {
		p.Legend.Add(l.name, line, s)
	}
	return nil
}

// translucent is c at a fifth of its opacity, for bands.
func translucent(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 51}
}

// renderGrid draws plots in a grid as PNG and SVG.
func renderGrid(grid [][]*plot.Plot, name, title string) (*Figure, error) {
	rows, cols := len(grid), len(grid[0])
	w, h := tileWidth*vg.Length(cols), tileHeight*vg.Length(rows)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	drawAll := func(c draw.Canvas) {
		canvases := plot.Align(grid, tiles, c)
		for i := range grid {
			for j, p := range grid[i] {
				if p != nil {
					p.Draw(canvases[i][j])
				}
			}
		}
	}
	f := &Figure{Name: name, Title: title}
	img := vgimg.New(w, h)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	drawAll(dc)
	var png bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&png); err != nil {
		return nil, fmt.Errorf("experiment: rendering %s.png: %w", name, err)
	}
	svg := vgsvg.New(w, h)
	drawAll(draw.New(svg))
	var sv bytes.Buffer
	if _, err := svg.WriteTo(&sv); err != nil {
		return nil, fmt.Errorf("experiment: rendering %s.svg: %w", name, err)
	}
	f.PNG, f.SVG = png.Bytes(), sv.Bytes()
	return f, nil
}
