// Package p4switchbin builds p4rcm's Go target, cmd/p4switch, once per
// test process, for tests that run it as a process the way they run
// BMv2's simple_switch_grpc, and picks between the two for them.
package p4switchbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/p4rcm/p4rcm/switchproc"
)

var (
	once sync.Once
	dir  string
	path string
	err  error
)

// Path is the path of a p4switch built from this module's source.
func Path() (string, error) {
	once.Do(func() {
		var e error
		dir, e = os.MkdirTemp("", "p4switchbin")
		if e != nil {
			err = e
			return
		}
		path = filepath.Join(dir, "p4switch")
		out, e := exec.Command("go", "build", "-o", path, "github.com/p4rcm/p4rcm/cmd/p4switch").CombinedOutput()
		if e != nil {
			err = fmt.Errorf("building p4switch: %v: %s", e, out)
		}
	})
	return path, err
}

// Main runs a package's tests and then removes the binary Path built:
// call it from TestMain in every package that uses Path or Choose.
func Main(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// Cleanup removes the binary Path built, if it built one.
func Cleanup() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// TargetEnv chooses the switch that tests run as a process: "go" (the
// default) for p4rcm's Go target, built from this module, or "bmv2" for
// simple_switch_grpc from the PATH.
const TargetEnv = "P4RCM_TARGET"

// Choose is the target the environment asks for and the binary to run
// (empty: the PATH's), or skips the test when that target cannot run
// here.
func Choose(tb testing.TB) (switchproc.Target, string) {
	tb.Helper()
	switch target := os.Getenv(TargetEnv); target {
	case "", string(switchproc.TargetGo):
		bin, err := Path()
		if err != nil {
			tb.Fatal(err)
		}
		return switchproc.TargetGo, bin
	case string(switchproc.TargetBMv2):
		for _, b := range []string{switchproc.SwitchBinary, switchproc.CLIBinary} {
			if _, err := switchproc.Lookup(b); err != nil {
				tb.Skipf("skipping: %s=bmv2: %v", TargetEnv, err)
			}
		}
		return switchproc.TargetBMv2, ""
	default:
		tb.Fatalf("%s=%q: want go or bmv2", TargetEnv, target)
		return "", ""
	}
}
