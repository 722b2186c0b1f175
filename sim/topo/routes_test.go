package topo

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func mustRoutes(t testing.TB, top *Topology, err error) *Routes {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	r, err := ComputeRoutes(top)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func fatTree(t testing.TB, k int) (*Topology, *Routes) {
	t.Helper()
	top, err := FatTree(FatTreeOptions{K: k, HostRate: 100e9, FabricRate: 400e9, Delay: 1000})
	return top, mustRoutes(t, top, err)
}

// ring builds n switches in a ring, one host on each: an irregular shape
// with one shortest path or, across an even ring, two.
func ring(n int) *Topology {
	t := &Topology{Name: fmt.Sprintf("ring%d", n)}
	for i := 0; i < n; i++ {
		t.Nodes = append(t.Nodes, Node{ID: i, Kind: Host, Name: fmt.Sprintf("h%d", i), Group: -1})
	}
	for i := 0; i < n; i++ {
		t.Nodes = append(t.Nodes, Node{ID: n + i, Kind: Switch, Name: fmt.Sprintf("sw%d", i), Group: -1})
		t.Links = append(t.Links, Link{A: i, B: n + i, Rate: 1e9})
	}
	for i := 0; i < n; i++ {
		t.Links = append(t.Links, Link{A: n + i, B: n + (i+1)%n, Rate: 1e9})
	}
	return t
}

// referenceNextHops computes next hops the slow, obvious way: a search
// over the whole graph from the destination host, then the ports one step
// closer, in port order.
func referenceNextHops(top *Topology, adj Adjacency, dst int) [][]int32 {
	dist := make([]int, len(top.Nodes))
	for i := range dist {
		dist[i] = -1
	}
	dist[dst] = 0
	queue := []int{dst}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if top.Nodes[u].Kind == Host && u != dst {
			continue // hosts do not forward
		}
		for _, p := range adj[u] {
			if v := p.Peer.Node; dist[v] < 0 {
				dist[v] = dist[u] + 1
				queue = append(queue, v)
			}
		}
	}
	hops := make([][]int32, len(top.Nodes))
	for s, n := range top.Nodes {
		if n.Kind != Switch || dist[s] < 0 {
			continue
		}
		for pi, p := range adj[s] {
			if dist[p.Peer.Node] == dist[s]-1 && (p.Peer.Node == dst || top.Nodes[p.Peer.Node].Kind == Switch) {
				hops[s] = append(hops[s], int32(pi))
			}
		}
	}
	return hops
}

func TestRoutesMatchReference(t *testing.T) {
	fat320File, err := os.Open(fat320)
	if err != nil {
		t.Fatal(err)
	}
	defer fat320File.Close()
	bench, benchErr := ParseNS3(fat320File, fat320)
	tests := []struct {
		name  string
		build func() (*Topology, error)
		// multi counts the (switch, host) pairs with more than one next
		// hop, e.g. 8 edge switches x 14 hosts + 8 aggregation switches x
		// 12 hosts in a k=4 fat tree.
		multi int
	}{
		{"fattree k=2", func() (*Topology, error) { return FatTree(FatTreeOptions{K: 2, HostRate: 1e9}) }, 0},
		{"fattree k=4", func() (*Topology, error) { return FatTree(FatTreeOptions{K: 4, HostRate: 1e9}) }, 208},
		{"fattree k=6", func() (*Topology, error) { return FatTree(FatTreeOptions{K: 6, HostRate: 1e9}) }, 1728},
		{"leafspine parallel", func() (*Topology, error) {
			return LeafSpine(LeafSpineOptions{Leaves: 3, Spines: 3, HostsPerLeaf: 2, HostRate: 1e9, UplinkRate: 1e9, LinksPerSpine: 2})
		}, 30},
		{"testbed", func() (*Topology, error) { return Testbed(TestbedOptions{}) }, 140},
		{"dumbbell", func() (*Topology, error) { return Dumbbell(DumbbellOptions{Left: 2, Right: 2, HostRate: 1e9}) }, 0},
		{"star", func() (*Topology, error) { return Star(StarOptions{N: 4, Rate: 1e9}) }, 0},
		{"ring5", func() (*Topology, error) { return ring(5), nil }, 0},
		{"ring6", func() (*Topology, error) { return ring(6), nil }, 6},
		{"fat320 file", func() (*Topology, error) { return bench, benchErr }, 11200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top, err := tc.build()
			r := mustRoutes(t, top, err)
			adj := top.Adjacency()
			multi := 0
			for _, d := range top.Hosts() {
				want := referenceNextHops(top, adj, d)
				for s, n := range top.Nodes {
					if n.Kind != Switch {
						continue
					}
					got := r.NextHops(s, d)
					if !slices.Equal(got, want[s]) {
						t.Fatalf("NextHops(%s, %s) = %v, want %v", n.Name, top.Nodes[d].Name, got, want[s])
					}
					if len(want[s]) == 0 {
						t.Fatalf("reference finds no next hop at %s to %s", n.Name, top.Nodes[d].Name)
					}
					if len(got) > 1 {
						multi++
					}
				}
			}
			if multi != tc.multi {
				t.Errorf("%d (switch, host) pairs with more than one next hop, want %d", multi, tc.multi)
			}
		})
	}
}

// checkPath verifies links form a walk from src to dst through switches.
func checkPath(t *testing.T, top *Topology, links []int, src, dst int) {
	t.Helper()
	node := src
	for i, li := range links {
		l := top.Links[li]
		switch node {
		case l.A:
			node = l.B
		case l.B:
			node = l.A
		default:
			t.Fatalf("path %d->%d: link %d (%d-%d) does not touch node %d", src, dst, li, l.A, l.B, node)
		}
		if i < len(links)-1 && top.Nodes[node].Kind != Switch {
			t.Fatalf("path %d->%d passes through host %d", src, dst, node)
		}
	}
	if node != dst {
		t.Fatalf("path %d->%d ends at %d", src, dst, node)
	}
}

func TestFatTreeK4(t *testing.T) {
	top, r := fatTree(t, 4)
	byName := map[string]int{}
	for _, n := range top.Nodes {
		byName[n.Name] = n.ID
	}
	// Hosts 0,1 under tor0 (pod 0), 2,3 under tor1 (pod 0), 4.. pod 1.
	// Ports: an edge switch has its hosts on 0,1 and the aggregation
	// switches on 2,3; an aggregation switch has its pod's edge switches on
	// 0,1 and its cores on 2,3; core port p leads to pod p. Hosts 0-3 are
	// pod 0 (0,1 under tor0, 2,3 under tor1), 4-7 pod 1 and so on.
	tests := []struct {
		sw        string
		dst       int
		wantPorts []int32
	}{
		{"tor0", 0, []int32{0}},       // own host: exactly its port
		{"tor0", 1, []int32{1}},       // own host: exactly its port
		{"tor5", 10, []int32{0}},      // host 10 is tor5's first
		{"tor0", 2, []int32{2, 3}},    // same pod: up through both aggs
		{"tor0", 15, []int32{2, 3}},   // other pod: up through both aggs
		{"tor7", 0, []int32{2, 3}},    // other pod, other direction
		{"agg0.0", 15, []int32{2, 3}}, // other pod: up through both cores
		{"agg1.1", 0, []int32{2, 3}},  // other pod: up through both cores
		{"agg0.0", 2, []int32{1}},     // same pod: down to tor1 only
		{"agg3.1", 15, []int32{1}},    // destination pod: down to tor7
		{"core0", 15, []int32{3}},     // down to pod 3
		{"core3", 4, []int32{1}},      // down to pod 1
		{"core2", 8, []int32{2}},      // down to pod 2
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s to h%d", tc.sw, tc.dst), func(t *testing.T) {
			sw, ok := byName[tc.sw]
			if !ok {
				t.Fatalf("no switch %s", tc.sw)
			}
			if got := r.NextHops(sw, tc.dst); !slices.Equal(got, tc.wantPorts) {
				t.Fatalf("NextHops = %v, want %v", got, tc.wantPorts)
			}
		})
	}

	paths := []struct {
		name     string
		src, dst int
		want     int
	}{
		{"same edge", 0, 1, 2},
		{"same pod", 0, 2, 4},
		{"same pod reverse", 3, 1, 4},
		{"other pod", 0, 15, 6},
		{"other pod reverse", 15, 0, 6},
		{"adjacent pods", 5, 9, 6},
	}
	for _, tc := range paths {
		t.Run(tc.name, func(t *testing.T) {
			p := r.Path(tc.src, tc.dst)
			if len(p) != tc.want {
				t.Fatalf("Path(%d, %d) = %v, %d links, want %d", tc.src, tc.dst, p, len(p), tc.want)
			}
			checkPath(t, top, p, tc.src, tc.dst)
		})
	}
}

// TestFatTreeK24 builds routes for 3456 hosts and 720 switches, checks
// some paths and that memory stayed far below hosts squared.
func TestFatTreeK24(t *testing.T) {
	top, err := FatTree(FatTreeOptions{K: 24, HostRate: 100e9, FabricRate: 400e9, Delay: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := ComputeRoutes(top)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	hosts := len(top.Hosts())
	if hosts != 3456 {
		t.Fatalf("%d hosts, want 3456", hosts)
	}
	// One byte per host pair would already be 12 MB; the table is 720 x
	// 288 entries, under 1 MB, plus the adjacency lists.
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("ComputeRoutes(k=24) allocated %.1f MB", float64(allocated)/1e6)
	if limit := uint64(hosts * hosts); allocated > limit {
		t.Errorf("ComputeRoutes allocated %d bytes, more than hosts squared (%d)", allocated, limit)
	}

	const perPod = 144 // (k/2)^2 hosts
	tests := []struct {
		src, dst, hops int
	}{
		{0, 1, 2},                         // same edge switch
		{0, 11, 2},                        // last host of the first rack
		{0, 12, 4},                        // next rack, same pod
		{0, perPod - 1, 4},                // last rack of pod 0
		{0, perPod, 6},                    // first host of pod 1
		{0, hosts - 1, 6},                 // the far corner
		{hosts - 1, 0, 6},                 // and back
		{1000, 2000, 6},                   // pods 6 and 13
		{perPod*5 + 7, perPod*5 + 140, 4}, // within pod 5
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d-%d", tc.src, tc.dst), func(t *testing.T) {
			p := r.Path(tc.src, tc.dst)
			if len(p) != tc.hops {
				t.Fatalf("Path = %v (%d links), want %d links", p, len(p), tc.hops)
			}
			checkPath(t, top, p, tc.src, tc.dst)
			pi := r.PathInfo(tc.src, tc.dst)
			if pi.Hops != tc.hops || pi.Delay != int64(tc.hops)*1000 || pi.MinRate != 100e9 {
				t.Fatalf("PathInfo = %+v, want %d hops, %d ps, 100 Gb/s", pi, tc.hops, tc.hops*1000)
			}
		})
	}
	// ECMP width: 12 uplinks at an edge switch and at an aggregation switch.
	tor0 := top.Nodes[hosts].ID
	agg0 := hosts + 24*12
	if got := len(r.NextHops(tor0, hosts-1)); got != 12 {
		t.Errorf("edge switch: %d next hops to another pod, want 12", got)
	}
	if got := len(r.NextHops(agg0, hosts-1)); got != 12 {
		t.Errorf("aggregation switch: %d next hops to another pod, want 12", got)
	}
}

func TestTestbedRoutes(t *testing.T) {
	top, err := Testbed(TestbedOptions{Delay: 1000})
	r := mustRoutes(t, top, err)
	names := func(links []int, src int) string {
		var ns []string
		node := src
		for _, li := range links {
			l := top.Links[li]
			if l.A == node {
				node = l.B
			} else {
				node = l.A
			}
			ns = append(ns, top.Nodes[node].Name)
		}
		return strings.Join(ns, " ")
	}
	tests := []struct {
		name     string
		src, dst int
		want     string
	}{
		{"T1 to T4 via a spine", 0, 19, "T1 L1 S1 L3 T4 T4.h4"},
		{"T1 to T2 via a leaf", 0, 5, "T1 L1 T2 T2.h0"},
		{"T3 to T4 via a leaf", 10, 15, "T3 L3 T4 T4.h0"},
		{"T4 to T2 via a spine", 16, 9, "T4 L3 S1 L1 T2 T2.h4"},
		{"same ToR", 1, 2, "T1 T1.h2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := r.Path(tc.src, tc.dst)
			checkPath(t, top, p, tc.src, tc.dst)
			if got := names(p, tc.src); got != tc.want {
				t.Fatalf("path %s -> %s: %s, want %s", top.Nodes[tc.src].Name, top.Nodes[tc.dst].Name, got, tc.want)
			}
		})
	}
	// Two ways up at T1 (L1, L2) and at L1 (S1, S2) towards T4.
	t1, l1 := 20, 24
	if got := r.NextHops(t1, 19); !slices.Equal(got, []int32{5, 6}) {
		t.Errorf("T1 to T4.h4: ports %v, want [5 6]", got)
	}
	if got := r.NextHops(l1, 19); !slices.Equal(got, []int32{2, 3}) {
		t.Errorf("L1 to T4.h4: ports %v, want [2 3]", got)
	}
}

func TestPathInfo(t *testing.T) {
	top, err := Dumbbell(DumbbellOptions{Left: 2, Right: 2, HostRate: 100e9, BottleneckRate: 25e9, Delay: 1500})
	r := mustRoutes(t, top, err)
	pi := r.PathInfo(0, 3)
	want := PathInfo{Links: []int{0, 4, 3}, Hops: 3, Delay: 4500, MinRate: 25e9, Rates: []float64{100e9, 25e9, 100e9}}
	if !slices.Equal(pi.Links, want.Links) || pi.Hops != want.Hops || pi.Delay != want.Delay ||
		pi.MinRate != want.MinRate || !slices.Equal(pi.Rates, want.Rates) {
		t.Fatalf("PathInfo(0, 3) = %+v, want %+v", pi, want)
	}
	local := r.PathInfo(0, 1)
	if local.Hops != 2 || local.MinRate != 100e9 || local.Delay != 3000 {
		t.Errorf("PathInfo(0, 1) = %+v, want 2 hops at 100 Gb/s, 3000 ps", local)
	}
	if z := r.PathInfo(2, 2); z.Hops != 0 || z.Links != nil || z.MinRate != 0 {
		t.Errorf("PathInfo(2, 2) = %+v, want the zero PathInfo", z)
	}
}

func TestRoutesInvalidArguments(t *testing.T) {
	top, r := fatTree(t, 4)
	sw := len(top.Hosts()) // tor0
	tests := []struct {
		name    string
		sw, dst int
	}{
		{"host as switch", 3, 5},
		{"switch as destination", sw, sw + 1},
		{"negative switch", -1, 5},
		{"negative host", sw, -1},
		{"switch out of range", len(top.Nodes), 5},
		{"host out of range", sw, len(top.Nodes)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.NextHops(tc.sw, tc.dst); got != nil {
				t.Errorf("NextHops(%d, %d) = %v, want nil", tc.sw, tc.dst, got)
			}
		})
	}
	for _, pair := range [][2]int{{4, 4}, {sw, 5}, {5, sw}, {-1, 5}, {5, len(top.Nodes)}} {
		if got := r.Path(pair[0], pair[1]); got != nil {
			t.Errorf("Path(%d, %d) = %v, want nil", pair[0], pair[1], got)
		}
	}
	if at, ok := r.HostPort(5); !ok || at != (PortRef{Node: sw + 2, Port: 1}) {
		t.Errorf("HostPort(5) = %v, %v; want tor2 port 1", at, ok)
	}
	if _, ok := r.HostPort(sw); ok {
		t.Errorf("HostPort(switch) reported a host")
	}
	if r.Topology() != top {
		t.Errorf("Topology() is not the topology the routes were built from")
	}
}

// TestNextHopsShared checks NextHops allocates nothing and hands out
// slices that cannot be grown into their neighbours.
func TestNextHopsShared(t *testing.T) {
	top, r := fatTree(t, 8)
	hosts := len(top.Hosts())
	allocs := testing.AllocsPerRun(100, func() {
		for s := hosts; s < len(top.Nodes); s += 7 {
			for d := 0; d < hosts; d += 13 {
				_ = r.NextHops(s, d)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("NextHops allocated %v times per run, want 0", allocs)
	}
	a := r.NextHops(hosts, hosts-1)
	if cap(a) != len(a) {
		t.Errorf("NextHops slice has capacity %d beyond its length %d", cap(a), len(a))
	}
	// Deduplicated: the port lists of a k=8 fat tree are a handful.
	if len(r.sets) > 16 {
		t.Errorf("%d distinct port lists, want at most 16 for a k=8 fat tree", len(r.sets))
	}
}

func TestComputeRoutesErrors(t *testing.T) {
	islands := twoRacks()
	islands.Links = islands.Links[:4]
	tests := []struct {
		name string
		top  *Topology
		want string
	}{
		{"disconnected", islands, `topo: ComputeRoutes "two-racks": host 0 (h0) cannot reach host 2 (h2)`},
		{"invalid", &Topology{Name: "bad", Nodes: []Node{{ID: 1}}}, `topo: ComputeRoutes "bad": node 0 has ID 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ComputeRoutes(tc.top)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func BenchmarkComputeRoutesFatTree34(b *testing.B) {
	top, err := FatTree(FatTreeOptions{K: 34, HostRate: 100e9, FabricRate: 400e9, Delay: 1000})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ComputeRoutes(top); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNextHops(b *testing.B) {
	top, r := fatTree(b, 16)
	hosts := len(top.Hosts())
	n := len(top.Nodes)
	i := 0
	for b.Loop() {
		_ = r.NextHops(hosts+i%(n-hosts), (i*7919)%hosts)
		i++
	}
}
