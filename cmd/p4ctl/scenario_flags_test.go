package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A flag the scenario has no use for is refused, not ignored.
func TestFlagsTheScenarioIgnores(t *testing.T) {
	// -o under a file: should --k be taken, the command fails there,
	// before it builds or runs anything.
	for _, args := range [][]string{
		{"emulate", "--k", "6", "-o", "/dev/null/out"},
		{"sim", "run", "--preset", "dcqcn-incast", "--k", "6", "-o", "/dev/null/out"},
	} {
		code, _, errOut := p4ctl(args...)
		if code != 2 || !strings.Contains(errOut, "--k sets a fat tree's arity; this scenario's topology is") {
			t.Errorf("p4ctl %s: exit %d, %q; want 2 saying --k has nothing to set", strings.Join(args, " "), code, errOut)
		}
	}
}

// A run whose flows do not complete (the victim scenario's are greedy)
// prints what it measures, goodput per class, not a table of FCT
// columns full of dashes.
func TestGreedyRunPrintsGoodput(t *testing.T) {
	code, out, errOut := p4ctl("sim", "run", "--preset", "rcm-incast-victim", "--set", "stop=300us", "-q", "-o", filepath.Join(t.TempDir(), "out"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !regexp.MustCompile(`(?m)^class +flows +goodput Gbps$`).MatchString(out) || !regexp.MustCompile(`(?m)^victim +1 +\d+\.\d{3}$`).MatchString(out) ||
		strings.Contains(out, "mean FCT us") {
		t.Errorf("output:\n%s", out)
	}
}

// A group size the hosts do not divide into says which would.
func TestGroupSizeHint(t *testing.T) {
	code, _, errOut := p4ctl("emulate", "--preset", "default", "--k", "4", "-o", "/dev/null/out")
	if code != 2 || !strings.Contains(errOut, "workload.group_size: 9: 16 hosts are not a multiple of it; give a group size that divides 16: 2, 4, 8 or 16") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

// --processes takes shared or each, and shared only on the Go target;
// a wrong one is refused before anything is built.
func TestEmulateProcessesFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--processes", "many"}, `--processes "many": want shared or each`},
		{[]string{"--processes", "shared", "--target", "bmv2"}, "--processes shared: only the Go target runs several switches in one process"},
		{[]string{"compare", "--processes", "some"}, `--processes "some": want shared or each`},
	} {
		args := append([]string{"emulate"}, c.args...)
		code, _, errOut := p4ctl(append(args, "-o", "/dev/null/out")...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("p4ctl %s: exit %d, %q; want 2 and %q", strings.Join(args, " "), code, errOut, c.want)
		}
	}
}
