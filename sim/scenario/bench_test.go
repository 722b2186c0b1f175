package scenario

import (
	"testing"

	"github.com/p4rcm/p4rcm/sim"
)

// BenchmarkFat320 runs the simulator benchmark of `p4ctl sim bench`: the
// ns-3 RDMA simulator's 320-host fat tree and web-search flow file with
// DCQCN's hpcc settings. One iteration is one whole run (about 16 s):
//
//	go test -run XXX -bench Fat320 -benchtime 1x ./sim/scenario/
func BenchmarkFat320(b *testing.B) {
	s, err := LoadPreset("bench-fat320")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		cfg, err := s.Build()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := sim.Run(cfg)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if res.Completed != len(res.Flows) || len(res.Faults) > 0 {
			b.Fatalf("%d/%d flows completed, faults %v", res.Completed, len(res.Flows), res.Faults)
		}
		simMs := float64(res.LastFinish-cfg.Flows[0].Start) / 1e9
		b.ReportMetric(simMs, "sim-ms/op")
		b.ReportMetric(float64(res.DataPackets), "data-pkts/op")
		b.ReportMetric(float64(res.PacketHops), "hops/op")
	}
}
