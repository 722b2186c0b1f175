package p4rt_test

import (
	"os"
	"testing"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
)

// TestMain is also TestFrozenPrimary's controller when the test binary
// is started as one.
func TestMain(m *testing.M) {
	if addr := os.Getenv(frozenClientEnv); addr != "" {
		frozenClient(addr)
		return
	}
	p4switchbin.Main(m)
}
