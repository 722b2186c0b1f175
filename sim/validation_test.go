package sim

// Validation against the DCQCN paper (Zhu et al., SIGCOMM 2015): the
// experiments of sections 2.2 and 6.1 on the model, with the paper's
// parameters. Where the model disagrees with the paper the test asserts
// what the model gives and says which figure it differs from; see
// docs/validation.md.

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/sim/event"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
)

const (
	ms = event.Millisecond
	us = event.Microsecond
	// long is the size of a "greedy" flow: more than a run can send.
	long = int64(1) << 40
)

// paperConfig is the paper's testbed configuration: Trident II switches
// (12 MB shared buffer, dynamic PFC threshold beta = 8, headroom from the
// link), DCQCN with the paper's parameters (RED/ECN Kmin 5 KB, Kmax 200 KB,
// Pmax 1%), 1 KB packets.
func paperConfig(tp *topo.Topology, flows []workload.Flow, scheme string) Config {
	cfg := Config{Seed: 1, Topology: tp, Flows: flows, MTU: 1024, AckInterval: 1, CC: "dcqcn",
		DCQCN: dcqcn.Paper(), PFC: true, Buffer: 12e6, PFCBeta: 8, RTO: ms}
	switch scheme {
	case "pfc":
		cfg.CC = "none"
	case "lossy":
		cfg.PFC = false
	}
	return cfg
}

func run(t *testing.T, cfg Config) (*Network, *Results) {
	t.Helper()
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.Run()
	r := n.Results()
	if cfg.PFC {
		// With PFC on nothing may ever be dropped.
		if r.LosslessDrops != 0 || len(r.Drops) != 0 {
			t.Fatalf("drops with PFC on: %v (lossless %d)", r.Drops, r.LosslessDrops)
		}
	}
	if len(r.Faults) != 0 {
		t.Fatalf("faults: %v", r.Faults)
	}
	return n, r
}

// rates returns, per flow, the Gb/s delivered in each sampling window.
func rates(r *Results, interval int64) map[int][]float64 {
	out := map[int][]float64{}
	for _, s := range r.RateSamples {
		out[s.Flow] = append(out[s.Flow], float64(s.Bytes)*8/(float64(interval)/1e12)/1e9)
	}
	return out
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestTwoFlowConvergence is the paper's Figure 10 / 13(d) setting: two
// greedy flows into one receiver at 40 Gb/s, the second 10 ms after the
// first. The paper shows the two rates close together once converged. The
// model converges in the mean (the means over the windows from 100 ms after
// the second start are within 10%), but single 5 ms windows swing by up to
// about 25% with the randomness of RED marking, which the paper notes for
// RED in Figure 13(c); the test holds each window to 30%.
func TestTwoFlowConvergence(t *testing.T) {
	tp, err := topo.Star(topo.StarOptions{N: 3, Rate: 40e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	flows := []workload.Flow{{Src: 0, Dst: 2, Size: long, Priority: 3}, {Src: 1, Dst: 2, Size: long, Start: 10 * ms, Priority: 3}}
	cfg := paperConfig(tp, flows, "dcqcn")
	cfg.StopAt = 10*ms + 190*ms
	cfg.RateSampling = RateSampling{Interval: 5 * ms}
	_, r := run(t, cfg)
	rs := rates(r, 5*ms)
	// Window i ends at (i+1)*5 ms; check the windows from 110 ms on.
	from := 110/5 - 1
	for i := from; i < len(rs[0]); i++ {
		a, b := rs[0][i], rs[1][i]
		if d := math.Abs(a-b) / ((a + b) / 2); d > 0.30 {
			t.Errorf("window ending %d ms: rates %.2f and %.2f Gb/s differ by %.0f%%", (i+1)*5, a, b, 100*d)
		}
		if a+b < 34 { // payload rate; the link carries at most 37 Gb/s of payload
			t.Errorf("window ending %d ms: link underused, %.2f Gb/s", (i+1)*5, a+b)
		}
	}
	m0, m1 := mean(rs[0][from:]), mean(rs[1][from:])
	if d := math.Abs(m0-m1) / ((m0 + m1) / 2); d > 0.10 {
		t.Errorf("mean rates from 110 ms: %.2f and %.2f Gb/s differ by %.0f%% (paper: converged)", m0, m1, 100*d)
	}
	t.Logf("means from 110 ms: %.2f and %.2f Gb/s; 5 ms windows: flow 0 %.1f, flow 1 %.1f", m0, m1, rs[0], rs[1])
}

// TestIncast is the paper's K:1 incast (section 6.1): K = 2..16 senders at
// 40 Gb/s to one receiver through one switch, paper settings. The paper
// reports aggregate throughput above 39 Gb/s and a queue that never
// exceeded 100 KB. DCQCN with g = 1/256 takes tens of milliseconds for
// alpha to settle after the line-rate start, so the test measures the
// steady state, from 100 ms to 200 ms. There the model gives 38-39.1 Gb/s
// (the link's frame rate is at most 39.28 Gb/s with 1 KB payloads) and
// queues that exceed 100 KB from K = 3 on: beyond a few flows the paper's
// own fluid model needs a marking probability above Pmax = 1% and the
// queue swings past Kmax = 200 KB (dcqcn/fluid, docs/validation.md).
func TestIncast(t *testing.T) {
	ks := []int{2, 4, 8, 12, 16}
	if !testing.Short() {
		ks = []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	}
	for _, k := range ks {
		t.Run(fmt.Sprintf("K=%d", k), func(t *testing.T) {
			tp, err := topo.Star(topo.StarOptions{N: k + 1, Rate: 40e9, Delay: us})
			if err != nil {
				t.Fatal(err)
			}
			var flows []workload.Flow
			for i := 0; i < k; i++ {
				flows = append(flows, workload.Flow{Src: i, Dst: k, Size: long, Priority: 3})
			}
			cfg := paperConfig(tp, flows, "dcqcn")
			cfg.StopAt = 200 * ms
			bottleneck, _ := PortOf(tp, k+1, k) // the switch's port to the receiver
			cfg.QueueSampling = QueueSampling{Interval: 10 * us, Max: 1 << 20, Ports: []topo.PortRef{bottleneck}}
			_, r := run(t, cfg)
			total := frameRate(r, 100*ms)
			maxQ, p99 := queueAfter(r, 100*ms)
			t.Logf("K=%d: aggregate %.2f Gb/s of frames, queue max %.1f KB, p99 %.1f KB (paper: > 39 Gb/s, < 100 KB)", k, total, maxQ/1e3, p99/1e3)
			if total < 38 {
				t.Errorf("aggregate throughput %.2f Gb/s; the paper reports > 39, the model gives 38-39.1", total)
			}
			limit := 100e3 // the paper's bound, which the model keeps for K = 2
			if k > 2 {
				limit = 1.25 * 200e3 // Kmax + 25%
			}
			if maxQ > limit {
				t.Errorf("queue reached %.1f KB, want under %.0f KB", maxQ/1e3, limit/1e3)
			}
		})
	}
}

// frameRate is the rate of data frames (Ethernet bytes, without preamble
// and gap, as switch counters count them) out of the sampled port after
// from, Gb/s.
func frameRate(r *Results, from int64) float64 {
	var first, last *QueueSample
	for i := range r.QueueSamples {
		s := &r.QueueSamples[i]
		if s.Time >= from && first == nil {
			first = s
		}
		last = s
	}
	if first == nil || last.Time == first.Time {
		return 0
	}
	bytes := float64(last.TxBytes-first.TxBytes) - 20*float64(last.TxPackets-first.TxPackets)
	return bytes * 8 / (float64(last.Time-first.Time) / 1e12) / 1e9
}

// queueAfter is the largest and 99th-percentile sampled queue after from.
func queueAfter(r *Results, from int64) (maxQ, p99 float64) {
	var qs []float64
	for _, s := range r.QueueSamples {
		if s.Time >= from && s.Prio == 3 {
			qs = append(qs, s.Bytes)
		}
	}
	if len(qs) == 0 {
		return 0, 0
	}
	sort.Float64s(qs)
	return qs[len(qs)-1], qs[(len(qs)-1)*99/100]
}
