package tutorialjson

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Topology is a topology.json: hosts with their address and start-up
// commands, switches with their runtime file, and links. Host and switch
// names are the JSON object's keys; a link end is a host's name or a
// switch port written "s1-p2".
type Topology struct {
	Path     string            `json:"-"`
	Hosts    map[string]Host   `json:"hosts"`
	Switches map[string]Switch `json:"switches"`
	Links    []Link            `json:"links"`
}

// Host is one host: its address with prefix length ("10.0.1.1/24"), its
// MAC, and the shell commands run in it at start (routes, ARP entries).
type Host struct {
	IP       string   `json:"ip"`
	MAC      string   `json:"mac"`
	Commands []string `json:"commands,omitempty"`
}

// Switch is one switch: its runtime file, relative to the topology file,
// and optionally the program it runs.
type Switch struct {
	RuntimeJSON string `json:"runtime_json,omitempty"`
	Program     string `json:"program,omitempty"`
	CLIInput    string `json:"cli_input,omitempty"`
}

// Link joins two ends, with the tutorials' optional latency ("5ms", or a
// number of milliseconds) and bandwidth (Mb/s; 0 for no limit).
type Link struct {
	A, B      string
	Latency   time.Duration
	Bandwidth float64
}

// End is a link end: a node, and a port number for a switch ("s1-p2":
// s1, 2; "h1": h1, 0).
func End(s string) (node string, port int) {
	if i := strings.LastIndex(s, "-p"); i > 0 {
		if p, err := strconv.Atoi(s[i+2:]); err == nil && p > 0 {
			return s[:i], p
		}
	}
	return s, 0
}

// UnmarshalJSON reads a link as the tutorials write it: [a, b] or [a, b,
// latency] or [a, b, latency, bandwidth].
func (l *Link) UnmarshalJSON(b []byte) error {
	var parts []json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil || len(parts) < 2 || len(parts) > 4 {
		return fmt.Errorf("a link is [end, end, latency, bandwidth] with the last two optional, found %s", b)
	}
	if err := json.Unmarshal(parts[0], &l.A); err != nil {
		return fmt.Errorf("link end %s: want a string", parts[0])
	}
	if err := json.Unmarshal(parts[1], &l.B); err != nil {
		return fmt.Errorf("link end %s: want a string", parts[1])
	}
	if len(parts) > 2 {
		lat, err := latency(parts[2])
		if err != nil {
			return err
		}
		l.Latency = lat
	}
	if len(parts) > 3 {
		if err := json.Unmarshal(parts[3], &l.Bandwidth); err != nil || l.Bandwidth < 0 {
			return fmt.Errorf("link bandwidth %s: want Mb/s, a number not below 0", parts[3])
		}
	}
	return nil
}

// MarshalJSON writes a link back in the tutorials' form.
func (l Link) MarshalJSON() ([]byte, error) {
	out := []any{l.A, l.B}
	if l.Latency != 0 || l.Bandwidth != 0 {
		out = append(out, fmt.Sprintf("%gms", float64(l.Latency)/float64(time.Millisecond)))
	}
	if l.Bandwidth != 0 {
		out = append(out, l.Bandwidth)
	}
	return json.Marshal(out)
}

// latency reads "5ms", "100us", "0.5ms" or a bare number of
// milliseconds.
func latency(raw json.RawMessage) (time.Duration, error) {
	var ms float64
	if err := json.Unmarshal(raw, &ms); err == nil {
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("link latency %s: want \"5ms\" or a number of milliseconds", raw)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("link latency %q: want a duration such as \"5ms\"", s)
	}
	return d, nil
}

// LoadTopology reads and checks a topology.json: every link end names a
// host or a switch port, no port is used twice, hosts have an IP and a
// MAC that parse.
func LoadTopology(path string) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t := &Topology{}
	if err := json.Unmarshal(data, t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t.Path = path
	if err := t.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func (t *Topology) check() error {
	// Two hosts with one address would leave the routes to one of them
	// going to the other.
	ips, macs := map[string]string{}, map[string]string{}
	for _, name := range sortedKeys(t.Hosts) {
		h := t.Hosts[name]
		ip, _, err := net.ParseCIDR(h.IP)
		if err != nil {
			if ip = net.ParseIP(h.IP); ip == nil {
				return fmt.Errorf("hosts.%s.ip: %q is not an address", name, h.IP)
			}
		}
		mac, err := net.ParseMAC(h.MAC)
		if err != nil {
			return fmt.Errorf("hosts.%s.mac: %q is not a MAC address", name, h.MAC)
		}
		if other, ok := ips[ip.String()]; ok {
			return fmt.Errorf("hosts.%s.ip: %s is hosts.%s's address too; each host needs its own", name, ip, other)
		}
		if other, ok := macs[mac.String()]; ok {
			return fmt.Errorf("hosts.%s.mac: %s is hosts.%s's MAC too; each host needs its own", name, mac, other)
		}
		ips[ip.String()], macs[mac.String()] = name, name
	}
	used := map[string]int{}
	for i, l := range t.Links {
		for _, end := range []string{l.A, l.B} {
			node, port := End(end)
			_, host := t.Hosts[node]
			_, sw := t.Switches[node]
			switch {
			case host && port != 0, !host && !sw:
				return fmt.Errorf("links[%d]: %q is neither a host nor a switch port (s1-p2)", i, end)
			case sw && port == 0:
				return fmt.Errorf("links[%d]: %q names a switch without its port (%s-p1)", i, end, node)
			}
			if j, ok := used[end]; ok && !host {
				return fmt.Errorf("links[%d]: %s is already linked by links[%d]", i, end, j)
			}
			used[end] = i
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
