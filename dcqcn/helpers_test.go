package dcqcn_test

import "math"

// Times are picoseconds.
const (
	ns = int64(1000)
	us = int64(1_000_000)
)

// near reports whether a and b agree to a relative tolerance.
func near(a, b, rel float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}
