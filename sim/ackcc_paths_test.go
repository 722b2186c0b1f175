package sim

import (
	"testing"

	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
)

// HPCC's T and W and the ns-3 window come from the longest path between
// two hosts, also where every host hangs off one switch at one rate and
// delay (a star, emulate-incast's): there the path between two hosts is
// the only one, 2 x 2 links of 1 us and a 1,000-byte payload at 100 Gb/s
// twice, 4.16 us and 52,000 bytes. Taking one host per class of hosts
// with the same paths, a star had none to pair and got 0: HPCC's queue
// term divided by a zero W (NaN rates), and DCTCP's window was a byte.
func TestLongestPathOnAStar(t *testing.T) {
	tp, err := topo.Star(topo.StarOptions{N: 5, Rate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	cfg := ns3Config(tp, []workload.Flow{{Src: 0, Dst: 4, Size: 1000, Priority: 3}}, "hpcc")
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rtt, bdp := n.longestPath()
	if rtt != 4_160_000 || bdp != 52_000 {
		t.Errorf("longest path on a star: %d ps, %g bytes; want 4160000 and 52000", rtt, bdp)
	}
}
