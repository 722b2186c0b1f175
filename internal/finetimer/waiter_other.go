//go:build !linux

package finetimer

import "time"

// Waiter blocks its one caller for up to a given time or until Wake;
// elsewhere than Linux it is the runtime's timer and a channel.
type Waiter struct{ wake chan struct{} }

// NewWaiter makes a Waiter.
func NewWaiter() (*Waiter, error) { return &Waiter{wake: make(chan struct{}, 1)}, nil }

// Wait returns after d, or sooner once Wake is called.
func (w *Waiter) Wait(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.wake:
	}
}

// Wake ends the current Wait, or the next one at once; after Close it
// does nothing.
func (w *Waiter) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Close releases the Waiter (nothing to release here).
func (w *Waiter) Close() error { return nil }
