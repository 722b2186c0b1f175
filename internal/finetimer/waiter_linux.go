//go:build linux

package finetimer

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Waiter blocks its one caller for up to a given time or until another
// goroutine calls Wake, whichever comes first, with nanosleep's
// precision. It is what Timer is for a loop that also waits for work
// handed to it: one ppoll on an eventfd per wait, on the caller's own
// thread, where Timer's Reset, sleep and fire each move between threads
// (three or four context switches per wait, which on this class of
// machine cost more than the packet the wait was for).
type Waiter struct {
	fd      int
	pending atomic.Bool // a Wake wrote the eventfd and Wait has not read it
	// closeMu keeps Close from freeing the descriptor while a Wake from
	// another goroutine writes it: once freed, its number may be another
	// file's.
	closeMu sync.RWMutex
	closed  bool
}

// NewWaiter makes a Waiter; Close releases its eventfd.
func NewWaiter() (*Waiter, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("finetimer: eventfd: %w", err)
	}
	return &Waiter{fd: fd}, nil
}

// Wait returns after d, or sooner once Wake is called, or at once if
// Wake was called since the last Wait returned. Callers re-check what
// they wait for when it returns, as after any wake-up.
func (w *Waiter) Wait(d time.Duration) {
	if d <= 0 {
		return
	}
	end := time.Now().Add(d)
	fds := [1]unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	for {
		ts := unix.NsecToTimespec(int64(d))
		n, err := unix.Ppoll(fds[:], &ts, nil)
		if n > 0 || !errors.Is(err, unix.EINTR) {
			break
		}
		// A signal the runtime sent the thread: wait out the rest.
		if d = time.Until(end); d <= 0 {
			break
		}
	}
	// Empty the counter whenever it woke the poll, whoever wrote it,
	// so that a Wake's write that came after its flag was cleared costs
	// one early return, not a poll that never sleeps again.
	if fds[0].Revents&unix.POLLIN != 0 {
		var buf [8]byte
		unix.Read(w.fd, buf[:])
	}
	w.pending.Store(false)
}

// Wake ends the current Wait, or the next one at once. It may be called
// from any goroutine, any number of times: one write per Wait at most.
func (w *Waiter) Wake() {
	w.closeMu.RLock()
	defer w.closeMu.RUnlock()
	if !w.closed && w.pending.CompareAndSwap(false, true) {
		one := [8]byte{1}
		unix.Write(w.fd, one[:])
	}
}

// Close releases the eventfd; a Wake after it does nothing. Wait must not
// be called afterwards.
func (w *Waiter) Close() error {
	w.closeMu.Lock()
	defer w.closeMu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return unix.Close(w.fd)
}
