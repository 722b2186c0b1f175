package experiment

import (
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

func labels(ticks []plot.Tick) []string {
	var out []string
	for _, t := range ticks {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

// The log axis ends at the nice value past the data (FCTs up to 1,700 us:
// 2,000), not a decade beyond, and labels 1, 2 and 5 times each decade
// when it spans few decades.
func TestLogAxisEndsNearTheData(t *testing.T) {
	var a plot.Axis
	a.Scale = plot.LinearScale{}
	logAxis(&a, []float64{4.1, 37, 1700}, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) })
	if a.Min != 2 || a.Max != 2000 {
		t.Errorf("axis %g..%g, want 2..2000", a.Min, a.Max)
	}
	got := strings.Join(labels(a.Tick.Marker.Ticks(a.Min, a.Max)), " ")
	if want := "2 5 10 20 50 100 200 500 1000 2000"; got != want {
		t.Errorf("labels %q, want %q", got, want)
	}
	// Over five decades only the decades are labelled.
	logAxis(&a, []float64{300, 16e6}, sizeLabel)
	if a.Min != 200 || a.Max != 2e7 {
		t.Errorf("size axis %g..%g, want 200..2e7", a.Min, a.Max)
	}
	if got := strings.Join(labels(a.Tick.Marker.Ticks(a.Min, a.Max)), " "); got != "1KB 10KB 100KB 1MB 10MB" {
		t.Errorf("size labels %q", got)
	}
}

// Linear axes get five to ten labelled ticks at nice values, printed
// short.
func TestLinearTicks(t *testing.T) {
	for _, tt := range []struct {
		max  float64
		want string
	}{
		{7.2, "0 1 2 3 4 5 6 7"},
		{325, "0 50 100 150 200 250 300"},
		{0.36, "0 0.05 0.1 0.15 0.2 0.25 0.3 0.35"},
		{48, "0 5 10 15 20 25 30 35 40 45"},
		{1, "0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1"},
	} {
		if got := strings.Join(labels(linearTicks(0, tt.max)), " "); got != tt.want {
			t.Errorf("0..%g: labels %q, want %q", tt.max, got, tt.want)
		}
	}
}
