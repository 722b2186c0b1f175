package fluid

import (
	"errors"
	"fmt"
	"math"
)

// FlowSpec describes one flow of a simulation.
type FlowSpec struct {
	// Start is when the flow starts, in seconds (>= 0). Before it the flow
	// sends nothing and its trace reads zero.
	Start float64
	// Initial, when set, is the flow's state at Start. When nil the flow
	// starts as DCQCN flows do: R_C = R_T = line rate and alpha = 1.
	Initial *FlowState
}

// FlowState is one flow's state: rates in bits/s.
type FlowState struct {
	RC, RT, Alpha float64
}

// FlowTrace is one flow's sampled state: rates in bits/s.
type FlowTrace struct {
	RC, RT, Alpha []float64
}

// Trace is a sampled solution. Time[k] is the k-th sample time in seconds;
// Queue[k] (bytes), Mark[k] (the marking probability p(q), equation (5))
// and Flows[i].RC[k] etc. are the values at that time.
type Trace struct {
	Time  []float64
	Queue []float64
	Mark  []float64
	Flows []FlowTrace
}

// MeanRate returns flow i's R_C averaged over the samples in [from, to),
// in bits/s; NaN when no sample falls in the window. Window edges are
// compared with a 1 ps tolerance for the rounding in sample times.
func (tr Trace) MeanRate(i int, from, to float64) float64 {
	return tr.mean(tr.Flows[i].RC, from, to)
}

// MeanQueue returns the queue averaged over the samples in [from, to), in
// bytes; NaN when no sample falls in the window.
func (tr Trace) MeanQueue(from, to float64) float64 {
	return tr.mean(tr.Queue, from, to)
}

// timeTol absorbs the rounding in sample times (step k at k*step), so that
// a sample meant to be at 5 ms falls into [5 ms, ...) whatever the step.
const timeTol = 1e-12 // s

func (tr Trace) mean(v []float64, from, to float64) float64 {
	sum, n := 0.0, 0
	for k, t := range tr.Time {
		if t > from-timeTol && t < to-timeTol {
			sum += v[k]
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// maxSteps bounds until/step and maxDelaySteps tau*/step, so that a unit
// mistake (a step given in microseconds as seconds, say) fails at once
// instead of running for hours or allocating gigabytes of history.
const (
	maxSteps      = 1 << 31
	maxDelaySteps = 1 << 24
)

// Simulate integrates the multi-flow fluid model from an empty queue; see
// SimulateFrom.
func Simulate(p Params, flows []FlowSpec, until, step, sampleEvery float64) (Trace, error) {
	return SimulateFrom(p, 0, flows, until, step, sampleEvery)
}

// SimulateFrom integrates the multi-flow fluid model, equations (7)-(9) for
// each flow and (11) for the shared queue, from t = 0 to until with a fixed
// step (seconds), and samples the state every sampleEvery seconds (rounded
// to a whole number of steps, at least one). queue is the queue at t = 0 in
// bytes.
//
// The system is taken to have been in its t = 0 state for all t < 0: flows
// with Start = 0 have been sending at their initial rates and the queue has
// held queue bytes, so a run started at a FixedPoint begins in equilibrium.
// A flow with Start > 0 begins at the step nearest to Start and has sent
// nothing before.
//
// Integration is classical fourth-order Runge-Kutta. The delayed values
// R_C,i(t - tau*) and q(t - tau*) come from a ring buffer of the last
// tau*/step + 2 steps, linearly interpolated between steps, so step must
// not exceed tau* (unless tau* is 0, when the current values are used).
//
// A step of 1 us is the one to use at 40 Gb/s with the paper's settings:
// the model's fastest time scales are tau = tau* = 50 us (CNP reaction and
// feedback delay; R_T relaxes to R_C no faster than tau) and 2 tau/alpha >=
// 100 us (rate cuts), so 1 us resolves each with 50 steps or more. The
// marking curve's kink at Kmin and jump at Kmax, the clamps and the linear
// interpolation of the history all cost RK4 its fourth order, so the step
// is chosen by experiment rather than by a formal error bound: halving it
// to 0.5 us changes the state and the 5 ms mean rates of the paper's
// two-flow run at 100 ms by about 1e-4 (TestStepHalving), far under 1%.
// Coarser steps, 2 us to tau*, still keep those means within about 2% of
// the 0.5 us run, the error sitting in the transient after a flow starts.
//
// After every step the rates are clamped to [0, line rate], alpha to
// [0, 1] and the queue to q >= 0 (the model's equations bound none of them:
// with no marking the additive increase would raise R_T forever, while a
// NIC never exceeds its line rate).
//
// The result depends only on the arguments.
func SimulateFrom(p Params, queue float64, flows []FlowSpec, until, step, sampleEvery float64) (Trace, error) {
	if err := p.Validate(); err != nil {
		return Trace{}, err
	}
	if len(flows) == 0 {
		return Trace{}, errors.New("fluid: no flows")
	}
	if !(until > 0) || math.IsInf(until, 0) {
		return Trace{}, fmt.Errorf("fluid: until = %g s, want a finite time > 0", until)
	}
	if !(step > 0) || math.IsInf(step, 0) {
		return Trace{}, fmt.Errorf("fluid: step = %g s, want a finite step > 0", step)
	}
	if p.TauStar > 0 && step > p.TauStar {
		return Trace{}, fmt.Errorf("fluid: step %g s exceeds the feedback delay tau* = %g s", step, p.TauStar)
	}
	if !(sampleEvery > 0) || math.IsInf(sampleEvery, 0) {
		return Trace{}, fmt.Errorf("fluid: sampleEvery = %g s, want a finite interval > 0", sampleEvery)
	}
	if !(queue >= 0) || math.IsInf(queue, 0) {
		return Trace{}, fmt.Errorf("fluid: initial queue %g B, want a finite value >= 0", queue)
	}
	if until/step > maxSteps {
		return Trace{}, fmt.Errorf("fluid: %g steps of %g s to reach %g s, more than %d", until/step, step, until, maxSteps)
	}
	if p.TauStar/step > maxDelaySteps {
		return Trace{}, fmt.Errorf("fluid: tau* = %g s is %g steps of %g s, more than %d to keep", p.TauStar, p.TauStar/step, step, maxDelaySteps)
	}
	for i, f := range flows {
		if !(f.Start >= 0) || math.IsInf(f.Start, 0) {
			return Trace{}, fmt.Errorf("fluid: flow %d starts at %g s, want a finite time >= 0", i, f.Start)
		}
		if s := f.Initial; s != nil {
			if !(s.RC >= 0 && s.RC <= p.LineRate && s.RT >= 0 && s.RT <= p.LineRate) {
				return Trace{}, fmt.Errorf("fluid: flow %d initial rates R_C %g, R_T %g b/s, want within [0, %g]", i, s.RC, s.RT, p.LineRate)
			}
			if !(s.Alpha >= 0 && s.Alpha <= 1) {
				return Trace{}, fmt.Errorf("fluid: flow %d initial alpha %g, want within [0, 1]", i, s.Alpha)
			}
		}
	}
	s := newSolver(p, queue, flows, step)
	return s.run(int64(math.Round(until/step)), max(1, int64(math.Round(sampleEvery/step)))), nil
}

// state is the solver's state in packets, packets/s and seconds.
type state struct {
	q             float64
	rc, rt, alpha []float64
}

func newState(n int) state {
	return state{rc: make([]float64, n), rt: make([]float64, n), alpha: make([]float64, n)}
}

// axpy sets d = s + h*k (s, k and d are distinct states of one size, or d
// is s).
func (d *state) axpy(s *state, h float64, k *state) {
	d.q = s.q + h*k.q
	for i := range s.rc {
		d.rc[i] = s.rc[i] + h*k.rc[i]
		d.rt[i] = s.rt[i] + h*k.rt[i]
		d.alpha[i] = s.alpha[i] + h*k.alpha[i]
	}
}

type solver struct {
	m      model
	h      float64 // step, s
	delay  float64 // tau* in steps
	flows  []FlowSpec
	startN []int64 // step at which each flow starts
	active []bool

	x, tmp, k1, k2, k3, k4 state

	// The history ring: hq[j] and hrc[j*n+i] hold q and R_C,i at step
	// number k with j = k mod len(hq). pre is the state at t <= 0.
	hq  []float64
	hrc []float64
	pre state
	n   int

	rd []float64 // scratch: delayed rates
}

func newSolver(p Params, queue float64, flows []FlowSpec, h float64) *solver {
	n := len(flows)
	s := &solver{
		m: newModel(p), h: h, flows: flows, n: n,
		startN: make([]int64, n), active: make([]bool, n),
		x: newState(n), tmp: newState(n), k1: newState(n), k2: newState(n), k3: newState(n), k4: newState(n),
		pre: newState(n), rd: make([]float64, n),
	}
	s.delay = s.m.tauStar / h
	// Stage times at step k reach from t_k - tau* to t_k + h - tau*, so the
	// ring must hold the steps floor(k - delay) .. k; one spare slot.
	size := int(math.Ceil(s.delay)) + 2
	s.hq = make([]float64, size)
	s.hrc = make([]float64, size*n)
	s.x.q = queue / s.m.pkt
	s.pre.q = s.x.q
	for i, f := range flows {
		// Capped so that a start far past any horizon converts safely.
		s.startN[i] = int64(min(math.Round(f.Start/h), maxSteps+1))
		if s.startN[i] == 0 {
			s.activate(i)
			s.pre.rc[i] = s.x.rc[i]
		}
	}
	return s
}

func (s *solver) activate(i int) {
	s.active[i] = true
	if in := s.flows[i].Initial; in != nil {
		s.x.rc[i] = in.RC / (8 * s.m.pkt)
		s.x.rt[i] = in.RT / (8 * s.m.pkt)
		s.x.alpha[i] = in.Alpha
		return
	}
	s.x.rc[i], s.x.rt[i], s.x.alpha[i] = s.m.line, s.m.line, 1
}

func (s *solver) run(steps, sampleSteps int64) Trace {
	ns := int(steps/sampleSteps) + 1
	tr := Trace{
		Time: make([]float64, 0, ns), Queue: make([]float64, 0, ns), Mark: make([]float64, 0, ns),
		Flows: make([]FlowTrace, s.n),
	}
	for i := range tr.Flows {
		tr.Flows[i] = FlowTrace{RC: make([]float64, 0, ns), RT: make([]float64, 0, ns), Alpha: make([]float64, 0, ns)}
	}
	for k := int64(0); ; k++ {
		if k > 0 {
			for i := range s.flows {
				if !s.active[i] && s.startN[i] == k {
					s.activate(i)
				}
			}
		}
		s.record(k)
		if k%sampleSteps == 0 {
			s.sample(&tr, k)
		}
		if k == steps {
			return tr
		}
		s.step(k)
	}
}

func (s *solver) record(k int64) {
	j := int(k % int64(len(s.hq)))
	s.hq[j] = s.x.q
	copy(s.hrc[j*s.n:(j+1)*s.n], s.x.rc)
}

func (s *solver) sample(tr *Trace, k int64) {
	tr.Time = append(tr.Time, float64(k)*s.h)
	tr.Queue = append(tr.Queue, s.x.q*s.m.pkt)
	tr.Mark = append(tr.Mark, s.m.mark(s.x.q))
	for i := range tr.Flows {
		f := &tr.Flows[i]
		f.RC = append(f.RC, s.m.toBits(s.x.rc[i]))
		f.RT = append(f.RT, s.m.toBits(s.x.rt[i]))
		f.Alpha = append(f.Alpha, s.x.alpha[i])
	}
}

// delayed fills s.rd with R_C,i(t - tau*) and returns q(t - tau*), where t
// is step k plus theta steps (theta in [0, 1]) and cur is the stage state
// at t, used when tau* is zero.
func (s *solver) delayed(k int64, theta float64, cur *state) float64 {
	if s.delay == 0 {
		copy(s.rd, cur.rc)
		return cur.q
	}
	pos := float64(k) + theta - s.delay
	k0 := int64(math.Floor(pos))
	w := pos - float64(k0)
	if w == 0 {
		// On a step (and always when tau* is one step and theta = 1,
		// where step k0+1 is not computed yet).
		for i := range s.rd {
			s.rd[i] = s.histRC(k0, i)
		}
		return s.histQ(k0)
	}
	for i := range s.rd {
		s.rd[i] = (1-w)*s.histRC(k0, i) + w*s.histRC(k0+1, i)
	}
	return (1-w)*s.histQ(k0) + w*s.histQ(k0+1)
}

func (s *solver) histQ(k int64) float64 {
	if k < 0 {
		return s.pre.q
	}
	return s.hq[k%int64(len(s.hq))]
}

func (s *solver) histRC(k int64, i int) float64 {
	if k < 0 {
		return s.pre.rc[i]
	}
	return s.hrc[int(k%int64(len(s.hq)))*s.n+i]
}

// deriv evaluates the model at stage state y, time step k + theta, into d.
func (s *solver) deriv(k int64, theta float64, y, d *state) {
	qd := s.delayed(k, theta, y)
	sig := s.m.signal(s.m.mark(qd))
	sum := 0.0
	for i := range y.rc {
		if !s.active[i] {
			d.rc[i], d.rt[i], d.alpha[i] = 0, 0, 0
			continue
		}
		// Evaluate at the state projected onto the box the solver keeps
		// it in, so that an intermediate stage overshooting a bound does
		// not feed, say, a negative rate into the model.
		rc := clamp(y.rc[i], 0, s.m.line)
		rt := clamp(y.rt[i], 0, s.m.line)
		a := clamp(y.alpha[i], 0, 1)
		d.rc[i], d.rt[i], d.alpha[i] = s.m.rhs(rc, rt, a, s.rd[i], &sig)
		sum += rc
	}
	// Equation (11); an empty queue cannot drain further.
	d.q = sum - s.m.c
	if y.q <= 0 && d.q < 0 {
		d.q = 0
	}
}

// step advances s.x from step k to step k+1 by classical RK4.
func (s *solver) step(k int64) {
	h := s.h
	s.deriv(k, 0, &s.x, &s.k1)
	s.tmp.axpy(&s.x, h/2, &s.k1)
	s.deriv(k, 0.5, &s.tmp, &s.k2)
	s.tmp.axpy(&s.x, h/2, &s.k2)
	s.deriv(k, 0.5, &s.tmp, &s.k3)
	s.tmp.axpy(&s.x, h, &s.k3)
	s.deriv(k, 1, &s.tmp, &s.k4)

	x := &s.x
	x.q = max(0, x.q+h/6*(s.k1.q+2*s.k2.q+2*s.k3.q+s.k4.q))
	for i := range x.rc {
		if !s.active[i] {
			continue
		}
		x.rc[i] = clamp(x.rc[i]+h/6*(s.k1.rc[i]+2*s.k2.rc[i]+2*s.k3.rc[i]+s.k4.rc[i]), 0, s.m.line)
		x.rt[i] = clamp(x.rt[i]+h/6*(s.k1.rt[i]+2*s.k2.rt[i]+2*s.k3.rt[i]+s.k4.rt[i]), 0, s.m.line)
		x.alpha[i] = clamp(x.alpha[i]+h/6*(s.k1.alpha[i]+2*s.k2.alpha[i]+2*s.k3.alpha[i]+s.k4.alpha[i]), 0, 1)
	}
}

func clamp(v, lo, hi float64) float64 { return min(max(v, lo), hi) }
