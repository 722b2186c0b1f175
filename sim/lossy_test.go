package sim

import (
	"testing"

	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
)

// TestLossyGoBackN runs an 8:1 incast without PFC into a shallow buffer:
// packets are dropped, receivers NACK the gaps, senders go back N (and time
// out when a flow's last packets are lost), and every flow still completes
// with every byte delivered. With DCQCN marking below the queue limit it
// drops less than without congestion control. DCQCN uses the mellanox
// settings: their NP sends CNPs for marked packets in or out of order;
// with the hpcc settings the feedback rides on ACKs, which a go-back-N
// receiver sends only for in-order data, and a lossy network collapses
// (docs/simulator.md).
func TestLossyGoBackN(t *testing.T) {
	dropsBy := map[string]int64{}
	for _, cc := range []string{"dcqcn", "none"} {
		t.Run(cc, func(t *testing.T) {
			tp, err := topo.Star(topo.StarOptions{N: 9, Rate: 100e9, Delay: us})
			if err != nil {
				t.Fatal(err)
			}
			var flows []workload.Flow
			for i := 0; i < 8; i++ {
				flows = append(flows, workload.Flow{Src: i, Dst: 8, Size: 2_000_000, Start: int64(i) * 3 * us, Priority: 3})
			}
			cfg := Config{Seed: 1, Topology: tp, Flows: flows, MTU: 1000, AckInterval: 1, CC: cc, DCQCN: dcqcn.Mellanox(),
				PFC: false, Buffer: 300e3, QueueLimit: 100e3, RTO: 200 * us,
				ECN: &ECNConfig{KMin: 5e3, KMax: 50e3, PMax: 0.1, RefRate: 100e9}}
			n, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			n.Run()
			r := n.Results()
			if len(r.Faults) != 0 || r.LosslessDrops != 0 {
				t.Fatalf("faults %v, lossless drops %d", r.Faults, r.LosslessDrops)
			}
			var drops, retx int64
			for _, d := range r.Drops {
				drops += d
			}
			for _, f := range r.Flows {
				retx += f.Retransmits
				if f.Finish == 0 || f.Delivered != f.Size {
					t.Errorf("flow %d: finish %d, delivered %d of %d", f.ID, f.Finish, f.Delivered, f.Size)
				}
			}
			t.Logf("%s: %d drops (%v), %d retransmitted packets, last finish %.1f us", cc, drops, r.Drops, retx, float64(r.LastFinish)/1e6)
			if drops == 0 || retx == 0 {
				t.Errorf("expected drops and retransmissions with a 100 KB queue limit: drops %d, retransmits %d", drops, retx)
			}
			dropsBy[cc] = drops
		})
	}
	if dropsBy["dcqcn"] >= dropsBy["none"] {
		t.Errorf("DCQCN dropped %d packets, no congestion control %d: DCQCN should drop fewer", dropsBy["dcqcn"], dropsBy["none"])
	}
}

// TestPFCPerPriority mixes a lossless and a lossy priority through one
// congested port: PFC holds priority 3 without a drop while priority 1 is
// tail-dropped and recovered by go-back-N.
func TestPFCPerPriority(t *testing.T) {
	tp, err := topo.Star(topo.StarOptions{N: 9, Rate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	var flows []workload.Flow
	for i := 0; i < 8; i++ {
		prio := 3
		if i%2 == 1 {
			prio = 1
		}
		flows = append(flows, workload.Flow{Src: i, Dst: 8, Size: 1_000_000, Priority: prio})
	}
	cfg := Config{Seed: 1, Topology: tp, Flows: flows, MTU: 1000, AckInterval: 1, CC: "none",
		PFC: true, LosslessPriorities: []int{3}, Buffer: 2e6, PFCBeta: 1, QueueLimit: 100e3, RTO: 200 * us}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.Run()
	r := n.Results()
	if len(r.Faults) != 0 || r.LosslessDrops != 0 {
		t.Fatalf("faults %v, lossless drops %d", r.Faults, r.LosslessDrops)
	}
	var pauses int64
	for _, p := range r.Ports {
		pauses += p.PausesSent
	}
	for _, f := range r.Flows {
		lossy := cfg.Flows[f.ID].Priority == 1
		if f.Finish == 0 || f.Delivered != f.Size {
			t.Errorf("flow %d: not complete", f.ID)
		}
		if !lossy && f.Retransmits != 0 {
			t.Errorf("lossless flow %d retransmitted %d packets", f.ID, f.Retransmits)
		}
	}
	if r.Drops["queue-limit"] == 0 || pauses == 0 {
		t.Errorf("want lossy drops and PAUSE frames: drops %v, pauses %d", r.Drops, pauses)
	}
}
