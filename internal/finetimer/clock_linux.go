//go:build linux

package finetimer

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// clock is a one-shot timerfd in the runtime's network poller.
type clock struct {
	f *os.File
	// rc reaches the descriptor only while the file is open: a call
	// after close touches no descriptor number another file has taken.
	rc syscall.RawConn
}

func newClock() (*clock, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("finetimer: timerfd_create: %w", err)
	}
	// A non-blocking descriptor given to os.NewFile joins the poller.
	f := os.NewFile(uintptr(fd), "finetimer")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("finetimer: %w", err)
	}
	return &clock{f: f, rc: rc}, nil
}

// arm makes the clock expire d from now (at once for d <= 0) and drops
// any expiry not yet waited for.
func (c *clock) arm(d time.Duration) {
	// A zero value would disarm the timer instead.
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(int64(d), 1))}
	_ = c.rc.Control(func(fd uintptr) { _ = unix.TimerfdSettime(int(fd), 0, &spec, nil) })
}

// wait parks the goroutine until the clock expires; false once the clock
// is closed.
func (c *clock) wait() bool {
	var n [8]byte // the count of expirations
	_, err := c.f.Read(n[:])
	return err == nil
}

func (c *clock) close() error { return c.f.Close() }
