// Package partition splits a simulated network into parts that threads
// can run side by side, each with its own event queue, exchanging the
// frames that cross between them at the end of each window of simulated
// time.
//
// A conservative parallel simulation advances every part by a window no
// longer than the shortest propagation delay of a link between two parts
// (the lookahead): nothing a part does in a window can reach another
// before the window ends. So the split wants long links between parts,
// few frames crossing them, and the events of a window spread evenly.
// Split keeps each host with its switch (the host's link is never cut),
// keeps the two ends of any link shorter than a least delay together,
// groups what remains into pods (what hangs below the top tier of
// switches, as in a fat tree), lays the pods out one after the other and
// cuts that line into parts of equal weight, and deals the top tier out
// to even the weights. A node's weight is the sum of its ports' rates,
// which is what its busiest events scale with when links run at similar
// loads, a host's port counted twice: a host's NIC runs more events per
// frame than a switch's port (hostFactor).
//
// The split depends on the topology and the number of parts asked for
// only, so it is the same on every run.
package partition

import (
	"fmt"
	"math"
	"sort"

	"github.com/p4rcm/p4rcm/sim/topo"
)

// Plan is a split of a network's nodes into parts.
type Plan struct {
	// Parts is the number of parts, at least 1 and at most the number
	// asked for.
	Parts int
	// Of is each node's part, by node ID.
	Of []int
	// Lookahead is the least propagation delay of a link between two
	// parts, picoseconds; 0 with one part.
	Lookahead int64
	// Cut is the number of links between parts.
	Cut int
	// Weight is each part's share of the network's weight (sums to 1).
	Weight []float64
	// Note says why there are fewer parts than asked for; empty when
	// there are as many.
	Note string
}

// Split divides t into at most want parts, never cutting a link shorter
// than minDelay picoseconds nor a host's link.
func Split(t *topo.Topology, want int, minDelay int64) Plan {
	n := len(t.Nodes)
	p := Plan{Parts: 1, Of: make([]int, n), Weight: []float64{1}}
	if want <= 1 || n == 0 {
		return p
	}
	// Blocks: nodes that must share a part.
	uf := newUnionFind(n)
	short := 0
	for _, l := range t.Links {
		host := t.Nodes[l.A].Kind == topo.Host || t.Nodes[l.B].Kind == topo.Host
		if !host && l.Delay < minDelay {
			short++
		}
		if host || l.Delay < minDelay {
			uf.union(l.A, l.B)
		}
	}
	blockOf := make([]int, n) // node -> block index, blocks numbered by least node ID
	rootBlock := map[int]int{}
	var members [][]int
	for id := 0; id < n; id++ {
		r := uf.find(id)
		b, ok := rootBlock[r]
		if !ok {
			b = len(members)
			rootBlock[r] = b
			members = append(members, nil)
		}
		blockOf[id] = b
		members[b] = append(members[b], id)
	}
	nb := len(members)
	weight := make([]float64, nb)
	for _, l := range t.Links {
		// Both ends count the link once each: a port at either end. A
		// host's end counts twice: its NIC wakes to pace every frame it
		// sends and runs the congestion control on every ACK, where a
		// switch port wakes only for frames that queued.
		weight[blockOf[l.A]] += hostFactor(t, l.A) * l.Rate / 1e9
		weight[blockOf[l.B]] += hostFactor(t, l.B) * l.Rate / 1e9
	}
	if nb < want {
		p.Note = fmt.Sprintf("the network splits into %d part(s) at most", nb)
		if short > 0 {
			p.Note += fmt.Sprintf(": links shorter than %s are not cut, and %d of its switch links are", topo.FormatDelay(minDelay), short)
		}
		want = nb
		if want <= 1 {
			return p
		}
	}

	// Tiers: hops from the nearest host. The top tier of a network of
	// three or more tiers links the pods below it.
	tier := tiers(t)
	top := 0
	for id, nd := range t.Nodes {
		if nd.Kind == topo.Switch {
			top = max(top, tier[id])
		}
	}
	isTop := make([]bool, nb)
	if top >= 2 {
		for b, ms := range members {
			isTop[b] = true
			for _, id := range ms {
				if t.Nodes[id].Kind != topo.Switch || tier[id] != top {
					isTop[b] = false
					break
				}
			}
		}
	}
	// Pods: blocks joined below the top tier, in order of their least
	// block; within a pod, blocks in order.
	puf := newUnionFind(nb)
	for _, l := range t.Links {
		a, b := blockOf[l.A], blockOf[l.B]
		if !isTop[a] && !isTop[b] {
			puf.union(a, b)
		}
	}
	var line, topBlocks []int
	podOf := map[int][]int{}
	var pods []int
	for b := 0; b < nb; b++ {
		if isTop[b] {
			topBlocks = append(topBlocks, b)
			continue
		}
		r := puf.find(b)
		if _, ok := podOf[r]; !ok {
			pods = append(pods, r)
		}
		podOf[r] = append(podOf[r], b)
	}
	for _, r := range pods {
		line = append(line, podOf[r]...)
	}
	// Cut the line of pods into want stretches of equal weight: a block
	// goes to the stretch its midpoint falls in.
	var lineWeight float64
	for _, b := range line {
		lineWeight += weight[b]
	}
	partOfBlock := make([]int, nb)
	load := make([]float64, want)
	var acc float64
	for _, b := range line {
		mid := acc + weight[b]/2
		acc += weight[b]
		k := int(mid / lineWeight * float64(want))
		k = min(max(k, 0), want-1)
		partOfBlock[b] = k
		load[k] += weight[b]
	}
	// The top tier evens the parts out: heaviest first, each to the
	// lightest part (the lowest-numbered among equals).
	sort.SliceStable(topBlocks, func(i, j int) bool { return weight[topBlocks[i]] > weight[topBlocks[j]] })
	for _, b := range topBlocks {
		k := 0
		for i := range load {
			if load[i] < load[k] {
				k = i
			}
		}
		partOfBlock[b] = k
		load[k] += weight[b]
	}
	// Number the parts that got nodes 0.. in order.
	renum := make([]int, want)
	for i := range renum {
		renum[i] = -1
	}
	parts := 0
	for b := 0; b < nb; b++ {
		if k := partOfBlock[b]; renum[k] < 0 {
			renum[k] = parts
			parts++
		}
	}
	p.Parts = parts
	var total float64
	for _, w := range weight {
		total += w
	}
	p.Weight = make([]float64, parts)
	for b := 0; b < nb; b++ {
		k := renum[partOfBlock[b]]
		p.Weight[k] += weight[b] / total
		for _, id := range members[b] {
			p.Of[id] = k
		}
	}
	if parts < want && p.Note == "" {
		p.Note = fmt.Sprintf("the network splits into %d part(s) at most", parts)
	}
	p.Lookahead = math.MaxInt64
	for _, l := range t.Links {
		if p.Of[l.A] != p.Of[l.B] {
			p.Cut++
			p.Lookahead = min(p.Lookahead, l.Delay)
		}
	}
	if p.Cut == 0 {
		p.Lookahead = 0
	}
	return p
}

// hostFactor is the weight of a port of node id against a switch's.
func hostFactor(t *topo.Topology, id int) float64 {
	if t.Nodes[id].Kind == topo.Host {
		return 2
	}
	return 1
}

// tiers is each node's distance in hops from the nearest host.
func tiers(t *topo.Topology) []int {
	adj := t.Adjacency()
	d := make([]int, len(t.Nodes))
	var queue []int
	for id, nd := range t.Nodes {
		if nd.Kind == topo.Host {
			queue = append(queue, id)
		} else {
			d[id] = -1
		}
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, pt := range adj[u] {
			if v := pt.Peer.Node; d[v] < 0 {
				d[v] = d[u] + 1
				queue = append(queue, v)
			}
		}
	}
	for i := range d {
		d[i] = max(d[i], 0) // switches no host reaches
	}
	return d
}

type unionFind []int

func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = i
	}
	return u
}

func (u unionFind) find(x int) int {
	for u[x] != x {
		u[x] = u[u[x]]
		x = u[x]
	}
	return x
}

// union joins the sets of a and b under the smaller root, so that the
// result does not depend on the order of the calls.
func (u unionFind) union(a, b int) {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return
	}
	if ra > rb {
		ra, rb = rb, ra
	}
	u[rb] = ra
}
