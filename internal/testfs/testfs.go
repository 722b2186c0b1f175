// Package testfs holds what tests of several packages need to look at the
// files a command wrote.
package testfs

import (
	"os"
	"testing"
)

// Names lists the entries of dir, sorted by name; the test fails if dir
// cannot be read.
func Names(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
