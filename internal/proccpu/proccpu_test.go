package proccpu

import (
	"os"
	"testing"
	"time"
)

// The test's own process: its CPU time grows while it computes.
func TestProcessGrows(t *testing.T) {
	before := Process(os.Getpid())
	x := 0
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
		x++
	}
	after := Process(os.Getpid())
	if after <= before || x == 0 {
		t.Errorf("CPU time %v then %v after 100 ms of work", before, after)
	}
	if Stat("/proc/0/none") != 0 || Stat("") != 0 {
		t.Error("a missing file gave a time")
	}
}
