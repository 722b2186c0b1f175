package sim

import (
	"os"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
)

func loadBench(t testing.TB) Config {
	tf, err := os.Open("testdata/fat320.topo.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	tp, err := topo.ParseNS3(tf, "fat320.topo.txt")
	if err != nil {
		t.Fatal(err)
	}
	ff, err := os.Open("testdata/websearch30_10ms.flows.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer ff.Close()
	flows, err := workload.ParseNS3Flows(ff, "websearch30_10ms.flows.txt", func(n int) bool { return n < len(tp.Nodes) && tp.Nodes[n].Kind == topo.Host })
	if err != nil {
		t.Fatal(err)
	}
	return Config{Seed: 1, Topology: tp, Flows: flows, MTU: 1000, AckInterval: 1, CC: "dcqcn", DCQCN: dcqcn.HPCC(),
		PFC: true, Buffer: 32e6, PFCBeta: 1.0 / 8, PFCBetaScale: true}
}

func TestBenchScenario(t *testing.T) {
	if os.Getenv("P4RCM_BENCH") == "" {
		t.Skip("set P4RCM_BENCH=1")
	}
	cfg := loadBench(t)
	start := time.Now()
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	sim := float64(r.LastFinish-cfg.Flows[0].Start) / 1e9
	t.Logf("completed %d/%d, data %d, hops %d, events %d, sim %.2f ms, wall %v, %.3f s/ms, faults %v drops %v",
		r.Completed, len(r.Flows), r.DataPackets, r.PacketHops, r.Events, sim, wall, wall.Seconds()/sim, r.Faults, r.Drops)
}
