// Package race tells tests whether the race detector is compiled in, so
// that the long validation runs (single-goroutine simulations, where the
// detector finds nothing and costs five to ten times the time) can leave
// the race-enabled pass of `make test` to its second, race-free pass.
package race

import "testing"

// SkipLong skips a long single-goroutine test when the race detector is
// on; `make test` runs it again without the detector.
func SkipLong(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("long simulation: runs in make test's pass without -race")
	}
}
