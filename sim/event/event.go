// Package event is a discrete-event engine: integer picosecond time and a
// radix heap of pending events. Simulated time never goes backwards, so
// every key pushed is at least the last key popped: the monotone case a
// radix heap serves in O(1) per push and amortised O(log range) per pop,
// with far fewer unpredictable comparisons than a binary or 4-ary heap.
// Events scheduled for the same picosecond run in the order they were
// scheduled (equal keys always share a bucket, and buckets keep insertion
// order), so a run is a pure function of its inputs. Bucket slices are
// reused, so scheduling allocates nothing once they have grown to their
// working size.
package event

import "math/bits"

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

type entry struct {
	at  Time
	h   Handler
	arg uint64
}

// Queue is the event engine. The zero value is ready to use.
type Queue struct {
	now Time
	// last is the key all bucket indices are relative to: the smallest key
	// popped or found so far. Bucket i > 0 holds keys whose highest bit
	// differing from last is bit i-1; bucket 0 holds keys equal to last,
	// consumed from head0.
	last    Time
	buckets [65][]entry
	head0   int
	n       int
	// Executed counts the events run so far.
	Executed uint64
}

// Now is the time of the event being run, or of the last one run.
func (q *Queue) Now() Time { return q.now }

// Len is the number of pending events.
func (q *Queue) Len() int { return q.n }

func (q *Queue) bucket(at Time) int { return bits.Len64(uint64(at ^ q.last)) }

// At schedules h.Handle(at, arg). Scheduling into the past is a bug in the
// caller; it panics rather than reorder history.
func (q *Queue) At(at Time, h Handler, arg uint64) {
	if at < q.now {
		panic("event: scheduled into the past")
	}
	b := q.bucket(at)
	q.buckets[b] = append(q.buckets[b], entry{at: at, h: h, arg: arg})
	q.n++
}

// After schedules h.Handle(now+d, arg).
func (q *Queue) After(d Time, h Handler, arg uint64) { q.At(q.now+d, h, arg) }

// settle makes bucket 0 non-empty, if any event is pending, by moving the
// lowest non-empty bucket down around its smallest key.
func (q *Queue) settle() bool {
	if q.head0 < len(q.buckets[0]) {
		return true
	}
	q.buckets[0] = q.buckets[0][:0]
	q.head0 = 0
	if q.n == 0 {
		return false
	}
	i := 1
	for len(q.buckets[i]) == 0 {
		i++
	}
	src := q.buckets[i]
	m := src[0].at
	for _, e := range src[1:] {
		m = min(m, e.at)
	}
	q.last = m
	for _, e := range src {
		b := q.bucket(e.at)
		q.buckets[b] = append(q.buckets[b], e)
	}
	clear(src)
	q.buckets[i] = src[:0]
	return true
}

// Peek is the time of the next event; ok is false when none is pending.
func (q *Queue) Peek() (at Time, ok bool) {
	if !q.settle() {
		return 0, false
	}
	return q.last, true
}

// Step runs the next event, if any, and reports whether it ran one.
func (q *Queue) Step() bool {
	if !q.settle() {
		return false
	}
	b0 := q.buckets[0]
	e := b0[q.head0]
	b0[q.head0] = entry{} // drop the handler reference
	q.head0++
	q.n--
	q.now = e.at
	q.Executed++
	e.h.Handle(e.at, e.arg)
	return true
}

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
	return q.n > 0
}

// check verifies the bucket invariant; tests call it.
func (q *Queue) check() bool {
	for i, b := range q.buckets {
		start := 0
		if i == 0 {
			start = q.head0
		}
		for _, e := range b[start:] {
			if q.bucket(e.at) != i || e.at < q.last {
				return false
			}
		}
	}
	return true
}
