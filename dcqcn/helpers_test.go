package dcqcn_test

import (
	"math"
	"os"
	"testing"
)

// Times are picoseconds.
const (
	ns = int64(1000)
	us = int64(1_000_000)
)

// bug skips a test that documents a discrepancy between the code and its
// specification, so the suite stays green. Set P4RCM_RUN_BUGS=1 to run it
// and see the failure.
func bug(t *testing.T, explanation string) {
	t.Helper()
	if os.Getenv("P4RCM_RUN_BUGS") == "" {
		t.Skip("BUG: " + explanation)
	}
}

// near reports whether a and b agree to a relative tolerance.
func near(a, b, rel float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}
