//go:build linux

package finetimer

import (
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// clock is a one-shot timerfd in the runtime's network poller.
type clock struct {
	f *os.File
	// rc reaches the descriptor only while the file is open: a call
	// after close touches no descriptor number another file has taken.
	rc syscall.RawConn
	// keeps says wake leaves the kernel timer as it was (it sets the
	// expiry count instead, TFD_IOC_SET_TICKS).
	keeps bool
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
	c := &clock{f: f, rc: rc}
	// Kernels built without CONFIG_CHECKPOINT_RESTORE refuse the ioctl.
	if c.setTicks() == nil {
		c.keeps = true
		var n [8]byte
		_, _ = unix.Read(fd, n[:])
	}
	return c, nil
}

// arm makes the clock expire d from now (at once for d <= 0) and drops
// any expiry not yet waited for.
func (c *clock) arm(d time.Duration) {
	// A zero value would disarm the timer instead.
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(int64(d), 1))}
	_ = c.rc.Control(func(fd uintptr) { _ = unix.TimerfdSettime(int(fd), 0, &spec, nil) })
}

// tfdSetTicks is TFD_IOC_SET_TICKS, _IOW('T', 0, u64): it sets a
// timerfd's expiry count and wakes its readers without touching its
// kernel timer. Arming a timer to expire at once reprograms the CPU's
// timer, which in a virtual machine is an exit to the hypervisor: a
// quarter of an emulated switch's CPU when every wake-up did it.
const tfdSetTicks = 0x40085400

// wake makes the clock expire now, by its count where the kernel takes
// the ioctl, else by arming it.
func (c *clock) wake() {
	if !c.keeps || c.setTicks() != nil {
		c.arm(0)
	}
}

// keepsTimer says wake leaves the time the clock was armed for as it was.
func (c *clock) keepsTimer() bool { return c.keeps }

// setTicks makes the expiry count one, waking a waiter.
func (c *clock) setTicks() error {
	one := uint64(1)
	var errno syscall.Errno
	if err := c.rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, tfdSetTicks, uintptr(unsafe.Pointer(&one)))
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}

// wait parks the goroutine until the clock expires; false once the clock
// is closed.
func (c *clock) wait() bool {
	var n [8]byte // the count of expirations
	_, err := c.f.Read(n[:])
	return err == nil
}

func (c *clock) close() error { return c.f.Close() }
