package sim

import (
	"fmt"
	"math"
	"sort"

	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/sim/event"
	"github.com/p4rcm/p4rcm/sim/partition"
	"github.com/p4rcm/p4rcm/sim/topo"
)

// Network is one simulation: the nodes, links and flows, split into
// parts (one per thread) that each have their own event queue.
type Network struct {
	cfg      Config
	parts    []*part
	plan     partition.Plan
	window   int64 // the parts' lookahead: the longest window a part may run alone
	topo     *topo.Topology
	routes   *topo.Routes
	hosts    []*host // by node ID; nil for switches
	switches []*switchNode
	ports    [][]port // by node ID, by local port number, side by side
	flows    []flow
	rx       []rxFlow
	cc       bool
	dataECN  uint8
	hostRate float64
	lossless uint8            // priorities with PFC
	byHash   map[uint32][]int // FlowsWithHash, made on first use
	ldcp     ldcpState
	ack      ackState
	// cnpInterval is the NPs' least time between CNPs of a flow: DCQCN's
	// N, or LDCP's for its rate variant.
	cnpInterval int64

	// The run's end and what it found, set by Run.
	end    int64
	faults []string
	stats  ParallelStats
	// The deadlock check: when it is next due, and the data packets sent
	// when they last changed.
	nextCheck, lastChange int64
	lastData              int64

	samplers     []*sampler
	queueSamples []QueueSample
	rateSamples  []RateSample
	ccSamples    []CCSample
}

// switchNode binds a dataplane switch to the simulator: it is the switch's
// Env and the node behind its ports.
type switchNode struct {
	part  *part
	ref   event.Ref
	id    int
	sw    *dataplane.Switch
	ports []port
}

func (s *switchNode) Kick(port int)                    { s.ports[port].kick(s.part.q.Now()) }
func (s *switchNode) Timer(at int64, id uint64)        { s.part.q.At(at, s.ref, id) }
func (s *switchNode) NewPacket() *dataplane.Packet     { return s.part.pool.get() }
func (s *switchNode) Free(p *dataplane.Packet)         { s.part.pool.put(p) }
func (s *switchNode) Handle(now event.Time, id uint64) { s.sw.OnTimer(now, id) }

func (s *switchNode) Idle(port int) bool { return s.ports[port].idle(s.part.q.Now()) }
func (s *switchNode) TrySend(port int, p *dataplane.Packet) bool {
	pt, now := &s.ports[port], s.part.q.Now()
	if !pt.idle(now) {
		return false
	}
	pt.transmit(now, p) // the switch sends through TrySend only with nothing queued
	return true
}
func (s *switchNode) Send(port int, p *dataplane.Packet) {
	s.ports[port].transmit(s.part.q.Now(), p) // likewise
}

// fib is one switch's routes, laid out for the per-packet lookup: one
// word per destination edge switch locating its next-hop list in a small
// per-switch pool, and host ports at the switch's own edge. It is one
// cache line (TestCacheLines), and what every switch shares sits apart in
// hosts, which every lookup reads and so stays cached.
type fib struct {
	self   int32     // this switch's edge index, -1 if it has no hosts
	hosts  *fibHosts // shared by all switches
	byEdge []uint32  // edge index -> offset<<8 | count in pool
	pool   []int32
}

// fibHosts is where the hosts are: what every switch's fib shares.
type fibHosts struct {
	edgeOf []int32 // host node ID -> edge index
	port   []int32 // host node ID -> port at its edge
}

func (f *fib) NextHops(dst int) []int32 {
	h := f.hosts
	e := h.edgeOf[dst]
	if e == f.self {
		if e < 0 {
			return nil // dst is no host, and this switch has none
		}
		return h.port[dst : dst+1 : dst+1]
	}
	w := f.byEdge[e]
	off := w >> 8
	return f.pool[off : off+w&0xff : off+w&0xff]
}

// fibs lays the routes out per switch.
func fibs(t *topo.Topology, r *topo.Routes) (map[int]*fib, error) {
	hosts := &fibHosts{edgeOf: make([]int32, len(t.Nodes)), port: make([]int32, len(t.Nodes))}
	edgeIndex := map[int]int32{}
	var rep []int // a host under each edge
	for i := range hosts.edgeOf {
		hosts.edgeOf[i] = -1
	}
	for _, h := range t.Hosts() {
		at, _ := r.HostPort(h)
		e, ok := edgeIndex[at.Node]
		if !ok {
			e = int32(len(rep))
			edgeIndex[at.Node] = e
			rep = append(rep, h)
		}
		hosts.edgeOf[h] = e
		hosts.port[h] = int32(at.Port)
	}
	out := map[int]*fib{}
	for _, sw := range t.Switches() {
		f := &fib{self: -1, hosts: hosts, byEdge: make([]uint32, len(rep))}
		if e, ok := edgeIndex[sw]; ok {
			f.self = e
		}
		// Deduplicate the lists: a switch has only a few distinct ones.
		// Routes stores each distinct list once, so a list is known by
		// where it starts in Routes' pool.
		type listKey struct {
			first *int32
			n     int
		}
		seen := map[listKey]uint32{}
		for e, h := range rep {
			hops := r.NextHops(sw, h)
			if len(hops) > 255 {
				return nil, fmt.Errorf("switch %d has %d equal-cost next hops; at most 255 are supported", sw, len(hops))
			}
			k := listKey{n: len(hops)}
			if len(hops) > 0 {
				k.first = &hops[0]
			}
			w, ok := seen[k]
			if !ok {
				w = uint32(len(f.pool))<<8 | uint32(len(hops))
				f.pool = append(f.pool, hops...)
				seen[k] = w
			}
			f.byEdge[e] = w
		}
		out[sw] = f
	}
	return out, nil
}

// New builds the network of a configuration.
func New(cfg Config) (*Network, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.PauseQuanta == 0 {
		cfg.PauseQuanta = 0xffff
	}
	t := cfg.Topology
	n := &Network{cfg: cfg, topo: t, cc: cfg.CC == "dcqcn"}
	n.split(cfg.Threads)
	reg := &n.parts[0].q // every handler is registered here; the others share them
	// LDCP's window sender decides per packet (first-RTT packets are not
	// ECN-capable); its rate variant's packets all are.
	if n.cc || cfg.ECNMarking || cfg.CC == "ldcp-rate" || cfg.CC == "dctcp" {
		n.dataECN = dataplane.ECT0
	}
	adj := t.Adjacency()
	n.hosts = make([]*host, len(t.Nodes))
	n.switches = make([]*switchNode, len(t.Nodes))
	// A node's ports lie side by side, which a switch indexes directly
	// (switchNode.ports) rather than through a line of pointers.
	n.ports = make([][]port, len(t.Nodes))
	for _, nd := range t.Nodes {
		n.ports[nd.ID] = make([]port, len(adj[nd.ID]))
		for i, ap := range adj[nd.ID] {
			l := t.Links[ap.Link]
			pt := n.parts[n.plan.Of[nd.ID]]
			p := &n.ports[nd.ID][i]
			*p = port{part: pt, local: int32(i), rate: l.Rate, psPerByte: psPerByte(l.Rate), delay: l.Delay}
			p.ref = reg.Register(p)
			p.wakeRef = p.ref
		}
	}
	for _, nd := range t.Nodes {
		for i, ap := range adj[nd.ID] {
			p := &n.ports[nd.ID][i]
			p.peer = &n.ports[ap.Peer.Node][ap.Peer.Port]
			// Frames arrive in the peer's part: across a cut, the peer's
			// part holds the wire and runs the arrivals.
			p.rx = p.peer.part
			p.rxPart = int32(p.rx.id)
			p.cut = p.rx != p.part
		}
	}
	n.hostRate = math.Inf(1)
	for _, nd := range t.Nodes {
		if nd.Kind == topo.Host {
			n.hostRate = math.Min(n.hostRate, n.ports[nd.ID][0].rate)
		}
	}
	lossless := uint8(0)
	if cfg.PFC {
		for _, q := range cfg.LosslessPriorities {
			lossless |= 1 << q
		}
		if len(cfg.LosslessPriorities) == 0 {
			for _, f := range cfg.Flows {
				lossless |= 1 << f.Priority
			}
		}
		if lossless == 0 {
			lossless = 1 << 3
		}
	}
	n.lossless = lossless
	frame := float64(int32(cfg.MTU) + cfg.Wire.dataOverhead())
	xon := cfg.XONOffset
	if xon == 0 {
		xon = 2 * frame
	}
	configs := map[int]dataplane.Config{} // switch node ID -> its configuration
	for _, nd := range t.Nodes {
		ports := n.ports[nd.ID]
		if nd.Kind == topo.Host {
			h := &host{net: n, part: ports[0].part, id: nd.ID, port: &ports[0], lineRate: ports[0].rate}
			h.ref = reg.Register(h)
			ports[0].host = h
			n.hosts[nd.ID] = h
			continue
		}
		sc := dataplane.Config{
			Name: nd.Name, Buffer: cfg.Buffer, Lossless: lossless, XONOffset: xon,
			PauseQuanta: cfg.PauseQuanta, QueueLimit: cfg.QueueLimit,
			Seed: cfg.Seed ^ mixSeed(uint64(nd.ID)), RCM: cfg.RCM, CNs: n.parts[n.plan.Of[nd.ID]].cns,
			AckInData: cfg.AckInData,
		}
		if cfg.CC == "hpcc" {
			sc.INTs = &n.parts[n.plan.Of[nd.ID]].ints
		}
		if cfg.RCMTrace != nil {
			name := nd.Name
			sc.RCMTrace = func(ev *dataplane.RCMEvent) { cfg.RCMTrace(name, ev) }
		}
		for i, p := range ports {
			pc := dataplane.PortConfig{Rate: p.rate, Marking: n.marking(p.rate),
				PeerIsSwitch: t.Nodes[adj[nd.ID][i].Peer.Node].Kind == topo.Switch}
			if cfg.PFC {
				pc.Headroom = cfg.Headroom
				if pc.Headroom == 0 {
					pc.Headroom = HeadroomFor(p.rate, p.delay, cfg.MTU)
				}
				pc.Beta, pc.XOFF = n.beta(p.rate), cfg.PFCXOFF
			}
			sc.Ports = append(sc.Ports, pc)
		}
		// Checked now, before the routes, which take seconds on large
		// fabrics.
		if err := sc.Check(); err != nil {
			return nil, err
		}
		s := &switchNode{part: n.parts[n.plan.Of[nd.ID]], id: nd.ID, ports: n.ports[nd.ID]}
		s.ref = reg.Register(s)
		n.switches[nd.ID] = s
		configs[nd.ID] = sc
	}
	var routeProgress func(done, total int)
	if cfg.BuildProgress != nil {
		routeProgress = func(done, total int) { cfg.BuildProgress("routes", done, total) }
	}
	routes, err := topo.ComputeRoutesProgress(t, routeProgress)
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	n.routes = routes
	fibOf, err := fibs(t, routes)
	if err != nil {
		return nil, err
	}
	done, total := 0, len(configs)
	for _, nd := range t.Nodes {
		s := n.switches[nd.ID]
		if s == nil {
			continue
		}
		sw, err := dataplane.New(configs[nd.ID], fibOf[nd.ID], s)
		if err != nil {
			return nil, err
		}
		s.sw = sw
		for i := range s.ports {
			s.ports[i].sw = s
		}
		delete(configs, nd.ID)
		if done++; cfg.BuildProgress != nil {
			cfg.BuildProgress("switches", done, total)
		}
	}
	for _, ports := range n.ports {
		for i := range ports {
			p := &ports[i]
			if p.sw != nil {
				p.dp = p.sw.sw
			}
			p.peerLocal = p.peer.local
			if p.peer.sw != nil {
				p.peerDP = p.peer.sw.sw
			} else {
				p.peerHost = p.peer.host
			}
		}
	}
	n.flows = make([]flow, len(cfg.Flows))
	n.rx = make([]rxFlow, len(cfg.Flows))
	for i, spec := range cfg.Flows {
		f := &n.flows[i]
		f.id = int32(i)
		f.src, f.dst = n.hosts[spec.Src], n.hosts[spec.Dst]
		f.size, f.start, f.prio = spec.Size, spec.Start, uint8(spec.Priority)
		f.sport = uint16(10000 + i%50000)
		f.dport = uint16(spec.DstPort)
		if f.dport == 0 {
			f.dport = 4791
		}
		f.hash = dataplane.FlowHash(int32(spec.Src), int32(spec.Dst), f.sport, f.dport)
		n.rx[i] = rxFlow{size: f.size, src: int32(spec.Src), dst: int32(spec.Dst), sport: f.sport, dport: f.dport,
			prio: f.prio, ackHash: dataplane.FlowHash(int32(spec.Dst), int32(spec.Src), f.dport, f.sport)}
		if n.cc {
			f.rp = dcqcn.NewRP(&n.cfg.DCQCN, f.src.lineRate)
		}
	}
	if err := n.initLDCP(); err != nil {
		return nil, err
	}
	n.initAckCC()
	n.cnpInterval = cfg.DCQCN.CNPInterval
	if n.ldcp.mode == ldcpRate {
		n.cnpInterval = cfg.LDCP.CNPInterval
	}
	// Each host starts its flows in start order, those of one time in
	// flow order.
	for i := range n.flows {
		h := n.flows[i].src
		h.starts = append(h.starts, int32(i))
	}
	for _, h := range n.hosts {
		if h != nil {
			sort.SliceStable(h.starts, func(a, b int) bool { return n.flows[h.starts[a]].start < n.flows[h.starts[b]].start })
		}
	}
	for _, pt := range n.parts[1:] {
		pt.q.ShareHandlers(reg)
	}
	n.watchEnds()
	return n, nil
}

// marking is the RED/ECN curve of a port of the given rate.
func (n *Network) marking(rate float64) dataplane.Marking {
	return n.cfg.Marking(rate, n.hostRate)
}

// Marking is the RED/ECN curve a switch port of the given rate gets in a
// fabric whose hosts run at hostRate: DCQCN's parameter set, or LDCP's
// (or the ECN override) scaled by the port's rate; WRED and buf_max
// scaled by rate/hostRate, or LDCP's by the port's rate. No congestion
// control and no ECNMarking: nothing is marked. The P4 controller
// (package fabric) programs switches from it too.
func (c *Config) Marking(rate, hostRate float64) dataplane.Marking {
	var m dataplane.Marking
	ldcp := c.IsLDCP()
	switch {
	case c.WREDK > 0:
		m.WREDK = c.WREDK * rate / hostRate
	case ldcp:
		m.WREDK = c.LDCP.K * rate / c.LDCP.RefRate
	}
	switch {
	case c.BufMax > 0:
		m.BufMax = c.BufMax * rate / hostRate
	case ldcp:
		m.BufMax = c.LDCP.BufMax * rate / c.LDCP.RefRate
	}
	if c.CC != "dcqcn" && c.CC != "dctcp" && !ldcp && !c.ECNMarking {
		m.KMin, m.KMax = math.Inf(1), math.Inf(1)
		return m
	}
	e := ECNConfig{KMin: c.DCQCN.KMin, KMax: c.DCQCN.KMax, PMax: c.DCQCN.PMax, RefRate: c.DCQCN.RefRate}
	switch {
	case ldcp:
		e = ECNConfig{KMin: c.LDCP.KMin, KMax: c.LDCP.KMax, PMax: c.LDCP.PMax, RefRate: c.LDCP.RefRate}
	case c.CC == "dctcp":
		e = ECNConfig{KMin: c.DCTCP.KMin, KMax: c.DCTCP.KMax, PMax: c.DCTCP.PMax, RefRate: c.DCTCP.RefRate}
	}
	if c.ECN != nil {
		e = *c.ECN
	}
	scale := rate / e.RefRate
	m.KMin, m.KMax, m.PMax = e.KMin*scale, e.KMax*scale, e.PMax
	return m
}

// IsLDCP reports whether the hosts run LDCP, in either mode.
func (c *Config) IsLDCP() bool { return c.CC == "ldcp" || c.CC == "ldcp-rate" }

// beta is the dynamic PFC factor of a port of the given rate.
func (n *Network) beta(rate float64) float64 {
	b := n.cfg.PFCBeta
	if b == 0 || !n.cfg.PFCBetaScale || rate <= n.hostRate {
		return b
	}
	return math.Min(b*rate/n.hostRate, math.Max(b, 1))
}

// HeadroomFor sizes t_flight for a port from its rate and cable delay
// (picoseconds) with buffercalc's worst-case model (cable length from the
// delay at 5 ns/m), for packets of mtu bytes of payload.
func HeadroomFor(rate float64, delay int64, mtu int) float64 {
	l := buffercalc.StandardLink(rate, float64(mtu+20+8+12+4))
	l.CableMeters = float64(delay) / 1000 / buffercalc.DefaultNsPerMeter
	h, err := l.Headroom()
	if err != nil {
		panic(err) // rate and MTU were validated
	}
	return h.Total
}

func mixSeed(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
