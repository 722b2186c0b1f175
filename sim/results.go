package sim

import (
	"math"

	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/sim/topo"
)

// Results is what a run produced.
type Results struct {
	Flows []FlowRecord
	Ports []PortRecord
	// Hosts' PFC: frames received by host NICs, PAUSE (quanta > 0) and
	// RESUME (quanta 0) apart, as switch ports count them.
	HostPauses, HostResumes int64
	// Drops by reason over all switches; LosslessDrops counts those of
	// lossless priorities, which PFC must prevent (a fault if non-zero).
	Drops         map[string]int64
	LosslessDrops int64
	QueueSamples  []QueueSample
	RateSamples   []RateSample
	CCSamples     []CCSample
	// Faults are conditions that invalidate the run (drops with PFC on,
	// deadlock); empty for a good run.
	Faults []string

	// Run statistics.
	End         int64  // simulated time at the end, ps
	LastFinish  int64  // completion time of the last flow, ps
	Events      uint64 // events executed
	DataPackets int64  // data packets sent by hosts, retransmissions included
	PacketHops  int64  // packets delivered over a link, all kinds
	CNPs        int64  // congestion notifications senders acted on (CNPs or CNP-flagged ACKs)
	// OutOfOrder counts data packets that arrived past a gap: losses on
	// lossy priorities, reordering (by SAR detours) on lossless ones.
	OutOfOrder int64
	// Retransmits counts data packets sent again (go-back-N after a NACK
	// or a timeout), and RetransmitFlows the flows that sent any.
	Retransmits     int64
	RetransmitFlows int
	// RCM sums the switches' RCM counters (zero without RCM).
	RCM       dataplane.RCMStats
	Completed int
	// NotMeasured names what the run could not measure and holds as 0
	// (an emulation's switches count less than the simulator's): columns
	// of ports.csv and the summary's window_cuts. Reports leave those
	// columns empty and say what is missing, rather than give 0 for a
	// measurement.
	NotMeasured []string
}

// FlowRecord is one flow's outcome. Times are picoseconds.
type FlowRecord struct {
	ID       int
	Src, Dst int
	SPort    int
	DPort    int
	Size     int64
	Start    int64
	Finish   int64 // 0 if the flow did not complete
	FCT      int64 // Finish - Start
	// Ideal is the FCT of the flow alone in the network: the base RTT plus
	// its bytes on the wire (headers included) over the path's bottleneck.
	Ideal    int64
	Slowdown float64 // FCT / Ideal, at least 1
	// Delivered is the payload the receiver has taken in order, bytes (the
	// whole size once the flow completes).
	Delivered   int64
	Class       string
	Retransmits int64
	// CNPs counts the congestion notifications the sender acted on:
	// DCQCN's CNPs (or CNP-flagged ACKs), LDCP's ECE-marked ACKs, or the
	// CNP-flagged ACKs of LDCP's rate variant. RateCuts counts DCQCN's
	// rate cuts, and LDCP's window cuts, one per notification.
	CNPs     int
	RateCuts int
}

// PortRecord is one switch port's counters.
type PortRecord struct {
	Node, Port          int
	NodeName            string
	Peer                int // node at the far end
	Rate                float64
	TxPackets, TxBytes  int64 // data
	CtrlPackets         int64
	Marked              int64
	PausesSent, Resumes int64
	// PAUSE (quanta > 0) and RESUME (quanta 0) frames received.
	PausesReceived, ResumesReceived int64
	PausedTime                      int64 // summed over priorities, ps
	Drops                           int64
	MaxQueueBytes                   float64
	MaxIngressBytes                 float64
	MaxHeadroomBytes                float64
	Utilisation                     float64 // busy time / end time
}

// QueueSample is one egress queue's length at a time. When specific ports
// are sampled it also carries their data counters so far, for throughput
// over time.
type QueueSample struct {
	Time       int64
	Node, Port int
	Prio       int
	Bytes      float64
	// TxPackets and TxBytes count the data frames the port has sent so far
	// (bytes on the wire, preamble and gap included); zero when all ports
	// are sampled.
	TxPackets, TxBytes int64
}

// RateSample is the bytes a flow delivered in order during one sampling
// interval ending at Time.
type RateSample struct {
	Time  int64
	Flow  int
	Bytes int64
}

// CCSample is one sender's congestion-control state at a time: rates in
// bits/s. DCQCN fills Rate, Target and Alpha; LDCP fills Window (packets,
// never 0 under LDCP) and Rate, the window's rate over the base RTT (the
// rate variant's own rate, which uses the last probe's RTT); HPCC and
// TIMELY fill Rate, DCTCP Rate and Alpha.
type CCSample struct {
	Time         int64
	Flow         int
	Rate, Target float64
	Alpha        float64
	Window       float64
}

// Results collects the outcome of the run so far.
func (n *Network) Results() *Results {
	r := &Results{
		Drops: map[string]int64{}, Faults: append([]string(nil), n.faults...),
		QueueSamples: n.queueSamples, RateSamples: n.rateSamples, CCSamples: n.ccSamples,
		End: n.end,
	}
	for _, pt := range n.parts {
		r.HostPauses += pt.hostPauses
		r.HostResumes += pt.hostResumes
		r.Events += pt.q.Executed
		r.DataPackets += pt.dataPackets
		r.PacketHops += pt.hops
		r.OutOfOrder += pt.outOfOrder
	}
	r.Flows = make([]FlowRecord, len(n.flows))
	for i := range n.flows {
		f := &n.flows[i]
		spec := &n.cfg.Flows[i]
		rec := FlowRecord{ID: i, Src: spec.Src, Dst: spec.Dst, SPort: int(f.sport), DPort: int(f.dport),
			Size: f.size, Start: f.start, Class: spec.Class, Retransmits: f.retransmits,
			CNPs: f.rp.CNPs, RateCuts: f.rp.Cuts, Delivered: n.rx[i].expected}
		switch n.ldcp.mode {
		case ldcpWindow:
			rec.CNPs = int(n.ldcp.tx[i].ECEs)
			rec.RateCuts = rec.CNPs
		case ldcpRate:
			rec.CNPs = int(n.ldcp.rate[i].CNPs)
			rec.RateCuts = rec.CNPs
		}
		if f.retransmits > 0 {
			r.Retransmits += f.retransmits
			r.RetransmitFlows++
		}
		rec.Ideal = n.cfg.Wire.IdealFCT(n.routes, spec.Src, spec.Dst, f.size, n.cfg.MTU)
		if f.finish != 0 {
			rec.Finish = f.finish
			rec.FCT = f.finish - f.start
			rec.Slowdown = math.Max(1, float64(rec.FCT)/float64(rec.Ideal))
			r.Completed++
			r.LastFinish = max(r.LastFinish, f.finish)
		}
		r.Flows[i] = rec
		r.CNPs += int64(rec.CNPs)
	}
	adj := n.topo.Adjacency()
	for _, s := range n.switches {
		if s == nil {
			continue
		}
		rs := s.sw.RCMStats()
		r.RCM.CNsSent += rs.CNsSent
		r.RCM.ClearCNsSent += rs.ClearCNsSent
		r.RCM.CNsReceived += rs.CNsReceived
		r.RCM.Held += rs.Held
		r.RCM.Cuts += rs.Cuts
		r.RCM.Detours += rs.Detours
		for i := range s.ports {
			p := &s.ports[i]
			st := s.sw.Stats(i, r.End)
			var paused, drops int64
			for _, d := range st.PausedTime {
				paused += d
			}
			for reason, d := range st.Drops {
				drops += d
				if d > 0 {
					r.Drops[dataplane.DropReason(reason).String()] += d
				}
			}
			r.LosslessDrops += st.Drops[dataplane.DropHeadroomFull]
			rec := PortRecord{Node: s.id, Port: i, NodeName: n.topo.Nodes[s.id].Name, Peer: adj[s.id][i].Peer.Node,
				Rate: p.rate, TxPackets: st.TxPackets, TxBytes: st.TxBytes, CtrlPackets: st.CtrlPackets,
				Marked: st.Marked, PausesSent: st.PausesSent, Resumes: st.ResumesSent, PausesReceived: st.PausesReceived,
				ResumesReceived: st.ResumesReceived,
				PausedTime:      paused, Drops: drops}
			for q := 0; q < dataplane.NumPrio; q++ {
				rec.MaxQueueBytes = max(rec.MaxQueueBytes, st.MaxQueueBytes[q])
				rec.MaxIngressBytes = max(rec.MaxIngressBytes, st.MaxIngressBytes[q])
				rec.MaxHeadroomBytes = max(rec.MaxHeadroomBytes, st.MaxHeadroomBytes[q])
			}
			if r.End > 0 {
				rec.Utilisation = float64(p.busyTime) / float64(r.End)
			}
			r.Ports = append(r.Ports, rec)
		}
	}
	if r.LosslessDrops > 0 {
		r.Faults = append(r.Faults, "packets dropped on a lossless priority with PFC on: a simulator fault (headroom or thresholds too small for this configuration)")
	}
	return r
}

// sampler takes samples at fixed intervals. Samples are taken between
// windows, with every event up to the sample's time run in every part,
// so that they see the same state however the network is split.
type sampler struct {
	kind     int
	next     int64 // when the next sample is due; maxTime when no more are
	interval int64
	last     []int64 // per sampled flow: delivered bytes at the last sample
}

const (
	sampleQueues = 1
	sampleRates  = 2
	sampleCC     = 3
)

func (n *Network) startSamplers() {
	if qs := n.cfg.QueueSampling; qs.Interval > 0 && qs.Max > 0 {
		n.samplers = append(n.samplers, &sampler{kind: sampleQueues, next: qs.Interval, interval: qs.Interval})
	}
	if rs := n.cfg.RateSampling; rs.Interval > 0 {
		flows := rs.Flows
		if len(flows) == 0 {
			flows = make([]int, len(n.flows))
			for i := range flows {
				flows[i] = i
			}
			n.cfg.RateSampling.Flows = flows
		}
		n.samplers = append(n.samplers, &sampler{kind: sampleRates, next: rs.Interval, interval: rs.Interval, last: make([]int64, len(flows))})
	}
	if cs := n.cfg.CCSampling; cs.Interval > 0 && (n.cc || n.ldcp.mode != ldcpOff || n.ack.scheme != ackOff) {
		if len(cs.Flows) == 0 {
			n.cfg.CCSampling.Flows = make([]int, len(n.flows))
			for i := range n.flows {
				n.cfg.CCSampling.Flows[i] = i
			}
		}
		n.samplers = append(n.samplers, &sampler{kind: sampleCC, next: 0, interval: cs.Interval})
	}
}

// take takes the sample due at now, with every event up to now run, and
// sets the time of the next.
func (s *sampler) take(n *Network, now int64) {
	s.next = now + s.interval
	switch s.kind {
	case sampleQueues:
		qs := n.cfg.QueueSampling
		if len(qs.Ports) > 0 {
			for _, pr := range qs.Ports {
				sw := n.switches[pr.Node]
				st := sw.sw.Stats(pr.Port, now)
				for q := 0; q < dataplane.NumPrio; q++ {
					if b := sw.sw.QueueBytes(pr.Port, q); b > 0 || sw.sw.Lossless(q) {
						n.queueSamples = append(n.queueSamples, QueueSample{Time: now, Node: pr.Node, Port: pr.Port, Prio: q,
							Bytes: b, TxPackets: st.TxPackets, TxBytes: st.TxBytes})
					}
				}
			}
		} else {
			for _, sw := range n.switches {
				if sw == nil {
					continue
				}
				for i := range sw.ports {
					for q := 0; q < dataplane.NumPrio; q++ {
						if b := sw.sw.QueueBytes(i, q); b > 0 {
							n.queueSamples = append(n.queueSamples, QueueSample{Time: now, Node: sw.id, Port: i, Prio: q, Bytes: b})
						}
					}
				}
			}
		}
		if len(n.queueSamples) >= qs.Max {
			n.queueSamples = n.queueSamples[:qs.Max]
			s.next = maxTime
		}
	case sampleRates:
		for i, id := range n.cfg.RateSampling.Flows {
			d := n.rx[id].expected
			n.rateSamples = append(n.rateSamples, RateSample{Time: now, Flow: id, Bytes: d - s.last[i]})
			s.last[i] = d
		}
	case sampleCC:
		for _, id := range n.cfg.CCSampling.Flows {
			f := &n.flows[id]
			if now < f.start || f.finish != 0 {
				continue
			}
			switch {
			case n.ldcp.mode == ldcpWindow:
				n.ccSamples = append(n.ccSamples, CCSample{Time: now, Flow: id,
					Rate: n.ldcpWindowRate(id), Window: n.ldcp.tx[id].Window()})
			case n.ldcp.mode == ldcpRate:
				r := &n.ldcp.rate[id]
				n.ccSamples = append(n.ccSamples, CCSample{Time: now, Flow: id, Rate: r.Rate(), Window: r.Window()})
			case n.ack.scheme == ackDCTCP:
				s := &n.ack.dctcp[id]
				n.ccSamples = append(n.ccSamples, CCSample{Time: now, Flow: id, Rate: s.Rate(), Alpha: s.Alpha()})
			case n.ack.scheme != ackOff:
				n.ccSamples = append(n.ccSamples, CCSample{Time: now, Flow: id, Rate: n.ackRate(int32(id))})
			default:
				n.ccSamples = append(n.ccSamples, CCSample{Time: now, Flow: id,
					Rate: f.rp.Rate(now), Target: f.rp.Target(now), Alpha: f.rp.Alpha(now)})
			}
		}
	}
}

// PortOf finds the port of node a that faces node b (the first, if
// parallel links join them); ok is false if none does.
func PortOf(t *topo.Topology, a, b int) (topo.PortRef, bool) {
	for i, p := range t.Adjacency()[a] {
		if p.Peer.Node == b {
			return topo.PortRef{Node: a, Port: i}, true
		}
	}
	return topo.PortRef{}, false
}

// FlowPath is the route flow id's data packets take: each switch port they
// leave by, from the source's ToR to the destination's, as the switches'
// ECMP hashing picks it.
func (n *Network) FlowPath(id int) []topo.PortRef {
	f := &n.flows[id]
	p := dataplane.Packet{Kind: dataplane.Data, Src: int32(f.src.id), Dst: int32(f.dst.id), Hash: f.hash}
	var path []topo.PortRef
	at := f.src.port.peer
	for at.sw != nil && len(path) <= len(n.switches) {
		out := at.sw.sw.Route(&p)
		if out < 0 {
			return nil
		}
		path = append(path, topo.PortRef{Node: at.sw.id, Port: out})
		at = at.sw.ports[out].peer
	}
	return path
}

// FlowsWithHash returns the flows whose data packets carry 5-tuple hash
// h, the flow ID RCM's switches know them by (RCMTrace): usually one,
// more when hashes collide, none for a hash no flow has.
func (n *Network) FlowsWithHash(h uint32) []int {
	if n.byHash == nil {
		n.byHash = make(map[uint32][]int, len(n.flows))
		for i := range n.flows {
			n.byHash[n.flows[i].hash] = append(n.byHash[n.flows[i].hash], i)
		}
	}
	return n.byHash[h]
}
