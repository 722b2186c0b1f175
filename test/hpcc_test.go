//go:build linux

package test

import (
	"os"
	"testing"

	"github.com/p4rcm/p4rcm/emulate"
	"github.com/p4rcm/p4rcm/internal/p4switchbin"
)

// HPCC's claim on real packets: on emulate-incast (4:1 of 1 MB flows
// into one port, PFC at 40 KB) the agents under HPCC, reading the INT
// rcm.p4 pushes on p4switch, hold the receiver's port's queue to a small
// share of what DCQCN's build there, which PFC alone bounds. Every
// switch port pushes INT under both (emulate --int), so that the
// receiver measures the queue each data packet found behind it at that
// port. The model gives a mean queue of 182 KB under DCQCN against 6 KB
// under HPCC. It fails when the sender ignores the telemetry, or reads
// the ingress port's account rather than the egress queue (the queue
// term then stays near zero while the link is oversubscribed), or when
// a record is not pushed (HPCC never cuts: DCQCN's queue).
func TestHPCCIncastQueueOnRealPackets(t *testing.T) {
	if os.Getenv(p4switchbin.TargetEnv) == "bmv2" {
		t.Skip("the Go target's figure: BMv2 paces its ports in packets, not bytes")
	}
	queue := map[string]float64{}
	for _, scheme := range []string{"dcqcn", "hpcc"} {
		cfg := presetOf(t, "emulate-incast", "scheme="+scheme)
		out := emulatedWith(t, cfg, emulate.Options{INT: true})
		q := out.LastHopQueue()
		var retx int64
		for _, a := range out.Agents {
			retx += a.Retransmits
		}
		t.Logf("%s: %d of 4 flows, %d packets sent again; the receiver's port: %d packets found %.1f KB queued on average, %.1f KB at most",
			scheme, out.Results.Completed, retx, q.Samples, q.Mean()/1e3, float64(q.Max)/1e3)
		if out.Results.Completed != 4 || q.Samples < 3900 {
			t.Fatalf("%s: %d of 4 flows completed, %d packets carried INT; want all, 4000 packets", scheme, out.Results.Completed, q.Samples)
		}
		queue[scheme] = q.Mean()
	}
	if queue["dcqcn"] < 40e3 || queue["hpcc"] > queue["dcqcn"]/4 {
		t.Errorf("mean queue at the receiver's port: %.1f KB under HPCC, %.1f KB under DCQCN; want DCQCN's past 40 KB and HPCC's under a quarter of it",
			queue["hpcc"]/1e3, queue["dcqcn"]/1e3)
	}
}
