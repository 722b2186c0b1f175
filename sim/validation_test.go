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
	"github.com/p4rcm/p4rcm/internal/race"
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
// (12 MB shared buffer, dynamic PFC threshold with the paper's beta = 8,
// headroom from the link), DCQCN with the paper's parameters (RED/ECN Kmin
// 5 KB, Kmax 200 KB, Pmax 1%), 1 KB packets. Trident II computes
// t_PFC = beta (B - 8 n t_flight - s) / 8 whatever the number of lossless
// priorities; the switch model divides by the lossless priorities in use
// (one here), so the paper's beta = 8 is PFCBeta = 1.
func paperConfig(tp *topo.Topology, flows []workload.Flow, scheme string) Config {
	cfg := Config{Seed: 1, Topology: tp, Flows: flows, MTU: 1024, AckInterval: 1, CC: "dcqcn",
		DCQCN: dcqcn.Paper(), PFC: true, Buffer: 12e6, PFCBeta: 1, RTO: ms}
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
	race.SkipLong(t)
	tp, err := topo.Star(topo.StarOptions{N: 3, Rate: 40e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	flows := []workload.Flow{{Src: 0, Dst: 2, Size: long, Priority: 3}, {Src: 1, Dst: 2, Size: long, Start: 10 * ms, Priority: 3}}
	cfg := paperConfig(tp, flows, "dcqcn")
	cfg.StopAt = 10*ms + 190*ms
	cfg.RateSampling = RateSampling{Interval: 5 * ms}
	bottleneck, _ := PortOf(tp, 3, 2)
	cfg.QueueSampling = QueueSampling{Interval: queueEvery, Max: 1 << 22, Ports: []topo.PortRef{bottleneck}}
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
	// What PFC alone cannot give: marks, and a queue held between Kmin and
	// Kmax without a PAUSE (PFC alone shares the link as evenly, from a
	// queue of megabytes).
	var marked, pauses int64
	for _, p := range r.Ports {
		marked += p.Marked
		pauses += p.PausesSent
	}
	q := meanQueue(r, 110*ms, cfg.StopAt)
	t.Logf("%d packets marked, %d CNPs, %d PAUSE frames; queue from 110 ms: mean %.1f KB", marked, r.CNPs, pauses, q/1e3)
	if marked == 0 || r.CNPs == 0 || pauses != 0 || !(q > cfg.DCQCN.KMin && q < cfg.DCQCN.KMax) {
		t.Errorf("want marks, CNPs, no PAUSE and a mean queue between Kmin %.0f and Kmax %.0f KB", cfg.DCQCN.KMin/1e3, cfg.DCQCN.KMax/1e3)
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
	race.SkipLong(t)
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

// testbed hosts: five per ToR, T1 0-4, T2 5-9, T3 10-14, T4 15-19.
func testbed(t *testing.T) *topo.Topology {
	tp, err := topo.Testbed(topo.TestbedOptions{HostsPerToR: 5, Rate: 40e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// flowRates are the flows' mean payload rates, Gb/s, over the windows
// between from and to.
func flowRates(r *Results, interval, from, to int64) []float64 {
	sum := make([]float64, len(r.Flows))
	n := make([]int, len(r.Flows))
	for _, s := range r.RateSamples {
		if s.Time > from && s.Time <= to {
			sum[s.Flow] += float64(s.Bytes)
			n[s.Flow]++
		}
	}
	out := make([]float64, len(sum))
	for i := range sum {
		if n[i] > 0 {
			out[i] = sum[i] * 8 / (float64(int64(n[i])*interval) / 1e12) / 1e9
		}
	}
	return out
}

// TestPFCUnfairness is the paper's Figure 3 (PFC only) against Figure 8
// (DCQCN): H1, H2, H3 under T1, T2, T3 and H4 under T4 send to R under T4.
// With PFC alone, T4 shares its port to R between its ingress ports, so H4,
// alone on its port, gets more than each of H1-H3, which share T4's two
// uplinks (the paper: H4's minimum above H1-H3's maximum). With DCQCN the
// four get equal shares within 10% once alpha has settled.
func TestPFCUnfairness(t *testing.T) {
	race.SkipLong(t)
	h := []int{0, 5, 10, 15}
	const r = 16
	for _, scheme := range []string{"pfc", "dcqcn"} {
		t.Run(scheme, func(t *testing.T) {
			var flows []workload.Flow
			for _, src := range h {
				flows = append(flows, workload.Flow{Src: src, Dst: r, Size: long, Priority: 3})
			}
			cfg := paperConfig(testbed(t), flows, scheme)
			from, to := 20*ms, 40*ms
			if scheme == "dcqcn" {
				from, to = 100*ms, 250*ms // after alpha has settled
			}
			cfg.StopAt = to
			cfg.RateSampling = RateSampling{Interval: ms}
			_, res := run(t, cfg)
			rs := flowRates(res, ms, from, to)
			t.Logf("%s: H1-H4 %.2f Gb/s", scheme, rs)
			if scheme == "pfc" {
				for i := 0; i < 3; i++ {
					if rs[3] <= rs[i] {
						t.Errorf("PFC only: H4 %.2f Gb/s does not exceed H%d %.2f Gb/s (paper Figure 3: it does)", rs[3], i+1, rs[i])
					}
				}
				return
			}
			m := mean(rs)
			for i, x := range rs {
				if math.Abs(x-m)/m > 0.10 {
					t.Errorf("DCQCN: H%d gets %.2f Gb/s, %.0f%% from the mean %.2f (paper Figure 8: equal shares)", i+1, x, 100*math.Abs(x-m)/m, m)
				}
			}
		})
	}
}

// TestVictimFlow is the paper's Figure 4 (PFC only) against Figure 9
// (DCQCN): H11-H14 under T1 send to R under T4, the victim VS under T1
// sends to VR under T2, and 0, 1 or 2 senders under T3 join the incast.
// With PFC alone the pauses cascade from T4 back to T1 and the victim, which
// shares no link with the congestion, loses throughput as T3's senders are
// added (the paper: 10 then 4.5 Gb/s). With DCQCN it keeps at least 90% of
// its max-min fair share whatever the number of T3 senders.
func TestVictimFlow(t *testing.T) {
	race.SkipLong(t)
	victim := map[string][]float64{}
	for _, scheme := range []string{"pfc", "dcqcn"} {
		for n := 0; n <= 2; n++ {
			t.Run(fmt.Sprintf("%s/T3=%d", scheme, n), func(t *testing.T) {
				var flows []workload.Flow
				for _, src := range []int{0, 1, 2, 3} {
					flows = append(flows, workload.Flow{Src: src, Dst: 15, Size: long, Priority: 3})
				}
				flows = append(flows, workload.Flow{Src: 4, Dst: 5, Size: long, Priority: 3, Class: "victim"})
				for i := 0; i < n; i++ {
					flows = append(flows, workload.Flow{Src: 10 + i, Dst: 15, Size: long, Priority: 3})
				}
				cfg := paperConfig(testbed(t), flows, scheme)
				from, to := 20*ms, 40*ms
				if scheme == "dcqcn" {
					from, to = 100*ms, 200*ms
				}
				cfg.StopAt = to
				cfg.RateSampling = RateSampling{Interval: ms}
				net, res := run(t, cfg)
				v := flowRates(res, ms, from, to)[4]
				fair := maxMinFair(net, cfg)[4]
				victim[scheme] = append(victim[scheme], v)
				t.Logf("%s, %d T3 senders: victim %.2f Gb/s, max-min fair share %.2f", scheme, n, v, fair)
				if scheme == "dcqcn" && v < 0.9*fair {
					t.Errorf("DCQCN: victim gets %.2f Gb/s, under 90%% of its fair share %.2f (paper Figure 9)", v, fair)
				}
			})
		}
	}
	if v := victim["pfc"]; len(v) == 3 && !(v[0] > v[1] && v[1] > v[2]) {
		t.Errorf("PFC only: victim %.2f, %.2f, %.2f Gb/s with 0, 1, 2 T3 senders; the paper's Figure 4 falls", v[0], v[1], v[2])
	}
}

// maxMinFair is the max-min fair rate of each flow, Gb/s of payload, over
// the links the flows' packets take (their NIC and the switch ports their
// ECMP hashes pick), by water-filling: raise all rates together, freeze
// the flows of each link that fills, repeat.
func maxMinFair(n *Network, cfg Config) []float64 {
	type link struct {
		cap   float64
		flows []int
	}
	links := map[topo.PortRef]*link{}
	payload := float64(cfg.MTU) / float64(cfg.MTU+62+20) // payload share of a frame
	add := func(p topo.PortRef, f int) {
		l := links[p]
		if l == nil {
			l = &link{cap: n.ports[p.Node][p.Port].rate / 1e9 * payload}
			links[p] = l
		}
		l.flows = append(l.flows, f)
	}
	for i, f := range cfg.Flows {
		add(topo.PortRef{Node: f.Src, Port: 0}, i)
		for _, p := range n.FlowPath(i) {
			add(p, i)
		}
	}
	rate := make([]float64, len(cfg.Flows))
	frozen := make([]bool, len(cfg.Flows))
	keys := make([]topo.PortRef, 0, len(links))
	for k := range links {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		return keys[a].Node < keys[b].Node || keys[a].Node == keys[b].Node && keys[a].Port < keys[b].Port
	})
	for {
		// The smallest fair increment any link allows.
		inc, tight := math.Inf(1), []topo.PortRef(nil)
		for _, k := range keys {
			l := links[k]
			used, free := 0.0, 0
			for _, f := range l.flows {
				used += rate[f]
				if !frozen[f] {
					free++
				}
			}
			if free == 0 {
				continue
			}
			d := (l.cap - used) / float64(free)
			switch {
			case d < inc-1e-12:
				inc, tight = d, []topo.PortRef{k}
			case math.Abs(d-inc) <= 1e-12:
				tight = append(tight, k)
			}
		}
		if tight == nil {
			return rate
		}
		for f := range rate {
			if !frozen[f] {
				rate[f] += inc
			}
		}
		for _, k := range tight {
			for _, f := range links[k].flows {
				frozen[f] = true
			}
		}
	}
}
