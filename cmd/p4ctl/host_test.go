//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/netlab"
)

// p4ctl host writes its counters as the last line when it is stopped,
// by SIGINT as by SIGTERM (kill, timeout, CI) and SIGHUP (a closed
// terminal), as its --help says: the agent in a namespace of its own,
// on a veth this test made.
func TestHostCountersOnSignals(t *testing.T) {
	labtest.Require(t)
	bin := p4ctlBin(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			lab, err := netlab.New("p4h")
			if err != nil {
				t.Fatal(err)
			}
			defer lab.Close()
			h, err := lab.Host("h1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lab.Link(h, "eth0", net.HardwareAddr{8, 0, 0, 0, 1, 0x11}); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "host", "--topology", "../../fabric/testdata/triangle.json", "--host", "h1",
				"--iface", "eth0", "--cc", "none")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			// Started from a thread in the host's namespace, the agent
			// runs there.
			if err := h.Do(cmd.Start); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					cmd.Wait()
				}
			}()
			started := make(chan string, 1)
			go func() {
				line, _ := bufio.NewReader(stderr).ReadString('\n')
				started <- line
			}()
			select {
			case line := <-started:
				if !strings.Contains(line, "h1") {
					t.Fatalf("host started with %q", line)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("host did not start within 20 s")
			}
			lines := make(chan []string, 1)
			go func() {
				var all []string
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					all = append(all, sc.Text())
				}
				lines <- all
			}()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var out []string
			select {
			case out = <-lines:
			case <-time.After(10 * time.Second):
				t.Fatalf("host still running 10 s after %v", sig)
			}
			err = cmd.Wait()
			if err != nil {
				t.Errorf("after %v: %v, want exit 0", sig, err)
			}
			if len(out) == 0 {
				t.Fatalf("after %v: no counters line", sig)
			}
			var rec struct {
				Host  string         `json:"host"`
				Stats map[string]any `json:"stats"`
			}
			if err := json.Unmarshal([]byte(out[len(out)-1]), &rec); err != nil || rec.Host != "h1" || rec.Stats == nil {
				t.Errorf("after %v the last line is %q (%v), want h1's counters", sig, out[len(out)-1], err)
			}
		})
	}
}

// An interface without an Ethernet address is refused naming it, before
// anything is opened.
func TestHostNeedsAnEthernetInterface(t *testing.T) {
	code, _, errOut := p4ctl("host", "--topology", "../../fabric/testdata/triangle.json", "--host", "h1", "--iface", "lo", "--cc", "none")
	if code != 2 || !strings.Contains(errOut, "--iface lo has no Ethernet address") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

// A host stopped before its own flows are done was interrupted: exit
// 130 after Ctrl-C, saying how many flows were left; stopped once they
// are done (or with none, above) it ends as it should, exit 0.
func TestHostInterruptedWithFlowsPending(t *testing.T) {
	labtest.Require(t)
	bin := p4ctlBin(t)
	lab, err := netlab.New("p4i")
	if err != nil {
		t.Fatal(err)
	}
	defer lab.Close()
	h, err := lab.Host("h1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lab.Link(h, "eth0", net.HardwareAddr{8, 0, 0, 0, 1, 0x11}); err != nil {
		t.Fatal(err)
	}
	flows := filepath.Join(t.TempDir(), "flows.txt")
	// h1 (node 0) to h2 (node 1), whom no one answers for.
	if err := os.WriteFile(flows, []byte("1\n0 1 3 4791 1000000 0.000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "host", "--topology", "../../fabric/testdata/triangle.json", "--host", "h1",
		"--iface", "eth0", "--cc", "none", "--flows", flows, "-o", filepath.Join(t.TempDir(), "h1.jsonl"))
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := h.Do(cmd.Start); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	time.Sleep(time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(errOut.String(), "interrupted (interrupt): 1 of its flows not done") {
		t.Errorf("host stopped with its flow not done: %v, %q; want exit 130 saying so", err, errOut.String())
	}
}
