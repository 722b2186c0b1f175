package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/internal/testfs"
	"github.com/p4rcm/p4rcm/sim/scenario"
)

const tinyScenario = `name: tiny
description: two flows on a star
topology: {kind: star, hosts: 3, host_rate: 100G, delay: 1us}
workload:
  kind: flows
  flows:
    - {src: 0, dst: 2, size: 200KB}
    - {src: 1, dst: 2, size: 200KB, start: 5us}
`

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSimRunWritesResults(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := p4ctl("sim", "run", scen, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "2/2 flows completed") || !strings.Contains(stdout, "0 drops") {
		t.Errorf("summary missing:\n%s", stdout)
	}
	for _, f := range []string{"flows.csv", "ports.csv", "summary.txt", "summary.json", "fct.txt"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(out, "fct.txt"))
	if n := strings.Count(string(data), "\n"); n != 2 {
		t.Errorf("fct.txt has %d lines, want 2", n)
	}
}

func TestSimRunUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.yaml", "topology: {kind: star, hosts: 3}\nworkload:\n  kind: poisson\n  load: fast\n")
	scen := writeFile(t, dir, "tiny.yaml", tinyScenario)
	emptyFlows := writeFile(t, dir, "empty.yaml", "name: e\ntopology: {kind: star, hosts: 3}\nworkload:\n  kind: flows\n  flows: []\n")
	writeFile(t, dir, "zero.txt", "0\n")
	zeroFile := writeFile(t, dir, "zero.yaml", "name: z\ntopology: {kind: star, hosts: 3}\nworkload:\n  kind: file\n  file: "+filepath.Join(dir, "zero.txt")+"\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"sim", "run", bad}, "bad.yaml:4"},
		{[]string{"sim", "run", filepath.Join(dir, "missing.yaml")}, "does not exist"},
		{[]string{"sim", "run", "--preset", "nosuch"}, "unknown preset"},
		{[]string{"sim", "run", scen, "--preset", "default"}, "not both"},
		{[]string{"sim", "run", scen, "--set", "switch.buffer=lots"}, "switch.buffer"},
		{[]string{"sim", "run", scen, "--set", "nonsense"}, "want path=value"},
		{[]string{"sim", "run", scen, "--scheme", "tcp"}, "unknown scheme"},
		{[]string{"sim", "run", scen, scen}, "at most 1 argument"},
		{[]string{"sim", "bench", scen, "--runs", "0"}, "--runs"},
		{[]string{"sim", "bench", scen, "--compare", "dcqcn,tcp"}, "unknown scheme \"tcp\""},
		{[]string{"sim", "run", scen, "--set", "="}, `--set =: "" is not a path: want dotted keys such as workload.load=0.5`},
		{[]string{"sim", "run", "--k", "0"}, "--k 0: topology.k: 0: must be an even number >= 2"},
		{[]string{"sim", "run", "--set", "host.mtu=1"}, "--set host.mtu=1: host.mtu: 1: want the payload of a full packet, 256 to 4096 bytes"},
		{[]string{"sim", "run", "--load", "2"}, "--load 2: workload.load: 2: must be in (0, 1]"},
		{[]string{"sim", "run", "--seed", "x"}, `--seed: "x" is not a whole number, 0 or more`},
		{[]string{"sim", "run", "--set", "workload.load=[0.3]"}, "workload.load: want a number, not a list"},
		{[]string{"sim", "run", emptyFlows}, "empty.yaml:5: workload.flows: the list is empty: no flow to simulate"},
		{[]string{"sim", "run", zeroFile}, "zero.yaml:5: workload.file: " + filepath.Join(dir, "zero.txt") + " holds no flows (its count is 0)"},
		{[]string{"buffer", "--mtu", "1GB"}, "--mtu: must be 68 to 9216 B"},
		{[]string{"sim", "run", "--hosts", "400"}, "250 (k=10) or 432 (k=12)"},
		{[]string{"sim", "run", "--hosts", "54", "--k", "6"}, "not both"},
		{[]string{"sim", "run", scen, "--hosts", "16"}, "sizes a fat tree"},
		{[]string{"sim", "run", "--preset", "ldcp-draft", "--ldcp", "bogus"}, `--ldcp bogus: ldcp.preset: unknown LDCP parameter set "bogus" (known: delayed, draft)`},
		{[]string{"sim", "run", scen, "--scheme", "ldcp", "--set", "ldcp.gamma=3"}, "--set ldcp.gamma=3: ldcp.gamma: must be in (0, 1), got 3"},
		{[]string{"experiment", scen, "--schemes", "dcqcn,ldcp", "--set", "switch.buf_max=-5"}, "switch.buf_max"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[1:], " "), func(t *testing.T) {
			code, _, stderr := p4ctl(tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line naming %q", code, stderr, tt.want)
			}
		})
	}
}

// An output directory that cannot be written is found before the run,
// not after it: exit 2, no summary, nothing created.
func TestSimRunChecksOutputFirst(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny.yaml", tinyScenario)
	file := writeFile(t, dir, "file", "x")
	for _, tt := range []struct{ out, want string }{
		{filepath.Join(file, "out", "x"), "--out " + filepath.Join(file, "out", "x") + ": " + file + " is a file, not a directory"},
		{file, "--out " + file + ": exists and is not a directory"},
		{"/proc/p4rcm-out", "--out /proc/p4rcm-out: cannot write there"},
	} {
		for _, cmd := range [][]string{{"sim", "run", scen}, {"sim", "bench", scen}, {"experiment", scen, "--schemes", "dcqcn"}} {
			args := append(cmd, "-o", tt.out)
			code, stdout, stderr := p4ctl(args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.want) {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2, no output and %q", strings.Join(args, " "), code, stdout, stderr, tt.want)
			}
		}
	}
	if got := testfs.Names(t, dir); strings.Join(got, " ") != "file tiny.yaml" {
		t.Errorf("%s holds %v after refused runs", dir, got)
	}
}

// A second run into the same directory replaces the first whole: no
// rates.csv of an earlier scenario is left beside the new files.
func TestSimRunReplacesEarlierResults(t *testing.T) {
	dir := t.TempDir()
	sampled := writeFile(t, dir, "sampled.yaml", tinyScenario+"output: {rate_samples: {interval: 10us}}\n")
	plain := writeFile(t, dir, "tiny.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	for i, scen := range []string{sampled, plain} {
		if code, _, stderr := p4ctl("sim", "run", scen, "-q", "-o", out); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "rates.csv")); (err == nil) != (i == 0) {
			t.Errorf("run %d: rates.csv there: %v", i, err == nil)
		}
	}
	want := ".p4rcm-results fct.txt flows.csv ports.csv summary.json summary.txt"
	if got := strings.Join(testfs.Names(t, out), " "); got != want {
		t.Errorf("out holds %s, want %s", got, want)
	}
	if got := testfs.Names(t, dir); len(got) != 3 {
		t.Errorf("%s holds %v: staging or earlier results left behind", dir, got)
	}
}

// A directory p4ctl did not write is refused before the run and left as
// it was.
func TestSimRunRefusesOthersDirectory(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny.yaml", tinyScenario)
	out := filepath.Join(dir, "mine")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, out, "notes.txt", "mine")
	code, stdout, stderr := p4ctl("sim", "run", scen, "-o", out)
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "holds files p4rcm did not write") {
		t.Errorf("exit %d, stdout %q, stderr %q; want a refusal", code, stdout, stderr)
	}
	if got := testfs.Names(t, out); strings.Join(got, " ") != "notes.txt" {
		t.Errorf("%s holds %v", out, got)
	}
}

// bench -o keeps the fastest run's results, fct.txt included, for a
// comparison with the reference simulator's output.
func TestSimBenchWritesResults(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	if code, _, stderr := p4ctl("sim", "bench", scen, "-q", "--runs", "2", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "fct.txt"))
	if err != nil || strings.Count(string(data), "\n") != 2 {
		t.Errorf("fct.txt: %v\n%s", err, data)
	}
	if code, _, stderr := p4ctl("sim", "bench", scen, "-q", "--compare", "dcqcn,pfc", "-o", out); code != 0 {
		t.Fatalf("--compare: exit %d: %s", code, stderr)
	}
	if got := strings.Join(testfs.Names(t, out), " "); got != ".p4rcm-results dcqcn pfc" {
		t.Errorf("--compare wrote %s", got)
	}
}

func TestSimPresets(t *testing.T) {
	code, out, _ := p4ctl("sim", "presets")
	for _, want := range []string{"default", "bench-fat320", "dcqcn-incast", "victim-flow"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("presets: exit %d, no %q in\n%s", code, want, out)
		}
	}
}

func TestSimBenchJSON(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny.yaml", tinyScenario)
	code, out, stderr := p4ctl("sim", "bench", scen, "--json", "--runs", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var b BenchResult
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if b.Runs != 2 || b.Completed != 2 || b.DataPackets < 400 || b.SecondsPerSimMs <= 0 || b.NsPerHop <= 0 || b.PeakRSSMiB <= 0 {
		t.Errorf("bench result %+v", b)
	}
}

func TestSimBenchCompare(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny.yaml", tinyScenario)
	code, out, stderr := p4ctl("sim", "bench", scen, "--compare", "dcqcn,pfc", "--runs", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var costs []SchemeCost
	if err := json.Unmarshal([]byte(out), &costs); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(costs) != 2 || costs[0].Scheme != "dcqcn" || costs[1].Scheme != "pfc" || costs[0].Cost != 1 {
		t.Fatalf("costs %+v", costs)
	}
	for _, c := range costs {
		b := c.Bench
		if b.Runs != 2 || b.Completed != b.Flows || c.Cost <= 0 || c.CostMedian <= 0 {
			t.Errorf("%s: %+v", c.Scheme, c)
		}
	}
}

func TestHostsSizesTheFatTree(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := p4ctl("sim", "run", "--hosts", "16", "--set", "workload.group_size=8", "--set", "workload.duration=20us", "-q", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "16 hosts") {
		t.Errorf("--hosts 16 ran:\n%s", out)
	}
}

// A scenario the machine cannot hold is refused before anything is built,
// with the estimate; on a machine with room, a big run says what it
// builds, stage by stage (lines, as stderr is no terminal here).
func TestMemoryCheck(t *testing.T) {
	dir := t.TempDir()
	defer func(f func() (int64, bool), big int64) { memAvailable, bigRun = f, big }(memAvailable, bigRun)
	memAvailable = func() (int64, bool) { return 100 << 20, true }
	code, stdout, stderr := p4ctl("sim", "run", "--hosts", "3456", "--set", "workload.group_size=8", "-o", filepath.Join(dir, "a"))
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "this scenario would need about ") ||
		!strings.Contains(stderr, "the machine has 100 MiB available; make it smaller") {
		t.Errorf("exit %d, stdout %q, stderr %q; want a refusal", code, stdout, stderr)
	}
	code, _, stderr = p4ctl("experiment", "--hosts", "128", "--set", "workload.group_size=8", "--seeds", "4", "--jobs", "8", "-o", filepath.Join(dir, "b"))
	if code != exitUsage || !strings.Contains(stderr, "8 runs at once (--jobs) would need") || !strings.Contains(stderr, "run fewer at once: --jobs") {
		t.Errorf("experiment: exit %d, stderr %q; want a refusal suggesting fewer jobs", code, stderr)
	}
	if testfs.Names(t, dir) != nil {
		t.Errorf("refused runs left %v", testfs.Names(t, dir))
	}

	memAvailable, bigRun = func() (int64, bool) { return 1 << 40, true }, 1
	scen := writeFile(t, dir, "tiny.yaml", tinyScenario)
	code, _, stderr = p4ctl("sim", "run", scen, "-o", filepath.Join(dir, "c"))
	for _, line := range []string{"building star-3: 3 hosts, 1 switches, 3 links, 2 flows; about", "computing the routes towards 1 edge switches", "building 1 switches", "simulating 2 flows"} {
		if code != 0 || !strings.Contains(stderr, line) {
			t.Errorf("exit %d, stderr %q; want a line %q", code, stderr, line)
		}
	}
}

// --workload picks the flow-size distribution on sim run as on experiment.
func TestSimRunWorkloadFlag(t *testing.T) {
	dir := t.TempDir()
	flows := map[string]string{}
	for _, cdf := range []string{"websearch", "datamining"} {
		out := filepath.Join(dir, cdf)
		code, _, stderr := p4ctl("sim", "run", "--hosts", "16", "--set", "workload.group_size=8", "--set", "workload.duration=200us", "--workload", cdf, "-q", "-o", out)
		if code != 0 {
			t.Fatalf("--workload %s: exit %d: %s", cdf, code, stderr)
		}
		data, err := os.ReadFile(filepath.Join(out, "flows.csv"))
		if err != nil {
			t.Fatal(err)
		}
		flows[cdf] = string(data)
	}
	if flows["websearch"] == flows["datamining"] {
		t.Error("--workload datamining gave the same flows as websearch")
	}
	code, _, stderr := p4ctl("sim", "run", "--workload", "nosuch.cdf", "-o", filepath.Join(dir, "x"))
	if code != exitUsage || !strings.Contains(stderr, "nosuch.cdf") {
		t.Errorf("--workload nosuch.cdf: exit %d, %q", code, stderr)
	}
}

// sim presets --json uses snake_case keys, as every JSON output does.
func TestSimPresetsJSON(t *testing.T) {
	code, out, stderr := p4ctl("sim", "presets", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var ps []map[string]any
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(ps) == 0 || ps[0]["name"] == nil || ps[0]["description"] == nil || len(ps[0]) != 2 {
		t.Errorf("first preset %v; want the keys name and description", ps[0])
	}
}

// --rcm-trace writes RCM's decisions with flows numbered as in flows.csv:
// four flows into one host make that host's switch port a root whose
// CAM holds them all. A scheme without RCM has nothing to trace.
func TestSimRunRCMTrace(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "incast.yaml", `name: incast
topology: {kind: star, hosts: 5, host_rate: 100G, delay: 1us}
workload:
  kind: flows
  flows:
    - {src: 0, dst: 4, size: 500KB}
    - {src: 1, dst: 4, size: 500KB}
    - {src: 2, dst: 4, size: 500KB}
    - {src: 3, dst: 4, size: 500KB}
`)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := p4ctl("sim", "run", scen, "--scheme", "rcm", "--rcm-trace", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "rcm_trace.csv") {
		t.Errorf("the summary does not list rcm_trace.csv:\n%s", stdout)
	}
	data, err := os.ReadFile(filepath.Join(out, "rcm_trace.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if lines[0] != "time_ns,switch,port,event,fb,flows,cam" {
		t.Fatalf("header %q", lines[0])
	}
	var root, flag bool
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 7 {
			t.Fatalf("row %q: %d fields, want 7", l, len(f))
		}
		switch f[3] {
		case "root":
			root = true
		case "flag":
			// The CAM holds the four senders' flows, 0 to 3.
			for _, id := range []string{"0:", "1:", "2:", "3:"} {
				if !strings.Contains(" "+f[6], " "+id) {
					t.Errorf("flag row %q: the CAM lacks flow %s", l, strings.TrimSuffix(id, ":"))
				}
			}
			flag = true
		}
	}
	if !root || !flag {
		t.Errorf("root rows %v, flag rows %v; want both:\n%s", root, flag, data)
	}
	code, _, stderr = p4ctl("sim", "run", scen, "--scheme", "dcqcn", "--rcm-trace", "--out", filepath.Join(dir, "out2"))
	if code != exitUsage || !strings.Contains(stderr, "--rcm-trace: scheme dcqcn runs no RCM") {
		t.Errorf("dcqcn with --rcm-trace: exit %d, stderr %q; want a usage error", code, stderr)
	}
}

// smallFatTree splits into parts: a k = 4 fat tree with flows between
// pods.
const smallFatTree = `name: small
description: a k=4 fat tree, flows across pods
topology: {kind: fattree, k: 4, host_rate: 100G, delay: 1us}
workload: {kind: poisson, cdf: websearch, load: 0.5, duration: 100us}
`

// sim run writes the same bytes on any number of threads, says how many
// it ran on, and says why when it runs on fewer than asked.
func TestSimRunThreads(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "small.yaml", smallFatTree)
	var first map[string][]byte
	for _, threads := range []string{"1", "2", "3"} {
		out := filepath.Join(dir, "out"+threads)
		code, stdout, stderr := p4ctl("sim", "run", scen, "-q", "--threads", threads, "-o", out)
		if code != 0 {
			t.Fatalf("--threads %s: exit %d: %s", threads, code, stderr)
		}
		if want := "on " + threads + " thread"; !strings.Contains(stdout, want) {
			t.Errorf("--threads %s: no %q in\n%s", threads, want, stdout)
		}
		files := map[string][]byte{}
		for _, name := range []string{"flows.csv", "fct.txt", "ports.csv", "summary.txt", "summary.json"} {
			data, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			files[name] = data
		}
		if first == nil {
			first = files
			continue
		}
		for name, data := range files {
			if !bytes.Equal(data, first[name]) {
				t.Errorf("--threads %s: %s differs from --threads 1", threads, name)
			}
		}
	}
	tiny := writeFile(t, dir, "tiny.yaml", tinyScenario)
	code, stdout, stderr := p4ctl("sim", "run", tiny, "--threads", "2", "-o", filepath.Join(dir, "tiny"))
	if code != 0 || !strings.Contains(stderr, "note: 1 thread(s) instead of 2") || !strings.Contains(stdout, "on 1 thread;") {
		t.Errorf("a star on 2 threads: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, _, stderr := p4ctl("sim", "run", tiny, "--threads", "0"); code != exitUsage || !strings.Contains(stderr, "--threads") {
		t.Errorf("--threads 0: exit %d, stderr %q", code, stderr)
	}
}

// sim bench compares with the reference only on the reference's own
// scenario: another prints its figures alone, refuses
// --reference-seconds, and --threads-compare times thread counts.
func TestSimBenchReferenceAndThreads(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "small.yaml", smallFatTree)
	code, out, stderr := p4ctl("sim", "bench", scen, "-q")
	if code != 0 || strings.Contains(out, "ratio") || strings.Contains(out, "target") || !strings.Contains(out, "no comparison with the reference") {
		t.Errorf("exit %d, stderr %q, output\n%s", code, stderr, out)
	}
	code, out, _ = p4ctl("sim", "bench", scen, "-q", "--json")
	if code != 0 || strings.Contains(out, "speedup_vs_reference") || strings.Contains(out, "reference_wall_seconds") {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
	if code, _, stderr := p4ctl("sim", "bench", scen, "-q", "--reference-seconds", "100"); code != exitUsage || !strings.Contains(stderr, "--reference-seconds") {
		t.Errorf("--reference-seconds on another scenario: exit %d, stderr %q", code, stderr)
	}
	code, out, stderr = p4ctl("sim", "bench", scen, "-q", "--threads-compare", "1,2,auto", "--runs", "1", "--json")
	if code != 0 {
		t.Fatalf("--threads-compare: exit %d: %s", code, stderr)
	}
	var costs []ThreadsCost
	if err := json.Unmarshal([]byte(out), &costs); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(costs) != 3 || costs[0].Bench.Threads != 1 || costs[1].Bench.Threads != 2 || costs[1].Bench.Parallel == nil ||
		costs[1].Bench.Parallel.Windows == 0 || costs[0].Bench.Events != costs[1].Bench.Events ||
		costs[2].Threads != 0 || costs[2].Bench.Events != costs[0].Bench.Events {
		t.Errorf("costs %+v", costs)
	}
	if code, _, stderr := p4ctl("sim", "bench", scen, "-q", "--threads-compare", "1,many"); code != exitUsage || !strings.Contains(stderr, "--threads-compare") {
		t.Errorf("--threads-compare 1,many: exit %d, stderr %q", code, stderr)
	}
}

// The benchmark's own scenario, recognised as itself: the check that
// decides whether ratios are printed.
func TestBenchReferenceScenario(t *testing.T) {
	s, err := scenario.LoadPreset(referencePreset)
	if err != nil {
		t.Fatal(err)
	}
	if own, err := referenceScheme(s); err != nil || own != "dcqcn" {
		t.Fatalf("the preset itself: %q, %v", own, err)
	}
	if err := s.Set("seed", "2"); err != nil {
		t.Fatal(err)
	}
	if own, err := referenceScheme(s); err != nil || own != "" {
		t.Fatalf("with another seed: %q, %v", own, err)
	}
	var b BenchResult
	b.SecondsPerSimMs = 0.5
	s, _ = scenario.LoadPreset(referencePreset)
	if err := setReference(&b, s, 139); err != nil || !b.ReferenceThisMachine || b.ReferenceWallSeconds != 139 ||
		b.ReferenceScheme != "dcqcn" || math.Abs(b.SpeedupVsRef-139/references["dcqcn"].SimMillis/0.5) > 1e-9 {
		t.Errorf("a reference time given: %+v, %v", b, err)
	}
	// Each scheme the reference ran is its own reference; another
	// scheme, or another change with it, is not.
	for scheme, want := range map[string]string{"hpcc": "hpcc", "timely": "timely", "dctcp": "dctcp", "rcm": ""} {
		s, _ = scenario.LoadPreset(referencePreset)
		if err := s.Set("scheme", scheme); err != nil {
			t.Fatal(err)
		}
		if got, err := referenceScheme(s); err != nil || got != want {
			t.Errorf("scheme %s: reference %q, %v; want %q", scheme, got, err, want)
		}
		if err := s.Set("seed", "2"); err != nil {
			t.Fatal(err)
		}
		if got, err := referenceScheme(s); err != nil || got != "" {
			t.Errorf("scheme %s with another seed: reference %q, %v", scheme, got, err)
		}
	}
}

// By default a network of 48 hosts or more gets a thread per idle core,
// looked at once per command.
func TestDefaultThreadsFollowIdleCores(t *testing.T) {
	if n := idleCores(); n < 1 || n > runtime.NumCPU() {
		t.Errorf("%d idle cores of %d", n, runtime.NumCPU())
	}
	saved := idleCores
	defer func() { idleCores = saved }()
	dir := t.TempDir()
	for _, idle := range []int{1, 2} {
		looked := 0
		idleCores = func() int { looked++; return idle }
		code, stdout, stderr := p4ctl("sim", "bench", "--preset", "default", "--set", "workload.duration=20us", "-q", "--runs", "2")
		if want := fmt.Sprintf("on %s,", threadsText(idle)); code != 0 || !strings.Contains(stdout, want) || looked != 1 {
			t.Errorf("%d idle: exit %d, looked %d times, no %q in\n%s%s", idle, code, looked, want, stdout, stderr)
		}
	}
	idleCores = func() int { t.Error("idle cores looked at for a small network"); return 2 }
	scen := writeFile(t, dir, "small.yaml", smallFatTree)
	if code, stdout, stderr := p4ctl("sim", "run", scen, "-q", "-o", filepath.Join(dir, "out")); code != 0 || !strings.Contains(stdout, "on 1 thread") {
		t.Errorf("16 hosts: exit %d\n%s%s", code, stdout, stderr)
	}
}

// ns3Config is a whole ns-3 RDMA simulator configuration (HPCC, as its
// run.py writes one) for a star of three hosts: two send to the third.
const ns3Config = `ENABLE_QCN 1
USE_DYNAMIC_PFC_THRESHOLD 1
PACKET_PAYLOAD_SIZE 1000
TOPOLOGY_FILE mix/star.txt
FLOW_FILE mix/flows.txt
TRACE_FILE mix/trace.txt
FCT_OUTPUT_FILE mix/fct.txt
SIMULATOR_STOP_TIME 4.00
CC_MODE 3
ALPHA_RESUME_INTERVAL 1
RATE_DECREASE_INTERVAL 4
CLAMP_TARGET_RATE 0
RP_TIMER 300
EWMA_GAIN 0.00390625
FAST_RECOVERY_TIMES 1
RATE_AI 40Mb/s
RATE_HAI 40Mb/s
MIN_RATE 1000Mb/s
DCTCP_RATE_AI 1000Mb/s
ERROR_RATE_PER_LINK 0.0000
L2_CHUNK_SIZE 4000
L2_ACK_INTERVAL 1
L2_BACK_TO_ZERO 0
HAS_WIN 1
GLOBAL_T 1
VAR_WIN 1
FAST_REACT 1
U_TARGET 0.95
MI_THRESH 0
INT_MULTI 4
MULTI_RATE 0
SAMPLE_FEEDBACK 0
RATE_BOUND 1
ACK_HIGH_PRIO 0
LINK_DOWN 0 0 0
KMAX_MAP 1 100000000000 1600
KMIN_MAP 1 100000000000 400
PMAX_MAP 1 100000000000 0.20
BUFFER_SIZE 32
`

// TestSimRunNS3Config runs an ns-3 configuration as the ns-3 simulator
// would, from its simulation directory, and refuses a key it cannot
// honour: exit 2, nothing written.
func TestSimRunNS3Config(t *testing.T) {
	dir := t.TempDir()
	mix := filepath.Join(dir, "mix")
	if err := os.Mkdir(mix, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, mix, "star.txt", "4 1 3\n3\n0 3 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n2 3 100Gbps 1000ns 0\n")
	writeFile(t, mix, "flows.txt", "2\n0 2 3 100 300000 2.0\n1 2 3 100 300000 2.0\n")
	cfg := writeFile(t, mix, "config.txt", ns3Config)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := p4ctl("sim", "run", "--ns3-config", cfg, "-o", out)
	if code != 0 || !strings.Contains(stdout, "scheme hpcc") || !strings.Contains(stderr, "config.txt:7: FCT_OUTPUT_FILE ignored") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "fct.txt")); err != nil {
		t.Error(err)
	}
	bad := writeFile(t, mix, "bad.txt", strings.Replace(ns3Config, "CC_MODE 3", "CC_MODE 10", 1))
	out2 := filepath.Join(dir, "out2")
	code, _, stderr = p4ctl("sim", "run", "--ns3-config", bad, "-o", out2)
	if code != exitUsage || !strings.Contains(stderr, "bad.txt:9: CC_MODE: 10 is HPCC-PINT") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming the file, line and key", code, stderr)
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Errorf("the output directory exists (%v)", err)
	}
	if code, _, _ := p4ctl("sim", "run", "--ns3-config", cfg, "--preset", "default", "-o", out2); code != exitUsage {
		t.Errorf("--ns3-config with --preset: exit %d, want 2", code)
	}
}

// TestSimPresetsParams lists every scheme parameter with its default and
// the ns-3 simulator's name for it.
func TestSimPresetsParams(t *testing.T) {
	code, out, stderr := p4ctl("sim", "presets", "--params")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^hpcc\.eta +0\.95 +U_TARGET$`),
		regexp.MustCompile(`(?m)^timely\.t_low +50us +TimelyTLow$`),
		regexp.MustCompile(`(?m)^dctcp\.rai +615Mbps +DCTCP_RATE_AI$`),
		regexp.MustCompile(`(?m)^host\.window\.enabled +by scheme +HAS_WIN$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("no line matching %s in\n%s", want, out)
		}
	}
}

// TestSimCompare sets two fct.txt side by side, a run's directory
// standing for its fct.txt, and refuses a malformed file by its line.
func TestSimCompare(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, run, "fct.txt", "0b000001 0b000101 10000 100 1000 2000000000 2000 1000\n0b000001 0b000101 10001 100 2000000 2000000000 3000 1000\n")
	ref := writeFile(t, dir, "ref.txt", "0b000001 0b000101 10000 100 1000 2000000000 1000 1000\n0b000001 0b000101 10001 100 2000000 2000000000 3000 1000\n")
	code, out, stderr := p4ctl("sim", "compare", run, ref)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^all +2 +2 +3\.000/3\.000/3\.000 +3\.000/3\.000/3\.000 +\+0\.0%/\+0\.0%/\+0\.0%$`),
		regexp.MustCompile(`(?m)^< 10KB +1 +1 +2\.000/2\.000/2\.000 +1\.000/1\.000/1\.000 +\+100\.0%/\+100\.0%/\+100\.0%$`),
		regexp.MustCompile(`(?m)^10KB-100KB +0 +0 +- +- +-$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("no line matching %s in\n%s", want, out)
		}
	}
	bad := writeFile(t, dir, "bad.txt", "0b000001 0b000101 10000 100 1000 2000000000 2000\n")
	if code, _, stderr := p4ctl("sim", "compare", run, bad); code != exitUsage || !strings.Contains(stderr, "bad.txt:1: 7 fields") {
		t.Errorf("malformed: exit %d, stderr %q", code, stderr)
	}
}

// TestReadTimeV reads a wall time as /usr/bin/time -v writes it, and
// names the file and line of one it cannot read.
func TestReadTimeV(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]float64{
		"\tCommand being timed: \"third\"\n\tElapsed (wall clock) time (h:mm:ss or m:ss): 20:21.79\n": 1221.79,
		"\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02:03\n":                                    3723,
	} {
		p := writeFile(t, dir, "ok.time", text)
		if got, err := readTimeV(p); err != nil || math.Abs(got-want) > 1e-9 {
			t.Errorf("%q: %v, %v; want %v", text, got, err, want)
		}
	}
	bad := writeFile(t, dir, "bad.time", "x\n\tElapsed (wall clock) time (h:mm:ss or m:ss): soon\n")
	if _, err := readTimeV(bad); err == nil || !strings.Contains(err.Error(), "bad.time:2:") {
		t.Errorf("a bad time: %v", err)
	}
	none := writeFile(t, dir, "none.time", "nothing\n")
	if _, err := readTimeV(none); err == nil {
		t.Error("no time line: no error")
	}
}
