package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	code, stdout, stderr := p4ctl("sim", "run", scen, "--out", out, "--ns3-fct")
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
		{[]string{"sim", "run", "--hosts", "400"}, "250 (k=10) or 432 (k=12)"},
		{[]string{"sim", "run", "--hosts", "54", "--k", "6"}, "not both"},
		{[]string{"sim", "run", scen, "--hosts", "16"}, "sizes a fat tree"},
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

func TestSimRunOutputFailureKeepsNothingPartial(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(filepath.Join(out, "flows.csv"), 0o755); err != nil { // a directory where a file must go
		t.Fatal(err)
	}
	code, _, stderr := p4ctl("sim", "run", scen, "--out", out)
	if code != exitRuntime || !strings.Contains(stderr, "flows.csv") {
		t.Errorf("exit %d, stderr %q; want exit 1 naming flows.csv", code, stderr)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("output directory holds %d entries after a failed write, want only the obstacle", len(entries))
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
