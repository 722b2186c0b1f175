package dataplane

import (
	"math"
	"math/bits"

	"github.com/p4rcm/p4rcm/rcm"
)

// This file wires Regional Congestion Mitigation (package rcm) into the
// switch: congestion detection on every port's input (its PFC ingress
// account) and output queue, CFR's CAM on every output port, congestion
// notifications (CN) to upstream switches, RCC's window on output ports,
// and SAR's choice among equal-cost ports. Config.RCM nil leaves all of it
// out of the packet path.

// MaxCNFlows is the most flow IDs a CN carries.
const MaxCNFlows = 8

// CNInfo is the body of a congestion notification: the project's header
// on EtherType 0x88B5 with the sender's quantised degree F_b' (0 clears the
// receiver's remote congestion flag) and the harmful flows' 5-tuples.
type CNInfo struct {
	Fb    uint8
	N     uint8
	Flows [MaxCNFlows]rcm.FlowID
}

// CNFrameSize is a CN's length on the wire carrying n flow IDs: Ethernet
// header, 4 bytes of RCM header, 13 bytes per 5-tuple, FCS, at least the
// 64-byte minimum frame, plus preamble and gap.
func CNFrameSize(n int) int32 {
	return int32(max(64, 14+4+13*n+4)) + EthOverhead
}

// CNStore holds CN bodies, which packets refer to by index (Packet.Aux):
// one store serves every switch of a network, so that a CN sent by one
// switch is read by the next.
type CNStore struct {
	infos []CNInfo
	free  []uint32
}

// Alloc returns a free entry and its index.
func (c *CNStore) Alloc() (uint32, *CNInfo) {
	if n := len(c.free); n > 0 {
		i := c.free[n-1]
		c.free = c.free[:n-1]
		return i, &c.infos[i]
	}
	c.infos = append(c.infos, CNInfo{})
	return uint32(len(c.infos) - 1), &c.infos[len(c.infos)-1]
}

// Get returns entry i.
func (c *CNStore) Get(i uint32) *CNInfo { return &c.infos[i] }

// Release frees entry i.
func (c *CNStore) Release(i uint32) {
	c.infos[i] = CNInfo{}
	c.free = append(c.free, i)
}

// RCMStats are a switch's RCM counters. CNsSent and ClearCNsSent are
// disjoint: CNs that name harmful flows with a degree, and degree-0 CNs
// that clear a region. CNsReceived counts both kinds.
type RCMStats struct {
	CNsSent, ClearCNsSent, CNsReceived int64
	Held                               int64 // data packets RCC held back
	Cuts                               int64 // W_c cuts
	Detours                            int64 // flows SAR sent off their ECMP port
}

// RCMEventKind says what an RCMEvent reports.
type RCMEventKind uint8

const (
	// RCMRoot: output port Port found congestion with no CN naming flows
	// and became a root; RCC starts measuring its flows.
	RCMRoot RCMEventKind = iota
	// RCMFlag: a root's first cut. Flows are the flows it holds back
	// (CFR's heavy hitters; every contributor with Params.CFR off), CAM
	// the CAM entries it chose them from.
	RCMFlag
	// RCMEdge: a CN with degree Fb naming Flows started RCC on Port.
	RCMEdge
	// RCMCN: a CN with degree Fb naming Flows left Port.
	RCMCN
	// RCMClear: a CN of degree 0 left Port.
	RCMClear
	// RCMExit: RCC quit on Port.
	RCMExit
)

var rcmEventNames = [...]string{"root", "flag", "edge", "cn", "clear", "exit"}

func (k RCMEventKind) String() string { return rcmEventNames[k] }

// RCMEvent is one of RCM's decisions about flows (Config.RCMTrace). Its
// slices are the switch's own and valid only during the call.
type RCMEvent struct {
	Kind  RCMEventKind
	Time  int64
	Port  int
	Fb    uint8
	Flows []rcm.FlowID
	CAM   []rcm.FlowID
}

// trace reports an event when a trace is set.
func (r *rcmState) trace(kind RCMEventKind, now int64, port int, fb uint8, flows, cam []rcm.FlowID) {
	if r.traceFn != nil {
		r.traceFn(&RCMEvent{Kind: kind, Time: now, Port: port, Fb: fb, Flows: flows, CAM: cam})
	}
}

// rcmPort is one port's RCM state.
type rcmPort struct {
	// The fields every packet reads come first, to share cache lines.
	peerIsSwitch bool
	localOut     bool  // this output queue is congested
	inCongested  bool  // this input queue is congested (CNs go upstream)
	remote       bool  // a CN from downstream says the region continues
	fbr          uint8 // that CN's degree
	in, out      rcm.Detector
	win          rcm.Window
	// deq counts the packets each output queue has sent. A held packet's
	// stamp is the count at which every packet queued before it has gone:
	// harmful packets wait behind older ones and never overtake them, so
	// a flow's packets keep their order when it turns harmful.
	deq [NumPrio]uint32
	// cam samples the packets entering the output queue (what flows
	// offer: CFR's view, for naming harmful flows); sent samples those
	// leaving it, for the harmful flows' share of what the port sends,
	// which sets W_c at RCC's first cut.
	cam, sent rcm.CAM
	// arrivals samples the packets arriving on the port, so that a CN
	// to the neighbour there names only flows that come from it.
	arrivals rcm.CAM
	// heldFlows counts the held packets per flow, so that a flow with
	// packets held stays held and its packets keep their order.
	heldFlows flowCounts
	// local are the output queue's heavy hitters (CFR) at RCC's first
	// cut as a root (rootFound says they are set); named are the flows
	// CNs from downstream named (the root's), each for CNHold. The
	// port's harmful flows are the named ones while there are any (an
	// edge or inner point), else local. set is scratch space.
	local, set  []rcm.FlowID
	rootFound   bool
	camMark     uint64 // the CAM's writes when RCC started as a root
	named       rcm.Recent
	remoteUntil int64
	lastCN      int64 // when the last CN left this port
	lastStep    int64 // when W_c last changed for a local sample
	// held are the packets RCC holds back, per priority (the port's
	// heldMask has a bit for each non-empty one). Their bytes stay in the
	// switch's buffer and in their ingress accounts (so PFC and CNs push
	// back on the harmful flows' upstream, as the paper's input VOQs do),
	// but not in the output queue that the output detector and victims'
	// ECN marks see, as in the paper's switch, where the output queue
	// holds only what the scheduler let through.
	held  [NumPrio]heldQueue
	stats struct{ cnsSent, clearCNs, cnsReceived, held, cuts int64 }
}

// rcmState is a switch's RCM.
type rcmState struct {
	p        rcm.Params
	ports    []rcmPort
	store    *CNStore
	pins     rcm.Pins
	cnTimes  []int64 // receipt times of the last RegionCNs CNs, a ring
	cnNext   int
	localOut int // output ports now congested
	detours  int64
	// merged, stay and rel are scratch queues for rcmUnhold and
	// rcmRelease, kept to reuse their buffers.
	merged    ring
	stay, rel heldQueue
	traceFn   func(*RCMEvent) // Config.RCMTrace
}

func newRCM(p rcm.Params, cfg *Config) *rcmState {
	r := &rcmState{p: p, store: cfg.CNs, pins: rcm.NewPins(12, p.PinIdle), cnTimes: make([]int64, p.RegionCNs), traceFn: cfg.RCMTrace}
	for i := range r.cnTimes {
		r.cnTimes[i] = math.MinInt64 / 2
	}
	r.ports = make([]rcmPort, len(cfg.Ports))
	// The sent and arrivals CAMs serve coarse ends (a share, whether a
	// flow comes in on a port): a quarter of the packets is plenty.
	aux := r.p
	aux.CFRSampleEvery *= 4
	for i, pc := range cfg.Ports {
		r.ports[i] = rcmPort{in: rcm.NewDetector(&r.p, pc.Rate), out: rcm.NewDetector(&r.p, pc.Rate),
			cam: rcm.NewCAM(&r.p, uint32(cfg.Seed)^uint32(i+1)*0x9E3779B9), sent: rcm.NewCAM(&aux, uint32(cfg.Seed)^uint32(i+1)*0x85EBCA6B),
			arrivals: rcm.NewCAM(&aux, uint32(cfg.Seed)^uint32(i+1)*0xC2B2AE35), named: rcm.NewRecent(2 * MaxCNFlows), win: rcm.NewWindow(&r.p, pc.Rate), peerIsSwitch: pc.PeerIsSwitch}
	}
	return r
}

func flowID(p *Packet) rcm.FlowID {
	return rcm.FlowID(p.Hash)
}

// isHarmful reports whether flow id counts as harmful at output port rp:
// at an edge or inner point (CNs reached the port) the flows the CNs
// named, the root's, and only those, as the paper has it; at a root, the
// CAM's heavy hitters. A flow with packets held stays harmful.
func (rp *rcmPort) isHarmful(now int64, id rcm.FlowID) bool {
	if rp.heldFlows.has(id) {
		return true
	}
	return rp.currentlyHarmful(now, id)
}

// edge reports whether the port is an edge or inner point of a congestion
// region: CNs from downstream named flows lately (within CNHold).
func (rp *rcmPort) edge(now int64) bool { return rp.named.Any(now) }

// harmful returns the port's harmful flows and their share of what the
// port sends. At an edge or inner point they are the flows the CNs named;
// at a root, the CAM's heavy hitters at RCC's first cut. These stay
// harmful until RCC quits, and no others join them: once RCC slows them,
// the port's traffic no longer shows who caused the congestion.
func (rp *rcmPort) harmful(now int64) ([]rcm.FlowID, float64) {
	if rp.edge(now) {
		rp.set = rp.named.Live(now, rp.set)
		return rp.set, rp.sent.Share(rp.set)
	}
	return rp.local, rp.sent.Share(rp.local)
}

// inRegion reports whether the switch is in a congestion region: one of
// its output ports is congested, or RegionCNs CNs came within RegionWindow.
func (r *rcmState) inRegion(now int64) bool {
	return r.localOut > 0 || r.cnTimes[r.cnNext] >= now-r.p.RegionWindow
}

// degree is a port's regional congestion degree (eq. 2), for SAR.
func (r *rcmState) degree(now int64, port int) uint8 {
	rp := &r.ports[port]
	local, remote := rp.out.Q, uint8(0)
	if rp.remoteValid(now) {
		remote = rp.fbr
	}
	return rcm.Combine(local, remote, r.p.W)
}

// routeSAR is Route with switch-level adaptive routing: in a congestion
// region, a new flow (its first packet) that is not harmful goes to the
// equal-cost port with the lowest regional degree, and stays there.
func (s *Switch) routeSAR(now int64, p *Packet) int {
	r := s.rcm
	ecmp, hops := s.route(p)
	if len(hops) < 2 || p.Kind != Data {
		return ecmp // no alternative, or not a flow's data
	}
	if r.pins.Len() > 0 {
		if pinned := r.pins.Lookup(now, p.Hash); pinned >= 0 {
			return pinned
		}
	}
	if (!r.p.SARExisting && p.Seq != 0) || !r.inRegion(now) || r.ports[ecmp].isHarmful(now, flowID(p)) {
		return ecmp
	}
	best, bestDeg := ecmp, r.degree(now, ecmp)
	for _, h := range hops {
		if d := r.degree(now, int(h)); d < bestDeg {
			best, bestDeg = int(h), d
		}
	}
	if best != ecmp {
		r.pins.Pin(now, p.Hash, best)
		r.detours++
	}
	return best
}

// rcmEnqueue runs detection for a data packet admitted from port in to
// queue q of port out (whose bytes already count it), and holds it back if
// RCC is pacing harmful flows there; it reports whether it held the packet.
func (s *Switch) rcmEnqueue(now int64, in, out int, q uint8, p *Packet) bool {
	r := s.rcm
	size := float64(p.Size)
	ri, ro := &r.ports[in], &r.ports[out]
	id := flowID(p)
	// Input queues are watched where CNs can go: ports facing switches.
	if ri.peerIsSwitch {
		inQueue := s.ports[in].in[q].shared + s.ports[in].in[q].headroom
		if !s.isLossless(q) {
			inQueue = s.ports[out].queue[q].bytes // lossy traffic has no ingress account
		}
		// The arrivals are read for CNs, which only congestion here
		// sends.
		if ri.in.Congested() && ri.arrivals.Due() {
			ri.arrivals.Add(id)
		}
		if ri.in.Observe(size, inQueue) {
			s.rcmInputSample(now, in, out)
		}
	}
	// CFR samples only while the port is congested or in RCC, the only
	// times its CAM is read (a root measures its flows from when it
	// found the congestion).
	if (ro.localOut || ro.win.Active) && ro.cam.Due() {
		ro.cam.Add(id)
	}
	if ro.out.Observe(size, s.ports[out].queue[q].bytes-ro.held[q].bytes) {
		s.rcmOutputSample(now, out, q)
	}
	op := &s.ports[out]
	if !r.p.Hold || !ro.win.Active && op.heldMask == 0 {
		return false
	}
	// A flow with packets held stays held, even once RCC has quit, so
	// that its later packets cannot pass its earlier ones.
	if !ro.heldFlows.has(id) && !(ro.win.Active && ro.currentlyHarmful(now, id)) {
		return false
	}
	// Nothing to hold it behind: with nothing queued or held and the
	// link idle, a harmful packet the window allows goes straight out.
	if op.heldMask == 0 && op.nonEmpty == 0 && op.ctrl.len() == 0 && op.queue[q].pausedUntil <= now &&
		(!ro.edge(now) || ro.win.MayHarmful(now)) && s.env.Idle(out) {
		ro.win.OnSent(size, true)
		return false
	}
	ro.heldFlows.add(id, 1)
	ro.held[q].push(p, heldMeta{stamp: ro.deq[q] + uint32(s.ports[out].queue[q].len()), flow: id, size: p.Size})
	op.heldMask |= 1 << q
	ro.stats.held++
	return true
}

// rcmInputSample acts on a sample of port in's input queue: congestion
// there is reported upstream in a CN, at most every CNInterval, naming the
// harmful flows of the output port the sampled packet goes to; when it
// clears, a CN with degree 0 says so.
func (s *Switch) rcmInputSample(now int64, in, out int) {
	r := s.rcm
	ri, ro := &r.ports[in], &r.ports[out]
	if !ri.peerIsSwitch || !r.p.CN {
		return // hosts learn of congestion from DCQCN; CN off is an ablation
	}
	if !ri.in.Congested() {
		if ri.inCongested {
			ri.inCongested = false
			s.sendCN(now, in, 0, nil)
			ri.stats.clearCNs++
			r.trace(RCMClear, now, in, 0, nil, nil)
		}
		return
	}
	// The paper's input queues are per output (VOQs); here one account
	// holds them all. A sample counts toward a CN only when its packet
	// goes to an output port in RCC, whose flows the backlog is then
	// made of: the flows of an idle output are victims, not causes.
	if !ro.win.Active || (ri.inCongested && now-ri.lastCN < r.p.CNInterval) {
		return
	}
	fb := ri.in.Q
	if ro.remoteValid(now) {
		fb = max(1, rcm.Combine(fb, ro.fbr, r.p.W))
	}
	// Edge and inner points pass on the root's flows. A root names every
	// flow that loads its port now (its CAM's contributors), the paper's
	// CN, and not only the heavy hitters it holds back: upstream, where
	// they meet flows that do not go to the root, slowing all of them is
	// what keeps those from being blocked behind them (naming the heavy
	// hitters alone cost web search's mice part of their gain: docs/rcm.md,
	// "What CFR contributes"). Of these, only those that come in on this
	// port.
	var list []rcm.FlowID
	if ro.edge(now) {
		list = ro.named.Live(now, ro.set)
	} else {
		list = ro.cam.Flows(ro.set)
	}
	ro.set = list
	var ids [MaxCNFlows]rcm.FlowID
	n := 0
	for _, id := range list {
		if n < MaxCNFlows && ri.arrivals.Hits(id) > 0 {
			ids[n] = id
			n++
		}
	}
	if n == 0 {
		return // none of the harmful flows comes this way
	}
	ri.inCongested, ri.lastCN = true, now
	s.sendCN(now, in, fb, ids[:n])
	ri.stats.cnsSent++
	r.trace(RCMCN, now, in, fb, ids[:n], nil)
}

// rcmOutputSample acts on a sample of port out's output queue: congestion
// there cuts RCC's harmful share, its end lets the share recover, at most
// one step every CNInterval; RCC quits once the share is back and no CN
// from downstream holds it.
func (s *Switch) rcmOutputSample(now int64, out int, q uint8) {
	r := s.rcm
	ro := &r.ports[out]
	// Without CRD (an ablation) no output port is ever congested: none
	// becomes a root.
	congested := r.p.CRD && ro.out.Congested()
	if congested != ro.localOut {
		ro.localOut = congested
		if congested {
			r.localOut++
		} else {
			r.localOut--
		}
	}
	if ro.win.Active && now-ro.lastStep < r.p.CNInterval {
		return
	}
	switch {
	case ro.edge(now):
		// An edge or inner point: W_c follows the CNs from downstream,
		// the root's view of how much its harmful flows may bring, and
		// recovers once they stop (a clearing CN, or none for CNHold).
		// Local congestion does not cut it: the harmful flows are held
		// to W_c already, and what else crowds the port is not theirs.
		if ro.win.Active && !ro.remoteValid(now) {
			s.rcmRecover(now, out)
		}
	case congested && !ro.win.Active:
		// A root found: measure which flows load the port from now on
		// (the paper estimates W_c and W_nc from the data sent since
		// the congestion was detected) and cut once the CAM is full of
		// samples taken since.
		ro.win.Start(now)
		ro.camMark = ro.cam.Written()
		ro.lastStep = now
		r.trace(RCMRoot, now, out, ro.out.Q, nil, nil)
	case congested:
		// A root: its harmful flows are the heavy hitters measured
		// since it found the congestion (see harmful).
		if !ro.rootFound {
			if ro.cam.Written()-ro.camMark < uint64(r.p.CAMDepth) {
				break
			}
			if r.p.CFR {
				ro.local = ro.cam.Heavy(ro.local)
			} else {
				ro.local = ro.cam.Flows(ro.local) // an ablation: every contributor
			}
			ro.rootFound = true
			r.trace(RCMFlag, now, out, ro.out.Q, ro.local, ro.cam.Entries())
		}
		ro.win.Cut(now, ro.out.Q, ro.sent.Share(ro.local))
		ro.lastStep = now
		ro.stats.cuts++
	case ro.win.Active && s.ports[out].queue[q].bytes < ro.out.QEq():
		// The root's congestion is gone, and the queue with the held
		// packets is below Q_eq (the held packets' backlog is
		// congestion too, as in the paper's input queues).
		s.rcmRecover(now, out)
	}
	if ro.win.Active && s.ports[out].heldMask != 0 {
		s.rcmRelease(now, out)
	}
}

// rcmRecover moves W_c of port half way back to W, and ends RCC there
// once it is back.
func (s *Switch) rcmRecover(now int64, port int) {
	rp := &s.rcm.ports[port]
	rp.lastStep = now
	if rp.win.Recover() {
		rp.win.Exit()
		s.rcmUnhold(port)
		s.rcm.trace(RCMExit, now, port, 0, nil, nil)
	}
}

// remoteValid reports whether a CN from downstream still holds the port
// in the congestion region.
func (rp *rcmPort) remoteValid(now int64) bool { return rp.remote && now <= rp.remoteUntil }

// sendCN queues a CN out of port with degree fb naming flows.
func (s *Switch) sendCN(now int64, port int, fb uint8, flows []rcm.FlowID) {
	idx, info := s.rcm.store.Alloc()
	info.Fb = fb
	info.N = uint8(copy(info.Flows[:], flows))
	f := s.env.NewPacket()
	*f = Packet{Kind: CN, Size: CNFrameSize(int(info.N)), Flow: -1, Aux: idx}
	s.ports[port].ctrl.push(f)
	s.env.Kick(port)
}

// receiveCN applies a CN from the downstream neighbour on port: its
// output queue there joins (or, with degree 0, leaves) the congestion
// region, takes the named flows as harmful and cuts RCC's share.
func (s *Switch) receiveCN(now int64, port int, p *Packet) {
	r := s.rcm
	if r == nil {
		return
	}
	info := r.store.Get(p.Aux)
	ro := &r.ports[port]
	ro.stats.cnsReceived++
	r.cnTimes[r.cnNext] = now
	r.cnNext = (r.cnNext + 1) % len(r.cnTimes)
	if info.Fb == 0 {
		// The congestion downstream is gone: W_c recovers with the
		// next local samples. The named flows stay harmful until
		// they expire (CNHold), so that the root's congestion does
		// not return at once with all they held back.
		ro.remote = false
		return
	}
	ro.remote, ro.remoteUntil, ro.fbr = true, now+r.p.CNHold, info.Fb
	ro.named.Add(info.Flows[:info.N], now+r.p.CNHold)
	// W_c starts from the named flows' share of what the port sent since
	// RCC started, or all of W if it starts with this CN.
	share := 1.0
	if ro.win.Active {
		_, share = ro.harmful(now)
	} else {
		r.trace(RCMEdge, now, port, info.Fb, info.Flows[:info.N], nil)
	}
	ro.win.Cut(now, info.Fb, share)
	if s.ports[port].heldMask != 0 {
		s.rcmRelease(now, port)
	}
	ro.stats.cuts++
}

// rcmDequeue is Dequeue's data part on a port that holds packets: held
// (harmful) packets go while the window allows and in proportion to W_c;
// other packets pass them. The window counts what the port sends while
// packets are held, when there is a share to keep. After RCC quits, held
// packets go in arrival order with the rest.
func (s *Switch) rcmDequeue(now int64, port int) *Packet {
	op := &s.ports[port]
	rp := &s.rcm.ports[port]
	hq := -1
	for m := op.heldMask; m != 0; m &= m - 1 {
		if q := bits.TrailingZeros8(m); op.queue[q].pausedUntil <= now && rp.mayGo(q) {
			hq = q
			break
		}
	}
	nq := -1
	for i := uint8(0); i < NumPrio; i++ {
		q := (op.rr + i) & (NumPrio - 1)
		if op.nonEmpty&(1<<q) != 0 && op.queue[q].pausedUntil <= now {
			nq = int(q)
			break
		}
	}
	// Harmful packets go within W_c of each window, and in proportion
	// to W_c/W when others wait too. Past W_c they wait while other
	// packets can use the link (WorkConserving, and always at a root,
	// whose own link is the bottleneck). Without WorkConserving, where
	// CNs say the congestion is downstream (edge and inner points), they
	// wait for the next window even if the link would idle: a rate limit
	// that keeps harmful flows from loading the root.
	takeHeld := false
	if hq >= 0 {
		switch {
		case !rp.win.Active:
			takeHeld = true
		case nq < 0 && (s.rcm.p.WorkConserving || !rp.edge(now)):
			takeHeld = true
		default:
			takeHeld = rp.win.MayHarmful(now) && (nq < 0 || rp.win.PreferHarmful())
		}
	}
	var p *Packet
	var q uint8
	switch {
	case takeHeld:
		q = uint8(hq)
		var m heldMeta
		p, m = rp.held[q].pop()
		if rp.held[q].len() == 0 {
			op.heldMask &^= 1 << q
		}
		rp.heldFlows.add(m.flow, -1)
	case nq >= 0:
		q = uint8(nq)
		p = op.queue[q].pop()
		rp.deq[q]++
		if op.queue[q].len() == 0 {
			op.nonEmpty &^= 1 << q
		}
	default:
		return nil
	}
	s.depart(now, port, op, q, p, takeHeld)
	if rp.win.Active {
		rp.win.OnSent(float64(p.Size), takeHeld)
	}
	return p
}

// rcmDepart is depart's RCM part for packet p leaving queue q of port:
// it samples p into the port's sent CAM and returns the queue length p's
// ECN mark goes by: a held packet waited behind the whole queue, a packet
// let through only behind the unheld part.
func (s *Switch) rcmDepart(port int, q uint8, p *Packet, held bool) float64 {
	rp := &s.rcm.ports[port]
	qlen := s.ports[port].queue[q].bytes
	if !held {
		qlen -= rp.held[q].bytes
	}
	// The sent CAM measures W_c's first value since RCC started.
	if rp.win.Active && rp.sent.Due() {
		rp.sent.Add(flowID(p))
	}
	return qlen
}

// rcmUnhold ends holding on port when RCC quits: the held packets go
// back into their queues in arrival order (a held packet after every
// packet that was queued before it), so that what is left is one FIFO
// again and the port leaves RCM's scheduler.
func (s *Switch) rcmUnhold(port int) {
	op := &s.ports[port]
	rp := &s.rcm.ports[port]
	for m := op.heldMask; m != 0; m &= m - 1 {
		q := bits.TrailingZeros8(m)
		rp.held[q].mergeInto(&op.queue[q].ring, &s.rcm.merged, rp.deq[q])
		op.nonEmpty |= 1 << q
	}
	op.heldMask = 0
	rp.heldFlows.clear()
	rp.local, rp.rootFound = rp.local[:0], false
	rp.named.Clear()
}

// flowCounts counts the held packets of each flow on a port: a short
// list, since few flows are held at once, cheaper than a map to search.
type flowCounts struct {
	ids []rcm.FlowID
	n   []int32
}

func (c *flowCounts) has(id rcm.FlowID) bool { return rcm.Contains(c.ids, id) }

// add changes id's count by d, dropping flows that reach zero.
func (c *flowCounts) add(id rcm.FlowID, d int32) {
	for i, x := range c.ids {
		if x == id {
			if c.n[i] += d; c.n[i] == 0 {
				last := len(c.ids) - 1
				c.ids[i], c.n[i] = c.ids[last], c.n[last]
				c.ids, c.n = c.ids[:last], c.n[:last]
			}
			return
		}
	}
	c.ids, c.n = append(c.ids, id), append(c.n, d)
}

func (c *flowCounts) clear() { c.ids, c.n = c.ids[:0], c.n[:0] }

// allHarmful reports whether every held flow of rp is still harmful.
func (c *flowCounts) allHarmful(now int64, rp *rcmPort) bool {
	for _, id := range c.ids {
		if !rp.currentlyHarmful(now, id) {
			return false
		}
	}
	return true
}

// currentlyHarmful is isHarmful without the held flows' stickiness.
func (rp *rcmPort) currentlyHarmful(now int64, id rcm.FlowID) bool {
	if rp.edge(now) {
		return rp.named.Contains(now, id)
	}
	return rcm.Contains(rp.local, id)
}

// rcmRelease lets the held flows that are no longer harmful (a CN named
// other flows, or the flags changed) go back into their queues, in
// arrival order; the others stay held.
func (s *Switch) rcmRelease(now int64, port int) {
	op := &s.ports[port]
	rp := &s.rcm.ports[port]
	if rp.heldFlows.allHarmful(now, rp) {
		return
	}
	harmful := func(id rcm.FlowID) bool { return rp.currentlyHarmful(now, id) }
	for m := op.heldMask; m != 0; m &= m - 1 {
		q := bits.TrailingZeros8(m)
		rel := &s.rcm.rel
		rp.held[q].split(harmful, &s.rcm.stay, rel)
		if rel.len() == 0 {
			continue
		}
		for i := 0; i < rel.len(); i++ {
			rp.heldFlows.add(rel.at(i).flow, -1)
		}
		rel.mergeInto(&op.queue[q].ring, &s.rcm.merged, rp.deq[q])
		op.nonEmpty |= 1 << q
		if rp.held[q].len() == 0 {
			op.heldMask &^= 1 << q
		}
	}
}

// mayGo reports whether the first held packet of queue q has no older
// packet left in the queue.
func (rp *rcmPort) mayGo(q int) bool {
	return int32(rp.deq[q]-rp.held[q].headStamp()) >= 0
}

// rcmNext is Next's part for held packets: when the first of them may go,
// as PFC and RCC's window let it.
func (s *Switch) rcmNext(port int, at int64) int64 {
	op := &s.ports[port]
	rp := &s.rcm.ports[port]
	var t int64
	for m := op.heldMask; m != 0; m &= m - 1 {
		q := bits.TrailingZeros8(m)
		u := max(op.queue[q].pausedUntil, at)
		if rp.win.Active && !s.rcm.p.WorkConserving && rp.edge(u) && u != math.MaxInt64 {
			u = rp.win.HarmfulAt(u)
		}
		if u != math.MaxInt64 && (t == 0 || u < t) {
			t = u
		}
	}
	return t
}

// RCMStats returns the switch's RCM counters (zero without RCM).
func (s *Switch) RCMStats() RCMStats {
	var st RCMStats
	if s.rcm == nil {
		return st
	}
	for i := range s.rcm.ports {
		ps := &s.rcm.ports[i].stats
		st.CNsSent += ps.cnsSent
		st.ClearCNsSent += ps.clearCNs
		st.CNsReceived += ps.cnsReceived
		st.Held += ps.held
		st.Cuts += ps.cuts
	}
	st.Detours = s.rcm.detours
	return st
}
