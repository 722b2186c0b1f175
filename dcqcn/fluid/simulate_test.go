package fluid

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

const (
	us = 1e-6
	ms = 1e-3
)

// figure10 is the paper's Figure 10 setting: two flows at 40 Gb/s, the
// second starting 10 ms after the first.
var figure10 = []FlowSpec{{Start: 0}, {Start: 10 * ms}}

// A single flow at line rate into a bottleneck of the same capacity never
// builds a queue, is never marked and keeps its rate.
func TestSingleFlowAtLineRate(t *testing.T) {
	p := PaperParams(40e9)
	tr, err := Simulate(p, []FlowSpec{{}}, 50*ms, 1*us, 10*us)
	if err != nil {
		t.Fatal(err)
	}
	for k, tm := range tr.Time {
		if rc := tr.Flows[0].RC[k]; rc < 0.999*p.LineRate || tr.Queue[k] > p.Kmin {
			t.Fatalf("t = %g s: R_C = %g b/s, q = %g B; want line rate and no queue", tm, rc, tr.Queue[k])
		}
	}
}

// A single flow into a half-rate bottleneck must come down to C and settle
// at the fixed point of equation (10) for N = 1: the time-domain solver
// and FixedPoint agree.
func TestSingleFlowSettlesAtFixedPoint(t *testing.T) {
	p := PaperParams(40e9)
	p.Capacity = 20e9
	fp, err := FixedPoint(p, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Simulate(p, []FlowSpec{{}}, 150*ms, 1*us, 10*us)
	if err != nil {
		t.Fatal(err)
	}
	rate, q := tr.MeanRate(0, 145*ms, 150*ms), tr.MeanQueue(145*ms, 150*ms)
	t.Logf("after 150 ms: R_C %.4f Gb/s, q %.2f KB; fixed point q %.2f KB", rate/1e9, q/1e3, fp.Q/1e3)
	if !near(rate, 20e9, 0.01) || !near(q, fp.Q, 0.02) {
		t.Errorf("after 150 ms R_C = %g b/s, q = %g B; want 20e9 and the fixed point's %g B", rate, q, fp.Q)
	}
}

// Figure 10: two flows converge to a fair share. The 5 ms averages of the
// two rates come within 10% of each other within 100 ms of the second
// flow's start and stay there, and together they fill the link.
func TestTwoFlowsConverge(t *testing.T) {
	p := PaperParams(40e9)
	tr, err := Simulate(p, figure10, 200*ms, 1*us, 10*us)
	if err != nil {
		t.Fatal(err)
	}
	const window = 5 * ms
	converged := math.NaN()
	for j := 2; j < 40; j++ {
		from := float64(j) * window
		r1, r2 := tr.MeanRate(0, from, from+window), tr.MeanRate(1, from, from+window)
		fair := math.Abs(r1-r2) <= 0.1*max(r1, r2)
		switch {
		case fair && math.IsNaN(converged):
			converged = from + window
		case !fair && !math.IsNaN(converged):
			t.Errorf("window [%g, %g) ms: rates %.3f and %.3f Gb/s drift apart again after converging at %g ms",
				from/ms, (from+window)/ms, r1/1e9, r2/1e9, converged/ms)
		}
		if fair && !near(r1+r2, p.Capacity, 0.01) {
			t.Errorf("window [%g, %g) ms: sum %.3f Gb/s, want within 1%% of C", from/ms, (from+window)/ms, (r1+r2)/1e9)
		}
	}
	t.Logf("5 ms averages within 10%% of each other by t = %g ms (%g ms after the second start)", converged/ms, converged/ms-10)
	if !(converged <= 110*ms) {
		t.Errorf("rates converged by %g ms, want by 110 ms", converged/ms)
	}
	// And they end up fair: by 200 ms both are at C/2 within 0.5%.
	for i := range 2 {
		if r := tr.MeanRate(i, 195*ms, 200*ms); !near(r, 20e9, 0.005) {
			t.Errorf("flow %d at 195-200 ms: %g b/s, want 20 Gb/s", i, r)
		}
	}
}

// Halving the step from 1 us to 0.5 us changes the state at 100 ms, and
// its 5 ms averages, by under 1%: 1 us is small enough.
func TestStepHalving(t *testing.T) {
	p := PaperParams(40e9)
	coarse, err := Simulate(p, figure10, 100*ms, 1*us, 10*us)
	if err != nil {
		t.Fatal(err)
	}
	fine, err := Simulate(p, figure10, 100*ms, 0.5*us, 10*us)
	if err != nil {
		t.Fatal(err)
	}
	if len(coarse.Time) != len(fine.Time) || !near(coarse.Time[len(coarse.Time)-1], 100*ms, 1e-12) {
		t.Fatalf("sample times differ: %d and %d samples", len(coarse.Time), len(fine.Time))
	}
	last := len(coarse.Time) - 1
	type pair struct {
		name      string
		got, want float64
	}
	cmp := []pair{
		{"queue at 100 ms", coarse.Queue[last], fine.Queue[last]},
		{"mean queue 95-100 ms", coarse.MeanQueue(95*ms, 100*ms), fine.MeanQueue(95*ms, 100*ms)},
	}
	for i := range 2 {
		c, f := coarse.Flows[i], fine.Flows[i]
		cmp = append(cmp,
			pair{"R_C at 100 ms", c.RC[last], f.RC[last]},
			pair{"R_T at 100 ms", c.RT[last], f.RT[last]},
			pair{"alpha at 100 ms", c.Alpha[last], f.Alpha[last]},
			pair{"mean R_C 95-100 ms", coarse.MeanRate(i, 95*ms, 100*ms), fine.MeanRate(i, 95*ms, 100*ms)},
			// The transient right after the second start is the hardest
			// part: rates fall by half within a millisecond.
			pair{"mean R_C 10-15 ms", coarse.MeanRate(i, 10*ms, 15*ms), fine.MeanRate(i, 10*ms, 15*ms)},
		)
	}
	worst := 0.0
	for _, c := range cmp {
		d := math.Abs(c.got/c.want - 1)
		worst = max(worst, d)
		if d >= 0.01 {
			t.Errorf("%s: %g with a 1 us step, %g with 0.5 us (%.2f%% apart)", c.name, c.got, c.want, 100*d)
		}
	}
	t.Logf("largest relative change from halving the step: %.2e", worst)
}

// Started at the fixed point of equation (10), with the queue at Q and a
// history that has been there forever, the multi-flow system stays there.
func TestStaysAtFixedPoint(t *testing.T) {
	p := PaperParams(40e9)
	for _, n := range []int{2, 4, 10} {
		fp, err := FixedPoint(p, n)
		if err != nil {
			t.Fatal(err)
		}
		st := fp.State()
		flows := make([]FlowSpec, n)
		for i := range flows {
			flows[i].Initial = &st
		}
		tr, err := SimulateFrom(p, fp.Q, flows, 50*ms, 1*us, 50*us)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for k := range tr.Time {
			worst = max(worst, math.Abs(tr.Queue[k]/fp.Q-1))
			for _, f := range tr.Flows {
				worst = max(worst, math.Abs(f.RC[k]/fp.RC-1), math.Abs(f.RT[k]/fp.RT-1), math.Abs(f.Alpha[k]/fp.Alpha-1))
			}
		}
		if worst > 0.02 {
			t.Errorf("N=%d: moved %.2f%% from the fixed point within 50 ms, want under 2%%", n, 100*worst)
		}
	}
}

// Knocked off the fixed point, two flows return to it: it is stable, as
// the paper finds for g = 1/256.
func TestReturnsToFixedPoint(t *testing.T) {
	p := PaperParams(40e9)
	fp, err := FixedPoint(p, 2)
	if err != nil {
		t.Fatal(err)
	}
	hi, lo := fp.State(), fp.State()
	hi.RC *= 1.1
	lo.RC *= 0.9
	tr, err := SimulateFrom(p, fp.Q, []FlowSpec{{Initial: &hi}, {Initial: &lo}}, 150*ms, 1*us, 10*us)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if r := tr.MeanRate(i, 145*ms, 150*ms); !near(r, fp.RC, 0.01) {
			t.Errorf("flow %d at 145-150 ms: %g b/s, want %g within 1%%", i, r, fp.RC)
		}
	}
	if q := tr.MeanQueue(145*ms, 150*ms); !near(q, fp.Q, 0.02) {
		t.Errorf("queue at 145-150 ms: %g B, want %g within 2%%", q, fp.Q)
	}
}

// With 16 flows the fixed point needs p > Pmax (FixedPointResult.Saturated)
// and the queue cannot rest: it cycles between empty and past Kmax. The
// cycle is the model's answer, not a numerical artefact (it is the same
// at 0.5 us), and it keeps the link over 95% busy.
func TestSixteenFlowIncast(t *testing.T) {
	p := PaperParams(40e9)
	flows := make([]FlowSpec, 16)
	tr, err := Simulate(p, flows, 60*ms, 1*us, 5*us)
	if err != nil {
		t.Fatal(err)
	}
	qmin, qmax := math.Inf(1), 0.0
	sum := 0.0
	for k, tm := range tr.Time {
		if tm >= 30*ms {
			qmin, qmax = min(qmin, tr.Queue[k]), max(qmax, tr.Queue[k])
		}
	}
	for i := range flows {
		sum += tr.MeanRate(i, 30*ms, 60*ms)
	}
	t.Logf("16 flows, 30-60 ms: queue %.1f-%.1f KB, mean %.1f KB, throughput %.2f Gb/s",
		qmin/1e3, qmax/1e3, tr.MeanQueue(30*ms, 60*ms)/1e3, sum/1e9)
	if qmin > p.Kmin || qmax < p.Kmax || qmax > 1.5*p.Kmax {
		t.Errorf("queue between %g and %g B, want a cycle from under Kmin to just past Kmax", qmin, qmax)
	}
	if sum < 0.95*p.Capacity || sum > p.Capacity*(1+1e-9) {
		t.Errorf("throughput %g b/s, want 95-100%% of C", sum)
	}
	for i := 1; i < len(flows); i++ {
		if r := tr.MeanRate(i, 30*ms, 60*ms); !near(r, tr.MeanRate(0, 30*ms, 60*ms), 1e-9) {
			t.Errorf("flow %d: %g b/s, flow 0: %g; identical flows must stay identical", i, r, tr.MeanRate(0, 30*ms, 60*ms))
		}
	}
}

// A flow that has not started sends nothing, reads zero in the trace, and
// starts at line rate with alpha = 1.
func TestLateStart(t *testing.T) {
	p := PaperParams(40e9)
	tr, err := Simulate(p, []FlowSpec{{}, {Start: 1 * ms}}, 2*ms, 1*us, 1*us)
	if err != nil {
		t.Fatal(err)
	}
	for k, tm := range tr.Time {
		f := tr.Flows[1]
		switch {
		case tm < 1*ms && (f.RC[k] != 0 || f.RT[k] != 0 || f.Alpha[k] != 0):
			t.Errorf("t = %g ms: flow 1 not started but reads %g, %g, %g", tm/ms, f.RC[k], f.RT[k], f.Alpha[k])
		case tm < 1*ms && tr.Queue[k] != 0:
			t.Errorf("t = %g ms: queue %g B with one line-rate flow", tm/ms, tr.Queue[k])
		case near(tm, 1*ms, 1e-9) && (f.RC[k] != p.LineRate || f.RT[k] != p.LineRate || f.Alpha[k] != 1):
			t.Errorf("at its start flow 1 reads %g, %g, %g; want line rate, line rate, 1", f.RC[k], f.RT[k], f.Alpha[k])
		}
	}
	// From 1 ms two line-rate flows fill the queue with 40 Gb/s of excess,
	// and nothing slows them for tau* = 50 us after the queue passes Kmin:
	// the queue must grow past 5 KB + 250 KB.
	peak := 0.0
	for _, q := range tr.Queue {
		peak = max(peak, q)
	}
	t.Logf("queue peak after the second start: %.1f KB", peak/1e3)
	if peak < 255e3 {
		t.Errorf("queue peaks at %g B, want over 255 KB", peak)
	}
}

func TestDeterministic(t *testing.T) {
	p := PaperParams(40e9)
	a, err := Simulate(p, figure10, 20*ms, 1*us, 10*us)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Simulate(p, figure10, 20*ms, 1*us, 10*us)
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs with the same arguments differ")
	}
}

// Without feedback delay (tau* = 0, where the solver uses the current
// state) and with a delay of exactly one step (where the last stage reads
// the newest history entry), the two flows still converge.
func TestShortDelays(t *testing.T) {
	for _, delay := range []float64{0, 1 * us} {
		p := PaperParams(40e9)
		p.TauStar = delay
		tr, err := Simulate(p, figure10, 150*ms, 1*us, 10*us)
		if err != nil {
			t.Fatal(err)
		}
		r1, r2 := tr.MeanRate(0, 145*ms, 150*ms), tr.MeanRate(1, 145*ms, 150*ms)
		if !near(r1, 20e9, 0.02) || !near(r2, 20e9, 0.02) {
			t.Errorf("tau* = %g s: rates %g and %g b/s at 145-150 ms, want 20 Gb/s each", delay, r1, r2)
		}
	}
}

func TestSimulateErrors(t *testing.T) {
	p := PaperParams(40e9)
	bad := p
	bad.G = 0
	tooFast := FlowState{RC: 50e9, RT: 40e9, Alpha: 1}
	badAlpha := FlowState{RC: 10e9, RT: 10e9, Alpha: 2}
	for _, tc := range []struct {
		name                     string
		p                        Params
		q                        float64
		flows                    []FlowSpec
		until, step, sampleEvery float64
		want                     string
	}{
		{"bad params", bad, 0, figure10, 1 * ms, 1 * us, 10 * us, "G"},
		{"no flows", p, 0, nil, 1 * ms, 1 * us, 10 * us, "no flows"},
		{"zero until", p, 0, figure10, 0, 1 * us, 10 * us, "until"},
		{"NaN step", p, 0, figure10, 1 * ms, math.NaN(), 10 * us, "step"},
		{"step past tau*", p, 0, figure10, 1 * ms, 60 * us, 60 * us, "tau*"},
		{"zero sampling", p, 0, figure10, 1 * ms, 1 * us, 0, "sampleEvery"},
		{"negative queue", p, -1, figure10, 1 * ms, 1 * us, 10 * us, "queue"},
		{"too many steps", p, 0, figure10, 1e6, 1e-9, 10 * us, "steps"},
		{"negative start", p, 0, []FlowSpec{{Start: -1}}, 1 * ms, 1 * us, 10 * us, "starts"},
		{"huge delay", func() Params { q := p; q.TauStar = 1; return q }(), 0, figure10, 1 * ms, 1e-9, 10 * us, "tau*"},
		{"rate over line", p, 0, []FlowSpec{{Initial: &tooFast}}, 1 * ms, 1 * us, 10 * us, "rates"},
		{"alpha over 1", p, 0, []FlowSpec{{Initial: &badAlpha}}, 1 * ms, 1 * us, 10 * us, "alpha"},
	} {
		_, err := SimulateFrom(tc.p, tc.q, tc.flows, tc.until, tc.step, tc.sampleEvery)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one about %q", tc.name, err, tc.want)
		}
	}
}

// BenchmarkSimulateTwoFlows200ms integrates Figure 10's two flows for
// 200 ms at a 1 us step (200,000 RK4 steps), sampling every 10 us.
func BenchmarkSimulateTwoFlows200ms(b *testing.B) {
	p := PaperParams(40e9)
	for b.Loop() {
		if _, err := Simulate(p, figure10, 200*ms, 1*us, 10*us); err != nil {
			b.Fatal(err)
		}
	}
}
