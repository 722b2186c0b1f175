package dcqcn_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/p4rcm/p4rcm/dcqcn"
)

// refRP is an eager reference of the RP, written from the specification
// rather than from rp.go: every periodic event (alpha timer or alpha slot,
// decrease check, rate-increase timer) is a separate step applied in time
// order, as the ns-3 simulator schedules them, and alpha decays one factor
// (1-g) at a time.
type refRP struct {
	p              *dcqcn.Params
	line, ai, hai  float64
	rate, target   float64
	alpha          float64
	limited        bool
	alphaNext      int64 // next alpha timer expiry / slot end
	alphaCNP       bool  // slotted: a CNP in the current alpha slot
	decNext        int64 // slotted: next decrease check
	decCNP         bool  // slotted: a CNP in the current decrease period
	timerNext      int64 // 0: stopped
	tStage, bStage int
	bytes          int64
	increased      bool
	cnps, cuts     int
	increases      int
}

func newRef(p *dcqcn.Params, line float64) *refRP {
	ai, hai := p.Steps(line)
	return &refRP{p: p, line: line, ai: ai, hai: hai, rate: line, target: line, alpha: p.InitialAlpha}
}

func (r *refRP) slotted() bool { return r.p.DecreaseInterval > 0 }

// advance runs every event due by now, one at a time. At equal times the
// alpha update comes first, then the decrease check, then the timer.
func (r *refRP) advance(now int64) {
	for r.limited {
		const none = math.MaxInt64
		a, d, tm := r.alphaNext, int64(none), int64(none)
		if r.slotted() {
			d = r.decNext
		}
		if r.timerNext != 0 {
			tm = r.timerNext
		}
		switch {
		case a <= d && a <= tm && a <= now:
			r.alphaEvent()
		case d <= tm && d <= now:
			r.decNext += r.p.DecreaseInterval
			if r.decCNP {
				r.decCNP = false
				r.cut(d)
			}
		case tm <= now:
			r.timerNext += r.p.Timer
			r.increase()
			r.tStage++
		default:
			return
		}
	}
}

func (r *refRP) alphaEvent() {
	g := r.p.G
	if r.slotted() && r.alphaCNP {
		r.alpha = (1-g)*r.alpha + g
	} else {
		r.alpha = (1 - g) * r.alpha
	}
	r.alphaCNP = false
	r.alphaNext += r.p.AlphaInterval
}

func (r *refRP) cut(now int64) {
	if r.p.ClampTarget || r.increased {
		r.target = r.rate
	}
	r.rate = math.Max(r.p.MinRate, r.rate*(1-r.alpha/2))
	r.timerNext = now + r.p.Timer
	r.tStage, r.bStage, r.bytes, r.increased = 0, 0, 0, false
	r.cuts++
}

func (r *refRP) increase() {
	t, b := r.tStage, r.bStage
	if r.p.ByteCounter == 0 {
		b = t
	}
	F := r.p.F
	switch {
	case t < F && b < F:
	case t > F && b > F:
		r.target = math.Min(r.line, r.target+r.hai)
	default:
		r.target = math.Min(r.line, r.target+r.ai)
	}
	r.rate = (r.rate + r.target) / 2
	r.increased = true
	r.increases++
}

func (r *refRP) onCNP(now int64) {
	r.advance(now)
	r.cnps++
	p := r.p
	if !r.slotted() {
		r.limited = true
		r.cut(now)
		r.alpha = (1-p.G)*r.alpha + p.G
		r.alphaNext = now + p.AlphaInterval
		return
	}
	if !r.limited {
		r.limited = true
		r.alpha = p.InitialAlpha
		r.alphaNext = now + p.AlphaInterval
		r.decNext = now + ns + p.DecreaseInterval
		r.decCNP = true
		if p.RateOnFirstCNP > 0 {
			r.rate = math.Max(p.MinRate, p.RateOnFirstCNP*r.rate)
			r.target = r.rate
		}
		return
	}
	r.alphaCNP, r.decCNP = true, true
}

func (r *refRP) onSent(now int64, n int) {
	if r.p.ByteCounter == 0 || !r.limited {
		return
	}
	r.advance(now)
	r.bytes += int64(n)
	for r.bytes >= r.p.ByteCounter {
		r.bytes -= r.p.ByteCounter
		r.increase()
		r.bStage++
	}
}

// rpEvent is a CNP (bytes == 0) or bytes sent at a time.
type rpEvent struct {
	at    int64
	bytes int
}

// congestionEvents is a seeded workload: congestion episodes with CNPs at
// random gaps, separated by quiet spells long enough for the timers to
// raise the rate, and packets sent throughout.
func congestionEvents(seed uint64, horizon int64, cnpGap, quiet int64) []rpEvent {
	rng := rand.New(rand.NewPCG(seed, 1))
	var evs []rpEvent
	now := int64(0)
	for now < horizon {
		// An episode of CNPs.
		end := now + rng.Int64N(10*cnpGap) + 1
		for now < end {
			now += rng.Int64N(cnpGap) + 1
			evs = append(evs, rpEvent{at: now})
		}
		// A quiet spell with traffic only.
		end = now + rng.Int64N(quiet) + 1
		for now < end {
			now += rng.Int64N(2*us) + 1
			evs = append(evs, rpEvent{at: now, bytes: 1000 + rng.IntN(64_000)})
		}
	}
	return evs
}

func scenarioParams() []dcqcn.Params {
	paper := dcqcn.Paper()
	paperNoBC := dcqcn.Paper()
	paperNoBC.Name, paperNoBC.ByteCounter = "paper-no-bc", 0
	paperSmallBC := dcqcn.Paper()
	paperSmallBC.Name, paperSmallBC.ByteCounter = "paper-bc-64k", 64_000
	hpccClamp := dcqcn.HPCC()
	hpccClamp.Name, hpccClamp.ClampTarget = "hpcc-clamp", true
	mlxHalf := dcqcn.Mellanox()
	mlxHalf.Name, mlxHalf.RateOnFirstCNP = "mellanox-half", 0.5
	return []dcqcn.Params{paper, paperNoBC, paperSmallBC, dcqcn.HPCC(), hpccClamp, dcqcn.Mellanox(), mlxHalf}
}

// TestRPMatchesReference compares the lazy RP with the eager reference
// over seeded workloads: the same counts of CNPs, cuts and increases at
// every event, and rates equal up to rounding (the RP applies k alpha
// decays at once as (1-g)^k).
func TestRPMatchesReference(t *testing.T) {
	for _, p := range scenarioParams() {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", p.Name, seed), func(t *testing.T) {
				p := p
				line := 100e9
				gap, quiet := 3*us, 2000*us
				if p.DecreaseInterval == 0 {
					gap = 40 * us
				}
				rp, ref := dcqcn.NewRP(&p, line), newRef(&p, line)
				evs := congestionEvents(seed, 20_000*us, gap, quiet)
				for i, e := range evs {
					if e.bytes == 0 {
						rp.OnCNP(e.at)
						ref.onCNP(e.at)
					} else {
						rp.OnSent(e.at, e.bytes)
						ref.onSent(e.at, e.bytes)
					}
					// Look between events too, where only timers act.
					at := e.at
					if i+1 < len(evs) {
						at = (e.at + evs[i+1].at) / 2
					}
					for _, now := range []int64{e.at, at} {
						ref.advance(now)
						r, tg, a := rp.Rate(now), rp.Target(now), rp.Alpha(now)
						if !near(r, ref.rate, 1e-9) || !near(tg, ref.target, 1e-9) || !near(a, ref.alpha, 1e-9) {
							t.Fatalf("event %d at %d: rate/target/alpha %g/%g/%g, reference %g/%g/%g",
								i, now, r, tg, a, ref.rate, ref.target, ref.alpha)
						}
						if rp.CNPs != ref.cnps || rp.Cuts != ref.cuts || rp.Increases != ref.increases {
							t.Fatalf("event %d at %d: CNPs/cuts/increases %d/%d/%d, reference %d/%d/%d",
								i, now, rp.CNPs, rp.Cuts, rp.Increases, ref.cnps, ref.cuts, ref.increases)
						}
					}
				}
				if ref.cuts < 10 || ref.increases < 10 {
					t.Fatalf("workload too tame: %d cuts, %d increases", ref.cuts, ref.increases)
				}
			})
		}
	}
}

// TestRPLazyEqualsEager: asking for the rate every microsecond (an eager
// driver) or only when events happen (a lazy one) gives bit-identical
// rates, targets and counters.
func TestRPLazyEqualsEager(t *testing.T) {
	for _, p := range scenarioParams() {
		t.Run(p.Name, func(t *testing.T) {
			p := p
			eager, lazy := dcqcn.NewRP(&p, 100e9), dcqcn.NewRP(&p, 100e9)
			gap := 3 * us
			if p.DecreaseInterval == 0 {
				gap = 40 * us
			}
			evs := congestionEvents(7, 10_000*us, gap, 2000*us)
			step := int64(0)
			for _, e := range evs {
				for ; step < e.at; step += us {
					eager.Rate(step)
				}
				if e.bytes == 0 {
					eager.OnCNP(e.at)
					lazy.OnCNP(e.at)
				} else {
					eager.OnSent(e.at, e.bytes)
					lazy.OnSent(e.at, e.bytes)
				}
				if eager.Rate(e.at) != lazy.Rate(e.at) || eager.Target(e.at) != lazy.Target(e.at) {
					t.Fatalf("at %d: eager %v/%v, lazy %v/%v", e.at,
						eager.Rate(e.at), eager.Target(e.at), lazy.Rate(e.at), lazy.Target(e.at))
				}
			}
			end := evs[len(evs)-1].at + 5000*us
			for ; step < end; step += us {
				eager.Rate(step)
			}
			if eager.Rate(end) != lazy.Rate(end) || eager.Target(end) != lazy.Target(end) ||
				eager.Alpha(end) != lazy.Alpha(end) ||
				eager.CNPs != lazy.CNPs || eager.Cuts != lazy.Cuts || eager.Increases != lazy.Increases {
				t.Fatalf("at the end: eager %+v, lazy %+v", eager, lazy)
			}
			if lazy.Cuts < 10 {
				t.Fatalf("workload too tame: %d cuts", lazy.Cuts)
			}
		})
	}
}

// TestRPAlphaObserverEffect: reading Alpha at every slot, as a trace would,
// applies the slotted alpha decays one at a time instead of as one power;
// the rates must agree to rounding.
func TestRPAlphaObserverEffect(t *testing.T) {
	for _, p := range scenarioParams() {
		t.Run(p.Name, func(t *testing.T) {
			p := p
			watched, plain := dcqcn.NewRP(&p, 100e9), dcqcn.NewRP(&p, 100e9)
			evs := congestionEvents(11, 5000*us, 3*us, 500*us)
			step := int64(0)
			for _, e := range evs {
				for ; step < e.at; step += us / 4 {
					watched.Alpha(step)
				}
				if e.bytes == 0 {
					watched.OnCNP(e.at)
					plain.OnCNP(e.at)
				} else {
					watched.OnSent(e.at, e.bytes)
					plain.OnSent(e.at, e.bytes)
				}
				if !near(watched.Rate(e.at), plain.Rate(e.at), 1e-12) || watched.Cuts != plain.Cuts {
					t.Fatalf("at %d: watched %v (%d cuts), plain %v (%d cuts)", e.at,
						watched.Rate(e.at), watched.Cuts, plain.Rate(e.at), plain.Cuts)
				}
			}
		})
	}
}
