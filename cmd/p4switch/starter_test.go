package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/switchproc"
)

// TestMain removes the p4switch the tests built, or, with
// P4SWITCH_STARTER set, makes the test binary a process that starts
// that p4switch with switchproc.Start and waits to be killed
// (TestSwitchEndsWithItsStarter).
func TestMain(m *testing.M) {
	if bin := os.Getenv("P4SWITCH_STARTER"); bin != "" {
		startAndWait(bin, os.Getenv("P4SWITCH_STARTER_ADDR"))
		return
	}
	p4switchbin.Main(m)
}

func startAndWait(bin, addr string) {
	thrift, err := switchproc.FreePort()
	if err == nil {
		var s *switchproc.Switch
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		s, err = switchproc.Start(ctx, switchproc.Config{Name: "s1", GRPCAddr: addr, ThriftPort: thrift, Target: switchproc.TargetGo, Binary: bin})
		cancel()
		if err == nil {
			fmt.Println(s.PID())
			select {} // until killed
		}
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// A switch switchproc.Start started ends with the process that started it,
// however that one ends: here SIGKILL, which runs none of its cleanups
// (a test binary killed at its timeout, an emulation killed). Without
// the pipe it watches (--exit-with-fd) the switch ran on, orphaned.
func TestSwitchEndsWithItsStarter(t *testing.T) {
	bin, err := p4switchbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	port, err := switchproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	starter := exec.Command(self, "-test.run", "^$")
	starter.Env = append(os.Environ(), "P4SWITCH_STARTER="+bin, fmt.Sprintf("P4SWITCH_STARTER_ADDR=127.0.0.1:%d", port))
	starter.Stderr = os.Stderr
	out, err := starter.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := starter.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = starter.Process.Kill()
		_ = starter.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the starter gave no switch PID: %v", err)
	}
	pid, err := strconv.Atoi(line[:len(line)-1])
	if err != nil {
		t.Fatalf("the starter said %q", line)
	}
	if err := starter.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = starter.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) || zombie(pid) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL) // its process group, as Stop would
			t.Fatalf("switch %d still runs 10 s after its starter was killed", pid)
		}
	}
}

// zombie says pid has ended but not been reaped: orphaned, it waits for
// whichever process adopted it.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}
