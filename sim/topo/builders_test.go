package topo

import (
	"strconv"
	"strings"
	"testing"
)

// fabricRates returns the rates of the switch-to-switch links.
func fabricRates(top *Topology) []float64 {
	var rs []float64
	for _, l := range top.Links {
		if top.Nodes[l.A].Kind == Switch && top.Nodes[l.B].Kind == Switch {
			rs = append(rs, l.Rate)
		}
	}
	return rs
}

func TestLeafSpine(t *testing.T) {
	tests := []struct {
		name       string
		o          LeafSpineOptions
		wantUplink float64
		wantFabric int // switch-to-switch links
	}{
		// 16 x 25G = 400G per leaf; 2 spines at 2:1 leave 200G: 100G each.
		{"oversubscribed 2:1", LeafSpineOptions{Leaves: 4, Spines: 2, HostsPerLeaf: 16, HostRate: 25e9, Oversubscription: 2}, 100e9, 8},
		// 1:1 with 4 spines: 400G / 4 = 100G.
		{"full bisection", LeafSpineOptions{Leaves: 3, Spines: 4, HostsPerLeaf: 16, HostRate: 25e9, Oversubscription: 1}, 100e9, 12},
		// 48 x 10G = 480G at 3:1 = 160G over 4 spines x 2 parallel links = 20G.
		{"parallel links 3:1", LeafSpineOptions{Leaves: 2, Spines: 4, HostsPerLeaf: 48, HostRate: 10e9, Oversubscription: 3, LinksPerSpine: 2}, 20e9, 16},
		{"explicit uplink", LeafSpineOptions{Leaves: 5, Spines: 3, HostsPerLeaf: 8, HostRate: 100e9, UplinkRate: 400e9}, 400e9, 15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top, err := LeafSpine(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if err := top.Validate(); err != nil {
				t.Fatal(err)
			}
			hosts := tc.o.Leaves * tc.o.HostsPerLeaf
			if got := len(top.Hosts()); got != hosts {
				t.Errorf("hosts = %d, want %d", got, hosts)
			}
			if got := len(top.Nodes); got != hosts+tc.o.Leaves+tc.o.Spines {
				t.Errorf("nodes = %d, want %d", got, hosts+tc.o.Leaves+tc.o.Spines)
			}
			rates := fabricRates(top)
			if len(rates) != tc.wantFabric {
				t.Fatalf("%d fabric links, want %d", len(rates), tc.wantFabric)
			}
			for _, r := range rates {
				if r != tc.wantUplink {
					t.Fatalf("uplink rate %g, want %g", r, tc.wantUplink)
				}
			}
			// Every leaf links to every spine LinksPerSpine times.
			par := max(tc.o.LinksPerSpine, 1)
			count := map[[2]string]int{}
			for _, l := range top.Links {
				if top.Nodes[l.B].Tier == 2 {
					count[[2]string{top.Nodes[l.A].Name, top.Nodes[l.B].Name}]++
				}
			}
			for _, n := range top.Nodes {
				if n.Tier != 1 {
					continue
				}
				for _, s := range top.Nodes {
					if s.Tier == 2 && count[[2]string{n.Name, s.Name}] != par {
						t.Errorf("%s-%s: %d links, want %d", n.Name, s.Name, count[[2]string{n.Name, s.Name}], par)
					}
				}
			}
			// Host h sits under leaf h / HostsPerLeaf.
			adj := top.Adjacency()
			last := hosts - 1
			leaf := top.Nodes[adj[last][0].Peer.Node]
			if want := "leaf" + strconv.Itoa(tc.o.Leaves-1); leaf.Name != want || leaf.Group != tc.o.Leaves-1 || top.Nodes[last].Group != tc.o.Leaves-1 {
				t.Errorf("last host under %s (group %d), want %s", leaf.Name, leaf.Group, want)
			}
		})
	}
}

func TestLeafSpineBadOptions(t *testing.T) {
	ok := LeafSpineOptions{Leaves: 2, Spines: 2, HostsPerLeaf: 4, HostRate: 25e9, Oversubscription: 1}
	tests := []struct {
		name   string
		modify func(*LeafSpineOptions)
		want   string
	}{
		{"no leaves", func(o *LeafSpineOptions) { o.Leaves = 0 }, "Leaves = 0: must be at least 1"},
		{"no spines", func(o *LeafSpineOptions) { o.Spines = 0 }, "Spines = 0"},
		{"no hosts", func(o *LeafSpineOptions) { o.HostsPerLeaf = -1 }, "HostsPerLeaf = -1"},
		{"negative parallel links", func(o *LeafSpineOptions) { o.LinksPerSpine = -2 }, "LinksPerSpine = -2"},
		{"zero host rate", func(o *LeafSpineOptions) { o.HostRate = 0 }, "HostRate = 0"},
		{"both set", func(o *LeafSpineOptions) { o.UplinkRate = 100e9 }, "Oversubscription = 1: UplinkRate (1e+11) is set too"},
		{"neither set", func(o *LeafSpineOptions) { o.Oversubscription = 0 }, "Oversubscription: neither it nor UplinkRate is set"},
		{"undersubscribed", func(o *LeafSpineOptions) { o.Oversubscription = 0.5 }, "Oversubscription = 0.5: must be a finite ratio >= 1"},
		{"negative uplink", func(o *LeafSpineOptions) { o.Oversubscription, o.UplinkRate = 0, -1 }, "UplinkRate = -1"},
		{"negative delay", func(o *LeafSpineOptions) { o.Delay = -1 }, "Delay = -1 ps"},
		{"too many links", func(o *LeafSpineOptions) { o.Leaves, o.Spines, o.LinksPerSpine = 1000, 1000, 100 }, "more than MaxLinks"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			tc.modify(&o)
			_, err := LeafSpine(o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "topo.LeafSpine: ") {
				t.Fatalf("LeafSpine(%+v) error %v, want one containing %q", o, err, tc.want)
			}
		})
	}
}

func TestDumbbell(t *testing.T) {
	top, err := Dumbbell(DumbbellOptions{Left: 3, Right: 2, HostRate: 100e9, BottleneckRate: 10e9, Delay: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if err := top.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(top.Nodes) != 7 || len(top.Links) != 6 {
		t.Fatalf("%d nodes %d links, want 7 and 6", len(top.Nodes), len(top.Links))
	}
	if got := fabricRates(top); len(got) != 1 || got[0] != 10e9 {
		t.Fatalf("bottleneck rates %v, want [1e10]", got)
	}
	adj := top.Adjacency()
	for h, want := range []string{"tor0", "tor0", "tor0", "tor1", "tor1"} {
		if got := top.Nodes[adj[h][0].Peer.Node].Name; got != want {
			t.Errorf("host %d on %s, want %s", h, got, want)
		}
		if g := top.Nodes[h].Group; g != h/3 {
			t.Errorf("host %d group %d, want %d", h, g, h/3)
		}
	}
	same, err := Dumbbell(DumbbellOptions{Left: 1, Right: 1, HostRate: 40e9})
	if err != nil {
		t.Fatal(err)
	}
	if got := fabricRates(same); got[0] != 40e9 {
		t.Errorf("BottleneckRate 0 gave %g, want HostRate 4e10", got[0])
	}

	bad := []struct {
		o    DumbbellOptions
		want string
	}{
		{DumbbellOptions{Left: 0, Right: 1, HostRate: 1e9}, "Left = 0"},
		{DumbbellOptions{Left: 1, Right: 0, HostRate: 1e9}, "Right = 0"},
		{DumbbellOptions{Left: 1, Right: 1}, "HostRate = 0"},
		{DumbbellOptions{Left: 1, Right: 1, HostRate: 1e9, BottleneckRate: -1}, "BottleneckRate = -1"},
		{DumbbellOptions{Left: 1, Right: 1, HostRate: 1e9, Delay: -1}, "Delay = -1"},
	}
	for _, tc := range bad {
		t.Run(tc.want, func(t *testing.T) {
			if _, err := Dumbbell(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Dumbbell(%+v) error %v, want one containing %q", tc.o, err, tc.want)
			}
		})
	}
}

func TestStar(t *testing.T) {
	top, err := Star(StarOptions{N: 16, Rate: 25e9, Delay: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := top.Validate(); err != nil {
		t.Fatal(err)
	}
	adj := top.Adjacency()
	if len(top.Hosts()) != 16 || len(adj[16]) != 16 || top.Nodes[16].Name != "tor0" {
		t.Fatalf("star: %d hosts, switch %s with %d ports; want 16, tor0, 16", len(top.Hosts()), top.Nodes[16].Name, len(adj[16]))
	}
	for p, port := range adj[16] {
		if port.Peer.Node != p {
			t.Errorf("switch port %d leads to node %d, want host %d", p, port.Peer.Node, p)
		}
	}
	for _, tc := range []struct {
		o    StarOptions
		want string
	}{
		{StarOptions{N: 0, Rate: 1e9}, "N = 0"},
		{StarOptions{N: 2, Rate: -1e9}, "Rate = -1e+09"},
		{StarOptions{N: 2, Rate: 1e9, Delay: -1}, "Delay = -1"},
		{StarOptions{N: MaxNodes, Rate: 1e9}, "more than MaxNodes"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if _, err := Star(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Star(%+v) error %v, want one containing %q", tc.o, err, tc.want)
			}
		})
	}
}

func TestTestbed(t *testing.T) {
	top, err := Testbed(TestbedOptions{Delay: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := top.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(top.Hosts()) != 20 || len(top.Nodes) != 30 || len(top.Links) != 20+8+8 {
		t.Fatalf("%d hosts %d nodes %d links, want 20, 30, 36", len(top.Hosts()), len(top.Nodes), len(top.Links))
	}
	if top.Nodes[0].Name != "T1.h0" || top.Nodes[5].Name != "T2.h0" || top.Nodes[19].Name != "T4.h4" {
		t.Errorf("host names %s %s %s, want T1.h0 T2.h0 T4.h4", top.Nodes[0].Name, top.Nodes[5].Name, top.Nodes[19].Name)
	}
	var pairs []string
	for _, l := range top.Links {
		if top.Nodes[l.A].Kind == Switch {
			pairs = append(pairs, top.Nodes[l.A].Name+"-"+top.Nodes[l.B].Name)
		}
		if l.Rate != 40e9 || l.Delay != 1000 {
			t.Errorf("link %s-%s: %g %d, want 40 Gb/s 1000 ps", top.Nodes[l.A].Name, top.Nodes[l.B].Name, l.Rate, l.Delay)
		}
	}
	want := "T1-L1 T1-L2 T2-L1 T2-L2 T3-L3 T3-L4 T4-L3 T4-L4 L1-S1 L1-S2 L2-S1 L2-S2 L3-S1 L3-S2 L4-S1 L4-S2"
	if got := strings.Join(pairs, " "); got != want {
		t.Errorf("switch links\n got %s\nwant %s", got, want)
	}
	tiers := ""
	for _, n := range top.Nodes[20:] {
		tiers += n.Name + ":" + string(rune('0'+n.Tier)) + " "
	}
	if want := "T1:1 T2:1 T3:1 T4:1 L1:2 L2:2 L3:2 L4:2 S1:3 S2:3 "; tiers != want {
		t.Errorf("tiers %q, want %q", tiers, want)
	}

	custom, err := Testbed(TestbedOptions{HostsPerToR: 2, Rate: 10e9})
	if err != nil {
		t.Fatal(err)
	}
	if len(custom.Hosts()) != 8 || custom.Links[0].Rate != 10e9 || custom.Links[0].Delay != 0 {
		t.Errorf("custom testbed: %d hosts, rate %g, delay %d; want 8, 1e10, 0", len(custom.Hosts()), custom.Links[0].Rate, custom.Links[0].Delay)
	}
	for _, tc := range []struct {
		o    TestbedOptions
		want string
	}{
		{TestbedOptions{HostsPerToR: -1}, "HostsPerToR = -1"},
		{TestbedOptions{Rate: -40e9}, "Rate = -4e+10"},
		{TestbedOptions{Delay: -1}, "Delay = -1"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if _, err := Testbed(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Testbed(%+v) error %v, want one containing %q", tc.o, err, tc.want)
			}
		})
	}
}
