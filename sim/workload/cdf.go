package workload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Scale is the unit of the cumulative column of a CDF file.
type Scale int

const (
	// Auto decides the scale from the last point, which must be exactly 100
	// (percent) or exactly 1 (fraction).
	Auto Scale = iota
	// Percent: cumulative values run from 0 to 100 (the HPCC-style files).
	Percent
	// Fraction: cumulative values run from 0 to 1 (e.g. DataMining_VL2.txt).
	Fraction
)

// String returns "auto", "percent" or "fraction".
func (s Scale) String() string {
	switch s {
	case Auto:
		return "auto"
	case Percent:
		return "percent"
	case Fraction:
		return "fraction"
	}
	return fmt.Sprintf("Scale(%d)", int(s))
}

// top is the cumulative value of the last point on this scale.
func (s Scale) top() float64 {
	if s == Percent {
		return 100
	}
	return 1
}

// maxCDFSize bounds the sizes of a CDF file: every integer up to 2^53 is
// exact in a float64, so samples convert to int64 bytes without surprises.
const maxCDFSize = 1 << 53

// Point is one point of a piecewise-linear CDF: a fraction Cum of all flows
// are at most Size bytes.
type Point struct {
	Size float64 // bytes
	Cum  float64 // cumulative probability, 0..1 whatever the file's scale
}

// CDF is a piecewise-linear cumulative distribution of flow sizes: between
// two points the probability is spread uniformly over the sizes, and the
// probability of the first point (if its cumulative value is above zero)
// is a point mass at its size. A CDF is immutable and safe for concurrent
// use; Sample draws from the caller's generator.
type CDF struct {
	name  string
	scale Scale // the scale of the source, Percent or Fraction
	pts   []Point
	mean  float64
}

// Name returns the name the CDF was parsed under: a built-in name such as
// "websearch", or the file name given to ParseCDF or LoadCDF.
func (c *CDF) Name() string { return c.name }

// Scale returns the scale of the source file, Percent or Fraction (never
// Auto).
func (c *CDF) Scale() Scale { return c.scale }

// Points returns a copy of the points, with cumulative values normalised to
// 0..1 whatever the scale of the file.
func (c *CDF) Points() []Point { return append([]Point(nil), c.pts...) }

// Mean returns the exact mean size in bytes of the piecewise-linear
// distribution: the first point's mass times its size plus, for every
// segment, its probability times the midpoint of its sizes. Samples are
// rounded to whole bytes and at least 1, so their mean can differ from this
// by a fraction of a byte.
func (c *CDF) Mean() float64 { return c.mean }

// Quantile returns the size in bytes below which a fraction p of the flows
// fall: the smallest x with F(x) >= p, interpolating linearly between
// points. p is clamped to [0, 1].
func (c *CDF) Quantile(p float64) float64 {
	if math.IsNaN(p) {
		return math.NaN()
	}
	p = min(max(p, 0), 1)
	pts := c.pts
	i := sort.Search(len(pts), func(i int) bool { return pts[i].Cum >= p })
	if i == 0 {
		return pts[0].Size
	}
	if i == len(pts) { // only if rounding kept p above the last point, 1
		return pts[len(pts)-1].Size
	}
	a, b := pts[i-1], pts[i]
	// a.Cum < p <= b.Cum, so the segment has positive probability.
	return a.Size + (b.Size-a.Size)*(p-a.Cum)/(b.Cum-a.Cum)
}

// Sample draws one flow size by inverse-transform sampling: the Quantile of
// a uniform random number, rounded to the nearest byte and at least 1 byte
// (a zero-byte flow would never complete). It consumes exactly one Float64
// from rng.
func (c *CDF) Sample(rng *rand.Rand) int64 {
	n := int64(math.Round(c.Quantile(rng.Float64())))
	return max(n, 1)
}

// ParseCDF reads a piecewise-linear CDF, one point per line as
// "size_bytes cumulative", with blank lines and "#" comments allowed. name
// labels the CDF and its errors (usually the file name). The scale is the
// unit of the cumulative column; Auto takes it from the last point.
//
// Sizes must be >= 0 and cumulative values >= 0, both non-decreasing, the
// cumulative values within the scale and the last exactly at its top; at
// least two points. Equal sizes with rising cumulative values make a point
// mass; equal cumulative values with rising sizes make a gap that is never
// sampled. Every error names the file, the line and the field, e.g.
// `mycdf.txt:4: cumulative "1.5x": not a number`.
func ParseCDF(r io.Reader, name string, scale Scale) (*CDF, error) {
	if name == "" {
		name = "cdf"
	}
	if scale != Auto && scale != Percent && scale != Fraction {
		return nil, fmt.Errorf("%s: unknown scale %v: use Auto, Percent or Fraction", name, scale)
	}
	type rawPoint struct {
		line              int
		size, cum         float64
		sizeText, cumText string
	}
	var raw []rawPoint
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want 2 fields \"size_bytes cumulative\", got %d", name, line, len(f))
		}
		size, err := parseCDFNumber(f[0])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: size %q: %v", name, line, f[0], err)
		}
		if size < 0 {
			return nil, fmt.Errorf("%s:%d: size %s: must not be negative", name, line, f[0])
		}
		if size > maxCDFSize {
			return nil, fmt.Errorf("%s:%d: size %s: larger than %d bytes", name, line, f[0], int64(maxCDFSize))
		}
		cum, err := parseCDFNumber(f[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: cumulative %q: %v", name, line, f[1], err)
		}
		if cum < 0 {
			return nil, fmt.Errorf("%s:%d: cumulative %s: must not be negative", name, line, f[1])
		}
		if n := len(raw); n > 0 {
			prev := raw[n-1]
			if size < prev.size {
				return nil, fmt.Errorf("%s:%d: size %s < previous size %s: sizes must not decrease", name, line, f[0], prev.sizeText)
			}
			if cum < prev.cum {
				return nil, fmt.Errorf("%s:%d: cumulative %s < previous cumulative %s: cumulative values must not decrease", name, line, f[1], prev.cumText)
			}
		}
		raw = append(raw, rawPoint{line, size, cum, f[0], f[1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", name, line+1, err)
	}
	if len(raw) < 2 {
		return nil, fmt.Errorf("%s: %d points: a CDF needs at least 2", name, len(raw))
	}
	last := raw[len(raw)-1]
	if scale == Auto {
		switch last.cum {
		case 100:
			scale = Percent
		case 1:
			scale = Fraction
		default:
			return nil, fmt.Errorf("%s:%d: last cumulative %s: a CDF must end at 100 (percent) or at 1 (fraction)", name, last.line, last.cumText)
		}
	}
	top := scale.top()
	for _, p := range raw {
		if p.cum > top {
			return nil, fmt.Errorf("%s:%d: cumulative %s > %g: outside the %v scale 0..%g", name, p.line, p.cumText, top, scale, top)
		}
	}
	if last.cum != top {
		return nil, fmt.Errorf("%s:%d: last cumulative %s is not %g: a CDF on the %v scale must end at %g", name, last.line, last.cumText, top, scale, top)
	}
	c := &CDF{name: name, scale: scale, pts: make([]Point, len(raw))}
	for i, p := range raw {
		// Dividing by 100 is correctly rounded, so a percent file and a
		// fraction file with the same decimal points (15 and 0.15) give
		// the same float64 and hence the same samples.
		c.pts[i] = Point{Size: p.size, Cum: p.cum / top}
	}
	c.mean = c.pts[0].Cum * c.pts[0].Size
	for i := 1; i < len(c.pts); i++ {
		a, b := c.pts[i-1], c.pts[i]
		c.mean += (b.Cum - a.Cum) * (a.Size + b.Size) / 2
	}
	return c, nil
}

// parseCDFNumber parses a finite decimal number.
func parseCDFNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, errors.New("out of range")
	}
	if err != nil {
		return 0, errors.New("not a number")
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, errors.New("not a finite number")
	}
	return v, nil
}
