package sim

import (
	"testing"

	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
)

func TestSmokeSingleFlow(t *testing.T) {
	tp, err := topo.Star(topo.StarOptions{N: 3, Rate: 100e9, Delay: 1000_000})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Seed: 1, Topology: tp, MTU: 1000, AckInterval: 1, CC: "dcqcn", DCQCN: dcqcn.HPCC(),
		PFC: true, Buffer: 32e6, PFCBeta: 1.0 / 8,
		Flows: []workload.Flow{{Src: 0, Dst: 2, Size: 1_000_000, Priority: 3}, {Src: 1, Dst: 2, Size: 1_000_000, Priority: 3}}}
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Flows {
		t.Logf("flow %d: fct %d ns ideal %d ns slowdown %.3f cnps %d cuts %d", f.ID, f.FCT/1000, f.Ideal/1000, f.Slowdown, f.CNPs, f.RateCuts)
	}
	t.Logf("events %d hops %d data %d faults %v drops %v", r.Events, r.PacketHops, r.DataPackets, r.Faults, r.Drops)
	for _, p := range r.Ports {
		t.Logf("port %+v", p)
	}
}
