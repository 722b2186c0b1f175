package sim

import (
	"unsafe"

	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/sim/topo"
)

// Peak resident memory of a run, by what drives it. The figures are
// measured (peak RSS of `p4ctl sim run` on fat trees of k = 12 to 48 with
// few and with 30,000 flows, PFC and DCQCN on) and rounded up; a port is
// most of it because each holds eight egress and eight ingress queues.
// TestMemoryEstimate checks them against the heap of a built network.
const (
	memBase          = 20 << 20 // the program, the event queue, buffers
	memPerPort       = 2600     // both ends of a link count: sim and dataplane port, counters
	memPerRouteEntry = 8        // switches x edge switches: the route table and each switch's FIB word
	memPerFlow       = 1200     // sender, receiver, DCQCN state, record, packets in flight
	// memPerThread is what each part beyond the first adds when a run is
	// split over threads (Config.Threads): its event queue's wheel (a
	// 2 MiB slab of slots), its outboxes and its goroutine. The network
	// itself is not copied: each part holds its share of the nodes, flows
	// and packets.
	memPerThread = 3 << 20
)

// MemoryEstimate is a run's expected peak memory, by part, in bytes.
type MemoryEstimate struct {
	Ports, Routes, Flows, Samples, Base int64
}

// Total is the sum of the parts.
func (m MemoryEstimate) Total() int64 {
	return m.Ports + m.Routes + m.Flows + m.Samples + m.Base
}

// EstimateMemory says how much memory a run of cfg will take at its peak,
// from the size of the topology, the number of flows and the samples
// asked for, without building anything. It is meant to refuse a run the
// machine cannot hold before minutes go into building it; it is good to
// about a quarter either way. Samples are counted up to cfg.StopAt or,
// without one, the last flow's start, so a run that goes on much longer
// than that with fine sampling takes more.
func EstimateMemory(cfg Config) MemoryEstimate {
	m := MemoryEstimate{Base: memBase + int64(max(cfg.Threads, 1)-1)*memPerThread}
	t := cfg.Topology
	if t == nil {
		return m
	}
	m.Ports = int64(2*len(t.Links)) * memPerPort
	switches, edges := 0, 0
	hasHost := make([]bool, len(t.Nodes))
	for _, l := range t.Links {
		if t.Nodes[l.A].Kind == topo.Host {
			hasHost[l.B] = true
		}
		if t.Nodes[l.B].Kind == topo.Host {
			hasHost[l.A] = true
		}
	}
	for i, nd := range t.Nodes {
		if nd.Kind == topo.Switch {
			switches++
			if hasHost[i] {
				edges++
			}
		}
	}
	m.Routes = int64(switches) * int64(edges) * memPerRouteEntry
	m.Flows = int64(len(cfg.Flows)) * memPerFlow
	if cfg.IsLDCP() {
		// LDCP's state lives beside the flows, per flow, in one mode or
		// the other.
		per := unsafe.Sizeof(ldcp.Path{}) + max(unsafe.Sizeof(ldcp.Sender{})+unsafe.Sizeof(ldcp.Receiver{}), unsafe.Sizeof(ldcp.RateSender{}))
		m.Flows += int64(len(cfg.Flows)) * int64(per)
	}
	// So does HPCC's, TIMELY's or DCTCP's sender, and a window per flow
	// when each flow has its own path's.
	per := map[string]uintptr{"hpcc": unsafe.Sizeof(hpccSender{}), "timely": unsafe.Sizeof(timelySender{}), "dctcp": unsafe.Sizeof(dctcpSender{})}[cfg.CC]
	if cfg.Window.PerPath && (cfg.Window.Enabled || cfg.CC == "hpcc") {
		per += unsafe.Sizeof(float64(0))
	}
	m.Flows += int64(len(cfg.Flows)) * int64(per)

	horizon := cfg.StopAt
	for _, f := range cfg.Flows {
		horizon = max(horizon, f.Start)
	}
	samples := func(interval int64, flows []int, size uintptr) int64 {
		if interval <= 0 {
			return 0
		}
		n := len(flows)
		if n == 0 {
			n = len(cfg.Flows)
		}
		return horizon / interval * int64(n) * int64(size)
	}
	m.Samples = samples(cfg.RateSampling.Interval, cfg.RateSampling.Flows, unsafe.Sizeof(RateSample{})) +
		samples(cfg.CCSampling.Interval, cfg.CCSampling.Flows, unsafe.Sizeof(CCSample{}))
	if q := cfg.QueueSampling; q.Interval > 0 {
		m.Samples += int64(q.Max) * int64(unsafe.Sizeof(QueueSample{}))
	}
	return m
}
