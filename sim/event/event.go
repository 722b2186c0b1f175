// Package event is a discrete-event engine: integer picosecond time and a
// calendar queue of pending events.
//
// A packet simulator schedules almost every event a little ahead of now:
// a frame's serialisation (tens of nanoseconds) or a link's propagation
// (about a microsecond). The queue is therefore a timing wheel of buckets
// of about a nanosecond spanning a few microseconds. Each bucket has a
// slot of 32 events in one contiguous slab, with a list of its own
// for the rare bucket that holds more, so that scheduling reads only the
// bucket's count (the counts together fit the first-level cache) and
// writes one entry; when the clock reaches a bucket its events are
// sorted where they lie, which for the handful of events a nanosecond
// holds is a short insertion sort, and run from there. The few events
// beyond the wheel (timers, flow starts) wait in a 4-ary min-heap and
// join the wheel as it turns. On the benchmark scenario each event is
// moved about once, where a radix heap moved it five times.
//
// Events scheduled for the same picosecond run in the order of their key,
// the handler reference and the argument together, not in the order they
// were scheduled. Scheduling order is a property of one queue: a
// simulation split over several queues, one per partition of the network
// (package sim runs one per thread), schedules the same events in another
// order, and would then break ties differently and give other results.
// The key is the same however the events are spread, so each handler sees
// its events in the same order whichever queue holds them. Two events
// with the same time and key are interchangeable. An event scheduled for
// the current picosecond with a key below the one running runs next: its
// time has come, and the key only orders what is pending. A run is
// therefore a pure function of its inputs. The slab, the spill lists and the
// heap reuse their memory, so scheduling allocates nothing once they have
// grown to their working size.
package event

import (
	"fmt"
	"math/bits"
)

// Time is simulated time in picoseconds.
type Time = int64

// Common durations in picoseconds.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// Handler receives an event. arg is whatever the scheduler attached; it
// lets one handler serve many timers (a port index, a generation number)
// without a closure per event.
type Handler interface {
	Handle(now Time, arg uint64)
}

// Ref is a registered handler.
type Ref uint32

// ArgBits is the width of an event's argument.
const ArgBits = 40

// MaxArg is the largest argument an event can carry.
const MaxArg = 1<<ArgBits - 1

// entry is an event: its time and a packed handler reference and argument.
type entry struct {
	at  Time
	key uint64 // Ref<<ArgBits | arg
}

// before orders events by time, then key.
func (e *entry) before(o *entry) bool {
	return e.at < o.at || (e.at == o.at && e.key < o.key)
}

// Wheel geometry: 1.024 ns buckets, 4096 of them (4.19 us).
const (
	bucketShift = 10
	wheelBits   = 12
	wheelSize   = 1 << wheelBits
	wheelMask   = wheelSize - 1
)

// Queue is the event engine. The zero value is ready to use.
type Queue struct {
	now Time

	// The wheel: each bucket's events in the order scheduled, the first
	// slotCap of them in the bucket's slot of slab and the rest in its
	// spill; n counts them, and a bitmap marks the non-empty buckets. The
	// counts are small enough to stay in the first-level cache, so that
	// scheduling reads nothing cold.
	slab    *[wheelSize * slotCap]entry
	n       [wheelSize]uint32
	spill   [wheelSize][]entry
	used    [wheelSize / 64]uint64
	inWheel int // events in the buckets
	started bool

	// cur is the absolute bucket number the clock is in; its events,
	// sorted, are in curList from pos on. curList is the bucket's slot
	// in slab, capped at slotCap, unless the bucket spilled or grew while
	// it ran: then it is spare. Nothing else is scheduled into the slot
	// while the clock is in it, since the wheel spans one bucket less
	// than a turn.
	cur     int64
	curList []entry
	spare   []entry
	pos     int

	far     []entry // 4-ary heap of events beyond the wheel
	scratch []entry // for sortBucket

	handlers []Handler
	// Executed counts the events run so far.
	Executed uint64
	// limit is the value of Executed at which RunThrough returns.
	limit uint64
}

// Register makes h schedulable and returns its reference.
func (q *Queue) Register(h Handler) Ref {
	if uint64(len(q.handlers)) >= 1<<(64-ArgBits) {
		panic("event: too many handlers")
	}
	q.handlers = append(q.handlers, h)
	return Ref(len(q.handlers) - 1)
}

// ShareHandlers makes q run the handlers registered with o, under the
// same references, so that several queues (one per partition of a
// simulation) schedule the same handlers with the same keys. Handlers
// registered with o after the call are not seen by q.
func (q *Queue) ShareHandlers(o *Queue) { q.handlers = o.handlers }

// Now is the time of the event being run, or of the last one run.
func (q *Queue) Now() Time { return q.now }

// Len is the number of pending events.
func (q *Queue) Len() int { return q.inWheel + len(q.curList) - q.pos + len(q.far) }

func (q *Queue) init() {
	q.started = true
	q.slab = new([wheelSize * slotCap]entry)
}

// slotCap is how many events a bucket holds before it spills. With
// wheelSize it is a power of two, so that link can mask its index into
// the slab; the array below fails to compile if the slab's size is not.
const slotCap = 32

var _ [0]struct{} = [wheelSize * slotCap & (wheelSize*slotCap - 1)]struct{}{}

// At schedules the handler r at time at with arg (at most MaxArg).
// Scheduling into the past is a bug in the caller; it panics rather than
// reorder history.
func (q *Queue) At(at Time, r Ref, arg uint64) {
	if at < q.now || arg > MaxArg {
		panic(fmt.Sprintf("event: bad schedule at %d (now %d) arg %#x", at, q.now, arg))
	}
	if !q.started {
		q.init()
	}
	e := entry{at: at, key: uint64(r)<<ArgBits | arg}
	b := at >> bucketShift
	switch {
	case b <= q.cur:
		// The bucket being run (or, after a Peek past a RunUntil limit, an
		// earlier time): keep the pending part of the sorted list sorted.
		l := q.curList
		if len(l) == cap(l) && cap(l) <= slotCap {
			// The slot is full: carry on in spare.
			l = append(q.spare[:0], l...)
		}
		i := len(l)
		for i > q.pos && e.before(&l[i-1]) {
			i--
		}
		l = append(l, entry{})
		copy(l[i+1:], l[i:])
		l[i] = e
		q.curList = l
		if cap(l) > slotCap {
			q.spare = l
		}
	case b <= q.cur+wheelMask:
		q.link(b, e)
	default:
		q.far = append(q.far, e)
		q.up(len(q.far) - 1)
	}
}

// link appends e to bucket b's list.
func (q *Queue) link(b int64, e entry) {
	s := b & wheelMask
	n := q.n[s]
	switch {
	case n == 0:
		q.used[s>>6] |= 1 << (s & 63)
		fallthrough
	case n < slotCap:
		q.slab[(int(s)*slotCap+int(n))&(len(q.slab)-1)] = e // the mask drops the bounds check
	default:
		q.spill[s] = append(q.spill[s], e)
	}
	q.n[s] = n + 1
	q.inWheel++
}

// After schedules r at now+d.
func (q *Queue) After(d Time, r Ref, arg uint64) { q.At(q.now+d, r, arg) }

// settle makes curList hold the next events, if any are pending.
func (q *Queue) settle() bool {
	if q.pos < len(q.curList) {
		return true
	}
	if !q.started {
		return false
	}
	q.curList, q.pos = nil, 0
	for {
		if q.inWheel == 0 {
			if len(q.far) == 0 {
				return false
			}
			// Nothing in the wheel: jump to the first far event.
			q.cur = q.far[0].at >> bucketShift
		} else {
			q.cur = q.nextUsed()
		}
		// Far events that the wheel now reaches join it, before anything
		// can be scheduled into their buckets directly.
		for len(q.far) > 0 && q.far[0].at>>bucketShift <= q.cur+wheelMask {
			e := q.popFar()
			q.link(e.at>>bucketShift, e)
		}
		s := q.cur & wheelMask
		n := int(q.n[s])
		if n == 0 {
			continue
		}
		// Run the bucket where it is, or with its spill in spare.
		o := int(s) * slotCap
		q.curList = q.slab[o : o+min(n, slotCap) : o+slotCap]
		if n > slotCap {
			q.spare = append(append(q.spare[:0], q.curList...), q.spill[s]...)
			q.curList = q.spare
			q.spill[s] = q.spill[s][:0]
		}
		q.n[s] = 0
		q.inWheel -= n
		q.used[s>>6] &^= 1 << (s & 63)
		q.sortBucket(q.curList)
		return true
	}
}

// nextUsed is the absolute number of the first non-empty bucket after cur.
// The wheel must hold at least one node.
func (q *Queue) nextUsed() int64 {
	start := (q.cur + 1) & wheelMask
	w := start >> 6
	word := q.used[w] &^ (1<<(start&63) - 1)
	for n := 0; ; n++ {
		if word != 0 {
			s := w<<6 | int64(bits.TrailingZeros64(word))
			return q.cur + 1 + (s-start)&wheelMask
		}
		w = (w + 1) & (wheelSize/64 - 1)
		word = q.used[w]
		if n > wheelSize/64 {
			panic("event: wheel bitmap out of step")
		}
	}
}

// sortBucket orders a bucket by time, then key. Short buckets get an
// insertion sort; longer ones are first spread by a counting sort over
// sixteen sub-buckets of 64 ps, which leaves the insertion sort almost
// nothing to move.
func (q *Queue) sortBucket(l []entry) {
	if len(l) > 8 {
		var count [17]int32
		for i := range l {
			count[(l[i].at>>subShift)&15+1]++
		}
		for i := 1; i < 17; i++ {
			count[i] += count[i-1]
		}
		if cap(q.scratch) < len(l) {
			q.scratch = make([]entry, len(l), 2*len(l))
		}
		tmp := q.scratch[:len(l)]
		for _, e := range l {
			k := (e.at >> subShift) & 15
			tmp[count[k]] = e
			count[k]++
		}
		copy(l, tmp)
	}
	for i := 1; i < len(l); i++ {
		e := l[i]
		j := i
		for j > 0 && e.before(&l[j-1]) {
			l[j] = l[j-1]
			j--
		}
		l[j] = e
	}
}

// subShift splits a bucket into sixteen sub-buckets for sortBucket.
const subShift = bucketShift - 4

// Peek is the time of the next event; ok is false when none is pending.
func (q *Queue) Peek() (at Time, ok bool) {
	if !q.settle() {
		return 0, false
	}
	return q.curList[q.pos].at, true
}

// Step runs the next event, if any, and reports whether it ran one.
func (q *Queue) Step() bool {
	if !q.settle() {
		return false
	}
	e := q.curList[q.pos]
	q.pos++
	q.now = e.at
	q.Executed++
	q.handlers[e.key>>ArgBits].Handle(e.at, e.key&MaxArg)
	return true
}

// RunThrough runs the events due at or before end, at most n of them, and
// returns early once an event calls Halt. The clock stays at the last
// event run.
func (q *Queue) RunThrough(end Time, n uint64) {
	q.limit = q.Executed + n
	if q.limit < q.Executed {
		q.limit = ^uint64(0)
	}
	for q.Executed < q.limit {
		// settle's first test, here, saves a call per event.
		if q.pos >= len(q.curList) && !q.settle() {
			return
		}
		e := q.curList[q.pos]
		if e.at > end {
			return
		}
		q.pos++
		q.now = e.at
		q.Executed++
		q.handlers[e.key>>ArgBits].Handle(e.at, e.key&MaxArg)
	}
}

// Halt makes RunThrough return once the event running has run.
func (q *Queue) Halt() { q.limit = 0 }

// RunUntil runs events up to and including time end, then sets the clock to
// end if it has not passed it. It returns false if the queue ran dry first.
func (q *Queue) RunUntil(end Time) bool {
	for {
		at, ok := q.Peek()
		if !ok || at > end {
			break
		}
		q.Step()
	}
	if q.now < end {
		q.now = end
	}
	return q.Len() > 0
}

func (q *Queue) popFar() entry {
	h := q.far
	e := h[0]
	last := len(h) - 1
	h[0] = h[last]
	q.far = h[:last]
	if last > 0 {
		q.down(0)
	}
	return e
}

func (q *Queue) up(i int) {
	h := q.far
	e := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

func (q *Queue) down(i int) {
	h := q.far
	n := len(h)
	e := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < min(c+4, n); j++ {
			if h[j].before(&h[m]) {
				m = j
			}
		}
		if !h[m].before(&e) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = e
}

// check verifies the invariants; tests call it.
func (q *Queue) check() bool {
	for i := 1; i < len(q.far); i++ {
		if q.far[i].before(&q.far[(i-1)/4]) {
			return false
		}
	}
	for i := q.pos + 1; i < len(q.curList); i++ {
		if q.curList[i].before(&q.curList[i-1]) {
			return false
		}
	}
	if !q.started {
		return true
	}
	n := 0
	for s := range q.n {
		nonEmpty := q.n[s] > 0
		if nonEmpty != (q.used[s>>6]&(1<<(s&63)) != 0) {
			return false
		}
		l := append(q.slab[s*slotCap:s*slotCap+min(int(q.n[s]), slotCap):s*slotCap+min(int(q.n[s]), slotCap)], q.spill[s]...)
		if len(l) != int(q.n[s]) {
			return false
		}
		for i := range l {
			b := l[i].at >> bucketShift
			if b&wheelMask != int64(s) || b <= q.cur || b > q.cur+wheelMask {
				return false
			}
			n++
		}
	}
	return n == q.inWheel
}
