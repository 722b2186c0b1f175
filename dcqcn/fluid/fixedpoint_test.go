package fluid

import (
	"math"
	"testing"
)

// The paper (section 5.1) solves equation (10) numerically and reports
// that p is unique and under 1% for reasonable settings, so that the queue
// rests between Kmin and Kmax. With its settings at 40 Gb/s and 1500 B
// packets this holds for N = 2 and N = 10; for N = 16 the model needs
// p = 1.62% > Pmax, which no queue length gives. The reference values come
// from an independent evaluation of h(p) = 0 (see FixedPoint) in
// double-precision Python.
func TestFixedPointPaper(t *testing.T) {
	p := PaperParams(40e9)
	for _, tc := range []struct {
		n         int
		wantP     float64
		wantQ     float64 // bytes
		saturated bool
	}{
		{n: 2, wantP: 0.0011651, wantQ: 27720},
		{n: 10, wantP: 0.0090271, wantQ: 181028},
		{n: 16, wantP: 0.0162421, wantQ: 200000, saturated: true},
	} {
		fp, err := FixedPoint(p, tc.n)
		if err != nil {
			t.Fatalf("N=%d: %v", tc.n, err)
		}
		t.Logf("N=%d: p = %.4f%%, q = %.1f KB, R_T = %.4f Gb/s, alpha = %.4f, saturated %v",
			tc.n, 100*fp.P, fp.Q/1e3, fp.RT/1e9, fp.Alpha, fp.Saturated)
		if !near(fp.P, tc.wantP, 1e-4) || !near(fp.Q, tc.wantQ, 1e-4) || fp.Saturated != tc.saturated {
			t.Errorf("N=%d: p = %.7f, q = %.0f B, saturated %v; want %.7f, %.0f B, %v",
				tc.n, fp.P, fp.Q, fp.Saturated, tc.wantP, tc.wantQ, tc.saturated)
		}
		if !tc.saturated {
			// The paper's claims, checked directly.
			if !(fp.P > 0 && fp.P < 0.01) {
				t.Errorf("N=%d: p = %g, want 0 < p < 1%%", tc.n, fp.P)
			}
			if !(fp.Q > p.Kmin && fp.Q < p.Kmax) {
				t.Errorf("N=%d: q = %g B, want between Kmin %g and Kmax %g", tc.n, fp.Q, p.Kmin, p.Kmax)
			}
			if got := p.MarkProbability(fp.Q); !near(got, fp.P, 1e-12) {
				t.Errorf("N=%d: p(Q) = %g, want P = %g", tc.n, got, fp.P)
			}
		}
		if !near(fp.RC, 40e9/float64(tc.n), 1e-12) {
			t.Errorf("N=%d: R_C = %g, want C/N", tc.n, fp.RC)
		}
	}
}

// Plugging the fixed point back into equations (7)-(9) must give zero
// derivatives: this checks the algebra that reduced them to one equation
// in p.
func TestFixedPointResiduals(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 10, 16, 40} {
		p := PaperParams(40e9)
		fp, err := FixedPoint(p, n)
		if err != nil {
			t.Fatalf("N=%d: %v", n, err)
		}
		m := newModel(p)
		bits := 8 * p.PacketSize
		rc, rt := fp.RC/bits, fp.RT/bits
		s := m.signal(fp.P)
		dRC, dRT, dAlpha := m.rhs(rc, rt, fp.Alpha, rc, &s)
		// Compare each derivative with the size of its decrease term.
		cnp := marked(m.tau*rc, s.l)
		scaleRC := rc * fp.Alpha / (2 * m.tau) * cnp
		scaleRT := (rt - rc) / m.tau * cnp
		if math.Abs(dRC) > 1e-9*scaleRC || math.Abs(dRT) > 1e-9*scaleRT || math.Abs(dAlpha) > 1e-12 {
			t.Errorf("N=%d: derivatives at the fixed point %g, %g, %g (scales %g, %g)",
				n, dRC, dRT, dAlpha, scaleRC, scaleRT)
		}
	}
}

// More flows share the link at a lower rate each, so each flow sees fewer
// packets per CNP interval and needs more marking: p rises with N.
func TestFixedPointMonotoneInN(t *testing.T) {
	p := PaperParams(40e9)
	prev := 0.0
	for n := 1; n <= 32; n++ {
		fp, err := FixedPoint(p, n)
		if err != nil {
			t.Fatal(err)
		}
		if !(fp.P > prev) {
			t.Errorf("N=%d: p = %g, not above p(N-1) = %g", n, fp.P, prev)
		}
		prev = fp.P
	}
}

func TestFixedPointErrors(t *testing.T) {
	p := PaperParams(40e9)
	if _, err := FixedPoint(p, 0); err == nil {
		t.Error("N = 0 accepted")
	}
	fast := p
	fast.Capacity = 100e9 // one 40 Gb/s flow cannot fill 100 Gb/s
	if _, err := FixedPoint(fast, 2); err == nil {
		t.Error("C/N above the line rate accepted")
	}
	bad := p
	bad.Pmax = 0
	if _, err := FixedPoint(bad, 2); err == nil {
		t.Error("invalid Params accepted")
	}
	cut := p
	cut.Kmin, cut.Kmax = 40e3, 40e3
	if fp, err := FixedPoint(cut, 2); err != nil || !fp.Saturated || fp.Q != 40e3 {
		t.Errorf("cut-off marking: %+v, %v; want saturated at 40 KB", fp, err)
	}
}
