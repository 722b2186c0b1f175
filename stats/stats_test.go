package stats

import (
	"math"
	"testing"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// Student's own example (Biometrika, 1908), the sleep data of Cushny and
// Peebles: extra hours of sleep of ten patients under two drugs. R's
// t.test(extra ~ group, data = sleep, paired = TRUE) gives t = -4.0621,
// df = 9, p = 0.002833, 95% CI [-2.4598858, -0.7001142], mean -1.58.
func TestPairedTStudentsSleepData(t *testing.T) {
	drug1 := []float64{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0}
	drug2 := []float64{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4}
	p := PairedT(drug1, drug2, 0.95, HigherIsBetter)
	if !near(p.Diff.Mean, -1.58, 1e-12) || !near(p.T, -4.0621, 5e-5) || !near(p.P, 0.002833, 5e-7) ||
		!near(p.Diff.Lo, -2.4598858, 5e-8) || !near(p.Diff.Hi, -0.7001142, 5e-8) {
		t.Errorf("got mean %v, t %v, p %v, CI [%v, %v]; want -1.58, -4.0621, 0.002833, [-2.4598858, -0.7001142]",
			p.Diff.Mean, p.T, p.P, p.Diff.Lo, p.Diff.Hi)
	}
	if p.Verdict != Worse {
		t.Errorf("drug 1 gives less extra sleep: verdict %q, want %q", p.Verdict, Worse)
	}
	if q := PairedT(drug1, drug2, 0.95, LowerIsBetter); q.Verdict != Better {
		t.Errorf("lower is better: verdict %q, want %q", q.Verdict, Better)
	}
	// At 99.9% the interval, 4.78 standard errors wide on each side
	// (t(0.9995, 9)), holds zero.
	if q := PairedT(drug1, drug2, 0.999, HigherIsBetter); q.Verdict != Same || q.Diff.Hi <= 0 {
		t.Errorf("at 99.9%%: verdict %q, CI [%v, %v]; want %q and zero inside", q.Verdict, q.Diff.Lo, q.Diff.Hi, Same)
	}
	pct, lo, hi := p.Change()
	base := 2.33 // mean of drug2
	if !near(pct, -1.58/base*100, 1e-9) || !near(lo, p.Diff.Lo/base*100, 1e-9) || !near(hi, p.Diff.Hi/base*100, 1e-9) {
		t.Errorf("change %v%% [%v, %v]", pct, lo, hi)
	}
}

// 1..5: mean 3, sd sqrt(2.5), t(0.975, 4) = 2.7764451.
func TestMeanInterval(t *testing.T) {
	iv := MeanInterval([]float64{1, 2, 3, 4, 5}, 0.95)
	h := 2.7764451 * math.Sqrt(2.5) / math.Sqrt(5)
	if iv.N != 5 || iv.Mean != 3 || !near(iv.SD, math.Sqrt(2.5), 1e-12) || !near(iv.Lo, 3-h, 1e-6) || !near(iv.Hi, 3+h, 1e-6) {
		t.Errorf("got %+v, want mean 3 ± %v", iv, h)
	}
	if !near(TQuantile(0.95, 1), 12.706205, 1e-6) || !near(TQuantile(0.99, 30), 2.749996, 1e-6) {
		t.Errorf("t quantiles %v %v", TQuantile(0.95, 1), TQuantile(0.99, 30))
	}
}

func TestTooFewSamples(t *testing.T) {
	for _, xs := range [][]float64{nil, {4.2}} {
		iv := MeanInterval(xs, 0.95)
		if iv.Defined() || !math.IsNaN(iv.Lo) || !math.IsNaN(iv.HalfWidth()) {
			t.Errorf("%v: %+v, want no interval", xs, iv)
		}
		p := PairedT(xs, xs, 0.95, LowerIsBetter)
		if p.Verdict != TooFew || !math.IsNaN(p.P) {
			t.Errorf("%v: verdict %q p %v, want %q", xs, p.Verdict, p.P, TooFew)
		}
	}
	if iv := MeanInterval([]float64{4.2}, 0.95); iv.Mean != 4.2 {
		t.Errorf("one sample: mean %v", iv.Mean)
	}
}

// Identical schemes (the same metric on every seed) are no different; a
// scheme that is the baseline shifted by a constant is found, whichever
// its sign, however small the shift.
func TestIdenticalAndShifted(t *testing.T) {
	base := []float64{81.5, 77.2, 90.3, 85.0, 79.9}
	same := PairedT(base, base, 0.95, LowerIsBetter)
	if same.Verdict != Same || same.Diff.Mean != 0 || same.Diff.Lo != 0 || same.Diff.Hi != 0 || same.P != 1 {
		t.Errorf("identical: %+v", same)
	}
	for _, shift := range []float64{-10, -0.5, 0.5, 3} {
		x := make([]float64, len(base))
		for i := range x {
			x[i] = base[i] + shift
		}
		p := PairedT(x, base, 0.95, LowerIsBetter)
		want := Better
		if shift > 0 {
			want = Worse
		}
		if p.Verdict != want || !near(p.Diff.Mean, shift, 1e-9) || p.P > 1e-9 {
			t.Errorf("shift %v: verdict %q, diff %v, p %v; want %q", shift, p.Verdict, p.Diff.Mean, p.P, want)
		}
	}
	// Equal outcomes summed differently differ in their last bits: that
	// is no difference, even when it is the same in every pair.
	noisy := make([]float64, len(base))
	for i := range noisy {
		noisy[i] = base[i] * (1 + 3e-15)
	}
	if p := PairedT(noisy, base, 0.95, LowerIsBetter); p.Verdict != Same || p.Diff.Mean != 0 {
		t.Errorf("rounding noise: %+v", p)
	}
	// Noise twice the shift: no verdict at five seeds.
	x := []float64{81.5 + 2, 77.2 - 1.5, 90.3 + 1, 85.0 - 2, 79.9 + 0.8}
	if p := PairedT(x, base, 0.95, LowerIsBetter); p.Verdict != Same {
		t.Errorf("noise only: %+v", p)
	}
}

func TestPairedPanicsOnMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for slices of different lengths")
		}
	}()
	PairedT([]float64{1, 2}, []float64{1}, 0.95, LowerIsBetter)
}
