package experiment

import "testing"

// A change's interval has its two bounds with the same decimals: one,
// or three where a bound would round to zero with one, so that a bound
// just past zero does not read as zero, nor beside a bound of another
// precision ("[-12.9, +0.013]").
func TestIntervalText(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{-14.04, -10.55, "-12.3% [-14.0, -10.6] better"},
		{-12.9, 0.013, "-12.3% [-12.900, +0.013] better"},
		{-0.0123, 5.2, "-12.3% [-0.012, +5.200] better"},
		{-3.2, 0.0004, "-12.3% [-3.2, 0.0] better"},
		{-0.0002, 0.0003, "-12.3% [0.0, 0.0] better"},
	} {
		pct, lo, hi := -12.3, c.lo, c.hi
		m := &MetricStats{Mean: &pct, VsBaseline: &Change{Pct: &pct, PctLo: &lo, PctHi: &hi, Verdict: "better"}}
		if got := changeText(Row{Scheme: "rcm"}, "dcqcn", m); got != c.want {
			t.Errorf("[%g, %g]: %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}
