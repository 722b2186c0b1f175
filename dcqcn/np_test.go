package dcqcn_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/p4rcm/p4rcm/dcqcn"
)

func TestNPSequence(t *testing.T) {
	const N = 50 * us
	type step struct {
		timer    bool // OnTimer instead of OnMarked
		at       int64
		sendNow  bool
		wake     int64
		timerCNP bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"first marked packet sends at once", []step{
			{at: 0, sendNow: true},
		}},
		{"first marked packet at any time", []step{
			{at: 123 * us, sendNow: true},
		}},
		{"within N: one wake, then quiet", []step{
			{at: 10 * us, sendNow: true},
			{at: 11 * us, wake: 60 * us},
			{at: 12 * us},
			{at: 59 * us},
			{timer: true, at: 60 * us, timerCNP: true},
		}},
		{"timer without marks sends nothing", []step{
			{at: 10 * us, sendNow: true},
			{timer: true, at: 60 * us},
			{timer: true, at: 500 * us},
		}},
		{"early timer does nothing", []step{
			{at: 10 * us, sendNow: true},
			{at: 20 * us, wake: 60 * us},
			{timer: true, at: 60*us - 1},
			{timer: true, at: 60 * us, timerCNP: true},
		}},
		{"a timer CNP starts the next interval", []step{
			{at: 0, sendNow: true},
			{at: 1, wake: N},
			{timer: true, at: N, timerCNP: true},
			{at: N + 1, wake: 2 * N},
			{at: 2*N - 1},
			{timer: true, at: 2 * N, timerCNP: true},
			{timer: true, at: 3 * N},
		}},
		{"a mark at the wake time, before its timer", []step{
			{at: 0, sendNow: true},
			{at: 1, wake: N},
			{at: N, sendNow: true},
			{timer: true, at: N},
			{at: N + 1, wake: 2 * N},
			{timer: true, at: 2 * N, timerCNP: true},
		}},
		{"a mark N after the last CNP sends at once", []step{
			{at: 0, sendNow: true},
			{at: N, sendNow: true},
			{at: 2*N - 1, wake: 2 * N},
			// The timer is late; a mark after the interval sends at
			// once and the stale timer finds nothing to do.
			{at: 2*N + 5, sendNow: true},
			{timer: true, at: 2*N + 6},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var np dcqcn.NP
			for i, s := range tc.steps {
				if s.timer {
					if got := np.OnTimer(s.at, N); got != s.timerCNP {
						t.Errorf("step %d: OnTimer(%d) = %v, want %v", i, s.at, got, s.timerCNP)
					}
					continue
				}
				send, wake := np.OnMarked(s.at, N)
				if send != s.sendNow || wake != s.wake {
					t.Errorf("step %d: OnMarked(%d) = %v, %d, want %v, %d", i, s.at, send, wake, s.sendNow, s.wake)
				}
			}
		})
	}
}

// TestNPAtMostOnePerInterval drives the NP as a NIC would, with a seeded
// stream of marked packets and the timers it asks for: CNPs go out at
// least N apart, the first at once, and every marked packet is answered by
// a CNP within N.
func TestNPAtMostOnePerInterval(t *testing.T) {
	const N = 50 * us
	for _, meanGap := range []int64{us, 10 * us, 49 * us, 60 * us, 200 * us} {
		rng := rand.New(rand.NewPCG(uint64(meanGap), 2))
		var marks []int64
		for now := int64(0); now < 100_000*us; {
			now += rng.Int64N(2*meanGap) + 1
			marks = append(marks, now)
		}
		var np dcqcn.NP
		var cnps, timers []int64
		for i, m := range marks {
			// Run the timers due before this mark.
			for len(timers) > 0 && timers[0] <= m {
				if np.OnTimer(timers[0], N) {
					cnps = append(cnps, timers[0])
				}
				timers = timers[1:]
			}
			send, wake := np.OnMarked(m, N)
			if send {
				cnps = append(cnps, m)
			}
			if wake != 0 {
				if len(timers) > 0 {
					t.Fatalf("gap %d: a second wake %d while %v pending", meanGap, wake, timers)
				}
				timers = append(timers, wake)
			}
			if i == 0 && !send {
				t.Fatalf("gap %d: the first marked packet sent no CNP", meanGap)
			}
		}
		for _, w := range timers {
			if np.OnTimer(w, N) {
				cnps = append(cnps, w)
			}
		}
		for i := 1; i < len(cnps); i++ {
			if cnps[i]-cnps[i-1] < N {
				t.Fatalf("gap %d: CNPs at %d and %d, less than N apart", meanGap, cnps[i-1], cnps[i])
			}
		}
		for _, m := range marks {
			j, _ := slices.BinarySearch(cnps, m)
			if j == len(cnps) || cnps[j]-m > N {
				t.Fatalf("gap %d: mark at %d not answered within N", meanGap, m)
			}
		}
		// Marks closer than N are aggregated: fewer CNPs than marks.
		if meanGap < N/2 && len(cnps) > len(marks)/2 {
			t.Errorf("gap %d: %d CNPs for %d marks", meanGap, len(cnps), len(marks))
		}
	}
}
