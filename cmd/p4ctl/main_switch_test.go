package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
)

// TestMain removes the p4ctl and p4switch binaries the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	p4switchbin.Cleanup()
	os.Exit(code)
}
