//go:build linux

package main

import (
	"strings"
	"testing"
)

// int set writes a port's int_config with the rate in kb/s, and --off
// removes it; a rate out of range, or neither flag, is refused with
// exit 2.
func TestINTCommand(t *testing.T) {
	addr, _ := startTarget(t)
	ok(t, addr, "pipeline", "set")
	if out := ok(t, addr, "int", "set", "2", "--rate", "69.5M"); !strings.Contains(out, "port 2: INT at 69.5 Mb/s") {
		t.Errorf("int set said %q", out)
	}
	ok(t, addr, "int", "set", "3", "--rate", "100G")
	got := ok(t, addr, "table", "dump", "int_config")
	for _, w := range []string{
		"RcmEgress.int_config standard_metadata.egress_port=2 RcmEgress.set_int(rate_kbps=69500)",
		"RcmEgress.int_config standard_metadata.egress_port=3 RcmEgress.set_int(rate_kbps=100000000)",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("dump lacks\n%s\nin\n%s", w, got)
		}
	}
	ok(t, addr, "int", "set", "2", "--off")
	if got := ok(t, addr, "table", "dump", "int_config"); strings.Contains(got, "egress_port=2 ") {
		t.Errorf("after int set 2 --off:\n%s", got)
	}
	fails(t, addr, 2, []string{"int rate"}, "int", "set", "2", "--rate", "100bps")
	fails(t, addr, 2, []string{"give --rate, or --off"}, "int", "set", "2")
	fails(t, addr, 2, []string{"give --rate, or --off"}, "int", "set", "2", "--rate", "1G", "--off")
}
