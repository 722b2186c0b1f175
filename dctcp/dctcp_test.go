package dctcp

import (
	"errors"
	"math"
	"testing"
)

const gbps = 1e9

// window feeds s one window of n ACKs of 1000 bytes each, marked of them
// echoing CE (the first ones), and returns the rate after it: each ACK
// finds n-1 packets in flight, so that a window is n ACKs.
func window(s *Sender, seq *int64, n, marked int) float64 {
	for i := 0; i < n; i++ {
		*seq += 1000
		s.OnAck(*seq, *seq+int64(n-1)*1000, i < marked)
	}
	return s.Rate()
}

func newSender() (*Sender, *Params, *int64) {
	p := NS3()
	s := NewSender(&p, 100*gbps, 1000)
	seq := int64(0)
	window(&s, &seq, 10, 0) // the first window starts the count
	return &s, &p, &seq
}

// TestAlphaTracksTheMarkedFraction: alpha = (1 - g) alpha + g F per
// window settles at the marked fraction F.
func TestAlphaTracksTheMarkedFraction(t *testing.T) {
	for _, marked := range []int{0, 3, 10} {
		s, _, seq := newSender()
		for i := 0; i < 200; i++ {
			window(s, seq, 10, marked)
		}
		if want := float64(marked) / 10; math.Abs(s.Alpha()-want) > 0.02 {
			t.Errorf("%d of 10 marked: alpha %.3f, want %.2f", marked, s.Alpha(), want)
		}
	}
}

// TestCutScalesWithTheMarkedFraction is DCTCP's point: the cut is alpha/2,
// and alpha follows the fraction of marked packets, so a lightly marked
// flow cuts a little and a fully marked one halves. A sender without
// alpha (always halving) fails the first bound.
func TestCutScalesWithTheMarkedFraction(t *testing.T) {
	cut := func(frac int) float64 {
		s, _, seq := newSender()
		for i := 0; i < 100; i++ { // let alpha settle at the fraction
			window(s, seq, 10, frac)
		}
		s.rate, s.cwr = 50*gbps, false
		*seq += 1000
		s.OnAck(*seq, *seq+9_000, true)
		return 1 - s.Rate()/(50*gbps)
	}
	light, heavy := cut(1), cut(10)
	if light > 0.1 || heavy < 0.45 || heavy > 0.5 {
		t.Errorf("cut %.3f at 10%% marked and %.3f at 100%%: want about 0.05 and 0.5", light, heavy)
	}
}

// TestOneCutPerWindow: marks after a cut, before the window in flight at
// the cut is acknowledged, do not cut again.
func TestOneCutPerWindow(t *testing.T) {
	s, _, seq := newSender()
	s.rate = 50 * gbps
	*seq += 1000
	s.OnAck(*seq, *seq+20_000, true)
	after := s.Rate()
	for i := 0; i < 5; i++ {
		*seq += 1000
		s.OnAck(*seq, *seq+20_000, true)
	}
	if s.Rate() != after {
		t.Errorf("rate %g after more marks in the same window, want %g", s.Rate(), after)
	}
}

// TestAdditiveIncrease: a window without marks adds DCTCP_RATE_AI.
func TestAdditiveIncrease(t *testing.T) {
	s, p, seq := newSender()
	s.rate = 50 * gbps
	window(s, seq, 10, 0)
	if got := s.Rate(); math.Abs(got-(50*gbps+p.RAI)) > 1 {
		t.Errorf("rate %g after a clean window, want %g", got, 50*gbps+p.RAI)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*Params)
	}{
		{"g", func(p *Params) { p.G = 0 }},
		{"rai", func(p *Params) { p.RAI = math.Inf(1) }},
		{"kmax", func(p *Params) { p.KMax = p.KMin - 1 }},
		{"pmax", func(p *Params) { p.PMax = 2 }},
	} {
		q := NS3()
		tc.edit(&q)
		var pe *ParamError
		if err := q.Validate(); !errors.As(err, &pe) || pe.Field != tc.field {
			t.Errorf("%s: Validate() = %v, want an error naming it", tc.field, err)
		}
	}
}
