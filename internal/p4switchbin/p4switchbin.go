// Package p4switchbin builds p4rcm's Go target, cmd/p4switch, once per
// test process, for tests that run it as a process the way they run
// BMv2's simple_switch_grpc.
package p4switchbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

var (
	once sync.Once
	path string
	err  error
)

// Path is the path of a p4switch built from this module's source.
func Path() (string, error) {
	once.Do(func() {
		dir, e := os.MkdirTemp("", "p4switchbin")
		if e != nil {
			err = e
			return
		}
		path = filepath.Join(dir, "p4switch")
		goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, e := os.Stat(goCmd); e != nil {
			goCmd = "go"
		}
		out, e := exec.Command(goCmd, "build", "-o", path, "github.com/p4rcm/p4rcm/cmd/p4switch").CombinedOutput()
		if e != nil {
			err = fmt.Errorf("building p4switch: %v: %s", e, out)
		}
	})
	return path, err
}
