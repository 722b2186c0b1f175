// Package finetimer is a one-shot timer for waits shorter than the Go
// runtime's timers resolve on this class of machine: a Go timer of 20 us
// fires after about a millisecond (the runtime's poller sleeps in whole
// milliseconds), where nanosleep on a thread of its own returns after
// about 0.1 ms. The emulation's switches and agents pace frames and
// delay them by their links with it: a millisecond of lateness per wait,
// divided by the emulation's time stretch, adds microseconds to every
// round trip of the scenario (BENCHMARKS.md).
package finetimer

import (
	"runtime"
	"time"
)

// Short is the longest wait the timer sleeps out with nanosleep from
// the start; a longer one waits on a Go timer until about Short before
// its end, then sleeps the rest, so that it ends as precisely as a short
// one without holding the thread (and a later, shorter wait) for long.
const Short = 2 * time.Millisecond

// Timer fires on C about the duration given to Reset after the call. A
// wait armed earlier may still fire after a Reset: users re-check what
// they waited for, as after any wake-up.
type Timer struct {
	C     <-chan struct{}
	c     chan struct{}
	reset chan time.Duration
	done  chan struct{}
}

// New starts a timer, unarmed; Stop ends it.
func New() *Timer {
	c := make(chan struct{}, 1)
	t := &Timer{C: c, c: c, reset: make(chan time.Duration, 1), done: make(chan struct{})}
	go t.run()
	return t
}

// Reset arms the timer for d from now, in place of any wait not yet
// begun.
func (t *Timer) Reset(d time.Duration) {
	for {
		select {
		case t.reset <- d:
			return
		default:
			select {
			case <-t.reset:
			default:
			}
		}
	}
}

// Stop ends the timer. It must not be used afterwards.
func (t *Timer) Stop() { close(t.done) }

func (t *Timer) run() {
	// The sleeping thread is the timer's own: nanosleep blocks it, not
	// the runtime's other goroutines.
	runtime.LockOSThread()
	long := time.NewTimer(time.Hour)
	long.Stop()
	defer long.Stop()
	var end time.Time // of a long wait
	for {
		select {
		case <-t.done:
			return
		case d := <-t.reset:
			long.Stop()
			if d > Short {
				end = time.Now().Add(d)
				long.Reset(d - Short)
				continue
			}
			sleep(d)
			t.fire()
		case <-long.C:
			sleep(time.Until(end))
			t.fire()
		}
	}
}

func (t *Timer) fire() {
	select {
	case t.c <- struct{}{}:
	default:
	}
}
