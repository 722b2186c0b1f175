package fabric

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/p4/settings"
	"github.com/p4rcm/p4rcm/rcm"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/scenario"
	"github.com/p4rcm/p4rcm/sim/topo"
)

// Intent is what one switch must hold: table entries and clone sessions.
type Intent struct {
	Node    int
	Name    string
	Entries []controlplane.Entry
	Clones  []Clone
}

// Clone is a clone session and the port its copies leave by.
type Clone struct{ Session, Port uint32 }

// SARMaxMembers is the most members rcm.p4's sar_group takes; larger
// ECMP groups are hashed without SAR.
const SARMaxMembers = 4

// SARPinIdle is how long a detoured flow stays pinned after its last
// packet when the RCM parameters give none.
const SARPinIdle = 100 * time.Microsecond

// ProgramTimeMax is the longest time rcm.p4's tables take: they hold
// times as 32-bit nanoseconds.
const ProgramTimeMax = time.Duration(1<<32 - 1)

// LongestTime is the longest time Plan gives cfg's switches (the CN
// interval and hold, RCC's window time, SAR's pin) and its name, or 0
// without RCM: what an emulation, which stretches every time, must keep
// within ProgramTimeMax.
func LongestTime(cfg *sim.Config) (what string, d time.Duration) {
	r := cfg.RCM
	if r == nil {
		return "", 0
	}
	longer := func(name string, t time.Duration) {
		if t > d {
			what, d = name, t
		}
	}
	t := cfg.Topology
	frame := float64(cfg.MTU + dataplane.RoCEHeaders + dataplane.EthOverhead)
	for _, l := range t.Links {
		longer("rcm.window's time at its port's rate", settings.RCMFromModel(*r, l.Rate, frame).WindowTime)
		if t.Nodes[l.A].Kind == topo.Switch && t.Nodes[l.B].Kind == topo.Switch {
			// CNs go between switches only.
			longer("rcm.cn_interval", time.Duration(r.CNInterval/1000))
			longer("rcm.cn_hold", time.Duration(r.CNHold/1000))
		}
	}
	if r.SAR {
		longer("rcm.pin_idle", pinIdle(r))
	}
	return what, d
}

// pinIdle is the pin time SAR groups get.
func pinIdle(r *rcm.Params) time.Duration {
	if r.PinIdle > 0 {
		return time.Duration(r.PinIdle / 1000)
	}
	return SARPinIdle
}

// Plan is every switch's intent for the fabric run with cfg, the
// simulator's configuration (scheme, PFC, buffer, DCQCN, ECN and RCM
// parameters; its flows are not used). Static PFC thresholds stand in
// for the simulator's dynamic ones, which a P4 target cannot compute:
// XOFF is cfg.PFCXOFF when set, else buffercalc's static t_PFC for the
// switch's buffer, port count and each port's headroom.
func (f *Fabric) Plan(cfg *sim.Config) ([]Intent, error) {
	t := f.Topology
	routes, err := topo.ComputeRoutes(t)
	if err != nil {
		return nil, err
	}
	adj := t.Adjacency()
	hostRate := math.Inf(1)
	for _, h := range t.Hosts() {
		hostRate = math.Min(hostRate, t.Links[adj[h][0].Link].Rate)
	}
	frame := float64(cfg.MTU + dataplane.RoCEHeaders + dataplane.EthOverhead)
	var out []Intent
	for _, sw := range t.Switches() {
		p := planner{f: f, cfg: cfg, adj: adj, sw: sw, frame: frame, hostRate: hostRate, groups: map[string]uint16{}}
		in := Intent{Node: sw, Name: t.Nodes[sw].Name}
		for _, h := range t.Hosts() {
			hops := routes.NextHops(sw, h)
			if len(hops) == 0 {
				continue
			}
			e, err := p.route(h, hops)
			if err != nil {
				return nil, err
			}
			in.Entries = append(in.Entries, e)
		}
		in.Entries = append(in.Entries, p.groupEntries...)
		for i := range adj[sw] {
			es, err := p.port(i)
			if err != nil {
				return nil, fmt.Errorf("switch %s port %d: %w", t.Nodes[sw].Name, f.Ports[sw][i], err)
			}
			in.Entries = append(in.Entries, es...)
			port := f.Ports[sw][i]
			in.Clones = append(in.Clones, Clone{Session: p4.CloneSession(port), Port: port})
		}
		out = append(out, in)
	}
	return out, nil
}

// planner computes one switch's entries.
type planner struct {
	f            *Fabric
	cfg          *sim.Config
	adj          topo.Adjacency
	sw           int
	frame        float64
	hostRate     float64
	groups       map[string]uint16 // next-hop list -> its ECMP group's base
	nextBase     uint16
	groupEntries []controlplane.Entry
}

// nexthop is set_nexthop's parameters towards the peer on link end i.
func (p *planner) nexthop(i int32) []controlplane.Param {
	port := p.f.Ports[p.sw][i]
	peer := p.adj[p.sw][i].Peer
	dst := p.f.HostMAC[peer.Node]
	if p.f.Topology.Nodes[peer.Node].Kind == topo.Switch {
		dst = PortMAC(peer.Node, p.f.Ports[peer.Node][peer.Port])
	}
	return []controlplane.Param{
		{Name: "port", Value: u16(uint16(port))},
		{Name: "src_mac", Value: []byte(PortMAC(p.sw, port))},
		{Name: "dst_mac", Value: []byte(dst)},
	}
}

// route is host h's ipv4_lpm entry: one next hop, or an ECMP group of
// them (made once per distinct list of ports).
func (p *planner) route(h int, hops []int32) (controlplane.Entry, error) {
	e := controlplane.Entry{Table: p4.TableIPv4LPM,
		Match: []controlplane.Match{{Field: "hdr.ipv4.dst_addr", Value: []byte(p.f.HostIP[h].To4()), PrefixLen: 32}}}
	if len(hops) == 1 {
		e.Action, e.Params = p4.ActionSetNexthop, p.nexthop(hops[0])
		return e, nil
	}
	key := fmt.Sprint(hops)
	base, ok := p.groups[key]
	if !ok {
		if int(p.nextBase)+len(hops) > math.MaxUint16 {
			return e, fmt.Errorf("switch %s: ECMP groups need more than 65535 members", p.f.Topology.Nodes[p.sw].Name)
		}
		base = p.nextBase
		p.nextBase += uint16(len(hops))
		p.groups[key] = base
		for off, i := range hops {
			p.groupEntries = append(p.groupEntries, controlplane.Entry{Table: p4.TableECMPMember,
				Match:  []controlplane.Match{{Field: "meta.ecmp_base", Value: u16(base)}, {Field: "meta.ecmp_offset", Value: u16(uint16(off))}},
				Action: p4.ActionSetNexthop, Params: p.nexthop(i)})
		}
		if r := p.cfg.RCM; r != nil && r.SAR && len(hops) <= SARMaxMembers {
			params := []controlplane.Param{{Name: "members", Value: []byte{byte(len(hops))}}}
			for m := range SARMaxMembers {
				port := uint16(0)
				if m < len(hops) {
					port = uint16(p.f.Ports[p.sw][hops[m]])
				}
				params = append(params, controlplane.Param{Name: fmt.Sprintf("p%d", m), Value: u16(port)})
			}
			idle := pinIdle(r)
			if idle > ProgramTimeMax {
				return e, fmt.Errorf("rcm.pin_idle: %v: want 0 to %v", idle, ProgramTimeMax)
			}
			params = append(params, controlplane.Param{Name: "pin_idle_ns", Value: u32(uint32(idle.Nanoseconds()))})
			p.groupEntries = append(p.groupEntries, controlplane.Entry{Table: p4.TableSARGroup,
				Match: []controlplane.Match{{Field: "meta.ecmp_base", Value: u16(base)}}, Action: p4.ActionSetSARMembers, Params: params})
		}
	}
	e.Action = p4.ActionSetECMPGroup
	e.Params = []controlplane.Param{{Name: "base", Value: u16(base)}, {Name: "size", Value: u16(uint16(len(hops)))}}
	return e, nil
}

// port is link end i's per-port entries: set_port, set_red, set_rcm,
// set_int.
func (p *planner) port(i int) ([]controlplane.Entry, error) {
	t, cfg := p.f.Topology, p.cfg
	end := p.adj[p.sw][i]
	link := t.Links[end.Link]
	port := p.f.Ports[p.sw][i]
	peerIsSwitch := t.Nodes[end.Peer.Node].Kind == topo.Switch
	var out []controlplane.Entry
	// The model's RCM parameters on this port (set_rcm, and Q_eq for the
	// CN threshold).
	var rs settings.RCM
	if cfg.RCM != nil {
		rs = settings.RCMFromModel(*cfg.RCM, link.Rate, p.frame)
	}

	pfc := settings.PFC{MAC: PortMAC(p.sw, port), LinkRate: link.Rate, PauseQuanta: cfg.PauseQuanta, Priority: scenario.DefaultPriority}
	if pfc.PauseQuanta == 0 {
		pfc.PauseQuanta = 0xffff
	}
	if len(cfg.LosslessPriorities) > 0 {
		pfc.Priority = cfg.LosslessPriorities[0]
	}
	if cfg.PFC {
		xoff := cfg.PFCXOFF
		if xoff == 0 {
			headroom := cfg.Headroom
			if headroom == 0 {
				headroom = sim.HeadroomFor(link.Rate, link.Delay, cfg.MTU)
			}
			b := buffercalc.Buffer{Size: cfg.Buffer, Ports: len(p.adj[p.sw]), Priorities: 1, Headroom: headroom, MTU: p.frame}
			if err := b.Validate(); err != nil {
				return nil, fmt.Errorf("PFC thresholds: %w", err)
			}
			xoff = b.Static().XOFF
		}
		xon := cfg.XONOffset
		if xon == 0 {
			xon = 2 * p.frame
		}
		pfc.XOFF, pfc.XON = math.Floor(xoff), math.Max(0, math.Floor(xoff-xon))
	}
	if r := cfg.RCM; r != nil && peerIsSwitch {
		pfc.CNs = true
		pfc.CNInterval = time.Duration(r.CNInterval / 1000)
		pfc.CNHold = time.Duration(r.CNHold / 1000)
		// The model's input detector finds congestion once the port's
		// account passes Q_eq (its growth aside): CNs go up from there,
		// and a CN of degree 0 once it falls back.
		pfc.CNIngress = math.Floor(rs.QEq)
	}
	if cfg.PFC || pfc.CNs {
		params, err := pfc.Params()
		if err != nil {
			return nil, err
		}
		out = append(out, settings.PortEntry(port, params))
	}

	m := cfg.Marking(link.Rate, p.hostRate)
	if !math.IsInf(m.KMin, 1) || m.WREDK > 0 || m.BufMax > 0 {
		red := settings.RED{Kmin: m.KMin, Kmax: m.KMax, Pmax: m.PMax, WREDK: m.WREDK, BufMax: m.BufMax}
		if math.IsInf(m.KMin, 1) { // no ECN curve: one nothing reaches
			red.Kmin, red.Kmax, red.Pmax = 1<<32-1, 1<<32-1, 0
		}
		e, err := red.Entry(port)
		if err != nil {
			return nil, fmt.Errorf("RED/ECN: %w", err)
		}
		out = append(out, e)
	}

	if cfg.RCM != nil {
		if p.f.PriorityQueues >= 2 {
			rs.High, rs.Low = 1, 0
		}
		e, err := rs.Entry(port)
		if err != nil {
			return nil, fmt.Errorf("RCM: %w", err)
		}
		out = append(out, e)
	}

	if cfg.CC == "hpcc" || p.f.INT {
		// HPCC's senders read every hop's telemetry: each port pushes
		// its record, with the link's rate.
		rate := link.Rate
		if p.f.INTRate > 0 {
			rate = p.f.INTRate
		}
		e, err := settings.INT{Rate: rate}.Entry(port)
		if err != nil {
			return nil, fmt.Errorf("INT: %w", err)
		}
		out = append(out, e)
	}
	return out, nil
}

func u16(x uint16) []byte { return []byte{byte(x >> 8), byte(x)} }

func u32(x uint32) []byte { return []byte{byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)} }

// Summary counts an intent's entries by table, for messages.
func (in Intent) Summary() string {
	count := map[string]int{}
	var order []string
	for _, e := range in.Entries {
		name := e.Table[strings.LastIndexByte(e.Table, '.')+1:]
		if count[name] == 0 {
			order = append(order, name)
		}
		count[name]++
	}
	var parts []string
	for _, n := range order {
		parts = append(parts, fmt.Sprintf("%d %s", count[n], n))
	}
	parts = append(parts, fmt.Sprintf("%d clone sessions", len(in.Clones)))
	return strings.Join(parts, ", ")
}
