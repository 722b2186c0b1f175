package experiment

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Vary is one swept scenario value: the path Set takes ("workload.load")
// and the values to give it, in order. Several make a cartesian product.
type Vary struct {
	Path   string   `json:"path"`
	Values []string `json:"values"`
}

// maxVaryValues bounds one --vary's values, which a range with a tiny
// step would otherwise make by the million.
const maxVaryValues = 1000

// ParseVary reads "PATH=V1,V2,..." or "PATH=LO:HI:STEP" (a range of plain
// numbers, both ends included: "0.3:0.9:0.2" is 0.3, 0.5, 0.7, 0.9). The
// values are checked by the scenario later; here only their form.
func ParseVary(s string) (Vary, error) {
	path, list, ok := strings.Cut(s, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" {
		return Vary{}, fmt.Errorf("%q: want PATH=V1,V2,... or PATH=LO:HI:STEP, e.g. workload.load=0.3,0.6", s)
	}
	switch path {
	case "scheme":
		return Vary{}, fmt.Errorf("%q: schemes are compared at every point; give them with --schemes", s)
	case "seed":
		return Vary{}, fmt.Errorf("%q: every point runs every seed; give them with --seeds", s)
	}
	v := Vary{Path: path}
	if strings.Count(list, ":") == 2 && !strings.Contains(list, ",") {
		vals, err := parseRange(list)
		if err != nil {
			return Vary{}, fmt.Errorf("%q: %w", s, err)
		}
		v.Values = vals
		return v, nil
	}
	for _, x := range strings.Split(list, ",") {
		x = strings.TrimSpace(x)
		if x == "" {
			return Vary{}, fmt.Errorf("%q: empty value in the list", s)
		}
		if slices.Contains(v.Values, x) {
			return Vary{}, fmt.Errorf("%q: value %s given twice", s, x)
		}
		v.Values = append(v.Values, x)
	}
	if len(v.Values) > maxVaryValues {
		return Vary{}, fmt.Errorf("%q: %d values, at most %d", s, len(v.Values), maxVaryValues)
	}
	return v, nil
}

// plainNumber is what a range's ends and step may be: no units, no
// exponent, so that the values print with the digits the user wrote.
var plainNumber = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// parseRange reads LO:HI:STEP into the values LO, LO+STEP, ... up to HI,
// each printed as short as it is ("0.5", "1"), with at most as many
// decimals as the most precise of the three.
func parseRange(s string) ([]string, error) {
	parts := strings.Split(s, ":")
	var x [3]float64
	decimals := 0
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if !plainNumber.MatchString(p) {
			return nil, fmt.Errorf("range %s: %q is not a plain number (ranges take numbers without units; list other values: a,b,c)", s, p)
		}
		x[i], _ = strconv.ParseFloat(p, 64)
		if _, frac, ok := strings.Cut(p, "."); ok {
			decimals = max(decimals, len(frac))
		}
	}
	lo, hi, step := x[0], x[1], x[2]
	switch {
	case step <= 0:
		return nil, fmt.Errorf("range %s: the step must be greater than zero", s)
	case hi < lo:
		return nil, fmt.Errorf("range %s: the end is below the start", s)
	}
	// Counting steps in whole units of the last decimal keeps 0.3 + 2 *
	// 0.2 from landing a hair past 0.7 and 0.9 from being left out.
	scale := math.Pow(10, float64(decimals))
	l, h, st := math.Round(lo*scale), math.Round(hi*scale), math.Round(step*scale)
	n := int((h-l)/st) + 1
	if n > maxVaryValues {
		return nil, fmt.Errorf("range %s: %d values, at most %d", s, n, maxVaryValues)
	}
	out := make([]string, n)
	for i := range out {
		// A whole number over a power of ten rounds to the double
		// nearest the decimal, which prints back as that decimal.
		out[i] = strconv.FormatFloat((l+float64(i)*st)/scale, 'f', -1, 64)
	}
	return out, nil
}

// Assignment is one swept value at a point.
type Assignment struct {
	Path  string `json:"path"`
	Value string `json:"value"`
}

// points is the cartesian product of vary, the first path varying
// slowest: the order of points in outputs and of their indexes. No vary
// is one point with no assignments.
func points(vary []Vary) [][]Assignment {
	out := [][]Assignment{nil}
	for _, v := range vary {
		var next [][]Assignment
		for _, p := range out {
			for _, val := range v.Values {
				next = append(next, append(slices.Clone(p), Assignment{v.Path, val}))
			}
		}
		out = next
	}
	return out
}

// PointName says a point in messages and headings:
// "workload.load=0.3, topology.k=4"; "" for the only point of a study
// without sweep.
func PointName(p []Assignment) string {
	s := make([]string, len(p))
	for i, a := range p {
		s[i] = a.Path + "=" + a.Value
	}
	return strings.Join(s, ", ")
}

// unsafeInName is what a point's directory name replaces by '-'.
var unsafeInName = regexp.MustCompile(`[^A-Za-z0-9._=+-]`)

// pointDir is the directory of point i (of n) under a sweep's: its index,
// so that directories list in point order, then its values, for people:
// "p0_workload.load=0.3".
func pointDir(i, n int, p []Assignment) string {
	width := len(strconv.Itoa(n - 1))
	parts := make([]string, len(p))
	for j, a := range p {
		parts[j] = unsafeInName.ReplaceAllString(a.Path+"="+a.Value, "-")
	}
	return fmt.Sprintf("p%0*d_%s", width, i, strings.Join(parts, "_"))
}
