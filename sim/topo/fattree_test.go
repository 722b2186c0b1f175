package topo

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestFatTreeCounts(t *testing.T) {
	tests := []struct {
		k                       int
		hosts, switches, links  int
		edges, aggs, cores, per int
	}{
		// links = hosts + k(k/2)^2 edge-aggregation + k(k/2)^2 aggregation-core
		{k: 2, hosts: 2, switches: 5, links: 6, edges: 2, aggs: 2, cores: 1, per: 1},
		{k: 4, hosts: 16, switches: 20, links: 48, edges: 8, aggs: 8, cores: 4, per: 2},
		{k: 6, hosts: 54, switches: 45, links: 162, edges: 18, aggs: 18, cores: 9, per: 3},
		{k: 12, hosts: 432, switches: 180, links: 1296, edges: 72, aggs: 72, cores: 36, per: 6},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("k=%d", tc.k), func(t *testing.T) {
			top, err := FatTree(FatTreeOptions{K: tc.k, HostRate: 100e9, FabricRate: 400e9, Delay: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if err := top.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if got := len(top.Hosts()); got != tc.hosts {
				t.Errorf("hosts = %d, want %d", got, tc.hosts)
			}
			if got := len(top.Switches()); got != tc.switches {
				t.Errorf("switches = %d, want %d", got, tc.switches)
			}
			if got := len(top.Nodes); got != tc.hosts+tc.switches {
				t.Errorf("nodes = %d, want %d", got, tc.hosts+tc.switches)
			}
			if got := len(top.Links); got != tc.links {
				t.Errorf("links = %d, want %d", got, tc.links)
			}
			tiers := map[int]int{}
			for _, n := range top.Nodes {
				tiers[n.Tier]++
			}
			if tiers[0] != tc.hosts || tiers[1] != tc.edges || tiers[2] != tc.aggs || tiers[3] != tc.cores {
				t.Errorf("nodes per tier = %v, want 0:%d 1:%d 2:%d 3:%d", tiers, tc.hosts, tc.edges, tc.aggs, tc.cores)
			}
			adj := top.Adjacency()
			for _, h := range top.Hosts() {
				if len(adj[h]) != 1 {
					t.Fatalf("host %d has %d links, want 1", h, len(adj[h]))
				}
				if top.Links[adj[h][0].Link].Rate != 100e9 {
					t.Fatalf("host %d: link rate %g, want 100e9", h, top.Links[adj[h][0].Link].Rate)
				}
			}
			// Every switch has k ports (core switches: one per pod).
			for _, s := range top.Switches() {
				if len(adj[s]) != tc.k {
					t.Errorf("switch %s has %d ports, want %d", top.Nodes[s].Name, len(adj[s]), tc.k)
				}
			}
			for i, l := range top.Links {
				want := 400e9
				if top.Nodes[l.A].Kind == Host {
					want = 100e9
				}
				if l.Rate != want || l.Delay != 1000 {
					t.Fatalf("link %d: rate %g delay %d, want %g 1000", i, l.Rate, l.Delay, want)
				}
			}
			// Hosts come first, rack by rack, each rack under one edge switch.
			for h := 0; h < tc.hosts; h++ {
				peer := top.Nodes[adj[h][0].Peer.Node]
				wantTor := fmt.Sprintf("tor%d", h/tc.per)
				if peer.Name != wantTor || top.Nodes[h].Group != peer.Group || top.Nodes[h].Name != fmt.Sprintf("h%d", h) {
					t.Fatalf("host %d (%s, pod %d) attaches to %s (pod %d), want %s", h, top.Nodes[h].Name, top.Nodes[h].Group, peer.Name, peer.Group, wantTor)
				}
			}
		})
	}
}

// TestFatTreeWiring checks the Al-Fares wiring rules on k=6 by name.
func TestFatTreeWiring(t *testing.T) {
	const k, h = 6, 3
	top, err := FatTree(FatTreeOptions{K: k, HostRate: 10e9, Delay: 500})
	if err != nil {
		t.Fatal(err)
	}
	linked := map[[2]string]int{}
	for _, l := range top.Links {
		if l.Rate != 10e9 {
			t.Fatalf("FabricRate 0 should give HostRate on every link, got %g", l.Rate)
		}
		a, b := top.Nodes[l.A].Name, top.Nodes[l.B].Name
		linked[[2]string{a, b}]++
		linked[[2]string{b, a}]++
	}
	for p := 0; p < k; p++ {
		for j := 0; j < h; j++ {
			tor := fmt.Sprintf("tor%d", p*h+j)
			agg := fmt.Sprintf("agg%d.%d", p, j)
			for a := 0; a < h; a++ {
				if linked[[2]string{tor, fmt.Sprintf("agg%d.%d", p, a)}] != 1 {
					t.Errorf("%s should link once to agg%d.%d", tor, p, a)
				}
				if linked[[2]string{tor, fmt.Sprintf("agg%d.%d", (p+1)%k, a)}] != 0 {
					t.Errorf("%s links to another pod's agg%d.%d", tor, (p+1)%k, a)
				}
			}
			for c := 0; c < h*h; c++ {
				want := 0
				if c/h == j {
					want = 1
				}
				if got := linked[[2]string{agg, fmt.Sprintf("core%d", c)}]; got != want {
					t.Errorf("%s-core%d: %d links, want %d", agg, c, got, want)
				}
			}
		}
	}
	for _, n := range top.Nodes {
		if strings.HasPrefix(n.Name, "core") && (n.Group != -1 || n.Tier != 3) {
			t.Errorf("%s: group %d tier %d, want -1 and 3", n.Name, n.Group, n.Tier)
		}
		if strings.HasPrefix(n.Name, "agg") && n.Tier != 2 {
			t.Errorf("%s: tier %d, want 2", n.Name, n.Tier)
		}
	}
}

func TestFatTreeBadOptions(t *testing.T) {
	ok := FatTreeOptions{K: 4, HostRate: 100e9, Delay: 1000}
	tests := []struct {
		name   string
		modify func(*FatTreeOptions)
		want   string
	}{
		{"odd K", func(o *FatTreeOptions) { o.K = 3 }, "K = 3: must be an even number >= 2"},
		{"zero K", func(o *FatTreeOptions) { o.K = 0 }, "K = 0"},
		{"negative K", func(o *FatTreeOptions) { o.K = -4 }, "K = -4"},
		{"huge K", func(o *FatTreeOptions) { o.K = 1000 }, "more than MaxNodes"},
		{"very huge K", func(o *FatTreeOptions) { o.K = 1 << 40 }, "too large"},
		{"zero host rate", func(o *FatTreeOptions) { o.HostRate = 0 }, "HostRate = 0"},
		{"NaN host rate", func(o *FatTreeOptions) { o.HostRate = math.NaN() }, "HostRate = NaN"},
		{"negative fabric rate", func(o *FatTreeOptions) { o.FabricRate = -1 }, "FabricRate = -1"},
		{"infinite fabric rate", func(o *FatTreeOptions) { o.FabricRate = math.Inf(1) }, "FabricRate = +Inf"},
		{"negative delay", func(o *FatTreeOptions) { o.Delay = -5 }, "Delay = -5 ps"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			tc.modify(&o)
			top, err := FatTree(o)
			if err == nil {
				t.Fatalf("FatTree(%+v) = %v, want error", o, top)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "topo.FatTree: ") {
				t.Fatalf("error %q, want it to start with topo.FatTree and contain %q", err, tc.want)
			}
		})
	}
}
