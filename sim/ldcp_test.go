package sim

import (
	"math"
	"slices"
	"testing"

	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
)

// The draft's claims for LDCP (draft-dai-tsvwg-pfc-free-congestion-
// control-01), each on the simulator with the draft preset and PFC off.
// docs/ldcp.md lists, for each test, the breakage of the model it was seen
// to fail on.

// frame is a full data frame on the wire at MTU 1000, the unit of the
// draft's queue claims.
const frame = 1000 + dataplane.RoCEHeaders + dataplane.EthOverhead

// ldcpRun simulates flows on tp with LDCP in mode cc ("ldcp" or
// "ldcp-rate"), sampling the queue of port pr every interval.
func ldcpRun(t *testing.T, tp *topo.Topology, flows []workload.Flow, cc string, p ldcp.Params, pr topo.PortRef, interval, stop int64) *Results {
	t.Helper()
	_, r := ldcpNetwork(t, tp, flows, cc, p, pr, interval, stop)
	return r
}

// ldcpNetwork is ldcpRun that also returns the network, for tests that
// read its senders' state.
func ldcpNetwork(t *testing.T, tp *topo.Topology, flows []workload.Flow, cc string, p ldcp.Params, pr topo.PortRef, interval, stop int64) (*Network, *Results) {
	t.Helper()
	cfg := Config{Seed: 1, Topology: tp, Flows: flows, MTU: 1000, AckInterval: 1, CC: cc, LDCP: p,
		Buffer: 4e6, RTO: 1000 * us, StopAt: stop,
		QueueSampling: QueueSampling{Interval: interval, Max: 1 << 20, Ports: []topo.PortRef{pr}},
		CCSampling:    CCSampling{Interval: us},
		RateSampling:  RateSampling{Interval: rateInterval}}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.Run()
	r := n.Results()
	if len(r.Faults) > 0 {
		t.Fatalf("faults: %v", r.Faults)
	}
	return n, r
}

// rateInterval is how often the LDCP runs sample each flow's delivered
// bytes, for goodput over a stretch of a run.
const rateInterval = 10 * us

// goodput is the payload the flows for which keep holds delivered in
// order from time from to time to, b/s; from and to are multiples of
// rateInterval.
func goodput(r *Results, from, to int64, keep func(FlowRecord) bool) float64 {
	var bytes int64
	for _, s := range r.RateSamples {
		if s.Time > from && s.Time <= to && keep(r.Flows[s.Flow]) {
			bytes += s.Bytes
		}
	}
	return float64(bytes) * 8e12 / float64(to-from)
}

// payloadRate is the most goodput a link of rate b/s carries: full
// frames, of which the payload is 1000 bytes.
func payloadRate(rate float64) float64 { return rate * 1000 / frame }

// hostPort is the switch port that faces host h.
func hostPort(t *testing.T, tp *topo.Topology, h int) topo.PortRef {
	t.Helper()
	r, err := topo.ComputeRoutes(tp)
	if err != nil {
		t.Fatal(err)
	}
	at, ok := r.HostPort(h)
	if !ok {
		t.Fatalf("host %d has no port", h)
	}
	return at
}

// queueStats are the median, p99 and largest sampled queue from time from
// on, in full frames.
func queueStats(r *Results, from int64) (median, p99, most float64) {
	var qs []float64
	for _, s := range r.QueueSamples {
		if s.Time >= from && s.Prio == 3 {
			qs = append(qs, s.Bytes/frame)
		}
	}
	if len(qs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	slices.Sort(qs)
	return qs[len(qs)/2], qs[len(qs)*99/100], qs[len(qs)-1]
}

// sampledUtilisation is the sampled port's data rate from the first sample
// at or after time from to the last, over rate: how busy the link was,
// resent packets included, over the stretch its queue was sampled (the
// samples are of a queue holding something). Goodput is what the tests
// judge; this is logged beside it.
func sampledUtilisation(r *Results, from int64, rate float64) float64 {
	var b0, t0, b1, t1 int64
	for _, s := range r.QueueSamples {
		if s.Prio != 3 || s.Time < from {
			continue
		}
		if t0 == 0 {
			b0, t0 = s.TxBytes, s.Time
		}
		b1, t1 = s.TxBytes, s.Time
	}
	if t1 <= t0 {
		return 0
	}
	return float64(b1-b0) * 8e12 / float64(t1-t0) / rate
}

// TestLDCPLongFlows: eight long flows through one 100 Gb/s bottleneck
// (the last hop of a k=4 fat tree, 12.6 us base RTT) keep its queue
// under 10 packets at the median while delivering above 95% of what the
// link carries, and once fast start is over nothing is lost. The claim
// holds for RTTs of about 6 us and up with the draft preset's curve; on a
// single switch (4.2 us) the median is 11 packets (docs/ldcp.md says why).
func TestLDCPLongFlows(t *testing.T) {
	tp, err := topo.FatTree(topo.FatTreeOptions{K: 4, HostRate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	var flows []workload.Flow
	for _, src := range []int{4, 5, 8, 9, 10, 12, 13, 14} {
		flows = append(flows, workload.Flow{Src: src, Dst: 0, Size: 1e9, Priority: 3})
	}
	pr := hostPort(t, tp, 0)
	const from = 200 * us // past fast start and its go-back-N
	r := ldcpRun(t, tp, flows, "ldcp", ldcp.Draft(), pr, us, 2000*us)
	median, p99, most := queueStats(r, from)
	good := goodput(r, from, 2000*us, func(FlowRecord) bool { return true }) / payloadRate(100e9)
	t.Logf("queue median %.1f, p99 %.1f, max %.1f packets; goodput %.4f of the link (busy %.4f); drops %v",
		median, p99, most, good, sampledUtilisation(r, from, 100e9), r.Drops)
	if !(median < 10) {
		t.Errorf("queue median %.1f packets, want under 10", median)
	}
	if !(p99 <= 20) {
		t.Errorf("queue p99 %.1f packets, want at most 20 (K_max)", p99)
	}
	if !(good > 0.95) {
		t.Errorf("goodput %.4f of the bottleneck, want above 0.95", good)
	}
	if r.Drops["buf-max"] != 0 {
		t.Errorf("%d buf_max drops: the stable stage should lose nothing", r.Drops["buf-max"])
	}
}

// TestLDCPIncast: a 100:1 incast on one switch with PFC off. The senders'
// windows go below one packet (the sub-packet mode), the queue stays
// bounded well below buf_max after the first RTT's burst, nothing but
// first-RTT packets is lost, and every flow finishes within 1.5 times
// what the receiver's link needs for all the bytes (an average goodput
// of two thirds of the link over the incast, the first RTT's losses and
// the windows' recovery from them included).
func TestLDCPIncast(t *testing.T) {
	tp, err := topo.Star(topo.StarOptions{N: 101, Rate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	var flows []workload.Flow
	for i := range 100 {
		flows = append(flows, workload.Flow{Src: i, Dst: 100, Size: 100e3, Priority: 3})
	}
	pr := hostPort(t, tp, 100)
	p := ldcp.Draft()
	r := ldcpRun(t, tp, flows, "ldcp", p, pr, us/2, 0)
	median, p99, most := queueStats(r, 20*us)
	below := map[int]bool{}
	for _, s := range r.CCSamples {
		if s.Window < 1 {
			below[s.Flow] = true
		}
	}
	// The bytes alone: every flow's frames over the receiver's link.
	var wire int64
	for _, f := range flows {
		packets := (f.Size + 999) / 1000
		wire += f.Size + packets*(dataplane.RoCEHeaders+dataplane.EthOverhead)
	}
	bytesAlone := int64(float64(wire) * 8e12 / 100e9)
	t.Logf("%d/%d flows done, last at %.1f us (the bytes alone %.1f us); queue median %.1f, p99 %.1f, max %.1f packets; %d flows below one packet; drops %v",
		r.Completed, len(r.Flows), float64(r.LastFinish)/1e6, float64(bytesAlone)/1e6, median, p99, most, len(below), r.Drops)
	if r.Completed != len(r.Flows) {
		t.Errorf("%d of %d flows completed", r.Completed, len(r.Flows))
	}
	if r.LastFinish > bytesAlone*3/2 {
		t.Errorf("last flow done at %.1f us, more than 1.5 times the bytes alone (%.1f us)", float64(r.LastFinish)/1e6, float64(bytesAlone)/1e6)
	}
	if len(below) < 50 {
		t.Errorf("%d flows went below one packet, want most of the 100", len(below))
	}
	if bufMax := p.BufMax / frame; !(most < bufMax/2) {
		t.Errorf("queue reached %.1f packets, want under half of buf_max (%.0f)", most, bufMax)
	}
	if r.Drops["buf-max"] != 0 {
		t.Errorf("%d buf_max drops, want only WRED's", r.Drops["buf-max"])
	}
	if !(median <= 15) {
		t.Errorf("queue median %.1f packets after the first RTT, want at most 15", median)
	}
}

// TestLDCPShortFlow: in an idle network a flow smaller than one BDP goes
// out whole in its first RTT, so it finishes in about one RTT plus its
// serialisation: within 2% of the ideal FCT (flows.csv's), and no sooner
// than the path allows (leastFCT). The ideal counts the base RTT as the
// ns-3 simulator does, a full frame serialised at every hop, where the
// ACK coming back is much shorter: the FCT is below it by the difference.
func TestLDCPShortFlow(t *testing.T) {
	tp, err := topo.FatTree(topo.FatTreeOptions{K: 4, HostRate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	routes, err := topo.ComputeRoutes(tp)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{1000, 20e3, 100e3} {
		flows := []workload.Flow{{Src: 4, Dst: 0, Size: size, Priority: 3}}
		r := ldcpRun(t, tp, flows, "ldcp", ldcp.Draft(), hostPort(t, tp, 0), us, 0)
		f := r.Flows[0]
		least := leastFCT(routes, 4, 0, size)
		t.Logf("%d B: FCT %.3f us, least %.3f us, ideal %.3f us, slowdown %.4f", size, float64(f.FCT)/1e6, float64(least)/1e6, float64(f.Ideal)/1e6, f.Slowdown)
		if f.Finish == 0 || float64(f.FCT) > 1.02*float64(f.Ideal) {
			t.Errorf("%d B: FCT %d ps, want within 2%% of the ideal %d ps", size, f.FCT, f.Ideal)
		}
		if f.FCT < least {
			t.Errorf("%d B: FCT %d ps, less than the path allows, %d ps", size, f.FCT, least)
		}
	}
}

// leastFCT is the least FCT the path from src to dst allows a flow of
// size bytes (MTU 1000), ps: its packets back to back on the first link,
// the last one stored and forwarded over every link (its serialisation
// and the link's delay), and the ACK of it back the same way.
func leastFCT(routes *topo.Routes, src, dst int, size int64) int64 {
	out, back := routes.PathInfo(src, dst), routes.PathInfo(dst, src)
	last := int32(size-(size-1)/1000*1000) + dataplane.RoCEHeaders + dataplane.EthOverhead
	t := (size - 1) / 1000 * serTime(frame, out.Rates[0])
	for _, rate := range out.Rates {
		t += serTime(last, rate)
	}
	for _, rate := range back.Rates {
		t += serTime(dataplane.AckFrame+dataplane.EthOverhead, rate)
	}
	return t + out.Delay + back.Delay
}

// TestLDCPFastStartBurst: four long flows in the stable stage share a
// 100 Gb/s last hop when eleven new flows start at once, each with a BDP
// of first-RTT packets. WRED drops some of those (they are the only
// packets that are not ECN-capable) and the long flows lose nothing to
// them: each retransmits exactly what it did in the same run without the
// burst (its own fast start's losses, at time 0), and nothing is dropped
// past buf_max. From 200 us (the long flows' own fast start over) the
// queue keeps the stable stage's median of under 10 packets, and even the
// burst keeps it under half of buf_max at the 99th percentile; in the
// 200 us from the burst the long flows keep at least a third of the
// link. The new flows finish by go-back-N, and the run counts their
// retransmissions.
func TestLDCPFastStartBurst(t *testing.T) {
	tp, err := topo.FatTree(topo.FatTreeOptions{K: 4, HostRate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	var flows []workload.Flow
	for _, src := range []int{4, 5, 8, 9} {
		flows = append(flows, workload.Flow{Src: src, Dst: 0, Size: 1e9, Priority: 3, Class: "long"})
	}
	const burstAt = 300 * us
	alone := ldcpRun(t, tp, flows, "ldcp", ldcp.Draft(), hostPort(t, tp, 0), us, 1000*us)
	for _, src := range []int{1, 2, 3, 6, 7, 10, 11, 12, 13, 14, 15} {
		flows = append(flows, workload.Flow{Src: src, Dst: 0, Size: 100e3, Start: burstAt, Priority: 3, Class: "new"})
	}
	r := ldcpRun(t, tp, flows, "ldcp", ldcp.Draft(), hostPort(t, tp, 0), us, 1000*us)
	var longRetx, newRetx int64
	var newDone, retxFlows int
	for _, f := range r.Flows {
		if f.Retransmits > 0 {
			retxFlows++
		}
		if f.Class == "long" {
			longRetx += f.Retransmits
			if was := alone.Flows[f.ID].Retransmits; f.Retransmits != was {
				t.Errorf("long flow %d retransmitted %d packets with the burst, %d without", f.ID, f.Retransmits, was)
			}
			continue
		}
		newRetx += f.Retransmits
		if f.Finish != 0 {
			newDone++
		}
	}
	t.Logf("drops %v (%v without the burst); long flows retransmitted %d, new flows %d; %d of 11 new flows done",
		r.Drops, alone.Drops, longRetx, newRetx, newDone)
	const from = 200 * us
	median, p99, most := queueStats(r, from)
	m0, p0, x0 := queueStats(alone, from)
	long := func(f FlowRecord) bool { return f.Class == "long" }
	during, without := goodput(r, burstAt, burstAt+200*us, long), goodput(alone, burstAt, burstAt+200*us, long)
	t.Logf("queue from %d us: median %.1f, p99 %.1f, max %.1f packets (without the burst %.1f, %.1f, %.1f); long flows %.2f Gb/s in the 200 us from the burst (%.2f without it)",
		from/us, median, p99, most, m0, p0, x0, during/1e9, without/1e9)
	if !(median < 10) || !(p99 < ldcp.Draft().BufMax/frame/2) {
		t.Errorf("queue from %d us: median %.1f, p99 %.1f packets; want under 10 and under half of buf_max", from/us, median, p99)
	}
	if link := payloadRate(100e9); !(during >= link/3) {
		t.Errorf("long flows got %.2f Gb/s in the 200 us from the burst, less than a third of the link's %.2f", during/1e9, link/1e9)
	}
	if r.Drops["wred"] <= alone.Drops["wred"] || newRetx == 0 {
		t.Errorf("WRED dropped %d packets (%d without the burst) and the new flows retransmitted %d: the burst should have been cut",
			r.Drops["wred"], alone.Drops["wred"], newRetx)
	}
	if r.Drops["buf-max"] != 0 || len(r.Drops) != 1 {
		t.Errorf("drops %v, want WRED's alone", r.Drops)
	}
	if newDone != 11 {
		t.Errorf("%d of 11 new flows finished", newDone)
	}
	if r.Retransmits != longRetx+newRetx || r.RetransmitFlows != retxFlows {
		t.Errorf("run counts %d retransmissions by %d flows, flows sum to %d by %d", r.Retransmits, r.RetransmitFlows, longRetx+newRetx, retxFlows)
	}
}

// TestLDCPRate: the rate-based variant on two long flows into one host.
// Each flow's RTT probes come back (raising the window) with the queueing
// they met in the data queue, CNPs cut the window, and the queue stays far
// below buf_max after the start at line rate.
func TestLDCPRate(t *testing.T) {
	tp, err := topo.Star(topo.StarOptions{N: 3, Rate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	flows := []workload.Flow{{Src: 0, Dst: 2, Size: 1e9, Priority: 3}, {Src: 1, Dst: 2, Size: 1e9, Priority: 3}}
	n, r := ldcpNetwork(t, tp, flows, "ldcp-rate", ldcp.Draft(), hostPort(t, tp, 2), us, 1000*us)
	median, p99, most := queueStats(r, 100*us)
	// Goodput, not the link's busy time: go-back-N's resent packets keep a
	// link busy without delivering anything.
	util := sampledUtilisation(r, 100*us, 100e9)
	good := goodput(r, 100*us, 1000*us, func(FlowRecord) bool { return true }) / payloadRate(100e9)
	t.Logf("queue median %.1f, p99 %.1f, max %.1f packets; goodput %.4f of the link (busy %.4f); drops %v", median, p99, most, good, util, r.Drops)
	// The RTT each sample's rate was computed with: the last probe's.
	probeBase := 2*2*us + 2*2*serTime(ldcpProbeFrame, 100e9)
	maxRTT := make([]int64, len(flows))
	for _, c := range r.CCSamples {
		path := n.ldcp.path[c.Flow]
		if c.Rate < path.LineRate {
			maxRTT[c.Flow] = max(maxRTT[c.Flow], int64(c.Window*float64(path.Wire)*8e12/c.Rate))
		}
	}
	for i := range flows {
		s := &n.ldcp.rate[i]
		t.Logf("flow %d: window %.3f, RTT %d ps (base %d), %d responses, %d CNPs, %d probe timeouts, %d B delivered",
			i, s.Window(), s.RTT(), n.ldcp.path[i].RTT, s.Responses, s.CNPs, s.ProbeTimeouts, r.Flows[i].Delivered)
		if s.Responses < 10 || s.CNPs == 0 || r.Flows[i].CNPs != int(s.CNPs) {
			t.Errorf("flow %d: %d probe responses, %d CNPs (%d in its record): the loop is not closed", i, s.Responses, s.CNPs, r.Flows[i].CNPs)
		}
		t.Logf("flow %d: largest probe RTT %d ps, unloaded %d ps", i, maxRTT[i], probeBase)
		if maxRTT[i] < probeBase+5*serTime(frame, 100e9) {
			t.Errorf("flow %d: the largest probe RTT %d ps is not 5 packets above the unloaded %d ps: probes skip the data queue", i, maxRTT[i], probeBase)
		}
		if r.Flows[i].Delivered < 1e6 {
			t.Errorf("flow %d delivered %d B in 1 ms", i, r.Flows[i].Delivered)
		}
	}
	if !(p99 < ldcp.Draft().BufMax/frame/2) {
		t.Errorf("queue p99 %.1f packets after 100 us, want under half of buf_max", p99)
	}
}
