// Package topo describes simulated networks: hosts and switches joined by
// full-duplex links, the builders for the usual datacenter shapes, the ns-3
// RDMA simulator's topology file format, and shortest-path ECMP routes.
package topo

import (
	"fmt"
	"math"
)

// Kind tells hosts from switches.
type Kind uint8

const (
	// Host is an end host with one NIC: it sends and receives flows but
	// never forwards.
	Host Kind = iota
	// Switch forwards packets between its ports.
	Switch
)

// String returns "host" or "switch" (or "Kind(n)" for a value that is
// neither, so a corrupted node shows up in messages).
func (k Kind) String() string {
	switch k {
	case Host:
		return "host"
	case Switch:
		return "switch"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Size limits shared by the builders and ParseNS3. They are far above any
// fabric the simulator can run and exist so that a mistyped parameter or a
// corrupt file header fails with a message instead of allocating gigabytes.
const (
	MaxNodes = 1 << 21
	MaxLinks = 1 << 23
)

// Node is a host or a switch. Its ID is its index in Topology.Nodes.
type Node struct {
	ID   int
	Kind Kind
	// Name is for people: "h12", "tor3", "agg1.2", "core0".
	Name string
	// Tier is 0 for hosts, 1 for top-of-rack (edge/leaf), 2 for
	// aggregation (or spine of a leaf-spine), 3 for core; 0 for switches of
	// a topology file, which carries no tiers.
	Tier int
	// Group is the pod (fat tree) or rack the node belongs to, -1 for none.
	Group int
}

// Link is a full-duplex link. Parallel links between the same pair of nodes
// are allowed; each is its own port at both ends.
type Link struct {
	A, B  int     // node IDs
	Rate  float64 // bits per second, each direction
	Delay int64   // propagation delay, picoseconds
	// ErrorRate is the ns-3 format's per-packet error rate; the simulator
	// does not model corruption and rejects non-zero values.
	ErrorRate float64
}

// Topology is a network. Ports are numbered per node in the order the
// node's links appear in Links.
type Topology struct {
	Name  string
	Nodes []Node
	Links []Link
}

// PortRef names one end of a link: the node and its port number there.
type PortRef struct {
	Node, Port int
}

// Adjacency lists, for each node, its ports in order: the link index and the
// peer at the far end. It is computed on demand; callers keep the result.
type Adjacency [][]Port

// Port is one end of a link as seen from its node.
type Port struct {
	Link int     // index into Topology.Links
	Peer PortRef // the far end
}

// Adjacency builds the per-node port lists.
func (t *Topology) Adjacency() Adjacency {
	adj := make(Adjacency, len(t.Nodes))
	for i, l := range t.Links {
		pa, pb := len(adj[l.A]), len(adj[l.B])
		if l.A == l.B {
			pb++ // a self-loop is rejected by Validate; keep the numbering sane
		}
		adj[l.A] = append(adj[l.A], Port{Link: i, Peer: PortRef{Node: l.B, Port: pb}})
		adj[l.B] = append(adj[l.B], Port{Link: i, Peer: PortRef{Node: l.A, Port: pa}})
	}
	return adj
}

// Hosts lists the host node IDs in increasing order.
func (t *Topology) Hosts() []int {
	var hs []int
	for _, n := range t.Nodes {
		if n.Kind == Host {
			hs = append(hs, n.ID)
		}
	}
	return hs
}

// Switches lists the switch node IDs in increasing order.
func (t *Topology) Switches() []int {
	var ss []int
	for _, n := range t.Nodes {
		if n.Kind == Switch {
			ss = append(ss, n.ID)
		}
	}
	return ss
}

// String summarises the topology for logs: name and counts.
func (t *Topology) String() string {
	h := len(t.Hosts())
	return fmt.Sprintf("%s: %d nodes (%d hosts, %d switches), %d links",
		t.Name, len(t.Nodes), h, len(t.Nodes)-h, len(t.Links))
}

// Validate checks the topology is one the simulator can run: node IDs
// match their index and kinds are Host or Switch, links join two distinct
// known nodes, not both hosts, with a positive finite rate, non-negative
// delay and zero error rate, every host has exactly one link (one NIC),
// and every host can reach every other. Switches without hosts or links
// are allowed.
func (t *Topology) Validate() error {
	for i, n := range t.Nodes {
		if n.ID != i {
			return fmt.Errorf("node %d has ID %d", i, n.ID)
		}
		if n.Kind != Host && n.Kind != Switch {
			return fmt.Errorf("node %d (%s) has unknown kind %v", i, n.Name, n.Kind)
		}
	}
	degree := make([]int, len(t.Nodes))
	for i, l := range t.Links {
		switch {
		case l.A < 0 || l.A >= len(t.Nodes) || l.B < 0 || l.B >= len(t.Nodes):
			return fmt.Errorf("link %d joins unknown node (%d-%d of %d nodes)", i, l.A, l.B, len(t.Nodes))
		case l.A == l.B:
			return fmt.Errorf("link %d joins node %d to itself", i, l.A)
		case !(l.Rate > 0) || math.IsInf(l.Rate, 1):
			return fmt.Errorf("link %d (%d-%d): rate must be positive and finite, got %g", i, l.A, l.B, l.Rate)
		case l.Delay < 0:
			return fmt.Errorf("link %d (%d-%d): delay must not be negative, got %d ps", i, l.A, l.B, l.Delay)
		case l.ErrorRate != 0:
			return fmt.Errorf("link %d (%d-%d): error rate %g: packet corruption is not modelled, use 0", i, l.A, l.B, l.ErrorRate)
		case t.Nodes[l.A].Kind == Host && t.Nodes[l.B].Kind == Host:
			return fmt.Errorf("link %d joins two hosts (%d-%d): hosts attach to switches", i, l.A, l.B)
		}
		degree[l.A]++
		degree[l.B]++
	}
	for _, n := range t.Nodes {
		if n.Kind == Host && degree[n.ID] != 1 {
			return fmt.Errorf("host %d (%s) has %d links; hosts have exactly one NIC link", n.ID, n.Name, degree[n.ID])
		}
	}
	return t.checkConnected()
}

// checkConnected reports the first host that the lowest-numbered host
// cannot reach. Hosts have one link each, so a search over the whole graph
// never passes through a host and finds exactly the routable pairs.
func (t *Topology) checkConnected() error {
	first := -1
	for _, n := range t.Nodes {
		if n.Kind == Host {
			first = n.ID
			break
		}
	}
	if first < 0 {
		return nil
	}
	adj := t.Adjacency()
	seen := make([]bool, len(t.Nodes))
	seen[first] = true
	queue := []int{first}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, p := range adj[u] {
			if v := p.Peer.Node; !seen[v] {
				seen[v] = true
				queue = append(queue, v)
			}
		}
	}
	for _, n := range t.Nodes {
		if n.Kind == Host && !seen[n.ID] {
			return fmt.Errorf("host %d (%s) cannot reach host %d (%s)", first, t.Nodes[first].Name, n.ID, n.Name)
		}
	}
	return nil
}
