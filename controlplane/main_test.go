package controlplane

import (
	"testing"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
)

// TestMain removes the p4switch the tests built.
func TestMain(m *testing.M) { p4switchbin.Main(m) }
