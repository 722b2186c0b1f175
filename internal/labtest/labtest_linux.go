//go:build linux

package labtest

import (
	"os"
	"testing"

	"github.com/p4rcm/p4rcm/netlab"
)

// Require lets t go on where network labs can be built (netlab.Available)
// and otherwise skips it, or fails it where RequireEnv is 1.
func Require(t testing.TB) {
	t.Helper()
	decide(t, netlab.Available(), os.Getenv(RequireEnv) == "1")
}
