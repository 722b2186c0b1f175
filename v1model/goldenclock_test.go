package v1model

import (
	"encoding/hex"
	"strings"
	"testing"
)

// frameWith is a 12-byte frame holding ns at bytes 4 to 7.
func frameWith(ns uint32) string {
	b := []byte{0xaa, 0xbb, 0xcc, 0xdd, byte(ns >> 24), byte(ns >> 16), byte(ns >> 8), byte(ns), 1, 2, 3, 4}
	return hex.EncodeToString(b)
}

// A clock field is left out of the byte comparison and held to its
// reader's needs instead: times that never go back and gaps that agree
// within the tolerance. A time in microseconds where the reference has
// nanoseconds, or one that goes back, is a difference.
func TestGoldenClocks(t *testing.T) {
	clock := GoldenClock{Port: 2, Frames: []int{0, 1, 2}, Offset: 4, Bytes: 4, ToleranceNs: 5_000_000}
	// The reference's times wrap past 2^32 ns.
	t0 := uint32(0xffff_ff00)
	ref := []string{frameWith(t0), frameWith(t0 + 50_000_000), frameWith(t0 + 100_000_000)}
	for _, c := range []struct {
		name string
		got  []uint32
		want string
	}{
		{"the same gaps, another clock", []uint32{7, 50_000_007 + 1_000_000, 100_000_007}, ""},
		{"microseconds", []uint32{7, 50_007, 100_007}, "moved 50000000 ns, the Go target's 50000"},
		{"back", []uint32{7, 50_000_007, 40_000_007}, "goes back"},
	} {
		g := &Golden{Clocks: []GoldenClock{clock}, Sent: map[string][]string{"2": append([]string(nil), ref...)}}
		var got []string
		for _, ns := range c.got {
			got = append(got, frameWith(ns))
		}
		sent := map[string][]string{"2": got}
		diffs := g.compareClocks(sent)
		switch {
		case c.want == "" && len(diffs) > 0:
			t.Errorf("%s: %v", c.name, diffs)
		case c.want != "" && (len(diffs) == 0 || !strings.Contains(strings.Join(diffs, "\n"), c.want)):
			t.Errorf("%s: %v, want %q", c.name, diffs, c.want)
		}
		// The fields are zeroed in both, so that the frames compare equal.
		for i := range got {
			if g.Sent["2"][i] != sent["2"][i] {
				t.Errorf("%s: frame %d: %s and %s after masking", c.name, i, g.Sent["2"][i], sent["2"][i])
			}
		}
	}
}
