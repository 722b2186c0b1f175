package sim

// The claims of the HPCC, TIMELY and DCTCP papers that these schemes exist
// for, each on the model as the ns-3 RDMA simulator's settings run it,
// and each failing when the mechanism behind it is broken
// (docs/validation.md lists the breakages).

import (
	"math"
	"sort"
	"testing"

	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/dctcp"
	"github.com/p4rcm/p4rcm/hpcc"
	"github.com/p4rcm/p4rcm/internal/race"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
	"github.com/p4rcm/p4rcm/timely"
)

// ns3Config is the benchmark's configuration, the ns-3 simulator's as
// its run.py writes it, for scheme cc: 1 KB payloads, an ACK per packet
// queued with data at the switches, 32 MiB buffers with dynamic PFC
// thresholds, HPCC and DCTCP with a variable window and ACKs held by PFC
// at the NICs.
func ns3Config(tp *topo.Topology, flows []workload.Flow, cc string) Config {
	cfg := Config{Seed: 1, Topology: tp, Flows: flows, MTU: 1000, AckInterval: 1, CC: cc,
		DCQCN: dcqcn.HPCC(), HPCC: hpcc.NS3(), TIMELY: timely.NS3(), DCTCP: dctcp.NS3(),
		PFC: true, Buffer: 32 << 20, PFCBeta: 1.0 / 8, PFCBetaScale: true, RTO: ms, AckInData: true}
	if cc == "hpcc" || cc == "dctcp" {
		cfg.Window = Window{Enabled: true, Variable: true}
		cfg.AckObeysPFC = true
	}
	return cfg
}

// incast is n greedy senders in the other pods of a k = 6 fat tree of
// 100 Gb/s hosts and 400 Gb/s fabric (the benchmark's rates) into host 0,
// and the port of host 0's ToR that faces it.
func incast(t *testing.T, n int) (*topo.Topology, []workload.Flow, topo.PortRef) {
	t.Helper()
	tp, err := topo.FatTree(topo.FatTreeOptions{K: 6, HostRate: 100e9, FabricRate: 400e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	hosts := tp.Hosts()
	var flows []workload.Flow
	for i := 0; i < n; i++ {
		flows = append(flows, workload.Flow{Src: hosts[9+i], Dst: hosts[0], Size: long, Priority: 3})
	}
	tor := tp.Adjacency()[hosts[0]][0].Peer.Node
	port, _ := PortOf(tp, tor, hosts[0])
	return tp, flows, port
}

// portQueue is the mean and peak of a port's sampled queue from a time
// on, bytes.
func portQueue(r *Results, port topo.PortRef, from int64) (mean, peak float64) {
	n := 0
	for _, s := range r.QueueSamples {
		if s.Node == port.Node && s.Port == port.Port && s.Time >= from {
			mean += s.Bytes
			peak = math.Max(peak, s.Bytes)
			n++
		}
	}
	if n > 0 {
		mean /= float64(n)
	}
	return mean, peak
}

// TestHPCCIncastQueue is the HPCC paper's central claim (sections 3 and
// 5.2): under a 16:1 incast HPCC holds the bottleneck queue near zero at
// about eta of the link, where DCQCN holds megabytes. It fails if the
// sender ignores the telemetry (every flow stays at its window, a queue of
// fifteen windows), or reads the first hop rather than the most utilised
// (the senders' lightly loaded uplinks keep the rates up).
func TestHPCCIncastQueue(t *testing.T) {
	race.SkipLong(t)
	tp, flows, port := incast(t, 16)
	for _, tc := range []struct {
		cc               string
		maxMean, minMean float64 // bytes, from 1 ms on
		minBusy, maxBusy float64
	}{
		{"hpcc", 0, 20e3, 0.90, 0.97},
		{"dcqcn", 500e3, math.Inf(1), 0, 1},
	} {
		cfg := ns3Config(tp, flows, tc.cc)
		cfg.StopAt = 2 * ms
		cfg.QueueSampling = QueueSampling{Interval: us, Max: 1 << 20, Ports: []topo.PortRef{port}}
		_, r := run(t, cfg)
		m, p := portQueue(r, port, ms)
		busy := portRecord(r, port).Utilisation
		t.Logf("%s: bottleneck queue from 1 ms: mean %.1f KB, peak %.1f KB; busy %.1f%%", tc.cc, m/1e3, p/1e3, 100*busy)
		if m < tc.maxMean || m > tc.minMean || busy < tc.minBusy || busy > tc.maxBusy {
			t.Errorf("%s: mean queue %.1f KB and %.1f%% busy, want %.0f to %.0f KB and %.0f%% to %.0f%%", tc.cc, m/1e3, 100*busy,
				tc.maxMean/1e3, tc.minMean/1e3, 100*tc.minBusy, 100*tc.maxBusy)
		}
	}
}

// TestHPCCConverges: a second flow joining one at line rate finds its
// share within a few base RTTs (12 us here) and the queue it brings drains
// as fast: from 100 us after the join the two rates stay within 10% of
// each other in every 10 us window, the queue under 2 KB on average and 20
// KB at most. Without the
// telemetry, or with the first hop's, the queue stays at the windows'
// excess.
func TestHPCCConverges(t *testing.T) {
	race.SkipLong(t)
	tp, flows, port := incast(t, 2)
	flows[1].Start = ms
	cfg := ns3Config(tp, flows, "hpcc")
	cfg.StopAt = 2 * ms
	cfg.RateSampling = RateSampling{Interval: 10 * us}
	cfg.QueueSampling = QueueSampling{Interval: us, Max: 1 << 20, Ports: []topo.PortRef{port}}
	_, r := run(t, cfg)
	rs := rates(r, 10*us)
	join := int(ms / (10 * us))
	for i := join + 10; i < len(rs[0]) && i < len(rs[1]); i++ {
		a, b := rs[0][i], rs[1][i]
		if math.Abs(a-b)/((a+b)/2) > 0.1 {
			t.Errorf("window ending %d us: %.1f and %.1f Gb/s, more than 10%% apart", (i+1)*10, a, b)
		}
	}
	if m, p := portQueue(r, port, ms+100*us); m > 2e3 || p > 20e3 {
		t.Errorf("queue from 100 us after the join: mean %.1f KB, peak %.1f KB; want under 2 KB and 20 KB", m/1e3, p/1e3)
	}
}

// TestTIMELYGradient is TIMELY's point (Mittal et al., section 4): the
// rate reacts to the RTT's gradient, so a small incast's queue is caught
// while the RTT rises between T_low (50 us) and T_high (500 us), well
// before T_high. A sender that ignored the gradient and cut only above
// T_high would let the queue grow past T_high's 6 MB, to PFC.
func TestTIMELYGradient(t *testing.T) {
	race.SkipLong(t)
	tp, flows, port := incast(t, 4)
	cfg := ns3Config(tp, flows, "timely")
	cfg.StopAt = 5 * ms
	cfg.QueueSampling = QueueSampling{Interval: us, Max: 1 << 22, Ports: []topo.PortRef{port}}
	_, r := run(t, cfg)
	m, p := portQueue(r, port, ms)
	t.Logf("bottleneck queue from 1 ms: mean %.1f KB, peak %.1f KB", m/1e3, p/1e3)
	if p > 2e6 || m > 500e3 {
		t.Errorf("queue mean %.1f KB, peak %.1f KB: want the gradient to hold it under 500 KB on average and 2 MB at most", m/1e3, p/1e3)
	}
}

// TestDCTCPCutScales is DCTCP's point (Alizadeh et al., section 3.1): a
// sender cuts by alpha/2, alpha tracking the fraction of its packets
// marked, so more senders (more marks) cut deeper, each cut stays small,
// and the queue stays near the marking threshold K (300 KB). A sender that
// halved on every mark, as TCP does, would cut by half whatever the
// fraction and let the queue fall far below K.
func TestDCTCPCutScales(t *testing.T) {
	race.SkipLong(t)
	var depths []float64
	for _, n := range []int{4, 16} {
		tp, flows, port := incast(t, n)
		cfg := ns3Config(tp, flows, "dctcp")
		cfg.StopAt = 5 * ms
		cfg.QueueSampling = QueueSampling{Interval: us, Max: 1 << 20, Ports: []topo.PortRef{port}}
		cfg.CCSampling = CCSampling{Interval: us}
		_, r := run(t, cfg)
		low := math.Inf(1)
		for _, s := range r.QueueSamples {
			if s.Time >= 2*ms {
				low = math.Min(low, s.Bytes)
			}
		}
		// A cut is a sample of a flow's rate below the one before it.
		last := map[int]float64{}
		var cuts []float64
		for _, s := range r.CCSamples {
			if l, ok := last[s.Flow]; ok && s.Time >= 2*ms && s.Rate < 0.99*l {
				cuts = append(cuts, 1-s.Rate/l)
			}
			last[s.Flow] = s.Rate
		}
		if len(cuts) == 0 {
			t.Fatalf("%d senders: no cut from 2 ms on", n)
		}
		sort.Float64s(cuts)
		depth := cuts[len(cuts)/2]
		pr := portRecord(r, port)
		marked := float64(pr.Marked) / float64(pr.TxPackets)
		t.Logf("%d senders: %.3f of packets marked, %d cuts of median depth %.3f; queue from 2 ms at least %.1f KB", n, marked, len(cuts), depth, low/1e3)
		if depth > marked || low < 0.8*cfg.DCTCP.KMin {
			t.Errorf("%d senders: median cut %.3f with %.3f marked, queue down to %.1f KB: want cuts no deeper than the marked fraction and the queue above 80%% of K", n, depth, marked, low/1e3)
		}
		depths = append(depths, depth)
	}
	if depths[1] <= depths[0] {
		t.Errorf("median cut %.3f with 16 senders, %.3f with 4: want deeper cuts with more marks", depths[1], depths[0])
	}
}

// portRecord is a port's record in r.
func portRecord(r *Results, port topo.PortRef) PortRecord {
	for _, p := range r.Ports {
		if p.Node == port.Node && p.Port == port.Port {
			return p
		}
	}
	return PortRecord{}
}
