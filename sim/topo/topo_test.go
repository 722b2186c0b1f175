package topo

import (
	"math"
	"strings"
	"testing"
)

// twoRacks is a small valid topology: hosts 0,1 on switch 4, hosts 2,3 on
// switch 5, switches joined by one link.
func twoRacks() *Topology {
	t := &Topology{Name: "two-racks"}
	for i := 0; i < 4; i++ {
		t.Nodes = append(t.Nodes, Node{ID: i, Kind: Host, Name: "h" + string(rune('0'+i)), Group: i / 2})
	}
	t.Nodes = append(t.Nodes, Node{ID: 4, Kind: Switch, Name: "tor0", Tier: 1, Group: 0})
	t.Nodes = append(t.Nodes, Node{ID: 5, Kind: Switch, Name: "tor1", Tier: 1, Group: 1})
	for i := 0; i < 4; i++ {
		t.Links = append(t.Links, Link{A: i, B: 4 + i/2, Rate: 1e9, Delay: 1000})
	}
	t.Links = append(t.Links, Link{A: 4, B: 5, Rate: 1e9, Delay: 1000})
	return t
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Topology)
		want   string // substring of the error; "" for none
	}{
		{"valid", func(*Topology) {}, ""},
		{"id mismatch", func(t *Topology) { t.Nodes[2].ID = 7 }, "node 2 has ID 7"},
		{"unknown kind", func(t *Topology) { t.Nodes[4].Kind = 9 }, "unknown kind Kind(9)"},
		{"unknown node", func(t *Topology) { t.Links[4].B = 6 }, "link 4 joins unknown node"},
		{"self loop", func(t *Topology) { t.Links[4].B = 4 }, "joins node 4 to itself"},
		{"zero rate", func(t *Topology) { t.Links[1].Rate = 0 }, "link 1 (1-4): rate must be positive"},
		{"NaN rate", func(t *Topology) { t.Links[1].Rate = math.NaN() }, "rate must be positive"},
		{"infinite rate", func(t *Topology) { t.Links[1].Rate = math.Inf(1) }, "rate must be positive and finite"},
		{"negative delay", func(t *Topology) { t.Links[0].Delay = -1 }, "delay must not be negative"},
		{"error rate", func(t *Topology) { t.Links[0].ErrorRate = 0.01 }, "corruption is not modelled"},
		{"host to host", func(t *Topology) { t.Links[0].B = 1 }, "joins two hosts"},
		{"host with two links", func(t *Topology) {
			t.Links = append(t.Links, Link{A: 0, B: 5, Rate: 1e9})
		}, "host 0 (h0) has 2 links"},
		{"host with no link", func(t *Topology) {
			t.Nodes = append(t.Nodes, Node{ID: 6, Kind: Host, Name: "h6"})
		}, "host 6 (h6) has 0 links"},
		{"disconnected", func(t *Topology) { t.Links = t.Links[:4] }, "host 0 (h0) cannot reach host 2 (h2)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top := twoRacks()
			tc.modify(top)
			err := top.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("Validate passed, want error containing %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("Validate error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestAdjacencyPortOrder(t *testing.T) {
	top := twoRacks()
	// Parallel link between the switches: ports 3 at both ends.
	top.Links = append(top.Links, Link{A: 5, B: 4, Rate: 1e9})
	adj := top.Adjacency()
	want := map[int][]Port{
		4: {
			{Link: 0, Peer: PortRef{Node: 0, Port: 0}},
			{Link: 1, Peer: PortRef{Node: 1, Port: 0}},
			{Link: 4, Peer: PortRef{Node: 5, Port: 2}},
			{Link: 5, Peer: PortRef{Node: 5, Port: 3}},
		},
		5: {
			{Link: 2, Peer: PortRef{Node: 2, Port: 0}},
			{Link: 3, Peer: PortRef{Node: 3, Port: 0}},
			{Link: 4, Peer: PortRef{Node: 4, Port: 2}},
			{Link: 5, Peer: PortRef{Node: 4, Port: 3}},
		},
		0: {{Link: 0, Peer: PortRef{Node: 4, Port: 0}}},
	}
	for _, node := range []int{0, 4, 5} {
		got := adj[node]
		if len(got) != len(want[node]) {
			t.Fatalf("node %d: %d ports, want %d", node, len(got), len(want[node]))
		}
		for i := range got {
			if got[i] != want[node][i] {
				t.Errorf("node %d port %d: %+v, want %+v", node, i, got[i], want[node][i])
			}
		}
	}
}

func TestHostsSwitchesString(t *testing.T) {
	top := twoRacks()
	if got := top.Hosts(); len(got) != 4 || got[0] != 0 || got[3] != 3 {
		t.Errorf("Hosts() = %v, want [0 1 2 3]", got)
	}
	if got := top.Switches(); len(got) != 2 || got[0] != 4 || got[1] != 5 {
		t.Errorf("Switches() = %v, want [4 5]", got)
	}
	if got, want := top.String(), "two-racks: 6 nodes (4 hosts, 2 switches), 5 links"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for k, want := range map[Kind]string{Host: "host", Switch: "switch", 7: "Kind(7)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}
