package experiment

import (
	"bytes"
	"strings"
	"testing"
)

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

// One run per scheme gives no interval; the report says what gives
// them: more seeds for simulated runs, repetitions for emulated ones,
// where the machine, not the seed, is the noise.
func TestOneRunHint(t *testing.T) {
	for emulated, want := range map[bool]string{false: "give --seeds 5 or more", true: "give --repeat 5 or more"} {
		r := handMade(RunResult{Scheme: "dcqcn", Seed: 1, Results: results(flow(0, 1000, 300, 4, ""))})
		r.Seeds, r.Emulated = []uint64{1}, emulated
		var buf bytes.Buffer
		if err := WriteComparisonText(&buf, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), want) {
			t.Errorf("emulated %v: the text lacks %q:\n%s", emulated, want, buf.String())
		}
	}
}
