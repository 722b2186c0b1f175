//go:build linux

package test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/internal/race"
	"github.com/p4rcm/p4rcm/switchproc"
)

// The dumbbell in Mininet (mininet/run.py): two switches on the Go
// target, four hosts running `p4ctl host`, two flows across the middle
// link. Both complete, and nothing the run made is left: Mininet's links,
// its hosts' shells, the switch and agent processes.
func TestMininetDumbbell(t *testing.T) {
	labtest.Require(t)
	if race.Enabled {
		t.Skip("timing on real packets: runs in make test's pass without -race")
	}
	requireMininet(t)
	// The switches are p4ctl too ('p4ctl p4switch').
	p4ctl := p4ctlBinary(t, t.TempDir())
	// In plain text, then over mutual TLS with the credentials run.py
	// makes (--ssl): the switches then let only its controller be
	// primary.
	for _, ssl := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "ssl"}[ssl], func(t *testing.T) { mininetDumbbell(t, p4ctl, ssl) })
	}
	// HPCC: fabric apply gives every port INT at the queue rate, the
	// agents' data asks for it, their ACKs bring it back.
	t.Run("hpcc", func(t *testing.T) {
		out := mininetDumbbell(t, p4ctl, false, "--scheme", "hpcc")
		for _, h := range []string{"h1", "h2", "h3", "h4"} {
			b, _ := os.ReadFile(filepath.Join(out, h+".jsonl"))
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			var rec struct {
				Stats struct {
					NoINT    int64 `json:"no_int"`
					INTQueue struct {
						Samples int64 `json:"samples"`
					} `json:"int_queue"`
					DataReceived int64 `json:"data_received"`
					DataSent     int64 `json:"data_sent"`
				} `json:"stats"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
				t.Fatalf("%s: %v", h, err)
			}
			st := rec.Stats
			if st.NoINT != 0 || st.INTQueue.Samples != st.DataReceived || (st.DataSent == 0 && st.DataReceived == 0) {
				t.Errorf("%s: %d ACKs without INT, %d of %d data packets received with a record", h, st.NoINT, st.INTQueue.Samples, st.DataReceived)
			}
		}
	})
}

// requireMininet skips the test where Debian's python3 has no Mininet.
func requireMininet(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import mininet.net").Run(); err != nil {
		t.Skip("Mininet does not import in /usr/bin/python3 (apt-get install mininet): ", err)
	}
}

// mininetDumbbell runs run.py on the dumbbell with args added and
// returns its output directory.
func mininetDumbbell(t *testing.T, p4ctl string, ssl bool, extra ...string) string {
	before := leftovers(t) + running(t, p4ctl)
	outDir := filepath.Join(t.TempDir(), "run")
	args := []string{"../mininet/run.py", "--topology", "../mininet/dumbbell.json",
		"--flows", "../mininet/dumbbell-flows.txt", "--out", outDir, "--p4ctl", p4ctl, "--timeout", "90"}
	if ssl {
		args = append(args, "--ssl")
	}
	args = append(args, extra...)
	cmd := exec.Command("/usr/bin/python3", args...)
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	out := buf.String()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("mininet/run.py: %v", err)
	}
	if !strings.Contains(string(out), "2 of 2 flows completed") {
		t.Error("not every flow completed")
	}
	for _, h := range []string{"h1", "h2", "h3", "h4"} {
		b, err := os.ReadFile(filepath.Join(outDir, h+".jsonl"))
		if err != nil || !strings.Contains(string(b), `"stats"`) {
			t.Errorf("%s: no counters written when it stopped: %v", h, err)
		}
	}
	if ssl {
		b, _ := os.ReadFile(filepath.Join(outDir, "s1.out"))
		if !strings.Contains(string(b), "over mutual TLS, primary only for the writers of") {
			t.Errorf("s1 with --ssl: %s", b)
		}
	}
	if after := leftovers(t) + running(t, p4ctl); after != before {
		t.Errorf("left behind:\nbefore %s\nafter  %s", before, after)
	}
	if links := mininetLinks(t, cmd.Process.Pid); links != nil {
		t.Errorf("left behind: Mininet's links %v", links)
	}
	return outDir
}

// mininetLinks lists the interfaces of the switches run.py, as process
// pid, made: their names start with 'r' and pid in base 36.
func mininetLinks(t *testing.T, pid int) []string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range ifs {
		if strings.HasPrefix(i.Name, "r"+strconv.FormatInt(int64(pid), 36)+"s") {
			names = append(names, i.Name)
		}
	}
	return names
}

// running lists the processes running one of the binaries: the script's
// agents and switches are not this test's children, so they are found by
// their programs, which this test built.
func running(t *testing.T, binaries ...string) string {
	t.Helper()
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		argv0 := strings.SplitN(string(b), "\x00", 2)[0]
		for _, bin := range binaries {
			if argv0 == bin {
				found = append(found, filepath.Dir(p)+" "+filepath.Base(bin))
			}
		}
	}
	return " processes " + strings.Join(found, " ")
}

// run.py gives every switch of a run its own P4Runtime and Thrift ports:
// probed one at a time, the kernel may hand a port out twice, and two
// switches would then race for one address.
func TestMininetPortsDistinct(t *testing.T) {
	requireMininet(t)
	// 300 switches: 600 ports drawn from the kernel's ephemeral range, in
	// which ports drawn without holding them would repeat almost surely.
	const script = `
import importlib.util
spec = importlib.util.spec_from_file_location('run', '../mininet/run.py')
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)
plan = run.plan_switches({'switches': {'s%d' % i: {} for i in range(1, 301)}}, None)
for p in plan.values():
    print(p['grpc_port'], p['thrift_port'])
`
	out, err := exec.Command("/usr/bin/python3", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	seen := map[string]bool{}
	for _, port := range strings.Fields(string(out)) {
		if seen[port] {
			t.Errorf("port %s given twice", port)
		}
		seen[port] = true
	}
	if len(seen) != 600 {
		t.Errorf("%d distinct ports, want 600", len(seen))
	}
}

// run.py told to use a port another switch listens on refuses before it
// builds anything, saying so, and leaves that switch as it was: it never
// programs a switch it did not start.
func TestMininetPortTaken(t *testing.T) {
	labtest.Require(t)
	requireMininet(t)
	p4switch, err := p4switchbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	// Another user's switch, device 0 as the tutorials number the first.
	free, err := switchproc.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	base, thrift := free[0], free[1]
	addr := "127.0.0.1:" + strconv.Itoa(base)
	other, err := switchproc.Start(context.Background(), switchproc.Config{Name: "theirs", DeviceID: 0, GRPCAddr: addr, ThriftPort: thrift,
		Target: switchproc.TargetGo, Binary: p4switch})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	p4ctl := p4ctlBinary(t, t.TempDir())
	outDir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command("/usr/bin/python3", "../mininet/run.py", "--topology", "../mininet/dumbbell.json",
		"--flows", "../mininet/dumbbell-flows.txt", "--out", outDir, "--p4ctl", p4ctl, "--p4switch", p4switch,
		"--timeout", "10", "--grpc-port-base", strconv.Itoa(base))
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = cmd.Run()
	out := buf.String()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("run.py with port %d taken: %v, want exit 1", base, err)
	}
	if want := fmt.Sprintf("run.py: port %d (--grpc-port-base %d + 0, for s1) is taken", base, base); !strings.Contains(out, want) || strings.Contains(out, "Traceback") {
		t.Errorf("run.py said %q, want one line with %q", out, want)
	}
	if _, err := os.Stat(outDir); err == nil {
		t.Error("run.py made its output directory before refusing")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := controlplane.DialReader(ctx, addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if cookie, running, err := s.RunningCookie(ctx); err != nil || running {
		t.Errorf("the other switch runs pipeline %#x (%v): run.py programmed it", cookie, err)
	}
	if links := mininetLinks(t, cmd.Process.Pid); links != nil {
		t.Errorf("left behind: Mininet's links %v", links)
	}
}

// run.py's wrong inputs are one line each, exit 2, before anything is
// made: a topology fabric apply would refuse (two hosts with one
// address) is checked with p4ctl before a network is built, and told in
// p4ctl's one line; SIGINT, SIGTERM or SIGHUP in the middle of a run stop
// it with exit 128 + the signal's number (130 for Ctrl-C, as p4ctl's)
// and one line, everything it made removed: no Python traceback
// anywhere.
func TestMininetBadInputAndSignals(t *testing.T) {
	labtest.Require(t)
	if race.Enabled {
		t.Skip("real processes: runs in make test's pass without -race")
	}
	requireMininet(t)
	p4ctl := p4ctlBinary(t, t.TempDir())
	dir := t.TempDir()
	badJSON := filepath.Join(dir, "bad.json")
	os.WriteFile(badJSON, []byte("{\"hosts\": {},\n \"switches\": {\n"), 0o644)
	dumbbell, err := os.ReadFile("../mininet/dumbbell.json")
	if err != nil {
		t.Fatal(err)
	}
	dupIP := filepath.Join(dir, "dup.json")
	os.WriteFile(dupIP, bytes.Replace(dumbbell, []byte(`"10.0.1.2/24"`), []byte(`"10.0.1.1/24"`), 1), 0o644)
	runPy := func(args ...string) *exec.Cmd {
		return exec.Command("/usr/bin/python3", append([]string{"../mininet/run.py", "--p4ctl", p4ctl}, args...)...)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--topology", "../mininet/dumbbell.json", "--flows", "../mininet/dumbbell-flows.txt", "--out", dir},
			"run.py: --out " + dir + " exists: give a new directory"},
		{[]string{"--topology", badJSON, "--flows", "../mininet/dumbbell-flows.txt", "--out", filepath.Join(dir, "x")},
			"run.py: --topology " + badJSON + ":3:1: not JSON"},
		{[]string{"--topology", "../mininet/dumbbell.json", "--flows", "../mininet/dumbbell.json", "--out", filepath.Join(dir, "x")},
			"run.py: --flows ../mininet/dumbbell.json:1: want the number of flows"},
		{[]string{"--topology", "../mininet/no-such.json", "--flows", "../mininet/dumbbell-flows.txt", "--out", filepath.Join(dir, "x")},
			"run.py: --topology ../mininet/no-such.json: No such file or directory"},
		{[]string{"--topology", dupIP, "--flows", "../mininet/dumbbell-flows.txt", "--out", filepath.Join(dir, "x")},
			"run.py: p4ctl fabric apply: --topology " + dupIP + ": hosts.h2.ip: 10.0.1.1 is hosts.h1's address too"},
	} {
		out, err := runPy(c.args...).CombinedOutput()
		var ee *exec.ExitError
		if strings.Count(string(out), "p4ctl fabric apply:") > 1 || strings.Count(strings.TrimSpace(string(out)), "\n") > 0 {
			t.Errorf("run.py %s: %q, want one line, p4ctl's prefix once", strings.Join(c.args, " "), out)
		}
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) || strings.Contains(string(out), "Traceback") {
			t.Errorf("run.py %s: %v, %q; want exit 2 and %q", strings.Join(c.args, " "), err, out, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("a refused run made its output directory")
	}

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			before := leftovers(t) + running(t, p4ctl)
			out := filepath.Join(t.TempDir(), "run")
			cmd := runPy("--topology", "../mininet/dumbbell.json", "--flows", "../mininet/dumbbell-flows.txt", "--out", out, "--timeout", "60")
			var buf syncBuf
			cmd.Stdout, cmd.Stderr = &buf, &buf
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Once the fabric is programmed: the switches and the network
			// are all up.
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(buf.String(), "applied:") {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("no fabric applied in 60 s:\n%s", buf.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) || !strings.Contains(buf.String(), "run.py: interrupted") || strings.Contains(buf.String(), "Traceback") {
				t.Errorf("after %v: %v:\n%s", sig, err, buf.String())
			}
			if after := leftovers(t) + running(t, p4ctl); after != before {
				t.Errorf("left behind:\nbefore %s\nafter  %s", before, after)
			}
			if links := mininetLinks(t, cmd.Process.Pid); links != nil {
				t.Errorf("left behind: Mininet's links %v", links)
			}
		})
	}
}

// syncBuf is a strings.Builder for one writer and one reader.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
