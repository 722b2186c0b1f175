package fluid

import (
	"math"
	"testing"
)

func near(got, want, rel float64) bool {
	if want == 0 {
		return math.Abs(got) <= rel
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

func TestMarkProbability(t *testing.T) {
	p := PaperParams(40e9) // Kmin 5 KB, Kmax 200 KB, Pmax 1%
	cut := p
	cut.Kmin, cut.Kmax = 40e3, 40e3
	for _, tc := range []struct {
		name string
		p    Params
		q    float64 // bytes
		want float64
	}{
		{"empty", p, 0, 0},
		{"at Kmin", p, 5e3, 0},
		{"a quarter", p, 5e3 + 195e3/4, 0.0025},
		{"half way", p, 102.5e3, 0.005},
		{"at Kmax", p, 200e3, 0.01},
		{"past Kmax", p, 200e3 + 1, 1},
		{"cut-off below", cut, 40e3, 0},
		{"cut-off above", cut, 40e3 + 1, 1},
	} {
		if got := tc.p.MarkProbability(tc.q); !near(got, tc.want, 1e-12) {
			t.Errorf("%s: p(%g B) = %g, want %g", tc.name, tc.q, got, tc.want)
		}
	}
}

// naiveRunRate is x p / ((1-p)^(-x) - 1) written out with math.Pow, good
// where p is not tiny.
func naiveRunRate(x, p float64) float64 { return x * p / (math.Pow(1-p, -x) - 1) }

func TestRunRate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		x, p    float64
		want    float64
		rel     float64
		compute bool // want = naiveRunRate
	}{
		{"no marks", 6667, 0, 1, 0, false},
		{"no marks, no packets", 0, 0, 1, 0, false},
		// Series: x p/((1-p)^-x - 1) = 1 - (x+1) p/2 + O((x p)^2).
		{"tiny p, byte counter", 6667, 1e-12, 1 - 6668*1e-12/2, 1e-15, false},
		{"tiny p, timer", 183.3, 1e-15, 1 - 184.3*1e-15/2, 1e-15, false},
		{"denormal p", 6667, 5e-320, 1, 1e-15, false},
		{"x -> 0", 0, 0.01, 0.01 / -math.Log1p(-0.01), 1e-15, false},
		{"moderate", 91.7, 1e-3, 0, 1e-9, true},
		{"large", 6667, 1e-3, 0, 1e-9, true},
		{"every packet marked", 100, 1, 0, 0, false},
		{"overflowing exponent", 1e9, 0.5, 0, 0, false},
	} {
		want := tc.want
		if tc.compute {
			want = naiveRunRate(tc.x, tc.p)
		}
		got := runRate(tc.x, tc.p, logSurvival(tc.p))
		if math.IsNaN(got) || !near(got, want, tc.rel) {
			t.Errorf("%s: runRate(%g, %g) = %.17g, want %.17g", tc.name, tc.x, tc.p, got, want)
		}
	}
}

func TestMarkedUnmarked(t *testing.T) {
	for _, tc := range []struct {
		name         string
		x, p         float64
		marked, rel  float64
		wantUnmarked float64
	}{
		{"no marks", 83.3, 0, 0, 0, 1},
		{"no packets, all marked", 0, 1, 0, 0, 1},
		{"all marked", 83.3, 1, 1, 0, 0},
		// 1-(1-p)^x = x p + O((x p)^2): 1 - 1e-13 would lose 3 digits.
		{"tiny p", 83.3, 1e-15, 83.3e-15, 1e-12, 1 - 83.3e-15},
		{"moderate", 83.3, 1e-3, 1 - math.Pow(1-1e-3, 83.3), 1e-12, math.Pow(1-1e-3, 83.3)},
	} {
		l := logSurvival(tc.p)
		if got := marked(tc.x, l); math.IsNaN(got) || !near(got, tc.marked, tc.rel) {
			t.Errorf("%s: marked(%g, p=%g) = %.17g, want %.17g", tc.name, tc.x, tc.p, got, tc.marked)
		}
		if got := unmarked(tc.x, l); math.IsNaN(got) || !near(got, tc.wantUnmarked, 1e-12) {
			t.Errorf("%s: unmarked(%g, p=%g) = %.17g, want %.17g", tc.name, tc.x, tc.p, got, tc.wantUnmarked)
		}
	}
}

// With no marking the decrease terms vanish and the increase terms take
// their p -> 0 limits: byte counter R/B and timer 1/T expiries per second.
func TestRHSWithoutMarks(t *testing.T) {
	m := newModel(PaperParams(40e9))
	rc, rt, rd := 0.5*m.line, 0.75*m.line, 0.6*m.line
	s := m.signal(0)
	dRC, dRT, dAlpha := m.rhs(rc, rt, 0.3, rd, &s)
	events := rd/m.b + 1/m.t
	if want := (rt - rc) / 2 * events; !near(dRC, want, 1e-12) {
		t.Errorf("dR_C/dt = %g, want %g", dRC, want)
	}
	if want := m.rai * events; !near(dRT, want, 1e-12) {
		t.Errorf("dR_T/dt = %g, want %g", dRT, want)
	}
	if want := -m.g / m.tauP * 0.3; !near(dAlpha, want, 1e-12) {
		t.Errorf("dalpha/dt = %g, want %g", dAlpha, want)
	}
	// And the terms are continuous there: p = 1e-14 changes nothing
	// beyond the first-order terms, which are of relative size ~1e-10.
	s2 := m.signal(1e-14)
	dRC2, dRT2, _ := m.rhs(rc, rt, 0.3, rd, &s2)
	if !near(dRC2, dRC, 1e-9) || !near(dRT2, dRT, 1e-9) {
		t.Errorf("p = 1e-14 gives dR_C %g, dR_T %g; p = 0 gives %g, %g", dRC2, dRT2, dRC, dRT)
	}
}

// At p = 1 every interval brings a CNP and no counter ever expires.
func TestRHSAllMarked(t *testing.T) {
	m := newModel(PaperParams(40e9))
	rc, rt, a := 0.5*m.line, 0.75*m.line, 0.3
	s := m.signal(1)
	dRC, dRT, dAlpha := m.rhs(rc, rt, a, rc, &s)
	if want := -rc * a / (2 * m.tau); !near(dRC, want, 1e-12) {
		t.Errorf("dR_C/dt = %g, want %g", dRC, want)
	}
	if want := -(rt - rc) / m.tau; !near(dRT, want, 1e-12) {
		t.Errorf("dR_T/dt = %g, want %g", dRT, want)
	}
	if want := m.g / m.tauP * (1 - a); !near(dAlpha, want, 1e-12) {
		t.Errorf("dalpha/dt = %g, want %g", dAlpha, want)
	}
	// A flow whose delayed rate is zero gets no CNP even at p = 1.
	dRC, _, _ = m.rhs(rc, rt, a, 0, &s)
	if math.IsNaN(dRC) || dRC != 0 {
		t.Errorf("rate 0 at p = 1: dR_C/dt = %g, want 0", dRC)
	}
}
