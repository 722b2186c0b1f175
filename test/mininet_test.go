//go:build linux

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/bmv2"
	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/internal/race"
	"github.com/p4rcm/p4rcm/netlab"
)

// The dumbbell in Mininet (mininet/run.py): two switches on the Go
// target, four hosts running `p4ctl host`, two flows across the middle
// link. Both complete, and nothing the run made is left: Mininet's links,
// its hosts' shells, the switch and agent processes.
func TestMininetDumbbell(t *testing.T) {
	if err := netlab.Available(); err != nil {
		t.Skip(err)
	}
	if race.Enabled {
		t.Skip("timing on real packets: runs in make test's pass without -race")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import mininet.net").Run(); err != nil {
		t.Skip("Mininet does not import in /usr/bin/python3 (apt-get install mininet): ", err)
	}
	p4switch, err := p4switchbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	p4ctl := filepath.Join(t.TempDir(), "p4ctl")
	if out, err := exec.Command("go", "build", "-o", p4ctl, "../cmd/p4ctl").CombinedOutput(); err != nil {
		t.Fatalf("go build p4ctl: %v: %s", err, out)
	}
	base, err := bmv2.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	before := leftovers(t) + mininetLinks(t) + running(t, p4ctl, p4switch)
	outDir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command("/usr/bin/python3", "../mininet/run.py", "--topology", "../mininet/dumbbell.json",
		"--flows", "../mininet/dumbbell-flows.txt", "--out", outDir, "--p4ctl", p4ctl, "--p4switch", p4switch,
		"--timeout", "90", "--grpc-port-base", strconv.Itoa(base))
	out, err := cmd.CombinedOutput()
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
	if after := leftovers(t) + mininetLinks(t) + running(t, p4ctl, p4switch); after != before {
		t.Errorf("left behind:\nbefore %s\nafter  %s", before, after)
	}
}

// mininetLinks lists the interfaces Mininet names after the dumbbell's
// nodes.
func mininetLinks(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("ip", "-o", "link").Output()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && (strings.HasPrefix(f[1], "s1-eth") || strings.HasPrefix(f[1], "s2-eth")) {
			names = append(names, f[1])
		}
	}
	return " mininet " + strings.Join(names, " ")
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
