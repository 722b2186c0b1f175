package main

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// idleCores is how many of the machine's cores sat idle over a tenth of
// a second, at least 1: the threads a run can have by default. A run on
// more threads than the cores the system can give it waits, at the end
// of every window, for a part the system has put aside for other work,
// and goes slower than on one (BENCHMARKS.md). A variable, for tests.
var idleCores = func() int {
	n := runtime.NumCPU()
	a, ok1 := cpuTimes()
	time.Sleep(100 * time.Millisecond)
	b, ok2 := cpuTimes()
	if !ok1 || !ok2 || b.total <= a.total {
		return n // not Linux, or no /proc: assume the machine is ours
	}
	idle := float64(b.idle-a.idle) / float64(b.total-a.total) * float64(n)
	return min(n, max(1, int(idle+0.5)))
}

// cpuTicks are the machine's CPU time so far, all of it and idle, in
// clock ticks.
type cpuTicks struct{ total, idle uint64 }

// cpuTimes reads the machine's CPU time so far from /proc/stat.
func cpuTimes() (cpuTicks, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return cpuTicks{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return cpuTicks{}, false
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 5 || fields[0] != "cpu" {
		return cpuTicks{}, false
	}
	var t cpuTicks
	for i, s := range fields[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTicks{}, false
		}
		t.total += v
		if i == 3 || i == 4 { // idle, iowait
			t.idle += v
		}
	}
	return t, true
}
