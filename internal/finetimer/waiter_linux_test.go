//go:build linux

package finetimer

import (
	"errors"
	"os"
	"slices"
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

// Waits with slack end on the same multiple of it: two Waiters asked
// for 1 and 3 ms, 5 ms past a multiple of 50 ms, both end at the next
// multiple, 45 ms on (a Waiter that ignored its slack would end after 1
// and 3 ms). A Waiter without slack still ends after about its time.
func TestSlackAlignsWaits(t *testing.T) {
	const grid = 50 * time.Millisecond
	mono := func() time.Duration {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ts.Nano())
	}
	var ws [3]*Waiter
	for i := range ws {
		w, err := NewWaiter()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		ws[i] = w
	}
	ws[0].SetSlack(grid)
	ws[1].SetSlack(grid)
	for try := range 3 {
		// Start 5 ms past a multiple of the grid.
		time.Sleep(grid - mono()%grid + 5*time.Millisecond)
		start := mono()
		next := (start/grid + 1) * grid
		ends := make(chan time.Duration, 3)
		for i, d := range []time.Duration{time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond} {
			go func() { ws[i].Wait(d); ends <- mono() }()
		}
		var got []time.Duration
		for range 3 {
			got = append(got, <-ends)
		}
		slices.Sort(got)
		// The unaligned Waiter ends first, the two aligned ones at the
		// multiple, no earlier, and late by no more than a loaded
		// machine makes them (the unaligned one ends 43 ms before).
		if got[0]-start > 30*time.Millisecond || got[1] < next || got[2]-next > 30*time.Millisecond {
			t.Errorf("try %d: waits started %v past a multiple of %v ended %v, %v and %v after it; want about 2 ms for the one without slack, %v for the two with",
				try, start%grid, grid, got[0]-start, got[1]-start, got[2]-start, next-start)
		}
	}
}
