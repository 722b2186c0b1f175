//go:build !linux

package finetimer

import (
	"sync"
	"time"
)

// clock is the runtime's timer elsewhere than Linux.
type clock struct {
	mu      sync.Mutex
	t       *time.Timer
	expired chan struct{}
	done    chan struct{}
	closed  bool
}

func newClock() (*clock, error) {
	c := &clock{expired: make(chan struct{}, 1), done: make(chan struct{})}
	c.t = time.AfterFunc(time.Hour, func() {
		select {
		case c.expired <- struct{}{}:
		default:
		}
	})
	c.t.Stop()
	return c, nil
}

func (c *clock) arm(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.t.Stop()
	select {
	case <-c.expired:
	default:
	}
	c.t.Reset(max(d, 0))
}

func (c *clock) wake() { c.arm(0) }

func (c *clock) keepsTimer() bool { return false }

func (c *clock) wait() bool {
	select {
	case <-c.expired:
		return true
	case <-c.done:
		return false
	}
}

func (c *clock) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		c.t.Stop()
		close(c.done)
	}
	return nil
}
