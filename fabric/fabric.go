// Package fabric computes what every switch of a fabric running rcm.p4
// must hold, from the same topology and parameters the simulator runs:
// routes to every host (one next hop, or an ECMP group of ecmp_member
// entries), SAR groups over the ECMP groups when RCM is on, per-port PFC
// thresholds (static XOFF and XON from buffercalc, for each port's rate
// and cable), RED/ECN from the DCQCN parameter set scaled to each port's
// rate, RCM's settings from the simulator's RCM parameters, and the clone
// sessions through which PAUSEs and CNs leave. Apply installs an intent
// on running switches idempotently.
//
// Addresses: a topology.json gives its hosts' IPs and MACs; a simulator
// topology's host with node ID n gets HostIP(n) and HostMAC(n). A switch
// port's MAC is PortMAC(node, port). P4 port numbers are a tutorials
// topology's "s1-p2" numbers, or a simulator switch's link index + 1.
package fabric

import (
	"fmt"
	"net"
	"sort"
	"strconv"

	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/tutorialjson"
)

// Fabric is a topology with the addresses and port numbers the switches
// are programmed with.
type Fabric struct {
	Topology *topo.Topology
	// Ports[node][i] is the P4 port number of the node's i-th link end
	// (topo.Adjacency order); hosts' are unused.
	Ports [][]uint32
	// HostIP and HostMAC are each host's addresses, by node ID.
	HostIP  map[int]net.IP
	HostMAC map[int]net.HardwareAddr
	// PriorityQueues is how many strict-priority queues the switches
	// have per port (their --priority-queues; 0 or 1: one). With two or
	// more, RCC sends harmful packets past W_c to queue 0 and all else to
	// queue 1, the model's work-conserving window; with one, RCC only
	// counts them.
	PriorityQueues int
	// INT installs INT on every port whatever the scheme (HPCC's always
	// has it), so that hosts that ask measure the queues on their paths.
	INT bool
	// INTRate is the rate every port's INT records carry, b/s,
	// where the switches' ports run at another rate than the topology's
	// links (p4switch --queue-rate under Mininet); 0: each link's rate.
	INTRate float64
}

// HostIP is a simulator host's address: 10.0.0.0 plus its node ID plus 1.
func HostIP(node int) net.IP {
	n := uint32(node + 1)
	return net.IPv4(10, byte(n>>16), byte(n>>8), byte(n)).To4()
}

// HostMAC is a simulator host's MAC: 02:00 then its IPv4 address.
func HostMAC(node int) net.HardwareAddr {
	return append(net.HardwareAddr{2, 0}, HostIP(node)...)
}

// PortMAC is a switch port's own MAC: 02:01, the node ID, the port.
func PortMAC(node int, port uint32) net.HardwareAddr {
	return net.HardwareAddr{2, 1, byte(node >> 8), byte(node), byte(port >> 8), byte(port)}
}

// FromTopology is a simulator topology with generated addresses and
// ports numbered from 1 in link order.
func FromTopology(t *topo.Topology) (*Fabric, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if len(t.Nodes) >= 1<<24-1 {
		return nil, fmt.Errorf("topology %s: %d nodes do not fit 10.0.0.0/8", t.Name, len(t.Nodes))
	}
	f := &Fabric{Topology: t, HostIP: map[int]net.IP{}, HostMAC: map[int]net.HardwareAddr{}}
	adj := t.Adjacency()
	f.Ports = make([][]uint32, len(t.Nodes))
	for n, ports := range adj {
		if len(ports) > 510 {
			return nil, fmt.Errorf("topology %s: node %s has %d ports; rcm.p4's are 1 to 510", t.Name, t.Nodes[n].Name, len(ports))
		}
		for i := range ports {
			f.Ports[n] = append(f.Ports[n], uint32(i+1))
		}
		if t.Nodes[n].Kind == topo.Host {
			f.HostIP[n], f.HostMAC[n] = HostIP(n), HostMAC(n)
		}
	}
	return f, nil
}

// DefaultTutorialRate is the rate of a tutorials link without a
// bandwidth (no limit there), for the thresholds that scale with it.
const DefaultTutorialRate = 100e9

// FromTutorial is a tutorials topology.json: hosts and switches by name
// (hosts first, each in natural order: s2 before s10), its addresses and port numbers, link
// bandwidths in Mb/s and latencies as rates and delays.
func FromTutorial(tt *tutorialjson.Topology) (*Fabric, error) {
	t := &topo.Topology{Name: tt.Path}
	ids := map[string]int{}
	f := &Fabric{Topology: t, HostIP: map[int]net.IP{}, HostMAC: map[int]net.HardwareAddr{}}
	for _, kind := range []topo.Kind{topo.Host, topo.Switch} {
		var names []string
		if kind == topo.Host {
			for n := range tt.Hosts {
				names = append(names, n)
			}
		} else {
			for n := range tt.Switches {
				names = append(names, n)
			}
		}
		sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
		for _, n := range names {
			id := len(t.Nodes)
			ids[n] = id
			t.Nodes = append(t.Nodes, topo.Node{ID: id, Kind: kind, Name: n, Group: -1})
			if kind == topo.Host {
				h := tt.Hosts[n]
				ip, _, err := net.ParseCIDR(h.IP)
				if err != nil {
					if ip = net.ParseIP(h.IP); ip == nil {
						return nil, fmt.Errorf("%s: hosts.%s.ip %q: want an IPv4 address", tt.Path, n, h.IP)
					}
				}
				mac, err := net.ParseMAC(h.MAC)
				if err != nil || ip.To4() == nil {
					return nil, fmt.Errorf("%s: hosts.%s: want an IPv4 address and a MAC, got %q and %q", tt.Path, n, h.IP, h.MAC)
				}
				f.HostIP[id], f.HostMAC[id] = ip.To4(), mac
			}
		}
	}
	f.Ports = make([][]uint32, len(t.Nodes))
	for i, l := range tt.Links {
		a, pa := tutorialjson.End(l.A)
		b, pb := tutorialjson.End(l.B)
		ia, okA := ids[a]
		ib, okB := ids[b]
		if !okA || !okB {
			return nil, fmt.Errorf("%s: links[%d]: %q or %q names no host or switch", tt.Path, i, l.A, l.B)
		}
		rate := l.Bandwidth * 1e6
		if rate == 0 {
			rate = DefaultTutorialRate
		}
		t.Links = append(t.Links, topo.Link{A: ia, B: ib, Rate: rate, Delay: l.Latency.Nanoseconds() * 1000})
		for _, end := range []struct {
			id, port int
		}{{ia, pa}, {ib, pb}} {
			if t.Nodes[end.id].Kind == topo.Switch && end.port == 0 {
				return nil, fmt.Errorf("%s: links[%d]: switch end %q has no port (write it s1-p2)", tt.Path, i, l.A+" "+l.B)
			}
			f.Ports[end.id] = append(f.Ports[end.id], uint32(end.port))
		}
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", tt.Path, err)
	}
	return f, nil
}

// Switch names a switch of the fabric by its name or its index among
// the switches (s1 is the first).
func (f *Fabric) Switch(name string) (int, bool) {
	for _, n := range f.Topology.Nodes {
		if n.Kind == topo.Switch && n.Name == name {
			return n.ID, true
		}
	}
	return 0, false
}

// Host names a host of the fabric by its name.
func (f *Fabric) Host(name string) (int, bool) {
	for _, n := range f.Topology.Nodes {
		if n.Kind == topo.Host && n.Name == name {
			return n.ID, true
		}
	}
	return 0, false
}

// Gateway is the MAC of the switch port a host is cabled to, which its
// frames are addressed to; an error if the host has not exactly one link,
// to a switch.
func (f *Fabric) Gateway(host int) (net.HardwareAddr, error) {
	t := f.Topology
	adj := t.Adjacency()
	if host < 0 || host >= len(t.Nodes) || t.Nodes[host].Kind != topo.Host || len(adj[host]) != 1 {
		return nil, fmt.Errorf("node %d is not a host with one link", host)
	}
	peer := adj[host][0].Peer
	if t.Nodes[peer.Node].Kind != topo.Switch {
		return nil, fmt.Errorf("host %s is cabled to %s, not to a switch", t.Nodes[host].Name, t.Nodes[peer.Node].Name)
	}
	for i, p := range adj[peer.Node] {
		if p.Link == adj[host][0].Link {
			return PortMAC(peer.Node, f.Ports[peer.Node][i]), nil
		}
	}
	return nil, fmt.Errorf("host %s: link not found at %s", t.Nodes[host].Name, t.Nodes[peer.Node].Name)
}

// SwitchNames are the switches' names in node order.
func (f *Fabric) SwitchNames() []string {
	var out []string
	for _, id := range f.Topology.Switches() {
		out = append(out, f.Topology.Nodes[id].Name)
	}
	return out
}

// naturalLess orders names by their text, then by the number they end
// with: h2 before h10.
func naturalLess(a, b string) bool {
	ta, na := splitNumber(a)
	tb, nb := splitNumber(b)
	if ta != tb {
		return ta < tb
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

// splitNumber is a name's text and the number it ends with (-1: none).
func splitNumber(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || len(s)-i > 9 {
		return s, -1
	}
	n, _ := strconv.Atoi(s[i:])
	return s[:i], n
}
