package topo

import (
	"fmt"
	"strconv"
)

// FatTreeOptions configures FatTree.
type FatTreeOptions struct {
	// K is the switch radix: an even number >= 2.
	K int
	// HostRate is the rate of the host-to-edge links, bits/s.
	HostRate float64
	// FabricRate is the rate of every switch-to-switch link, bits/s; 0
	// means the same as HostRate (a full-bisection fabric).
	FabricRate float64
	// Delay is the propagation delay of every link, picoseconds.
	Delay int64
}

// FatTree builds the standard k-ary three-tier fat tree of Al-Fares et al.
// (SIGCOMM 2008): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2
// core switches and k/2 hosts per edge switch, k^3/4 hosts in all. Edge
// switch j of pod p links to every aggregation switch of pod p, and
// aggregation switch j of every pod links to core switches j*(k/2) through
// j*(k/2)+k/2-1.
//
// Node IDs: the hosts first, rack by rack (host i of edge switch j of pod p
// is p*(k/2)^2 + j*(k/2) + i), then the edge switches (pod by pod), the
// aggregation switches (pod by pod) and the core switches. Names are "h12",
// "tor3" (racks numbered across pods), "agg1.0" (pod 1, index 0) and
// "core5". Group is the pod, -1 for core switches.
//
// Links come host links first (link i is host i's), then edge-aggregation
// links (pod by pod, edge by edge, aggregation switch by aggregation
// switch), then aggregation-core links, so each switch's ports are its
// downlinks in order followed by its uplinks in order.
func FatTree(o FatTreeOptions) (*Topology, error) {
	const fn = "FatTree"
	k := o.K
	if k < 2 || k%2 != 0 {
		return nil, optionErr(fn, "K", strconv.Itoa(k), "must be an even number >= 2")
	}
	if k > 1024 {
		return nil, optionErr(fn, "K", strconv.Itoa(k), "too large (more than %d nodes)", MaxNodes)
	}
	if err := checkRate(fn, "HostRate", o.HostRate); err != nil {
		return nil, err
	}
	fabric := o.FabricRate
	if fabric == 0 {
		fabric = o.HostRate
	} else if err := checkRate(fn, "FabricRate", fabric); err != nil {
		return nil, err
	}
	if err := checkDelay(fn, o.Delay); err != nil {
		return nil, err
	}
	h := k / 2
	hosts := k * h * h
	nodes := int64(hosts) + int64(k*h*2) + int64(h*h)
	links := int64(hosts) * 3
	if err := checkSize(fn, fmt.Sprintf("K = %d", k), nodes, links); err != nil {
		return nil, err
	}

	b := newBuilder(fmt.Sprintf("fattree-k%d", k), int(nodes), int(links))
	for i := 0; i < hosts; i++ {
		b.node(Host, fmt.Sprintf("h%d", i), 0, i/(h*h))
	}
	edge := func(p, j int) int { return hosts + p*h + j }
	agg := func(p, j int) int { return hosts + k*h + p*h + j }
	core := func(c int) int { return hosts + 2*k*h + c }
	for p := 0; p < k; p++ {
		for j := 0; j < h; j++ {
			b.node(Switch, fmt.Sprintf("tor%d", p*h+j), 1, p)
		}
	}
	for p := 0; p < k; p++ {
		for j := 0; j < h; j++ {
			b.node(Switch, fmt.Sprintf("agg%d.%d", p, j), 2, p)
		}
	}
	for c := 0; c < h*h; c++ {
		b.node(Switch, fmt.Sprintf("core%d", c), 3, -1)
	}

	for i := 0; i < hosts; i++ {
		b.link(i, edge(i/(h*h), i/h%h), o.HostRate, o.Delay)
	}
	for p := 0; p < k; p++ {
		for j := 0; j < h; j++ {
			for a := 0; a < h; a++ {
				b.link(edge(p, j), agg(p, a), fabric, o.Delay)
			}
		}
	}
	for p := 0; p < k; p++ {
		for j := 0; j < h; j++ {
			for c := j * h; c < j*h+h; c++ {
				b.link(agg(p, j), core(c), fabric, o.Delay)
			}
		}
	}
	return b.t, nil
}
