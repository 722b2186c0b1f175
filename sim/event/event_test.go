package event

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"testing"
)

type recorder struct{ got []uint64 }

func (r *recorder) Handle(now Time, arg uint64) { r.got = append(r.got, arg) }

func TestOrderByTimeThenKey(t *testing.T) {
	// The same events scheduled in two different orders, with times spread
	// from the current bucket to beyond the wheel, run in the same order:
	// by time, then handler, then argument.
	type ev struct {
		at  Time
		h   int
		arg uint64
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var evs []ev
	for i := 0; i < 5000; i++ {
		at := Time(rng.IntN(200))
		if i%5 == 0 {
			at = Time(rng.IntN(3)) * 10 * Microsecond // far events, ties included
		}
		evs = append(evs, ev{at: at, h: rng.IntN(3), arg: uint64(rng.IntN(50))})
	}
	runOnce := func(order []int) []ev {
		var q Queue
		var got []ev
		refs := make([]Ref, 3)
		for h := range refs {
			refs[h] = q.Register(handlerFunc(func(now Time, arg uint64) { got = append(got, ev{now, h, arg}) }))
		}
		for n, i := range order {
			e := evs[i]
			q.At(e.at, refs[e.h], e.arg)
			if n%97 == 0 && !q.check() {
				t.Fatal("invariant broken after push")
			}
		}
		for q.Step() {
		}
		return got
	}
	fwd := make([]int, len(evs))
	for i := range fwd {
		fwd[i] = i
	}
	shuffled := append([]int(nil), fwd...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	a, b := runOnce(fwd), runOnce(shuffled)
	if len(a) != len(evs) || len(b) != len(evs) {
		t.Fatalf("ran %d and %d events, want %d", len(a), len(b), len(evs))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("event %d: %v in scheduling order, %v shuffled", i, a[i], b[i])
		}
		if i > 0 {
			p, e := a[i-1], a[i]
			if e.at < p.at || e.at == p.at && (e.h < p.h || e.h == p.h && e.arg < p.arg) {
				t.Fatalf("event %d %v ran after %v", i, e, p)
			}
		}
	}
}

type handlerFunc func(now Time, arg uint64)

func (f handlerFunc) Handle(now Time, arg uint64) { f(now, arg) }

func TestNowWithLowerKeyRunsNext(t *testing.T) {
	// An event scheduled for the current picosecond whose key is below the
	// running one's runs next, before the pending events of that time.
	var q Queue
	var got []uint64
	var ref Ref
	ref = q.Register(handlerFunc(func(now Time, arg uint64) {
		got = append(got, arg)
		if arg == 5 {
			q.At(now, ref, 1)
			q.At(now, ref, 7)
		}
	}))
	for _, a := range []uint64{9, 5, 6} {
		q.At(3000, ref, a)
	}
	for q.Step() {
	}
	want := []uint64{5, 1, 6, 7, 9}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ran %v, want %v", got, want)
	}
}

func TestRunThroughAndHalt(t *testing.T) {
	var q Queue
	var got []uint64
	ref := q.Register(handlerFunc(func(now Time, arg uint64) {
		got = append(got, arg)
		if arg == 3 {
			q.Halt()
		}
	}))
	for i := uint64(1); i <= 6; i++ {
		q.At(Time(i)*100, ref, i)
	}
	q.RunThrough(250, 10)
	if fmt.Sprint(got) != "[1 2]" || q.Now() != 200 {
		t.Fatalf("through 250: ran %v, clock %d", got, q.Now())
	}
	q.RunThrough(1000, 10)
	if fmt.Sprint(got) != "[1 2 3]" || q.Now() != 300 {
		t.Fatalf("halted: ran %v, clock %d", got, q.Now())
	}
	q.RunThrough(1000, 2)
	if fmt.Sprint(got) != "[1 2 3 4 5]" {
		t.Fatalf("two more: ran %v", got)
	}
	q.RunThrough(1000, 10)
	if fmt.Sprint(got) != "[1 2 3 4 5 6]" || q.Len() != 0 {
		t.Fatalf("to the end: ran %v, %d pending", got, q.Len())
	}
}

func TestShareHandlers(t *testing.T) {
	var a, b Queue
	var got []string
	ra := a.Register(handlerFunc(func(now Time, arg uint64) { got = append(got, fmt.Sprint("x", arg)) }))
	rb := a.Register(handlerFunc(func(now Time, arg uint64) { got = append(got, fmt.Sprint("y", arg)) }))
	b.ShareHandlers(&a)
	b.At(10, rb, 1)
	b.At(10, ra, 2)
	for b.Step() {
	}
	if fmt.Sprint(got) != "[x2 y1]" {
		t.Errorf("ran %v", got)
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

// keyHeap is a reference queue: container/heap ordered by time, then key,
// as Queue promises to run its events.
type keyHeap []entry

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return h[i].before(&h[j]) }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *keyHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// TestMatchesReferenceUnderLoad runs a busy workload on the queue and on
// a reference heap and wants the same events in the same order. Each
// event schedules up to three more: at the same picosecond (keys above
// and below the running one), within its bucket, a few buckets on, within
// the wheel and beyond it, so that buckets fill past their slots and
// spill, and the running bucket grows while it runs.
func TestMatchesReferenceUnderLoad(t *testing.T) {
	const total = 300000
	follow := func(at Time, key uint64, draw *rand.Rand, schedule func(Time, uint64)) {
		for range draw.IntN(4) {
			var d Time
			switch draw.IntN(6) {
			case 0:
				d = 0
			case 1:
				d = Time(draw.IntN(1 << bucketShift))
			case 2:
				d = Time(draw.IntN(8 << bucketShift))
			case 3, 4:
				d = Time(draw.IntN(wheelSize << bucketShift))
			default:
				d = Time(draw.IntN(3 * wheelSize << bucketShift))
			}
			schedule(at+d, uint64(draw.IntN(4))<<ArgBits|uint64(draw.IntN(1000)))
		}
	}
	seed := func(schedule func(Time, uint64)) {
		r := rand.New(rand.NewPCG(7, 8))
		for range 3000 {
			schedule(Time(r.IntN(64<<bucketShift)), uint64(r.IntN(4))<<ArgBits|uint64(r.IntN(1000)))
		}
	}
	// Each event's followers come from a generator seeded by the event
	// itself, so that both queues draw the same whatever the order.
	drawFor := func(at Time, key uint64) *rand.Rand { return rand.New(rand.NewPCG(uint64(at), key)) }

	var want []entry
	h := &keyHeap{}
	seed(func(at Time, key uint64) { heap.Push(h, entry{at: at, key: key}) })
	for len(want) < total && h.Len() > 0 {
		e := heap.Pop(h).(entry)
		want = append(want, e)
		follow(e.at, e.key, drawFor(e.at, e.key), func(at Time, key uint64) { heap.Push(h, entry{at: at, key: key}) })
	}

	var q Queue
	var got []entry
	refs := make([]Ref, 4)
	for i := range refs {
		refs[i] = q.Register(handlerFunc(func(now Time, arg uint64) {
			key := uint64(i)<<ArgBits | arg
			got = append(got, entry{at: now, key: key})
			if len(got) >= total {
				q.Halt()
				return
			}
			follow(now, key, drawFor(now, key), func(at Time, key uint64) { q.At(at, refs[key>>ArgBits], key&MaxArg) })
		}))
	}
	seed(func(at Time, key uint64) { q.At(at, refs[key>>ArgBits], key&MaxArg) })
	q.RunThrough(1<<62, total)
	if !q.check() {
		t.Fatal("invariant broken")
	}
	if len(got) != len(want) {
		t.Fatalf("ran %d events, the reference %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: ran %+v, the reference %+v", i, got[i], want[i])
		}
	}
}
