package dcqcn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/p4rcm/p4rcm/dcqcn"
)

// wantRT checks R_C and R_T at now, exactly.
func wantRT(t *testing.T, rp *dcqcn.RP, now int64, rate, target float64) {
	t.Helper()
	if got := rp.Rate(now); got != rate {
		t.Errorf("Rate(%d) = %.6f, want %.6f", now, got, rate)
	}
	if got := rp.Target(now); got != target {
		t.Errorf("Target(%d) = %.6f, want %.6f", now, got, target)
	}
}

func TestRPStartsAtLineRate(t *testing.T) {
	for _, name := range dcqcn.PresetNames() {
		t.Run(name, func(t *testing.T) {
			p, _ := dcqcn.Preset(name)
			rp := dcqcn.NewRP(&p, 100e9)
			// No CNP: no timer runs and nothing moves, however long.
			for _, now := range []int64{0, 1, us, 3600 * 1e6 * us} {
				wantRT(t, &rp, now, 100e9, 100e9)
				if a := rp.Alpha(now); a != p.InitialAlpha {
					t.Errorf("Alpha(%d) = %g, want initial %g", now, a, p.InitialAlpha)
				}
			}
			rp.OnSent(us, 1<<30) // bytes before any CNP do not count
			wantRT(t, &rp, 2*us, 100e9, 100e9)
			if rp.CNPs != 0 || rp.Cuts != 0 || rp.Increases != 0 {
				t.Errorf("counters %d/%d/%d, want all zero", rp.CNPs, rp.Cuts, rp.Increases)
			}
		})
	}
}

// TestRPPaperOneCNP follows the paper's RP (section 3.1, Figure 7) by hand:
// one CNP at 40 Gb/s with alpha = 1 halves R_C and keeps R_T at line rate;
// each expiry of the 55 us timer then halves the distance to R_T for F = 5
// fast-recovery steps, after which additive increase takes over. R_T stays
// capped at line rate, and with the byte counter at stage 0 the hyper
// increase (min(T, BC) > F) never starts.
func TestRPPaperOneCNP(t *testing.T) {
	p := dcqcn.Paper()
	rp := dcqcn.NewRP(&p, 40e9)
	t0 := 7 * us
	rp.OnCNP(t0)
	wantRT(t, &rp, t0, 20e9, 40e9)
	if a := rp.Alpha(t0); a != 1 {
		t.Errorf("alpha after the first CNP = %g, want (1-g)*1 + g = 1", a)
	}
	steps := []float64{
		30e9, 35e9, 37.5e9, 38.75e9, 39.375e9, // fast recovery, F = 5 steps
		39.6875e9, 39.84375e9, 39.921875e9, // additive: R_T + R_AI is capped at 40G
	}
	prev := 20e9
	for i, want := range steps {
		at := t0 + int64(i+1)*p.Timer
		wantRT(t, &rp, at-1, prev, 40e9)
		wantRT(t, &rp, at, want, 40e9)
		if rp.Increases != i+1 {
			t.Errorf("after %d timer expiries Increases = %d", i+1, rp.Increases)
		}
		prev = want
	}
	if rp.CNPs != 1 || rp.Cuts != 1 {
		t.Errorf("CNPs %d Cuts %d, want 1 1", rp.CNPs, rp.Cuts)
	}
}

// TestRPPaperPhases brings R_T below line rate with two CNPs at one instant
// (alpha stays 1: (1-g) 1 + g = 1) and, without a byte counter, walks the
// timer through all three phases: five fast-recovery steps (stages 0-4),
// one additive step (stage 5 = F: neither max < F nor min > F), then hyper
// increase (stage > F). Values by hand, R_AI 40 Mb/s, R_HAI 400 Mb/s.
func TestRPPaperPhases(t *testing.T) {
	p := dcqcn.Paper()
	p.ByteCounter = 0
	rp := dcqcn.NewRP(&p, 40e9)
	t0 := 3 * us
	rp.OnCNP(t0)
	rp.OnCNP(t0)
	wantRT(t, &rp, t0, 10e9, 20e9)
	steps := []struct {
		phase        string
		rate, target float64
	}{
		{"fast recovery", 15e9, 20e9},
		{"fast recovery", 17.5e9, 20e9},
		{"fast recovery", 18.75e9, 20e9},
		{"fast recovery", 19.375e9, 20e9},
		{"fast recovery", 19.6875e9, 20e9},
		{"additive", 19.86375e9, 20.04e9},
		{"hyper", 20.151875e9, 20.44e9},
		{"hyper", 20.4959375e9, 20.84e9},
		{"hyper", 20.86796875e9, 21.24e9},
	}
	for i, s := range steps {
		at := t0 + int64(i+1)*p.Timer
		t.Run(fmt.Sprintf("%d-%s", i, s.phase), func(t *testing.T) {
			wantRT(t, &rp, at, s.rate, s.target)
		})
	}
}

// TestRPPaperAlphaDecay: without CNPs alpha decays by (1-g) every K, the
// alpha timer counting from the last CNP.
func TestRPPaperAlphaDecay(t *testing.T) {
	p := dcqcn.Paper()
	g, K := p.G, p.AlphaInterval
	t0 := 5 * us
	for _, k := range []int{1, 2, 3, 6, 10, 100, 1000} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			rp := dcqcn.NewRP(&p, 40e9)
			rp.OnCNP(t0)
			at := t0 + int64(k)*K
			if got, want := rp.Alpha(at-1), math.Pow(1-g, float64(k-1)); got != want {
				t.Errorf("Alpha just before %d intervals = %.17g, want (1-g)^%d = %.17g", k, got, k-1, want)
			}
			if got, want := rp.Alpha(at), math.Pow(1-g, float64(k)); got != want {
				t.Errorf("Alpha after %d intervals = %.17g, want (1-g)^%d = %.17g", k, got, k, want)
			}
		})
	}
}

// TestRPPaperSecondCNP: a CNP after three quiet alpha intervals cuts with
// the decayed alpha, sets R_T to the rate it had, then raises alpha by g and
// restarts the alpha timer.
func TestRPPaperSecondCNP(t *testing.T) {
	p := dcqcn.Paper()
	g, K := p.G, p.AlphaInterval
	rp := dcqcn.NewRP(&p, 40e9)
	t0 := 2 * us
	rp.OnCNP(t0)
	t1 := t0 + 3*K + 1 // the timer (T = K) has expired three times: 30, 35, 37.5 G
	wantRT(t, &rp, t1-1, 37.5e9, 40e9)
	rp.OnCNP(t1)
	a := (1 - g) * (1 - g) * (1 - g)
	wantRT(t, &rp, t1, 37.5e9*(1-a/2), 37.5e9)
	a = (1-g)*a + g
	if got := rp.Alpha(t1); got != a {
		t.Errorf("alpha after the second CNP = %.17g, want %.17g", got, a)
	}
	if got := rp.Alpha(t1 + K - 1); got != a {
		t.Errorf("alpha timer not restarted by the CNP: Alpha(t1+K-1) = %.17g, want %.17g", got, a)
	}
	// The increase timer restarted at t1 too (T = K here).
	r := 37.5e9 * (1 - (1-g)*(1-g)*(1-g)/2)
	wantRT(t, &rp, t1+p.Timer-1, r, 37.5e9)
	if got := rp.Alpha(t1 + K); got != a*(1-g) {
		t.Errorf("Alpha(t1+K) = %.17g, want %.17g", got, a*(1-g))
	}
	wantRT(t, &rp, t1+p.Timer, (r+37.5e9)/2, 37.5e9)
	if rp.CNPs != 2 || rp.Cuts != 2 || rp.Increases != 4 {
		t.Errorf("CNPs %d Cuts %d Increases %d, want 2 2 4", rp.CNPs, rp.Cuts, rp.Increases)
	}
}

// TestRPByteCounter: every B bytes sent after a cut is one increase event,
// counted in its own stage.
func TestRPByteCounter(t *testing.T) {
	p := dcqcn.Paper() // B = 10 MB
	B := p.ByteCounter
	t0 := us

	t.Run("threshold", func(t *testing.T) {
		rp := dcqcn.NewRP(&p, 40e9)
		rp.OnCNP(t0)
		rp.OnSent(t0+1, int(B-1))
		wantRT(t, &rp, t0+1, 20e9, 40e9)
		rp.OnSent(t0+2, 1)
		wantRT(t, &rp, t0+2, 30e9, 40e9)
		rp.OnSent(t0+3, int(B/2))
		rp.OnSent(t0+4, int(B/2)-1)
		wantRT(t, &rp, t0+4, 30e9, 40e9)
		rp.OnSent(t0+5, 1)
		wantRT(t, &rp, t0+5, 35e9, 40e9)
	})

	t.Run("several events in one call", func(t *testing.T) {
		rp := dcqcn.NewRP(&p, 40e9)
		rp.OnCNP(t0)
		rp.OnSent(t0+1, int(3*B+B/2))
		wantRT(t, &rp, t0+1, 37.5e9, 40e9)
		if rp.Increases != 3 {
			t.Errorf("Increases = %d, want 3", rp.Increases)
		}
		rp.OnSent(t0+2, int(B/2)) // the remainder carries over
		wantRT(t, &rp, t0+2, 38.75e9, 40e9)
	})

	t.Run("cut resets the counter", func(t *testing.T) {
		rp := dcqcn.NewRP(&p, 40e9)
		rp.OnCNP(t0)
		rp.OnSent(t0+1, int(B*9/10))
		rp.OnCNP(t0 + 2)
		rp.OnSent(t0+3, int(B/5))
		if rp.Increases != 0 {
			t.Errorf("bytes from before the cut counted: Increases = %d", rp.Increases)
		}
	})

	t.Run("no byte counter", func(t *testing.T) {
		q := p
		q.ByteCounter = 0
		rp := dcqcn.NewRP(&q, 40e9)
		rp.OnCNP(t0)
		rp.OnSent(t0+1, 1<<40)
		wantRT(t, &rp, t0+1, 20e9, 40e9)
	})

	// Byte-counter stages and timer stages together decide the phase: the
	// byte counter alone reaches additive increase, hyper increase needs
	// both counts above F.
	t.Run("phases", func(t *testing.T) {
		rp := dcqcn.NewRP(&p, 40e9)
		rp.OnCNP(t0)
		rp.OnCNP(t0) // R_T 20G, R_C 10G
		rate, target := 10e9, 20e9
		rai, rhai := p.Steps(40e9)
		step := func(phase byte) {
			switch phase {
			case 'A':
				target = math.Min(40e9, target+rai)
			case 'H':
				target = math.Min(40e9, target+rhai)
			}
			rate = (rate + target) / 2
		}
		// Six byte-counter events: BC stages 0..4 fast recovery, BC 5 additive.
		rp.OnSent(t0+1, int(6*B))
		for _, ph := range "FFFFFA" {
			step(byte(ph))
		}
		wantRT(t, &rp, t0+1, rate, target)
		// Now BC = 6: timer stages 0..5 are additive (min(T, BC) = T <= F),
		// stage 6 is hyper.
		for i, ph := range "AAAAAAHH" {
			step(byte(ph))
			wantRT(t, &rp, t0+int64(i+1)*p.Timer, rate, target)
		}
	})
}

// TestRPMinRate: cuts never take R_C below MinRate.
func TestRPMinRate(t *testing.T) {
	t.Run("paper", func(t *testing.T) {
		p := dcqcn.Paper() // MinRate 40 Mb/s
		rp := dcqcn.NewRP(&p, 40e9)
		for k := 1; k <= 14; k++ {
			rp.OnCNP(us) // alpha stays 1: every cut halves
			want := math.Max(p.MinRate, 40e9/math.Pow(2, float64(k)))
			if got := rp.Rate(us); got != want {
				t.Errorf("after %d cuts Rate = %g, want %g", k, got, want)
			}
		}
		if rp.Rate(us) != p.MinRate {
			t.Errorf("rate %g did not reach the floor %g", rp.Rate(us), p.MinRate)
		}
	})
	t.Run("rate on first CNP", func(t *testing.T) {
		p := dcqcn.HPCC() // MinRate 1 Gb/s
		p.RateOnFirstCNP = 0.001
		rp := dcqcn.NewRP(&p, 100e9)
		rp.OnCNP(us)
		wantRT(t, &rp, us, 1e9, 1e9)
	})
	t.Run("slotted", func(t *testing.T) {
		p := dcqcn.HPCC()
		rp := dcqcn.NewRP(&p, 100e9)
		for i := range 200 { // a CNP in every decrease period
			rp.OnCNP(int64(i) * us)
		}
		if got := rp.Rate(200 * us); got != p.MinRate {
			t.Errorf("Rate = %g after 50 cuts, want the floor %g", got, p.MinRate)
		}
	})
}

// Slotted (ConnectX / ns-3) mode, HPCC parameters at 100 Gb/s: alpha slots
// of 1 us, decrease checks every 4 us from 1 ns after the first CNP, rate
// unchanged on the first CNP, g = 1/256, timer 300 us, F = 1.

func TestRPSlottedFirstCNP(t *testing.T) {
	p := dcqcn.HPCC()
	g := p.G
	rp := dcqcn.NewRP(&p, 100e9)
	t0 := 10 * us
	rp.OnCNP(t0)
	check := t0 + 4*us + ns
	for _, at := range []int64{t0, t0 + us, t0 + 4*us, check - 1} {
		wantRT(t, &rp, at, 100e9, 100e9)
	}
	if rp.Cuts != 0 {
		t.Fatalf("cut before the first check")
	}
	// Four empty 1 us slots: alpha = (1-g)^4, exactly representable.
	a4 := (1 - g) * (1 - g) * (1 - g) * (1 - g)
	wantRT(t, &rp, check, 100e9*(1-a4/2), 100e9)
	if got := rp.Alpha(check); got != a4 {
		t.Errorf("alpha at the first check = %.17g, want (1-g)^4 = %.17g", got, a4)
	}
	if rp.Cuts != 1 || rp.CNPs != 1 {
		t.Errorf("Cuts %d CNPs %d, want 1 1", rp.Cuts, rp.CNPs)
	}
	// No CNP since: no further cut at the next checks; the first increase
	// comes with the timer, 300 us after the cut.
	r := 100e9 * (1 - a4/2)
	wantRT(t, &rp, check+4*us, r, 100e9)
	wantRT(t, &rp, check+p.Timer-1, r, 100e9)
	wantRT(t, &rp, check+p.Timer, (r+100e9)/2, 100e9)
	if rp.Cuts != 1 {
		t.Errorf("Cuts = %d without further CNPs, want 1", rp.Cuts)
	}
}

// slotAlpha steps alpha slot by slot: flagged slots had a CNP.
func slotAlpha(alpha, g float64, flagged []bool) float64 {
	for _, f := range flagged {
		if f {
			alpha = (1-g)*alpha + g
		} else {
			alpha = (1 - g) * alpha
		}
	}
	return alpha
}

// TestRPSlottedCNPsInPeriod: any number of CNPs in one decrease period give
// one cut at the check that ends it; each alpha slot counts at most one CNP.
func TestRPSlottedCNPsInPeriod(t *testing.T) {
	p := dcqcn.HPCC()
	t0 := 10 * us
	tests := []struct {
		name  string
		cnps  []int64 // after t0
		slots []bool  // CNP flags of the four slots before the first check
	}{
		{"first only", nil, []bool{false, false, false, false}},
		{"one in slot 2", []int64{2*us + 500*ns}, []bool{false, false, true, false}},
		{"three in slot 2", []int64{2*us + 100*ns, 2*us + 500*ns, 2*us + 999*ns}, []bool{false, false, true, false}},
		{"slots 0 and 3", []int64{1, 3*us + 999*ns}, []bool{true, false, false, true}},
		{"at slot boundaries", []int64{us, 3 * us}, []bool{false, true, false, true}},
		{"every slot", []int64{1, us + 1, 2*us + 1, 3*us + 1}, []bool{true, true, true, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp := dcqcn.NewRP(&p, 100e9)
			rp.OnCNP(t0)
			for _, c := range tc.cnps {
				rp.OnCNP(t0 + c)
			}
			check := t0 + 4*us + ns
			wantRT(t, &rp, check-1, 100e9, 100e9)
			a := slotAlpha(1, p.G, tc.slots)
			wantRT(t, &rp, check, 100e9*(1-a/2), 100e9)
			if got := rp.Alpha(check); got != a {
				t.Errorf("alpha = %.17g, want %.17g", got, a)
			}
			if rp.Cuts != 1 || rp.CNPs != 1+len(tc.cnps) {
				t.Errorf("Cuts %d CNPs %d, want 1 %d", rp.Cuts, rp.CNPs, 1+len(tc.cnps))
			}
		})
	}
}

// TestRPSlottedCheckGrid: decrease checks stay on the grid the first CNP
// set, 1 ns after an alpha slot ends; a CNP just after a check waits for
// the next one, and periods without CNPs do not cut.
func TestRPSlottedCheckGrid(t *testing.T) {
	p := dcqcn.HPCC()
	t0 := 10 * us
	grid := func(k int64) int64 { return t0 + ns + k*4*us }
	rp := dcqcn.NewRP(&p, 100e9)
	rp.OnCNP(t0)
	r := rp.Rate(grid(1))
	for _, c := range []struct {
		cnp  int64 // 0: none in this period
		cuts int
	}{
		{grid(1) + 10*ns, 2},
		{0, 2},
		{grid(3), 3},          // a CNP at a check counts towards the next one
		{grid(5) - 1, 4},      // the last picosecond of a period
		{grid(5) + 3*us, 5},   // a later period
		{grid(8) + 100*ns, 6}, // after two quiet periods
	} {
		if c.cnp != 0 {
			k := (c.cnp - t0 - ns) / (4 * us)
			next := grid(k + 1)
			rp.OnCNP(c.cnp)
			wantRT(t, &rp, next-1, r, rp.Target(next-1))
			r = rp.Rate(next)
			if rp.Cuts != c.cuts {
				t.Errorf("CNP at %d: Cuts = %d at %d, want %d", c.cnp, rp.Cuts, next, c.cuts)
			}
		}
	}
	if got := rp.Rate(grid(60)); got != r || rp.Cuts != 6 {
		t.Errorf("Rate moved to %g (Cuts %d) without CNPs before the timer", got, rp.Cuts)
	}
}

// TestRPClampTarget: with ClampTarget every cut sets R_T = R_C; without it
// R_T is kept when no increase happened since the last cut.
func TestRPClampTarget(t *testing.T) {
	t0 := 10 * us
	check1 := t0 + 4*us + ns
	tests := []struct {
		clamp, increase bool
	}{
		{false, false}, {true, false}, {false, true}, {true, true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("clamp=%v,increase=%v", tc.clamp, tc.increase), func(t *testing.T) {
			p := dcqcn.HPCC()
			p.ClampTarget = tc.clamp
			rp := dcqcn.NewRP(&p, 100e9)
			rp.OnCNP(t0)
			r1 := rp.Rate(check1)
			cnp := check1 + us
			if tc.increase {
				cnp = check1 + p.Timer + us // after one timer expiry
			}
			before := rp.Rate(cnp)
			if tc.increase != (before != r1) {
				t.Fatalf("rate before the second CNP %g, after the first cut %g", before, r1)
			}
			rp.OnCNP(cnp)
			k := (cnp - t0 - ns) / (4 * us)
			check2 := t0 + ns + (k+1)*4*us
			a := rp.Alpha(check2 - 1)
			rp.Rate(check2)
			wantTarget := 100e9 // kept from the first CNP
			if tc.clamp || tc.increase {
				wantTarget = before
			}
			wantRT(t, &rp, check2, before*(1-a/2), wantTarget)
		})
	}
}

// TestRPSlottedPhases: with F = 1 the timer gives one fast-recovery step,
// one additive step, then hyper increase, with R_AI and R_HAI scaled to
// 100 Gb/s (20 and 200 Mb/s). ClampTarget brings R_T below line rate.
func TestRPSlottedPhases(t *testing.T) {
	p := dcqcn.HPCC()
	p.ClampTarget = true
	rp := dcqcn.NewRP(&p, 100e9)
	t0 := 10 * us
	rp.OnCNP(t0)
	rp.OnCNP(t0 + 5*us) // second period: cut again at t0 + 8 us + 1 ns
	cut := t0 + 8*us + ns
	rate, target := rp.Rate(cut), rp.Target(cut)
	if rp.Cuts != 2 || target >= 100e9 {
		t.Fatalf("setup: Cuts %d target %g", rp.Cuts, target)
	}
	for i, ph := range []struct {
		name string
		step float64
	}{
		{"fast recovery", 0}, {"additive", 20e6}, {"hyper", 200e6}, {"hyper", 200e6},
	} {
		target = math.Min(100e9, target+ph.step)
		rate = (rate + target) / 2
		t.Run(fmt.Sprintf("%d-%s", i, ph.name), func(t *testing.T) {
			wantRT(t, &rp, cut+int64(i+1)*p.Timer, rate, target)
		})
	}
}

// TestRPSlottedByteCounterPhases: the Mellanox set has a byte counter, so
// the timer alone stays in additive increase (min(T, BC) = 0) and bytes
// are needed for hyper increase.
func TestRPSlottedByteCounterPhases(t *testing.T) {
	p := dcqcn.Mellanox()
	p.ClampTarget = true
	B := p.ByteCounter
	rp := dcqcn.NewRP(&p, 100e9)
	t0 := 10 * us
	rp.OnCNP(t0)
	rp.OnCNP(t0 + 5*us)
	cut := t0 + 8*us + ns
	rate, target := rp.Rate(cut), rp.Target(cut)
	rai, rhai := p.Steps(100e9)
	step := func(s float64) {
		target = math.Min(100e9, target+s)
		rate = (rate + target) / 2
	}
	// Timer stages 0, 1, 2: fast recovery, then additive twice (BC = 0).
	for i, s := range []float64{0, rai, rai} {
		step(s)
		wantRT(t, &rp, cut+int64(i+1)*p.Timer, rate, target)
	}
	// T = 3 now. Byte counter stages 0, 1, 2: additive (max >= F, min <= F)
	// until BC = 2 > F, then hyper.
	now := cut + 3*p.Timer + 1
	rp.OnSent(now, int(4*B))
	for _, s := range []float64{rai, rai, rhai, rhai} {
		step(s)
	}
	wantRT(t, &rp, now, rate, target)
}

// TestRPSlottedNoIncreaseBeforeFirstCut: in slotted mode the first CNP
// engages the limiter but cuts only at the first decrease check; the
// rate-increase timer starts with that cut. The byte counter, though,
// already counts from the first CNP, so a flow with RateOnFirstCNP < 1
// climbs through fast recovery and additive increase before it has been
// cut at all, and Increases counts events of a phase that has not begun.
// Rate increase follows a rate decrease (paper Figure 7, Mellanox: "rate
// decrease event resets all the counters related to rate increase").
func TestRPSlottedNoIncreaseBeforeFirstCut(t *testing.T) {
	p := dcqcn.Mellanox()
	p.RateOnFirstCNP = 0.5
	rp := dcqcn.NewRP(&p, 100e9)
	rp.OnCNP(0)
	rp.OnSent(us, 100_000)
	wantRT(t, &rp, us, 50e9, 50e9)
	if rp.Increases != 0 {
		t.Errorf("%d increase events before the first cut", rp.Increases)
	}
}
