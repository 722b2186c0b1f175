package timely

import (
	"errors"
	"math"
	"testing"
)

const gbps = 1e9

// rounds feeds a sender whole rounds: each ACK is beyond what was sent
// when the last round ended.
type rounds struct {
	s   *Sender
	seq int64
}

func (r *rounds) ack(rtt int64) bool {
	r.seq += 10_000
	return r.s.OnAck(r.seq, r.seq+1, rtt)
}

func newRounds(rate float64) (*rounds, *Params) {
	p := NS3()
	s := NewSender(&p, 100*gbps)
	s.rate = rate
	r := &rounds{s: &s}
	r.ack(10 * us) // the first round only records its RTT
	return r, &p
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }

// TestBelowTLow: RTTs under T_low always raise the rate, by delta for five
// rounds, then by the hyper-active step.
func TestBelowTLow(t *testing.T) {
	r, p := newRounds(50 * gbps)
	want := 50 * gbps
	for i := 0; i < 7; i++ {
		// A rising RTT, still under T_low: the gradient does not matter.
		r.ack(10*us + int64(i)*us)
		step := p.RAI
		if i >= p.HAIThresh {
			step = p.RHAI
		}
		want += step
		if !near(r.s.Rate(), want) {
			t.Fatalf("round %d: %.4f Gb/s, want %.4f", i+1, r.s.Rate()/gbps, want/gbps)
		}
	}
}

// TestGradient is TIMELY's law between T_low and T_high: a rising RTT
// cuts by beta times the normalised gradient, a falling one raises. A
// sender that ignored the gradient would not cut here at all.
func TestGradient(t *testing.T) {
	r, p := newRounds(50 * gbps)
	r.ack(100 * us) // into the gradient region: +90 us since the last round
	// rttDiff = alpha * 90 us; gradient = that / 20 us; c = 1 - beta g, at least 0.
	g := p.Alpha * 90 * float64(us) / float64(p.MinRTT)
	if want := math.Max(p.MinRate, 50*gbps*math.Max(0, 1-p.Beta*g)); !near(r.s.Rate(), want) {
		t.Fatalf("after a rise of 90 us: %.4f Gb/s, want %.4f", r.s.Rate()/gbps, want/gbps)
	}
	r.s.rate = 50 * gbps
	r.ack(110 * us) // +10 us: rttDiff (1-a) 78.75 + a 10 = 18.59 us
	diff := (1-p.Alpha)*p.Alpha*90*float64(us) + p.Alpha*10*float64(us)
	if want := 50 * gbps * (1 - p.Beta*diff/float64(p.MinRTT)); !near(r.s.Rate(), want) {
		t.Fatalf("after a further 10 us: %.4f Gb/s, want %.4f", r.s.Rate()/gbps, want/gbps)
	}
	r.ack(60 * us) // falling: the gradient turns negative, the rate rises
	if r.s.Rate() <= 50*gbps*(1-p.Beta*diff/float64(p.MinRTT)) || r.s.Gradient() >= 0 {
		t.Errorf("a falling RTT left %.4f Gb/s, gradient %.3f", r.s.Rate()/gbps, r.s.Gradient())
	}
}

// TestAboveTHigh: past T_high the cut is 1 - beta (1 - T_high/rtt),
// whatever the gradient.
func TestAboveTHigh(t *testing.T) {
	r, p := newRounds(50 * gbps)
	r.ack(1000 * us)
	want := 50 * gbps * (1 - p.Beta*(1-float64(p.THigh)/float64(1000*us)))
	if !near(r.s.Rate(), want) {
		t.Errorf("%.4f Gb/s, want %.4f", r.s.Rate()/gbps, want/gbps)
	}
}

// TestOncePerRound: ACKs within a round change nothing.
func TestOncePerRound(t *testing.T) {
	r, _ := newRounds(50 * gbps)
	if r.s.OnAck(r.seq, r.seq+20_000, 400*us) || r.s.OnAck(r.seq+1, r.seq+20_000, 400*us) || r.s.Rate() != 50*gbps {
		t.Errorf("an ACK within the round moved the rate to %g", r.s.Rate())
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*Params)
	}{
		{"alpha", func(p *Params) { p.Alpha = 0 }},
		{"beta", func(p *Params) { p.Beta = math.NaN() }},
		{"t_high", func(p *Params) { p.THigh = p.TLow }},
		{"min_rtt", func(p *Params) { p.MinRTT = 0 }},
		{"rhai", func(p *Params) { p.RHAI = -1 }},
	} {
		q := NS3()
		tc.edit(&q)
		var pe *ParamError
		if err := q.Validate(); !errors.As(err, &pe) || pe.Field != tc.field {
			t.Errorf("%s: Validate() = %v, want an error naming it", tc.field, err)
		}
	}
}
