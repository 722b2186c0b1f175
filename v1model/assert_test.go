package v1model

import (
	"strings"
	"testing"
)

// TestAssertStopsTheSwitch: externs.p4 asserts its command is not 0xee.
// BMv2 aborts there; the Go target stops: Process says where, and every
// later frame gets the same error.
func TestAssertStopsTheSwitch(t *testing.T) {
	sw, err := Load("../p4/testdata/build/externs.json", Config{})
	if err != nil {
		t.Fatal(err)
	}
	frame := func(cmd byte) []byte {
		f := []byte{2, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 1, 0x88, 0xb6, cmd, 0, 0, 0, 0, 0, 0, 0}
		return append(f, make([]byte, 40)...)
	}
	var out int
	emit := func(int, []byte) { out++ }
	if err := sw.Process(1, frame(0), emit); err != nil || out != 1 {
		t.Fatalf("a plain frame: %v, %d sent", err, out)
	}
	err = sw.Process(1, frame(0xee), emit)
	if err == nil || !strings.Contains(err.Error(), "assert failed") || !strings.Contains(err.Error(), "externs.p4") {
		t.Fatalf("assert(false): %v", err)
	}
	if err := sw.Process(1, frame(0), emit); err == nil || sw.Stopped() == nil {
		t.Errorf("after a failed assert the switch still runs: %v", err)
	}
}
