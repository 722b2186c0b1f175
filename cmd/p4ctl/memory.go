package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/p4rcm/p4rcm/sim"
)

// bigRun is the estimated memory from which a run says what it builds
// before building it: below it, building takes about a second. A
// variable for tests.
var bigRun int64 = 1 << 30

// memAvailable is availableMemory, a variable so that tests can play a
// smaller machine.
var memAvailable = availableMemory

// availableMemory is what the machine can give a new run, in bytes: the
// kernel's MemAvailable, or less if the process's cgroup has a limit. ok
// is false when neither can be read (then nothing is refused).
func availableMemory() (avail int64, ok bool) {
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if kb, found := strings.CutPrefix(sc.Text(), "MemAvailable:"); found {
				if n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64); err == nil {
					avail, ok = n<<10, true
				}
			}
		}
	}
	limit, err1 := readInt("/sys/fs/cgroup/memory.max")
	used, err2 := readInt("/sys/fs/cgroup/memory.current")
	if err1 == nil && err2 == nil && (!ok || limit-used < avail) {
		avail, ok = max(limit-used, 0), true
	}
	return avail, ok
}

// readInt reads a file holding one integer ("max" is not one).
func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// gib prints bytes in GiB, or MiB below one GiB.
func gib(b int64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%d MiB", (b+1<<20-1)>>20)
	}
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}

// checkMemory refuses, as a usage error, runs of cfg whose estimated
// memory (runs at once) exceeds what the machine has, and says what will
// be built when it is big, which it reports. what names the runs in the
// message ("this scenario", "3 runs at once").
func checkMemory(w io.Writer, quiet bool, cfg sim.Config, runs int, what string) (big bool, err error) {
	m := sim.EstimateMemory(cfg)
	need := m.Total() * int64(runs)
	avail, known := memAvailable()
	if known && need > avail {
		parts := fmt.Sprintf("ports %s, routes %s, flows %s", gib(m.Ports), gib(m.Routes), gib(m.Flows))
		if m.Samples > 0 {
			parts += ", samples " + gib(m.Samples)
		}
		hint := "make it smaller: topology.k (or --hosts), workload.duration or load, sampling"
		if runs > 1 && m.Total() <= avail {
			hint = fmt.Sprintf("run fewer at once: --jobs %d", max(avail/m.Total(), 1))
		}
		return false, usageErrorf("%s would need about %s of memory (%s per run: %s) and the machine has %s available; %s",
			what, gib(need), gib(m.Total()), parts, gib(avail), hint)
	}
	if need < bigRun {
		return false, nil
	}
	if !quiet {
		t := cfg.Topology
		availText := ""
		if known {
			availText = fmt.Sprintf(" of %s available", gib(avail))
		}
		fmt.Fprintf(w, "building %s: %d hosts, %d switches, %d links, %d flows; about %s of memory%s\n",
			t.Name, len(t.Hosts()), len(t.Switches()), len(t.Links), len(cfg.Flows), gib(need), availText)
	}
	return true, nil
}
