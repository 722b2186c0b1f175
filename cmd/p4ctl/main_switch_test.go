package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
)

// TestMain removes the p4ctl and p4switch binaries the tests built. It
// is also 'p4ctl p4switch' when this test binary is started as one: a
// test that runs emulate in-process starts its switches from
// os.Executable, this binary, which would otherwise run every test
// again in each switch, and each of those emulations again.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == switchCommand {
		os.Exit(runSwitch(os.Args[2:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	p4switchbin.Cleanup()
	os.Exit(code)
}
