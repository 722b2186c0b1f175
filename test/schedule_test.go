//go:build linux

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/internal/race"
)

// An emulated comparison whose machine fell behind the emulation's
// schedule says so and marks the comparison not to be trusted: here the
// test stops the emulating process for 150 ms in every 400 (as a machine
// too loaded for the rate does, made certain), so that its hosts'
// senders wake up late; the comparison's text ends with the warning, and
// schedule.csv holds each run's lateness. A comparison of one run per
// scheme says that --repeat, not --seeds, gives its intervals; the
// model's figures stand beside the emulated ones.
func TestEmulateCompareFallingBehind(t *testing.T) {
	labtest.Require(t)
	if race.Enabled {
		t.Skip("real packets and processes: runs in make test's pass without -race")
	}
	bin := p4ctlBinary(t, t.TempDir())
	out := filepath.Join(t.TempDir(), "cmp")
	cmd := exec.Command(bin, "emulate", "compare", "--schemes", "dcqcn,rcm", "-o", out, "-q")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(2 * time.Minute)
	var err error
stalls:
	for {
		select {
		case err = <-done:
			break stalls
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("emulate compare still runs after 2 minutes:\n%s", stderr.String())
		case <-time.After(250 * time.Millisecond):
		}
		syscall.Kill(cmd.Process.Pid, syscall.SIGSTOP)
		time.Sleep(150 * time.Millisecond)
		syscall.Kill(cmd.Process.Pid, syscall.SIGCONT)
	}
	if err != nil {
		t.Fatalf("emulate compare: %v\n%s", err, stderr.String())
	}
	text := stdout.String()
	for _, want := range []string{"not to be trusted: the machine fell behind the emulation's schedule in ", "give --repeat 5 or more",
		"the model beside it: mean FCT, us, of the flows completed both", "\ndcqcn  "} {
		if !strings.Contains(text, want) {
			t.Errorf("the comparison lacks %q:\n%s", want, text)
		}
	}
	csv, err := os.ReadFile(filepath.Join(out, "schedule.csv"))
	if err != nil || !strings.HasPrefix(string(csv), "run,wall_ns,behind_ns,max_late_ns,fell_behind\n") || !strings.Contains(string(csv), ",true\n") {
		t.Errorf("schedule.csv: %v\n%s", err, csv)
	}
}
