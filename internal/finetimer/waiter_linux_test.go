//go:build linux

package finetimer

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A Wake after Close arms or wakes nothing: the closed descriptor's
// number is soon another file's, here a new timerfd's, which must stay
// disarmed and unread.
func TestWakeAfterClose(t *testing.T) {
	w, err := NewWaiter()
	if err != nil {
		t.Fatal(err)
	}
	old := int(w.clk.f.Fd())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if fd != old {
		t.Skipf("the new timerfd got descriptor %d, not the closed %d", fd, old)
	}
	// As a Wake racing the end of a Wait would find it: still waiting.
	w.waiting.Store(true)
	w.Wake()
	var spec unix.ItimerSpec
	if err := unix.TimerfdGettime(fd, &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Value != (unix.Timespec{}) {
		t.Errorf("a Wake after Close armed the timerfd that took its descriptor (%v)", spec.Value)
	}
	var n [8]byte
	if _, err := unix.Read(fd, n[:]); !errors.Is(err, unix.EAGAIN) {
		t.Errorf("a Wake after Close made the timerfd that took its descriptor readable (%v, count %v)", err, n)
	}
}

// Goroutines waiting hold no thread of their own: a hundred waiters in
// an hour's wait leave the process with far fewer than a hundred threads
// (a wait in nanosleep or ppoll, as this package once did, blocks a
// thread each, and holds the P it ran on until the runtime's monitor
// takes it back, which starved the rest of an emulation of its two
// cores). Waiters and timers alike.
func TestWaitsHoldNoThread(t *testing.T) {
	const n = 100
	before := threads(t)
	var ws []*Waiter
	var ts []*Timer
	done := make(chan struct{}, n)
	for range n / 2 {
		w, err := NewWaiter()
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
		go func() { w.Wait(time.Hour); done <- struct{}{} }()
		tm, err := New()
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tm)
		tm.Reset(time.Hour)
	}
	// Let every goroutine reach its wait (a blocking one would by now
	// have made its thread).
	time.Sleep(100 * time.Millisecond)
	if got := threads(t); got-before >= n/2 {
		t.Errorf("%d waits made %d threads (%d before, %d after)", n, got-before, before, got)
	}
	for _, w := range ws {
		w.Wake()
	}
	for range ws {
		<-done
	}
	for i := range ws {
		ws[i].Close()
		ts[i].Stop()
	}
}

// threads is how many threads the process has.
func threads(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: line in /proc/self/status")
	return 0
}
