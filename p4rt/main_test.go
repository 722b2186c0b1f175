package p4rt_test

import (
	"os"
	"testing"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
)

// TestMain is also TestFrozenPrimary's controller, a CPU burner, or
// the write benchmarks' null server process, when the test binary is
// started as one.
func TestMain(m *testing.M) {
	if addr := os.Getenv(frozenClientEnv); addr != "" {
		frozenClient(addr)
		return
	}
	if d := os.Getenv(burnEnv); d != "" {
		burner(d)
		return
	}
	if addr := os.Getenv(nullServerEnv); addr != "" {
		nullServer(addr)
		return
	}
	p4switchbin.Main(m)
}
