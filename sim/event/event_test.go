package event

import (
	"container/heap"
	"math/rand/v2"
	"testing"
)

type recorder struct{ got []uint64 }

func (r *recorder) Handle(now Time, arg uint64) { r.got = append(r.got, arg) }

func TestOrderByTimeThenSchedule(t *testing.T) {
	var q Queue
	r := &recorder{}
	ref := q.Register(r)
	rng := rand.New(rand.NewPCG(1, 2))
	type ev struct {
		at  Time
		arg uint64
	}
	var want []ev
	for i := 0; i < 5000; i++ {
		e := ev{at: Time(rng.IntN(200)), arg: uint64(i)}
		want = append(want, e)
		q.At(e.at, ref, e.arg)
		if i%97 == 0 && !q.check() {
			t.Fatal("heap invariant broken after push")
		}
	}
	for q.Step() {
	}
	// Stable order: by time, ties in scheduling order.
	byTime := make(map[Time][]uint64)
	for _, e := range want {
		byTime[e.at] = append(byTime[e.at], e.arg)
	}
	var exp []uint64
	for at := Time(0); at < 200; at++ {
		exp = append(exp, byTime[at]...)
	}
	if len(r.got) != len(exp) {
		t.Fatalf("ran %d events, want %d", len(r.got), len(exp))
	}
	for i := range exp {
		if r.got[i] != exp[i] {
			t.Fatalf("event %d: got arg %d, want %d", i, r.got[i], exp[i])
		}
	}
}

type chain struct {
	q      *Queue
	ref    Ref
	left   int
	last   Time
	spread uint64 // delays are drawn from [0, spread) ps
	t      *testing.T
}

func (c *chain) Handle(now Time, arg uint64) {
	if now < c.last {
		c.t.Fatalf("time went backwards: %d after %d", now, c.last)
	}
	c.last = now
	if c.left > 0 {
		c.left--
		c.q.After(Time(arg%c.spread), c.ref, (arg*6364136223846793005+1)&MaxArg)
	}
}

func TestEventsScheduledFromHandlers(t *testing.T) {
	var q Queue
	c := &chain{q: &q, left: 10000, spread: 7, t: t}
	c.ref = q.Register(c)
	for i := 0; i < 10; i++ {
		q.At(Time(i), c.ref, uint64(i))
		if !q.check() {
			t.Fatal("invariant broken")
		}
	}
	for q.Step() {
	}
	if q.Executed != 10010 {
		t.Errorf("executed %d events, want 10010", q.Executed)
	}
}

func TestRunUntilAndPast(t *testing.T) {
	var q Queue
	r := q.Register(&recorder{})
	rec := q.handlers[r].(*recorder)
	q.At(10, r, 1)
	q.At(20, r, 2)
	if !q.RunUntil(15) || q.Now() != 15 || len(rec.got) != 1 {
		t.Fatalf("RunUntil(15): now %d, ran %v", q.Now(), rec.got)
	}
	defer func() {
		if recover() == nil {
			t.Error("scheduling into the past did not panic")
		}
	}()
	q.At(5, r, 3)
}

func TestNoAllocationsInSteadyState(t *testing.T) {
	var q Queue
	c := &chain{q: &q, left: 1 << 30, spread: 1 << 20, t: t}
	c.ref = q.Register(c)
	for i := 0; i < 64; i++ {
		q.At(Time(i), c.ref, uint64(i))
	}
	for i := 0; i < 1000; i++ {
		q.Step()
	}
	allocs := testing.AllocsPerRun(1000, func() { q.Step() })
	if allocs != 0 {
		t.Errorf("%v allocations per event, want 0", allocs)
	}
}

func BenchmarkStep(b *testing.B) {
	for _, pending := range []int{64, 1024, 16384} {
		b.Run("pending="+itoa(pending), func(b *testing.B) {
			var q Queue
			// Delays up to about 1 us, like serialisation and propagation.
			c := &chain{q: &q, left: 1 << 62, spread: 1 << 20}
			c.ref = q.Register(c)
			for i := 0; i < pending; i++ {
				q.At(Time(i), c.ref, uint64(i))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q.Step()
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

// heapQueue is the textbook alternative, container/heap ordered by (time,
// sequence), as a baseline for BenchmarkStep.
type heapQueue []heapEntry

type heapEntry struct {
	at  Time
	seq uint64
	arg uint64
}

func (h heapQueue) Len() int { return len(h) }
func (h heapQueue) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}
func (h heapQueue) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heapQueue) Push(x any)   { *h = append(*h, x.(heapEntry)) }
func (h *heapQueue) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// BenchmarkStepHeapBaseline runs BenchmarkStep's workload on container/heap.
func BenchmarkStepHeapBaseline(b *testing.B) {
	for _, pending := range []int{64, 1024, 16384} {
		b.Run("pending="+itoa(pending), func(b *testing.B) {
			h := &heapQueue{}
			var seq uint64
			for i := 0; i < pending; i++ {
				seq++
				heap.Push(h, heapEntry{at: Time(i), seq: seq, arg: uint64(i)})
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e := heap.Pop(h).(heapEntry)
				seq++
				arg := (e.arg*6364136223846793005 + 1) & MaxArg
				heap.Push(h, heapEntry{at: e.at + Time(e.arg%(1<<20)), seq: seq, arg: arg})
			}
		})
	}
}
