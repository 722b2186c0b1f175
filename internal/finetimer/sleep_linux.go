//go:build linux

package finetimer

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// sleep blocks the thread for d, through the signals the runtime sends
// its threads.
func sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := unix.NsecToTimespec(int64(d))
	for {
		var rem unix.Timespec
		err := unix.Nanosleep(&ts, &rem)
		if !errors.Is(err, unix.EINTR) {
			return
		}
		ts = rem
	}
}
