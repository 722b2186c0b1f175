package topo

import (
	"fmt"
	"math"
	"strconv"
)

// builder accumulates nodes and links; node IDs are assigned in call order.
type builder struct {
	t *Topology
}

// newBuilder starts a topology with room for the given counts.
func newBuilder(name string, nodes, links int) *builder {
	return &builder{t: &Topology{
		Name:  name,
		Nodes: make([]Node, 0, nodes),
		Links: make([]Link, 0, links),
	}}
}

// node adds a node and returns its ID.
func (b *builder) node(kind Kind, name string, tier, group int) int {
	id := len(b.t.Nodes)
	b.t.Nodes = append(b.t.Nodes, Node{ID: id, Kind: kind, Name: name, Tier: tier, Group: group})
	return id
}

// link adds a link; its index is the next port of both ends.
func (b *builder) link(a, c int, rate float64, delay int64) {
	b.t.Links = append(b.t.Links, Link{A: a, B: c, Rate: rate, Delay: delay})
}

// checkRate requires a positive, finite rate in bits/s.
func checkRate(fn, field string, v float64) error {
	if !(v > 0) || math.IsInf(v, 1) {
		return optionErr(fn, field, fmt.Sprint(v), "must be a positive, finite rate in bits/s")
	}
	return nil
}

// checkDelay requires a non-negative delay.
func checkDelay(fn string, d int64) error {
	if d < 0 {
		return optionErr(fn, "Delay", fmt.Sprintf("%d ps", d), "must not be negative")
	}
	return nil
}

// checkCount requires an integer parameter to be at least the given floor.
func checkCount(fn, field string, v, least int) error {
	if v < least {
		return optionErr(fn, field, strconv.Itoa(v), "must be at least %d", least)
	}
	return nil
}

// OptionError is a builder option that is missing or out of range.
// Callers that take the options from elsewhere (a scenario file) use its
// parts to word the error in their own terms.
type OptionError struct {
	Builder string // "FatTree"
	Option  string // the options' field: "K"; empty for the options together
	Value   string // the value as the builder saw it: "3", "5000 ps"
	Reason  string // what is wrong
}

func (e *OptionError) Error() string {
	switch {
	case e.Option == "":
		return fmt.Sprintf("topo.%s: %s", e.Builder, e.Reason)
	case e.Value == "":
		return fmt.Sprintf("topo.%s: %s: %s", e.Builder, e.Option, e.Reason)
	}
	return fmt.Sprintf("topo.%s: %s = %s: %s", e.Builder, e.Option, e.Value, e.Reason)
}

func optionErr(builder, option, value, format string, args ...any) error {
	return &OptionError{Builder: builder, Option: option, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// checkSize applies MaxNodes and MaxLinks; what names the parameters that
// set the size. Counts are int64 so the products cannot overflow first.
func checkSize(fn, what string, nodes, links int64) error {
	if nodes > MaxNodes {
		return optionErr(fn, "", "", "%s gives %d nodes, more than MaxNodes (%d)", what, nodes, MaxNodes)
	}
	if links > MaxLinks {
		return optionErr(fn, "", "", "%s gives %d links, more than MaxLinks (%d)", what, links, MaxLinks)
	}
	return nil
}

// LeafSpineOptions configures LeafSpine.
type LeafSpineOptions struct {
	// Leaves and Spines are the switch counts, each >= 1.
	Leaves, Spines int
	// HostsPerLeaf is the number of hosts under each leaf, >= 1.
	HostsPerLeaf int
	// HostRate is the rate of the host-to-leaf links, bits/s.
	HostRate float64
	// UplinkRate is the rate of each leaf-to-spine link, bits/s. Set
	// exactly one of UplinkRate and Oversubscription.
	UplinkRate float64
	// Oversubscription is a leaf's host capacity over its uplink capacity,
	// at least 1; the uplink rate becomes
	// HostsPerLeaf*HostRate / (Spines*LinksPerSpine*Oversubscription).
	Oversubscription float64
	// LinksPerSpine is the number of parallel links from each leaf to each
	// spine; 0 means 1.
	LinksPerSpine int
	// Delay is the propagation delay of every link, picoseconds.
	Delay int64
}

// LeafSpine builds a two-tier Clos fabric: every leaf links to every spine
// (LinksPerSpine times), each leaf has HostsPerLeaf hosts.
//
// Node IDs: hosts first, leaf by leaf, then the leaves ("leaf0"...) and the
// spines ("spine0"...). Leaves are tier 1, spines tier 2. Group is the
// leaf (rack) index for hosts and leaves, -1 for spines. Links: host links
// (link i is host i's), then for each leaf, for each spine, its parallel
// links.
func LeafSpine(o LeafSpineOptions) (*Topology, error) {
	const fn = "LeafSpine"
	if err := checkCount(fn, "Leaves", o.Leaves, 1); err != nil {
		return nil, err
	}
	if err := checkCount(fn, "Spines", o.Spines, 1); err != nil {
		return nil, err
	}
	if err := checkCount(fn, "HostsPerLeaf", o.HostsPerLeaf, 1); err != nil {
		return nil, err
	}
	if err := checkCount(fn, "LinksPerSpine", o.LinksPerSpine, 0); err != nil {
		return nil, err
	}
	if err := checkRate(fn, "HostRate", o.HostRate); err != nil {
		return nil, err
	}
	if err := checkDelay(fn, o.Delay); err != nil {
		return nil, err
	}
	par := o.LinksPerSpine
	if par == 0 {
		par = 1
	}
	var uplink float64
	switch {
	case o.UplinkRate != 0 && o.Oversubscription != 0:
		return nil, optionErr(fn, "Oversubscription", fmt.Sprint(o.Oversubscription), "UplinkRate (%g) is set too: set exactly one", o.UplinkRate)
	case o.UplinkRate != 0:
		if err := checkRate(fn, "UplinkRate", o.UplinkRate); err != nil {
			return nil, err
		}
		uplink = o.UplinkRate
	case o.Oversubscription != 0:
		if !(o.Oversubscription >= 1) || math.IsInf(o.Oversubscription, 1) {
			return nil, optionErr(fn, "Oversubscription", fmt.Sprint(o.Oversubscription), "must be a finite ratio >= 1")
		}
		uplink = float64(o.HostsPerLeaf) * o.HostRate / (float64(o.Spines) * float64(par) * o.Oversubscription)
		if err := checkRate(fn, "uplink rate from Oversubscription", uplink); err != nil {
			return nil, err
		}
	default:
		return nil, optionErr(fn, "Oversubscription", "", "neither it nor UplinkRate is set: set exactly one")
	}
	hosts := int64(o.Leaves) * int64(o.HostsPerLeaf)
	fabricLinks := int64(o.Leaves) * int64(o.Spines) * int64(par)
	what := fmt.Sprintf("Leaves = %d, Spines = %d, HostsPerLeaf = %d, LinksPerSpine = %d", o.Leaves, o.Spines, o.HostsPerLeaf, par)
	if err := checkSize(fn, what, hosts+int64(o.Leaves)+int64(o.Spines), hosts+fabricLinks); err != nil {
		return nil, err
	}

	name := fmt.Sprintf("leafspine-%dx%dx%d", o.Leaves, o.Spines, o.HostsPerLeaf)
	b := newBuilder(name, int(hosts)+o.Leaves+o.Spines, int(hosts+fabricLinks))
	for i := 0; i < int(hosts); i++ {
		b.node(Host, fmt.Sprintf("h%d", i), 0, i/o.HostsPerLeaf)
	}
	leaf0 := int(hosts)
	spine0 := leaf0 + o.Leaves
	for l := 0; l < o.Leaves; l++ {
		b.node(Switch, fmt.Sprintf("leaf%d", l), 1, l)
	}
	for s := 0; s < o.Spines; s++ {
		b.node(Switch, fmt.Sprintf("spine%d", s), 2, -1)
	}
	for i := 0; i < int(hosts); i++ {
		b.link(i, leaf0+i/o.HostsPerLeaf, o.HostRate, o.Delay)
	}
	for l := 0; l < o.Leaves; l++ {
		for s := 0; s < o.Spines; s++ {
			for p := 0; p < par; p++ {
				b.link(leaf0+l, spine0+s, uplink, o.Delay)
			}
		}
	}
	return b.t, nil
}

// DumbbellOptions configures Dumbbell.
type DumbbellOptions struct {
	// Left and Right are the host counts on the two sides, each >= 1.
	Left, Right int
	// HostRate is the rate of the host links, bits/s.
	HostRate float64
	// BottleneckRate is the rate of the switch-to-switch link; 0 means
	// HostRate.
	BottleneckRate float64
	// Delay is the propagation delay of every link, picoseconds.
	Delay int64
}

// Dumbbell builds two switches joined by one bottleneck link, with Left
// hosts on the first and Right hosts on the second.
//
// Node IDs: the left hosts, the right hosts, then "tor0" (left) and "tor1"
// (right). Group is 0 on the left, 1 on the right. Links: host links (link
// i is host i's), then the bottleneck last.
func Dumbbell(o DumbbellOptions) (*Topology, error) {
	const fn = "Dumbbell"
	if err := checkCount(fn, "Left", o.Left, 1); err != nil {
		return nil, err
	}
	if err := checkCount(fn, "Right", o.Right, 1); err != nil {
		return nil, err
	}
	if err := checkRate(fn, "HostRate", o.HostRate); err != nil {
		return nil, err
	}
	bottleneck := o.BottleneckRate
	if bottleneck == 0 {
		bottleneck = o.HostRate
	} else if err := checkRate(fn, "BottleneckRate", bottleneck); err != nil {
		return nil, err
	}
	if err := checkDelay(fn, o.Delay); err != nil {
		return nil, err
	}
	hosts := int64(o.Left) + int64(o.Right)
	if err := checkSize(fn, fmt.Sprintf("Left = %d, Right = %d", o.Left, o.Right), hosts+2, hosts+1); err != nil {
		return nil, err
	}
	b := newBuilder(fmt.Sprintf("dumbbell-%dx%d", o.Left, o.Right), int(hosts)+2, int(hosts)+1)
	for i := 0; i < int(hosts); i++ {
		side := 0
		if i >= o.Left {
			side = 1
		}
		b.node(Host, fmt.Sprintf("h%d", i), 0, side)
	}
	left := b.node(Switch, "tor0", 1, 0)
	right := b.node(Switch, "tor1", 1, 1)
	for i := 0; i < int(hosts); i++ {
		sw := left
		if i >= o.Left {
			sw = right
		}
		b.link(i, sw, o.HostRate, o.Delay)
	}
	b.link(left, right, bottleneck, o.Delay)
	return b.t, nil
}

// StarOptions configures Star.
type StarOptions struct {
	// N is the number of hosts, >= 1.
	N int
	// Rate is the rate of every link, bits/s.
	Rate float64
	// Delay is the propagation delay of every link, picoseconds.
	Delay int64
}

// Star builds N hosts on one switch, the shape of an N:1 incast. Hosts are
// nodes 0..N-1 ("h0"...), the switch is node N ("tor0"); link i is host
// i's. Group is 0 for every node.
func Star(o StarOptions) (*Topology, error) {
	const fn = "Star"
	if err := checkCount(fn, "N", o.N, 1); err != nil {
		return nil, err
	}
	if err := checkRate(fn, "Rate", o.Rate); err != nil {
		return nil, err
	}
	if err := checkDelay(fn, o.Delay); err != nil {
		return nil, err
	}
	if err := checkSize(fn, fmt.Sprintf("N = %d", o.N), int64(o.N)+1, int64(o.N)); err != nil {
		return nil, err
	}
	b := newBuilder(fmt.Sprintf("star-%d", o.N), o.N+1, o.N)
	for i := 0; i < o.N; i++ {
		b.node(Host, fmt.Sprintf("h%d", i), 0, 0)
	}
	sw := b.node(Switch, "tor0", 1, 0)
	for i := 0; i < o.N; i++ {
		b.link(i, sw, o.Rate, o.Delay)
	}
	return b.t, nil
}

// Defaults of TestbedOptions.
const (
	// TestbedHostsPerToR is the DCQCN paper's benchmark setting: five
	// hosts under each ToR.
	TestbedHostsPerToR = 5
	// TestbedRate is the testbed's link rate: 40 Gb/s everywhere.
	TestbedRate = 40e9
)

// TestbedOptions configures Testbed.
type TestbedOptions struct {
	// HostsPerToR is the number of hosts under each ToR; 0 means
	// TestbedHostsPerToR.
	HostsPerToR int
	// Rate is the rate of every link, bits/s; 0 means TestbedRate.
	Rate float64
	// Delay is the propagation delay of every link, picoseconds; 0 is a
	// valid delay, not a default.
	Delay int64
}

// Testbed builds the testbed of the DCQCN paper (Zhu et al., SIGCOMM
// 2015): ToRs T1-T4, leaves L1-L4 and spines S1-S2. T1 and T2 each link to
// L1 and L2, T3 and T4 each link to L3 and L4, and every leaf links to S1
// and S2. So T1 reaches T2 through a leaf (4 links host to host) and T3 or
// T4 only through a spine (6 links).
//
// Node IDs: hosts first, T1's ("T1.h0"...) then T2's and so on, then
// T1-T4, L1-L4, S1-S2. Tiers: ToRs 1, leaves 2, spines 3 (the leaves and
// spines play the aggregation and core roles of a three-tier tree). Group
// is the rack (0 for T1 .. 3 for T4) for hosts and ToRs, -1 for leaves and
// spines. Links: host links (link i is host i's), then ToR-leaf links
// (T1-L1, T1-L2, T2-L1, ...), then leaf-spine links (L1-S1, L1-S2, ...).
func Testbed(o TestbedOptions) (*Topology, error) {
	const fn = "Testbed"
	per := o.HostsPerToR
	if per == 0 {
		per = TestbedHostsPerToR
	} else if err := checkCount(fn, "HostsPerToR", per, 1); err != nil {
		return nil, err
	}
	rate := o.Rate
	if rate == 0 {
		rate = TestbedRate
	} else if err := checkRate(fn, "Rate", rate); err != nil {
		return nil, err
	}
	if err := checkDelay(fn, o.Delay); err != nil {
		return nil, err
	}
	const tors, leaves, spines = 4, 4, 2
	hosts := int64(tors) * int64(per)
	if err := checkSize(fn, fmt.Sprintf("HostsPerToR = %d", per), hosts+tors+leaves+spines, hosts+tors*2+leaves*spines); err != nil {
		return nil, err
	}
	b := newBuilder("testbed", int(hosts)+tors+leaves+spines, int(hosts)+tors*2+leaves*spines)
	for t := 0; t < tors; t++ {
		for i := 0; i < per; i++ {
			b.node(Host, fmt.Sprintf("T%d.h%d", t+1, i), 0, t)
		}
	}
	tor0 := int(hosts)
	for t := 0; t < tors; t++ {
		b.node(Switch, fmt.Sprintf("T%d", t+1), 1, t)
	}
	leaf0 := tor0 + tors
	for l := 0; l < leaves; l++ {
		b.node(Switch, fmt.Sprintf("L%d", l+1), 2, -1)
	}
	spine0 := leaf0 + leaves
	for s := 0; s < spines; s++ {
		b.node(Switch, fmt.Sprintf("S%d", s+1), 3, -1)
	}
	for i := 0; i < int(hosts); i++ {
		b.link(i, tor0+i/per, rate, o.Delay)
	}
	for t := 0; t < tors; t++ {
		// T1, T2 (t = 0, 1) use L1, L2; T3, T4 use L3, L4.
		first := t / 2 * 2
		b.link(tor0+t, leaf0+first, rate, o.Delay)
		b.link(tor0+t, leaf0+first+1, rate, o.Delay)
	}
	for l := 0; l < leaves; l++ {
		for s := 0; s < spines; s++ {
			b.link(leaf0+l, spine0+s, rate, o.Delay)
		}
	}
	return b.t, nil
}
