package topo

import (
	"encoding/binary"
	"fmt"
	"math"
)

// maxRouteEntries bounds the switches x edge switches table (4 bytes an
// entry), so that an absurd topology fails with a message rather than
// exhausting memory. A k=64 fat tree needs about 10.5 million entries.
const maxRouteEntries = 1 << 27

// noRoute marks a table entry for a switch that cannot reach the
// destination (or is the destination's own edge switch, which uses the
// per-host entry instead).
const noRoute = ^uint32(0)

// Routes holds the shortest-path (hop count) ECMP next hops of every switch
// towards every host, as datacenter fabrics and the ns-3 RDMA simulator
// route. Paths run host, switches, host: hosts never forward.
//
// Memory grows with the links and with switches x edge switches (an edge
// switch is one with at least one host), never with hosts squared: all
// hosts under one edge switch share the route to it, and the last hop comes
// from a per-host table. Port lists are deduplicated into one shared pool;
// in a fat tree a switch has only a handful of distinct lists.
//
// A Routes is read-only once built and safe for concurrent use. It keeps
// the Topology it was built from, which must not change afterwards.
type Routes struct {
	t   *Topology
	adj Adjacency

	swIndex  []int32 // node -> switch index, -1 for hosts
	edgeNode []int32 // edge index -> switch node ID
	hostEdge []int32 // node -> edge index of the host's switch, -1 for switches
	hostSet  []uint32
	// table[s*len(edgeNode)+e] is the set of switch index s towards the
	// hosts of edge switch e.
	table []uint32
	sets  []span
	pool  []int32
}

// span locates one port list in Routes.pool.
type span struct{ off, end uint32 }

// swPort is a switch's port in the compact switch graph: its number and
// the peer's switch index, -1 when the peer is a host.
type swPort struct{ port, peer int32 }

// ComputeRoutes computes the ECMP routes of a topology. It validates the
// topology first, and fails naming a pair of hosts if one cannot reach the
// other through switches.
//
// It runs one breadth-first search over the switch graph from each edge
// switch; at every other switch, the next hops towards that edge switch are
// the ports whose peer switch is one hop closer, in ascending port order.
func ComputeRoutes(t *Topology) (*Routes, error) {
	return ComputeRoutesProgress(t, nil)
}

// ComputeRoutesProgress is ComputeRoutes calling progress, if not nil,
// after the routes towards each edge switch, with the number done and the
// total: on fat trees of tens of thousands of hosts this takes seconds.
func ComputeRoutesProgress(t *Topology, progress func(done, total int)) (*Routes, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("topo: ComputeRoutes %q: %w", t.Name, err)
	}
	adj := t.Adjacency()
	n := len(t.Nodes)
	r := &Routes{
		t:        t,
		adj:      adj,
		swIndex:  make([]int32, n),
		hostEdge: make([]int32, n),
		hostSet:  make([]uint32, n),
	}

	// Number the switches and build the switch graph (CSR).
	var swNode []int32
	for i, nd := range t.Nodes {
		r.swIndex[i] = -1
		if nd.Kind == Switch {
			r.swIndex[i] = int32(len(swNode))
			swNode = append(swNode, int32(i))
		}
	}
	nsw := len(swNode)
	off := make([]int32, nsw+1)
	ports := make([]swPort, 0, 2*len(t.Links))
	edgeOf := make([]int32, nsw) // switch index -> edge index, -1 if no host
	var edgeHost []int32         // edge index -> its first host, for messages
	for s, node := range swNode {
		edgeOf[s] = -1
		for p, pt := range adj[node] {
			peer := r.swIndex[pt.Peer.Node]
			ports = append(ports, swPort{port: int32(p), peer: peer})
			if peer < 0 && edgeOf[s] < 0 {
				edgeOf[s] = int32(len(r.edgeNode))
				r.edgeNode = append(r.edgeNode, node)
				edgeHost = append(edgeHost, int32(pt.Peer.Node))
			}
		}
		off[s+1] = int32(len(ports))
	}
	ne := len(r.edgeNode)
	if entries := int64(nsw) * int64(ne); entries > maxRouteEntries {
		return nil, fmt.Errorf("topo: ComputeRoutes %q: %d switches x %d edge switches is more than %d route entries",
			t.Name, nsw, ne, maxRouteEntries)
	}

	in := newInterner()
	// The last hop: each host's port at its edge switch (Validate made sure
	// hosts have exactly one link, to a switch).
	for h, nd := range t.Nodes {
		r.hostEdge[h] = -1
		r.hostSet[h] = noRoute
		if nd.Kind != Host || len(adj[h]) == 0 {
			continue
		}
		at := adj[h][0].Peer
		r.hostEdge[h] = edgeOf[r.swIndex[at.Node]]
		r.hostSet[h] = in.intern([]int32{int32(at.Port)})
	}

	r.table = make([]uint32, nsw*ne)
	dist := make([]int32, nsw)
	queue := make([]int32, 0, nsw)
	var buf []int32
	for e, node := range r.edgeNode {
		for i := range dist {
			dist[i] = -1
		}
		root := r.swIndex[node]
		dist[root] = 0
		queue = append(queue[:0], root)
		for qi := 0; qi < len(queue); qi++ {
			u := queue[qi]
			for _, pp := range ports[off[u]:off[u+1]] {
				if pp.peer >= 0 && dist[pp.peer] < 0 {
					dist[pp.peer] = dist[u] + 1
					queue = append(queue, pp.peer)
				}
			}
		}
		for e2, node2 := range r.edgeNode {
			if dist[r.swIndex[node2]] < 0 {
				src, dst := edgeHost[e2], edgeHost[e]
				return nil, fmt.Errorf("topo: ComputeRoutes %q: host %d (%s) cannot reach host %d (%s) through switches",
					t.Name, src, t.Nodes[src].Name, dst, t.Nodes[dst].Name)
			}
		}
		for s := 0; s < nsw; s++ {
			idx := s*ne + e
			if int32(s) == root || dist[s] < 0 {
				r.table[idx] = noRoute
				continue
			}
			buf = buf[:0]
			for _, pp := range ports[off[s]:off[s+1]] {
				if pp.peer >= 0 && dist[pp.peer] == dist[s]-1 {
					buf = append(buf, pp.port)
				}
			}
			r.table[idx] = in.intern(buf)
		}
		if progress != nil {
			progress(e+1, ne)
		}
	}
	r.sets, r.pool = in.sets, in.pool
	return r, nil
}

// interner stores each distinct port list once.
type interner struct {
	ids  map[string]uint32 // encoded list -> set; looked up, never iterated
	key  []byte
	sets []span
	pool []int32
}

func newInterner() *interner {
	return &interner{ids: make(map[string]uint32)}
}

func (in *interner) intern(list []int32) uint32 {
	in.key = in.key[:0]
	for _, p := range list {
		in.key = binary.LittleEndian.AppendUint32(in.key, uint32(p))
	}
	if id, ok := in.ids[string(in.key)]; ok {
		return id
	}
	id := uint32(len(in.sets))
	start := uint32(len(in.pool))
	in.pool = append(in.pool, list...)
	in.sets = append(in.sets, span{off: start, end: uint32(len(in.pool))})
	in.ids[string(in.key)] = id
	return id
}

// set returns the port list of a set; its capacity ends with it, so an
// append by a careless caller copies instead of overwriting the next list.
func (r *Routes) set(id uint32) []int32 {
	if id == noRoute {
		return nil
	}
	sp := r.sets[id]
	return r.pool[sp.off:sp.end:sp.end]
}

// Topology returns the topology the routes were computed for.
func (r *Routes) Topology() *Topology { return r.t }

// NextHops returns the ports of switch sw on shortest paths to host
// dstHost, in ascending port order; at the destination's own edge switch,
// exactly the port of dstHost. It is nil when sw is not a switch, dstHost
// is not a host, or sw cannot reach it.
//
// NextHops allocates nothing: the slice points into storage shared by all
// switches and destinations, so callers must not modify it.
func (r *Routes) NextHops(sw, dstHost int) []int32 {
	if uint(sw) >= uint(len(r.swIndex)) || uint(dstHost) >= uint(len(r.hostEdge)) {
		return nil
	}
	s, e := r.swIndex[sw], r.hostEdge[dstHost]
	if s < 0 || e < 0 {
		return nil
	}
	if int(r.edgeNode[e]) == sw {
		return r.set(r.hostSet[dstHost])
	}
	return r.set(r.table[int(s)*len(r.edgeNode)+int(e)])
}

// HostPort returns where host h attaches: its edge switch and the port
// there. ok is false when h is not a host.
func (r *Routes) HostPort(h int) (at PortRef, ok bool) {
	if uint(h) >= uint(len(r.hostEdge)) || r.hostEdge[h] < 0 {
		return PortRef{}, false
	}
	return r.adj[h][0].Peer, true
}

// Path returns the link indices of one shortest path from host src to host
// dst, taking the first next hop at every switch, so the same pair always
// gets the same path. It is nil when src == dst or either is not a host.
func (r *Routes) Path(src, dst int) []int {
	if src == dst {
		return nil
	}
	if _, ok := r.HostPort(src); !ok {
		return nil
	}
	if _, ok := r.HostPort(dst); !ok {
		return nil
	}
	first := r.adj[src][0]
	links := []int{first.Link}
	node := first.Peer.Node
	for node != dst {
		hops := r.NextHops(node, dst)
		// A shortest path visits each node at most once; the length check
		// only guards against a corrupted table.
		if len(hops) == 0 || len(links) > len(r.t.Nodes) {
			return nil
		}
		p := r.adj[node][hops[0]]
		links = append(links, p.Link)
		node = p.Peer.Node
	}
	return links
}

// PathInfo describes one path, the inputs of an ideal flow completion
// time: base round-trip time plus size over the bottleneck rate.
type PathInfo struct {
	// Links are the link indices from the source host to the destination.
	Links []int
	// Hops is the number of links.
	Hops int
	// Delay is the one-way sum of the links' propagation delays, ps.
	Delay int64
	// MinRate is the bottleneck rate, bits/s; 0 for an empty path.
	MinRate float64
	// Rates are the links' rates, bits/s, in path order.
	Rates []float64
}

// PathInfo describes the path Path(src, dst) returns; the zero PathInfo
// when that is nil.
func (r *Routes) PathInfo(src, dst int) PathInfo {
	links := r.Path(src, dst)
	if links == nil {
		return PathInfo{}
	}
	pi := PathInfo{
		Links:   links,
		Hops:    len(links),
		MinRate: math.Inf(1),
		Rates:   make([]float64, len(links)),
	}
	for i, li := range links {
		l := r.t.Links[li]
		pi.Delay += l.Delay
		pi.Rates[i] = l.Rate
		pi.MinRate = math.Min(pi.MinRate, l.Rate)
	}
	return pi
}
