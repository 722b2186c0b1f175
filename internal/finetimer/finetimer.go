// Package finetimer waits for times shorter than the Go runtime's timers
// resolve on this class of machine: a Go timer of 20 us fires after
// about a millisecond (the runtime's poller sleeps in whole
// milliseconds). The emulation's switches and agents pace frames and
// delay them by their links with it: a millisecond of lateness per
// wait, divided by the emulation's time stretch, adds microseconds to
// every round trip of the scenario (BENCHMARKS.md).
//
// On Linux the time is a timerfd that the runtime's network poller
// watches, so a waiting goroutine is parked as on a socket read: it holds
// no thread and no P, and the expiry wakes the poller at once. (An
// earlier version slept in nanosleep or ppoll on a thread of its own;
// every such thread held a P until the runtime's monitor took it back,
// and sixteen agents waiting in one process left the rest of it waiting
// for a P: the emulated k=4 fat tree's mean FCT rose by half, see
// docs/emulation.md.)
package finetimer

import (
	"sync/atomic"
	"time"
)

// Timer fires on C about the duration given to Reset after the call. A
// wait armed earlier may still fire after a Reset: users re-check what
// they waited for, as after any wake-up.
type Timer struct {
	C   <-chan struct{}
	c   chan struct{}
	clk *clock
}

// New starts a timer, unarmed; Stop ends it.
func New() (*Timer, error) {
	clk, err := newClock()
	if err != nil {
		return nil, err
	}
	c := make(chan struct{}, 1)
	t := &Timer{C: c, c: c, clk: clk}
	go t.run()
	return t, nil
}

// Reset arms the timer for d from now, in place of any wait armed
// before.
func (t *Timer) Reset(d time.Duration) { t.clk.arm(d) }

// Stop ends the timer. It must not be used afterwards.
func (t *Timer) Stop() { t.clk.close() }

func (t *Timer) run() {
	for t.clk.wait() {
		select {
		case t.c <- struct{}{}:
		default:
		}
	}
}

// Waiter blocks its one caller for up to a given time or until another
// goroutine calls Wake, whichever comes first. It is what Timer is for a
// loop that also waits for work handed to it, without a goroutine and a
// channel between the expiry and the caller.
type Waiter struct {
	clk *clock
	// pending is set by a Wake that the Wait it was for has not
	// consumed yet: one wake-up of the clock per Wait at most, however
	// many Wakes.
	pending atomic.Bool
	// waiting is set while a Wait may sleep: a Wake when none does (the
	// waiting goroutine handing itself work, the commonest case in a
	// switch's serve loop) touches no clock.
	waiting atomic.Bool
	// due is when the clock is armed to expire, as Wait last armed it.
	due time.Time
}

// rearmSlack is how near the time a Wait would arm the clock for may be
// to the one it is armed for already and the clock be left alone:
// arming it costs more than the packet a switch waits for (see wake),
// and a serve loop woken by an arrival mostly waits again for the same
// departure.
const rearmSlack = 2 * time.Microsecond

// NewWaiter makes a Waiter; Close releases it.
func NewWaiter() (*Waiter, error) {
	clk, err := newClock()
	if err != nil {
		return nil, err
	}
	return &Waiter{clk: clk}, nil
}

// Wait returns after d, or sooner once Wake is called, or at once if
// Wake was called since the last Wait returned. Callers re-check what
// they wait for when it returns, as after any wake-up.
func (w *Waiter) Wait(d time.Duration) {
	if d <= 0 {
		return
	}
	// Arming first drops an expiry or wake-up no Wait consumed (one
	// not dropped, where the clock is left armed, costs the caller a
	// loop: it re-checks). Then waiting and pending are each set before
	// the other is read (here and in Wake), so a Wake racing this Wait
	// is either seen here or wakes the clock.
	now := time.Now()
	at := now.Add(d)
	if !w.clk.keepsTimer() || !w.due.After(now) || at.Sub(w.due).Abs() > rearmSlack {
		w.clk.arm(d)
		w.due = at
	}
	w.waiting.Store(true)
	if !w.pending.Load() {
		w.clk.wait()
	}
	w.waiting.Store(false)
	w.pending.Store(false)
}

// Wake ends the current Wait, or the next one at once. It may be called
// from any goroutine, any number of times, after Close too (it then does
// nothing).
func (w *Waiter) Wake() {
	if w.pending.CompareAndSwap(false, true) && w.waiting.Load() {
		w.clk.wake()
	}
}

// Close releases the Waiter; a Wait must not be running or follow it.
func (w *Waiter) Close() error { return w.clk.close() }
