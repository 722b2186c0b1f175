package main

import (
	"strings"
	"testing"
)

// Flags that a command would take and ignore are wrong usage, exit 2,
// naming the flag and why; so is a group of commands called without
// one, and a priority on a table that takes none (checked against the
// program before anything is sent).
func TestIgnoredFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"pfc", "set", "1", "--xoff", "10KB", "--xon", "5KB", "--preset", "trident2", "--cable", "10m", "--addr", "127.0.0.1:1"},
			"--preset, --cable describe the switch that --xoff auto computes the thresholds for"},
		{[]string{"rcm", "set", "2", "--cn-interval", "50us", "--addr", "127.0.0.1:1"}, "--cn-interval sets how CNs go to the neighbour on PORT, and CNs are off without --cn"},
		{[]string{"sim", "run", "--preset", "pfc-unfairness", "--scheme", "pfc", "--dcqcn", "paper"}, "--dcqcn sets DCQCN's parameters, and no host runs DCQCN under --scheme pfc"},
		{[]string{"sim", "run", "--scheme", "dcqcn", "--ldcp", "delayed"}, "--ldcp sets LDCP's parameters, and no host runs LDCP under --scheme dcqcn"},
		{[]string{"experiment", "--schemes", "pfc,ldcp", "--dcqcn", "paper", "--list-runs"}, "no host runs DCQCN under --schemes pfc,ldcp"},
		{[]string{"experiment", "--preset", "rcm-incast-victim", "--load", "0.7", "--list-runs"}, "--load sets a poisson or hotspot workload's load, and scenario rcm-incast-victim's first workload is of kind incast"},
		{[]string{"watch", "--count", "-1", "--addr", "127.0.0.1:1"}, "--count -1: want how many events"},
		{[]string{"table"}, "p4ctl table: name a command: add, delete, dump, list, modify"},
		{[]string{"pfc"}, "p4ctl pfc: name a command: set"},
	} {
		code, _, errOut := p4ctl(c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("p4ctl %s: exit %d, %q; want exit 2 and %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
	// With --cn, or with the thresholds left to --xoff auto, the same
	// flags are taken (here up to the switch, which is not there).
	for _, args := range [][]string{
		{"rcm", "set", "2", "--cn", "--cn-interval", "50us"},
		{"pfc", "set", "1", "--xoff", "auto", "--preset", "trident2", "--cable", "10m"},
	} {
		if code, _, errOut := p4ctl(append(args, "--addr", "127.0.0.1:1")...); code == exitUsage {
			t.Errorf("p4ctl %s: exit 2, %q", strings.Join(args, " "), errOut)
		}
	}
	if code, _, errOut := p4ctl("sim", "run", "--preset", "pfc-unfairness", "--scheme", "dcqcn", "--dcqcn", "paper", "--set", "stop=1us", "-o", t.TempDir()+"/out", "-q"); code != 0 {
		t.Errorf("sim run --scheme dcqcn --dcqcn paper: exit %d, %q", code, errOut)
	}
}

// A priority on a table whose match fields take none, or none on one
// whose entries need one, is wrong usage, told before anything is sent.
func TestTablePriorityChecked(t *testing.T) {
	addr, _ := startTarget(t)
	ok(t, addr, "pipeline", "set")
	fails(t, addr, 2, []string{"table RcmIngress.ipv4_lpm takes no priority: its match fields are lpm"},
		"table", "add", "ipv4_lpm", "dst_addr=10.0.1.0/24", "--action", "drop", "--priority", "5")
	if out := ok(t, addr, "table", "dump", "ipv4_lpm"); strings.Contains(out, "10.0.1.0") {
		t.Errorf("the refused entry reached the switch: %s", out)
	}
}
