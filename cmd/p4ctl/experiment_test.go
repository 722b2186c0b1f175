package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/sim/experiment"
	"github.com/p4rcm/p4rcm/sim/scenario"
)

// experimentScenario is a 5-host star with a few explicit flows of each
// size class: an experiment on it takes a fraction of a second.
const experimentScenario = `name: tiny5
topology: {kind: star, hosts: 5, host_rate: 100G, delay: 1us}
workload:
  kind: flows
  flows:
    - {src: 0, dst: 4, size: 10MB, class: background}
    - {src: 1, dst: 4, size: 2MB, start: 5us, class: background}
    - {src: 2, dst: 4, size: 50KB, start: 10us, class: hot}
    - {src: 3, dst: 4, size: 20KB, start: 12us, class: hot}
`

func TestExperimentRun(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny5.yaml", experimentScenario)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := p4ctl("experiment", scen, "--schemes", "dcqcn,pfc,lossy", "--seeds", "2", "--jobs", "3", "-o", out, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"experiment tiny5: schemes dcqcn, pfc, lossy; seeds 1, 2; baseline dcqcn",
		"FCT vs dcqcn", "elephants  pfc", "goodput Gb/s", "lossy seed 2", "results in " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for _, f := range []string{"comparison.csv", "comparison.json", "report.html", "slowdown-vs-size.png", "mice-fct-cdf.svg",
		"dcqcn-seed1/flows.csv", "lossy-seed2/summary.txt"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestExperimentJSONAndDefaults(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny5.yaml", experimentScenario)
	t.Chdir(dir) // for the default output directory
	code, stdout, stderr := p4ctl("experiment", scen, "--schemes", "pfc,lossy", "--seed", "7", "--seeds", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res experiment.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if res.Baseline != "pfc" || !slices.Equal(res.Seeds, []uint64{7, 8}) || len(res.Runs) != 4 || len(res.SizeClasses) != 8 {
		t.Errorf("result: baseline %s, seeds %v, %d runs, %d rows", res.Baseline, res.Seeds, len(res.Runs), len(res.SizeClasses))
	}
	if _, err := os.Stat(filepath.Join(dir, "p4rcm-out", "experiment-tiny5", "pfc-seed8", "flows.csv")); err != nil {
		t.Errorf("default output directory: %v", err)
	}
}

// A scheme the simulator does not know, or a bad value of one scheme's
// parameters, is found before anything runs: exit 2, nothing written.
func TestExperimentBadSchemeWritesNothing(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny5.yaml", experimentScenario)
	known := strings.Join(scenario.Schemes, ", ")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--schemes", "dcqcn,nosuch"}, `unknown scheme "nosuch" (known: ` + known + `)`},
		{[]string{"--variant", "no-sar=rcm,rcm.sar=false", "--schemes", "dcqcn,no-sar"}, `unknown scheme "no-sar" (known: ` + known + `); a --variant joins the study under its own name, so leave it out of --schemes`},
		{[]string{"--schemes", "dcqcn,rcm", "--set", "rcm.gd=2"}, "rcm: --set rcm.gd=2: rcm.gd: must be positive"},
		{[]string{"--schemes", "dcqcn,hpcc", "--set", "hpcc.eta=1.5"}, "--set hpcc.eta=1.5: hpcc.eta: must be in (0, 1]"},
	} {
		out := filepath.Join(dir, "out")
		code, _, stderr := p4ctl(append([]string{"experiment", scen, "-o", out}, tt.args...)...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line saying %q", tt.args, code, stderr, tt.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: the output directory exists (%v)", tt.args, err)
		}
	}
}

func TestExperimentUsageErrors(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny5.yaml", experimentScenario)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--schemes", ""}, "--schemes"},
		{[]string{"--schemes", "dcqcn,,pfc"}, "empty scheme"},
		{[]string{"--schemes", "dcqcn,pfc,dcqcn"}, `"dcqcn" given twice`},
		{[]string{"--schemes", "dcqcn,../x"}, `scheme "../x"`},
		{[]string{"--scheme", "pfc"}, "use --schemes"},
		{[]string{"--seeds", "0"}, "--seeds"},
		{[]string{"--seeds", "x"}, "--seeds"},
		{[]string{"--seeds", "-1"}, "--seeds"},
		{[]string{"--seeds", "1,1"}, "seed 1 given twice"},
		{[]string{"--seeds", "1,,2"}, "empty seed"},
		{[]string{"--seeds", "1,0"}, "seeds start at 1"},
		{[]string{"--seeds", "1,b"}, `seed "b"`},
		{[]string{"--seeds", "100000"}, "at most"},
		{[]string{"--seed", "18446744073709551615", "--seeds", "2"}, "past the largest seed"},
		{[]string{"--seed", "3", "--seeds", "1,2"}, "--seed"},
		{[]string{"--jobs", "0"}, "--jobs"},
		{[]string{"--jobs", "-2"}, "--jobs"},
		{[]string{"--jobs", "many"}, "--jobs"},
		{[]string{"--workload", ""}, "--workload"},
		{[]string{"--workload", "nosuchcdf.txt", "--preset", "default"}, "nosuchcdf.txt"},
		{[]string{"--set", "topology.kind=ring"}, "topology.kind"},
		{[]string{"--set", "nonsense"}, "want path=value"},
		{[]string{"--preset", "nosuch"}, "unknown preset"},
		{[]string{filepath.Join(dir, "missing.yaml")}, "does not exist"},
		{[]string{scen, scen}, "at most 1 argument"},
		{[]string{"--vary", "topology.dealy=1us,2us"}, "topology.dealy"},
		{[]string{"--vary", "topology.delay=1us,slow"}, "point topology.delay=slow: --vary topology.delay=slow"},
		{[]string{"--vary", "topology.delay="}, "--vary \"topology.delay=\": empty value"},
		{[]string{"--vary", "workload.load=0.3:0.9"}, "--vary"},
		{[]string{"--vary", "host.mtu=1000:500:100"}, "end is below the start"},
		{[]string{"--vary", "seed=1,2"}, "--seeds"},
		{[]string{"--vary", "host.mtu=1000", "--vary", "host.mtu=1500"}, "--vary host.mtu given twice"},
		{[]string{"--vary", "host.mtu=1000,1500", "--set", "host.mtu=9000"}, "--set host.mtu=9000 and --vary host.mtu both set host.mtu"},
		{[]string{"--shard", "2/2"}, "--shard"},
		{[]string{"--shard", "0/100"}, "the study has 15 runs, so at most 15 shards"},
		{[]string{"--shard", "x"}, "--shard"},
		{[]string{"--confidence", "95"}, "--confidence"},
		{[]string{"--variant", "fast=nosuch"}, `unknown scheme "nosuch"`},
		{[]string{"--variant", "dcqcn=pfc,host.mtu=1000"}, "dcqcn is already a scheme or variant"},
		{[]string{"--variant", "x=pfc,host.mtu"}, `"host.mtu" is not PATH=VALUE`},
		{[]string{"--variant", "x=pfc,host.mtu=big"}, "variant x: --variant x: host.mtu=big"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append([]string{"experiment", "-q", "-o", filepath.Join(dir, "out")}, tt.args...)
			if !slices.ContainsFunc(tt.args, func(a string) bool { return strings.HasSuffix(a, ".yaml") || a == "--preset" }) {
				args = append(args, scen)
			}
			code, _, stderr := p4ctl(args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line naming %q", code, stderr, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("a usage error wrote output: %v", err)
	}
}

func TestParseSeeds(t *testing.T) {
	tests := []struct {
		in    string
		first uint64
		want  []uint64
	}{
		{"3", 1, []uint64{1, 2, 3}},
		{"1", 5, []uint64{5}},
		{"2", 9, []uint64{9, 10}},
		{"4,2", 1, []uint64{4, 2}},
		{" 1, 5 ,9", 7, []uint64{1, 5, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			f, err := parseSeeds(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.resolve(&scenario.Scenario{Seed: tt.first})
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestDefaultExperiment(t *testing.T) {
	cmd := newExperimentCmd()
	if f := cmd.Flags().Lookup("preset"); f == nil || f.DefValue != defaultExperimentPreset {
		t.Errorf("--preset default %v, want %q", f, defaultExperimentPreset)
	}
	if f := cmd.Flags().Lookup("schemes"); f == nil || f.DefValue != "dcqcn,rcm,pfc" {
		t.Errorf("--schemes default %v", f)
	}
	// Five seeds from the scenario's, listed as such.
	code, stdout, stderr := p4ctl("experiment", "--list-runs")
	if code != 0 || !strings.Contains(stdout, "14     pfc     5") || !strings.Contains(stdout, "15 runs of study") {
		t.Errorf("default study: exit %d: %s%s", code, stdout, stderr)
	}
}

// A sweep prints each point's comparison and the changes at every point,
// and writes a directory per point beside the curves; --list-runs writes
// nothing.
func TestExperimentSweep(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny5.yaml", experimentScenario)
	out := filepath.Join(dir, "out")
	args := []string{"experiment", scen, "--schemes", "dcqcn,pfc", "--seeds", "2", "--vary", "topology.delay=1us,2us", "-q",
		"--variant", "pfc-jumbo=pfc,host.mtu=4000"}
	code, stdout, stderr := p4ctl(append(args, "--list-runs", "-o", out)...)
	if code != 0 || !strings.Contains(stdout, "11     topology.delay=2us  pfc-jumbo  2") || !strings.Contains(stdout, "12 runs of study ") {
		t.Errorf("--list-runs: exit %d: %s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--list-runs wrote %s (%v)", out, err)
	}
	code, stdout, stderr = p4ctl(append(args, "-o", out)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"study tiny5: 2 points (topology.delay = 1us, 2us); schemes dcqcn, pfc, pfc-jumbo; seeds 1, 2; baseline dcqcn",
		"point 1 of 2: topology.delay=1us", "mean FCT against dcqcn at each point", "2 point directories, 12 run directories",
		"variant pfc-jumbo: pfc with host.mtu=4000"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for _, f := range []string{"study.csv", "study.json", "report.html", "curve-mean-fct-us.png", "p1_topology.delay=2us/pfc-seed2/flows.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// Shards run apart and merged write what the whole study writes; a merge
// of the wrong parts is a usage error that writes nothing.
func TestExperimentShardsAndMerge(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "tiny5.yaml", experimentScenario)
	args := []string{"experiment", scen, "--schemes", "dcqcn,pfc", "--seeds", "2", "--vary", "topology.delay=1us,2us", "-q"}
	var parts []string
	for i := range 2 {
		part := filepath.Join(dir, "part", strconv.Itoa(i))
		code, stdout, stderr := p4ctl(append(args, "--shard", strconv.Itoa(i)+"/2", "-o", part)...)
		if code != 0 || !strings.Contains(stdout, "shard "+strconv.Itoa(i)+"/2 of study ") || !strings.Contains(stdout, "4 of 8 runs") {
			t.Fatalf("shard %d: exit %d: %s%s", i, code, stdout, stderr)
		}
		parts = append(parts, part)
	}
	merged := filepath.Join(dir, "merged")
	if code, _, stderr := p4ctl("experiment", "merge", parts[0], "-o", merged); code != exitUsage ||
		!strings.Contains(stderr, "missing runs 4, 5, 6, 7 (of shard 1 of 2)") {
		t.Errorf("merge of one shard: exit %d: %s", code, stderr)
	}
	if code, _, stderr := p4ctl("experiment", "merge", scen, "-o", merged); code != exitUsage || !strings.Contains(stderr, "tiny5.yaml: is a file, not a shard's directory") {
		t.Errorf("merge of a file: exit %d: %s", code, stderr)
	}
	if code, _, stderr := p4ctl("experiment", "merge"); code != exitUsage || !strings.Contains(stderr, "give the shards' directories") {
		t.Errorf("merge of nothing: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(merged); !os.IsNotExist(err) {
		t.Errorf("a refused merge wrote %s (%v)", merged, err)
	}
	code, stdout, stderr := p4ctl("experiment", "merge", parts[1], parts[0], "-o", merged)
	if code != 0 || !strings.Contains(stdout, "merged from 2 shards; results in "+merged) {
		t.Fatalf("merge: exit %d: %s%s", code, stdout, stderr)
	}
	whole := filepath.Join(dir, "whole")
	if code, _, stderr := p4ctl(append(args, "-o", whole)...); code != 0 {
		t.Fatalf("whole: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"study.csv", "p0_topology.delay=1us/comparison.csv", "p1_topology.delay=2us/pfc-seed1/flows.csv",
		"curve-p99-fct-us.svg"} {
		a, errA := os.ReadFile(filepath.Join(whole, f))
		b, errB := os.ReadFile(filepath.Join(merged, f))
		if errA != nil || errB != nil || string(a) != string(b) {
			t.Errorf("%s differs between the whole study and the merge (%v, %v)", f, errA, errB)
		}
	}
}
