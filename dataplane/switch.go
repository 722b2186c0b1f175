package dataplane

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"

	"github.com/p4rcm/p4rcm/rcm"
)

// Env is what a switch needs from its driver.
type Env interface {
	// Kick tells the driver that port may have a packet to send now.
	Kick(port int)
	// Idle reports whether port could start sending a frame now; Send
	// starts sending p on it. A packet that finds its egress idle and
	// empty goes straight out through them, without touching a queue.
	Idle(port int) bool
	Send(port int, p *Packet)
	// TrySend sends p at once if port is idle, and reports whether it did.
	TrySend(port int, p *Packet) bool
	// Timer asks for OnTimer(at, id) to be called at time at; id fits in
	// 40 bits.
	Timer(at int64, id uint64)
	// NewPacket returns a blank packet for the switch to fill (PFC frames).
	NewPacket() *Packet
	// Free takes back a packet the switch consumed or dropped.
	Free(p *Packet)
}

// FIB maps a destination host to the switch's equal-cost egress ports. The
// returned slice belongs to the FIB and must not be modified.
type FIB interface {
	NextHops(dst int) []int32
}

// Marking is the RED/ECN curve of an egress queue, in bytes of queue, its
// WRED drop threshold for packets that are not ECN-capable, and the most
// a lossy queue may hold: the four parameters of an LDCP port (section 2.1
// of draft-dai-tsvwg-pfc-free-congestion-control-01) and its K (eq. 3).
type Marking struct {
	// KMin and KMax bound the marking ramp: up to KMin nothing is marked,
	// between them ECN-capable packets are marked with a probability rising
	// linearly to PMax, from KMax all are. KMax is where marking becomes
	// certain in the draft's curve and in rcm.p4 alike; with KMin = KMax
	// the step is above KMin.
	KMin, KMax float64
	PMax       float64
	// WREDK drops packets that are not ECN-capable arriving at a queue
	// holding WREDK bytes or more (the draft's eq. 3); 0 disables it.
	// With the ECN curve it is LDCP's dual policy in one queue.
	WREDK float64
	// BufMax drops any packet of a lossy priority arriving at a queue
	// holding more than BufMax bytes (the draft's buf_max); 0 disables it.
	// Lossless priorities ignore it: PFC keeps them below it instead.
	BufMax float64
}

// PortConfig is one port's configuration.
type PortConfig struct {
	Rate    float64 // bits per second
	Marking Marking
	// Headroom is t_flight: the bytes held back per lossless priority for
	// what arrives on this port after it sends a PAUSE.
	Headroom float64
	// Beta selects the dynamic PFC threshold of this ingress port:
	// XOFF = Beta (B - headroom - shared used) / lossless priorities, as in
	// buffercalc.Buffer.DynamicXOFF. Zero uses the static XOFF.
	Beta float64
	// XOFF is the static PFC threshold of each ingress queue, bytes.
	XOFF float64
	// PeerIsSwitch says the port faces another switch, to which RCM sends
	// congestion notifications (hosts get DCQCN's instead).
	PeerIsSwitch bool
}

// Config is a switch's configuration. The fields the forwarding path
// reads for every packet come first, so that they share a cache line of
// the Switch (TestSwitchLayout).
type Config struct {
	// Buffer is the shared buffer, bytes.
	Buffer float64
	// Lossless has bit q set when priority q is lossless (PFC on).
	Lossless uint8
	// AckInData queues ACKs and NACKs with their priority's data, under
	// PFC and buffer admission, rather than in the strict-priority control
	// queue: the ns-3 RDMA simulator's switches without ACK_HIGH_PRIO.
	AckInData bool
	// PauseQuanta is the pause time a PAUSE frame asks for; the switch
	// refreshes it at half that time while the queue stays congested.
	PauseQuanta uint16
	// XONOffset is how far below XOFF an ingress queue must fall before
	// the switch sends RESUME (two MTU in the DCQCN paper).
	XONOffset float64
	// Seed seeds ECMP hashing and RED's random draws.
	Seed uint64
	// INTs, when set, turns on HPCC's in-band telemetry: every data packet
	// with a record there (its handle in Aux) gets a hop pushed as it
	// leaves. Nil: no telemetry, and Aux of data packets means nothing
	// here.
	INTs *INTStore
	// QueueLimit caps each egress queue of a lossy priority, bytes; a
	// packet that would exceed it is tail-dropped. Zero is no cap.
	QueueLimit float64
	// RCM turns on Regional Congestion Mitigation with these parameters
	// (nil: off). CNs is where CN bodies live; switches that exchange CNs
	// must share it (nil: the switch makes its own).
	CNs *CNStore
	RCM *rcm.Params

	// Name is used in error messages.
	Name  string
	Ports []PortConfig
	// RCMTrace, if set, is told of RCM's decisions about flows (roots
	// found, the flows they flag, CNs sent, RCC's end), to see which
	// flows RCM acts on; nil costs nothing on the packet path.
	RCMTrace func(*RCMEvent)
}

// DropReason says why a packet was dropped.
type DropReason uint8

const (
	// DropBufferFull: a lossy packet found no shared buffer left.
	DropBufferFull DropReason = iota
	// DropQueueLimit: a lossy egress queue over its limit.
	DropQueueLimit
	// DropWRED: a packet that is not ECN-capable above the WRED threshold.
	DropWRED
	// DropNoRoute: no route to the destination.
	DropNoRoute
	// DropHeadroomFull: a packet of a lossless priority found its headroom
	// full. PFC exists to prevent this; a simulator treats it as a fault.
	DropHeadroomFull
	// DropBufMax: a lossy egress queue past its port's Marking.BufMax.
	DropBufMax
	numDropReasons
)

var dropNames = [...]string{"buffer-full", "queue-limit", "wred", "no-route", "headroom-full", "buf-max"}

func (r DropReason) String() string { return dropNames[r] }

// PortStats are one port's counters.
type PortStats struct {
	TxPackets, TxBytes     int64 // data packets sent
	CtrlPackets            int64 // control packets sent (ACK, CNP, PFC)
	Marked                 int64 // CE marks set on egress
	PausesSent             int64 // PAUSE frames sent out of this port (incl. refreshes)
	ResumesSent            int64
	PausesReceived         int64 // PAUSE frames received on this port (quanta > 0)
	ResumesReceived        int64
	PausedTime             [NumPrio]int64 // time this egress was held by PFC, per priority
	Drops                  [numDropReasons]int64
	MaxQueueBytes          [NumPrio]float64 // largest egress queue seen
	MaxIngressBytes        [NumPrio]float64 // largest ingress (PFC) occupancy seen
	MaxHeadroomBytes       [NumPrio]float64 // largest headroom occupancy seen
	pausedFrom, pausedTill [NumPrio]int64
}

// egressQueue is one priority's queue at an egress port: one cache line,
// so that a packet queued or sent touches one line of its queue
// (TestPortLayout).
type egressQueue struct {
	ring
	bytes    float64 // queued
	maxBytes float64 // the most it held
	// pausedUntil holds the queue under PFC until then (a RESUME sets it
	// to 0). Next treats math.MaxInt64 as "until RESUME" for drivers that
	// pause without a time limit.
	pausedUntil int64
	// wredK is the port's Marking.WREDK, here so that an arrival reads
	// it in the line it writes anyway.
	wredK float64
}

// ingressQueue is one priority's PFC account at an ingress port: bytes of
// packets that arrived on the port and are still in the switch, in the
// shared buffer and in headroom, and whether the peer is paused. Padded
// to a cache line of its own, as an egress queue is.
type ingressQueue struct {
	shared      float64
	headroom    float64
	maxTotal    float64 // the most shared + headroom held
	maxHeadroom float64
	// betaShare is the port's Beta / lossless priorities: the dynamic
	// threshold's factor on the free buffer, here so that admission
	// reads one line of the ingress port.
	betaShare float64
	pauseSent bool
	// pauseGen invalidates refresh timers of an earlier pause episode.
	pauseGen uint32
	_        [16]byte
}

// port is one port of a switch, laid out by what a packet reads: its
// first cache line holds what every packet through the port reads or
// writes, its second what a data packet reads of the port's configuration
// and counts, then a line per priority's egress queue and one per its
// ingress account, each with the port's setting that admission reads; the
// rest is rarely read. A packet's arrival then touches three lines of the
// ports it crosses, and its departure three, rather than six or seven
// (TestPortLayout holds the layout).
type port struct {
	// nonEmpty has bit q set while queue q holds packets; heldMask while
	// RCC holds packets of priority q back (rcmPort.held). Both sit here,
	// in the port the forwarding path reads anyway.
	nonEmpty, heldMask uint8
	rr                 uint8
	ctrl               ring
	// queued is the bytes of every priority's queue together, which an
	// INT hop reports: kept as they change, so that a data packet's
	// departure reads one word rather than eight queues' lines. The
	// sizes are whole bytes, so the float sum is exact either way.
	queued float64
	// wireBytes counts every frame sent, control included: the bytes a
	// port's INT hop reports (the ns-3 simulator's m_txBytes).
	wireBytes int64
	// ctrlPackets counts the control frames sent; the rest of PortStats,
	// rarely written, lives apart in Switch.stats to keep ports small.
	ctrlPackets int64

	// mark and rate are the port's PortConfig.Marking and Rate, where a
	// departure reads them.
	mark               Marking
	rate               float64
	txPackets, txBytes int64

	queue [NumPrio]egressQueue
	in    [NumPrio]ingressQueue

	marked int64
	// headroom and xoff are PortConfig.Headroom and XOFF, which only a
	// packet past the threshold or a static threshold reads; Beta and
	// WREDK sit in the ingress and egress queues' lines.
	headroom, xoff float64
	// pauseTime is the duration of a PAUSE frame of this port's making.
	pauseTime int64
	_         [32]byte
}

// Switch is the switch model. Its first cache line holds what every
// packet reads, its second the buffer's account and the configuration's
// per-packet fields (TestSwitchLayout).
type Switch struct {
	ports []port
	env   Env
	fib   FIB
	rcm   *rcmState // nil without RCM
	// shared is the shared buffer in use (headroom excluded); limit is
	// what it may reach, the buffer less the headroom held back over all
	// ports and lossless priorities.
	shared float64
	limit  float64
	cfg    Config

	rng      *rand.Rand
	stats    []PortStats
	lossless int // number of lossless priorities
	_        [24]byte
}

// Check checks the configuration and names the bad field. New calls it;
// a caller building many switches can call it first, before the work of
// computing their forwarding tables.
func (cfg *Config) Check() error {
	lossless := bits.OnesCount8(cfg.Lossless)
	if cfg.Buffer <= 0 {
		return fmt.Errorf("switch %s: buffer must be positive", cfg.Name)
	}
	if lossless > 0 && cfg.PauseQuanta == 0 {
		return fmt.Errorf("switch %s: PFC needs a pause time (PauseQuanta 0 would only ever resume)", cfg.Name)
	}
	if len(cfg.Ports) > maxPorts {
		return fmt.Errorf("switch %s: %d ports, at most %d are supported", cfg.Name, len(cfg.Ports), maxPorts)
	}
	reserved := 0.0
	for i, pc := range cfg.Ports {
		if pc.Rate <= 0 {
			return fmt.Errorf("switch %s port %d: rate must be positive", cfg.Name, i)
		}
		if pc.Marking.KMax < pc.Marking.KMin {
			return fmt.Errorf("switch %s port %d: ECN kmax %g below kmin %g", cfg.Name, i, pc.Marking.KMax, pc.Marking.KMin)
		}
		if !(pc.Marking.WREDK >= 0 && pc.Marking.BufMax >= 0) {
			return fmt.Errorf("switch %s port %d: WRED K %g and buf_max %g must not be negative", cfg.Name, i, pc.Marking.WREDK, pc.Marking.BufMax)
		}
		if lossless > 0 && pc.Beta == 0 && pc.XOFF <= 0 {
			return fmt.Errorf("switch %s port %d: PFC needs a static XOFF or a dynamic beta", cfg.Name, i)
		}
		reserved += pc.Headroom * float64(lossless)
	}
	if cfg.RCM != nil {
		if err := cfg.RCM.Validate(); err != nil {
			return fmt.Errorf("switch %s: %w", cfg.Name, err)
		}
	}
	if reserved >= cfg.Buffer {
		prios := "priorities"
		if lossless == 1 {
			prios = "priority"
		}
		return fmt.Errorf("switch %s: PFC headroom of %s (%d ports x %d lossless %s) leaves nothing of the %s buffer",
			cfg.Name, bytesText(reserved), len(cfg.Ports), lossless, prios, bytesText(cfg.Buffer))
	}
	return nil
}

// bytesText prints a byte count for people: "4.99 MB", "160 KB".
func bytesText(b float64) string {
	switch {
	case b >= 1e6:
		return strconv.FormatFloat(b/1e6, 'g', 3, 64) + " MB"
	case b >= 1e3:
		return strconv.FormatFloat(b/1e3, 'g', 3, 64) + " KB"
	}
	return strconv.FormatFloat(b, 'g', 3, 64) + " B"
}

// New builds a switch. It checks the configuration (Check) and names the
// bad field.
func New(cfg Config, fib FIB, env Env) (*Switch, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	s := &Switch{cfg: cfg, env: env, fib: fib, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed))}
	s.lossless = bits.OnesCount8(cfg.Lossless)
	s.ports = make([]port, len(cfg.Ports))
	s.stats = make([]PortStats, len(cfg.Ports))
	reserved := 0.0
	for i, pc := range cfg.Ports {
		p := &s.ports[i]
		p.mark, p.rate, p.headroom, p.xoff = pc.Marking, pc.Rate, pc.Headroom, pc.XOFF
		for q := range p.queue {
			p.queue[q].wredK = pc.Marking.WREDK
			if s.lossless > 0 {
				p.in[q].betaShare = pc.Beta / float64(s.lossless)
			}
		}
		p.pauseTime = pauseDuration(cfg.PauseQuanta, pc.Rate)
		reserved += pc.Headroom * float64(s.lossless)
	}
	s.limit = cfg.Buffer - reserved
	if cfg.RCM != nil {
		if cfg.CNs == nil {
			cfg.CNs = &CNStore{}
		}
		s.rcm = newRCM(*cfg.RCM, &cfg)
	}
	return s, nil
}

// NumPorts is the number of ports.
func (s *Switch) NumPorts() int { return len(s.ports) }

// Stats returns a port's counters as of now (paused time included up to now).
func (s *Switch) Stats(port int, now int64) PortStats {
	p := &s.ports[port]
	st := s.stats[port]
	st.TxPackets, st.TxBytes, st.CtrlPackets, st.Marked = p.txPackets, p.txBytes, p.ctrlPackets, p.marked
	for q := 0; q < NumPrio; q++ {
		st.MaxQueueBytes[q] = p.queue[q].maxBytes
		st.MaxIngressBytes[q] = p.in[q].maxTotal
		st.MaxHeadroomBytes[q] = p.in[q].maxHeadroom
		if till := st.pausedTill[q]; till > st.pausedFrom[q] {
			st.PausedTime[q] += min(till, now) - st.pausedFrom[q]
		}
	}
	return st
}

// QueueBytes is the egress queue of a port and priority, bytes.
func (s *Switch) QueueBytes(port, prio int) float64 { return s.ports[port].queue[prio].bytes }

// IngressBytes is the PFC ingress occupancy (shared part plus headroom) of a
// port and priority, bytes.
func (s *Switch) IngressBytes(port, prio int) float64 {
	in := &s.ports[port].in[prio]
	return in.shared + in.headroom
}

// SharedUsed is the shared buffer in use, bytes.
func (s *Switch) SharedUsed() float64 { return s.shared }

// isLossless is Lossless for the forwarding path: q is below NumPrio, and
// masking the shift says so to the compiler, which then drops its
// handling of shifts past the width.
func (s *Switch) isLossless(q uint8) bool { return s.cfg.Lossless>>(q&(NumPrio-1))&1 != 0 }

// Lossless reports whether priority q has PFC.
func (s *Switch) Lossless(q int) bool { return s.cfg.Lossless&(1<<q) != 0 }

// xoff is the PFC threshold of an ingress port now.
func (s *Switch) xoff(p *port, q uint8) float64 {
	in := &p.in[q&(NumPrio-1)]
	if in.betaShare == 0 {
		return p.xoff
	}
	return atLeast(in.betaShare*(s.limit-s.shared), 0)
}

// atLeast and atMost are max and min for the byte counts of the
// forwarding path, which are never NaN: the builtins' care for NaN and
// signed zeros costs about ten instructions a call on amd64, and the
// path makes four of these calls a packet.
func atLeast(x, floor float64) float64 {
	if x < floor {
		return floor
	}
	return x
}

func atMost(x, ceil float64) float64 {
	if x > ceil {
		return ceil
	}
	return x
}

// Receive takes a packet that arrived on port in at now.
func (s *Switch) Receive(now int64, in int, p *Packet) {
	switch p.Kind {
	case Pause:
		s.receivePause(now, in, p)
		s.env.Free(p)
		return
	case CN:
		s.receiveCN(now, in, p)
		s.cfg.CNs.Release(p.Aux)
		s.env.Free(p)
		return
	}
	var out int
	if s.rcm != nil && s.rcm.p.SAR {
		out = s.routeSAR(now, p)
	} else {
		out = s.Route(p)
	}
	if out < 0 {
		s.stats[in].Drops[DropNoRoute]++
		s.env.Free(p)
		return
	}
	p.InPort = int16(in)
	op := &s.ports[out]
	// empty: nothing waits for the port, held packets included (the
	// driver schedules no wake-up after a packet sent straight out).
	empty := op.nonEmpty == 0 && op.ctrl.len() == 0 && op.heldMask == 0
	if s.control(p) {
		if empty && s.env.TrySend(out, p) {
			op.ctrlPackets++
			op.wireBytes += int64(p.Size)
			return
		}
		op.ctrl.push(p)
		s.env.Kick(out)
		return
	}
	size := float64(p.Size)
	q := p.Prio
	if eq := &op.queue[q]; eq.wredK > 0 && !p.ECT() && eq.bytes >= eq.wredK {
		s.stats[out].Drops[DropWRED]++
		s.env.Free(p)
		return
	}
	ip := &s.ports[in]
	if s.isLossless(q) {
		thresh := s.xoff(ip, q)
		if ip.in[q].shared+size > thresh || s.shared+size > s.limit {
			// Past XOFF, or no shared buffer left: the packet was in flight
			// when we paused, or is the one that crosses the threshold; it
			// goes into the headroom held back for this, and the peer is
			// paused below.
			if ip.in[q].headroom+size > ip.headroom {
				s.stats[in].Drops[DropHeadroomFull]++
				s.env.Free(p)
				return
			}
			ip.in[q].headroom += size
			ip.in[q].maxHeadroom = atLeast(ip.in[q].headroom, ip.in[q].maxHeadroom)
		} else {
			ip.in[q].shared += size
			s.shared += size
		}
		ip.in[q].maxTotal = atLeast(ip.in[q].shared+ip.in[q].headroom, ip.in[q].maxTotal)
		if !ip.in[q].pauseSent && (ip.in[q].headroom > 0 || ip.in[q].shared >= s.xoff(ip, q)) {
			ip.in[q].pauseSent = true
			ip.in[q].pauseGen++
			s.sendPause(now, in, q, s.cfg.PauseQuanta)
		}
	} else {
		if op.mark.BufMax > 0 && op.queue[q].bytes > op.mark.BufMax {
			s.stats[out].Drops[DropBufMax]++
			s.env.Free(p)
			return
		}
		if s.cfg.QueueLimit > 0 && op.queue[q].bytes+size > s.cfg.QueueLimit {
			s.stats[out].Drops[DropQueueLimit]++
			s.env.Free(p)
			return
		}
		if s.shared+size > s.limit {
			s.stats[in].Drops[DropBufferFull]++
			s.env.Free(p)
			return
		}
		s.shared += size
	}
	eq := &op.queue[q]
	eq.bytes += size
	op.queued += size
	eq.maxBytes = atLeast(eq.bytes, eq.maxBytes)
	if s.rcm != nil && s.rcmEnqueue(now, in, out, q, p) {
		s.env.Kick(out)
		return
	}
	if empty && eq.pausedUntil <= now && s.env.Idle(out) {
		s.depart(now, out, op, q, p, false)
		s.env.Send(out, p)
		return
	}
	eq.push(p)
	op.nonEmpty |= 1 << q
	s.env.Kick(out)
}

// control reports whether p travels in the strict-priority control queue:
// ACKs and NACKs unless they go with the data (AckInData), CNPs, PFC frames
// and CNs.
func (s *Switch) control(p *Packet) bool {
	return p.Kind.Control() && !(s.cfg.AckInData && (p.Kind == Ack || p.Kind == Nack))
}

// Route is the egress port for p: its destination's next hops, one picked
// by the flow hash mixed with the switch's seed (ECMP); -1 without a route.
func (s *Switch) Route(p *Packet) int {
	out, _ := s.route(p)
	return out
}

// route is Route with the next hops it chose among.
func (s *Switch) route(p *Packet) (int, []int32) {
	hops := s.fib.NextHops(int(p.Dst))
	switch len(hops) {
	case 0:
		return -1, hops
	case 1:
		return int(hops[0]), hops
	}
	return s.ecmp(p, hops), hops
}

// ecmp picks p's port among hops by its flow hash mixed with the switch's
// seed: Lemire's multiply-shift maps the hash onto the hops without a
// division.
func (s *Switch) ecmp(p *Packet, hops []int32) int {
	h := mix64(uint64(p.Hash)^s.cfg.Seed) >> 32
	return int(hops[h*uint64(len(hops))>>32])
}

// Dequeue picks the next packet port sends at now: control packets first,
// then the data priorities in round robin, skipping those PFC holds. It
// returns nil when nothing may go; Next then says when a hold expires.
func (s *Switch) Dequeue(now int64, port int) *Packet {
	op := &s.ports[port]
	if op.ctrl.len() > 0 {
		op.ctrlPackets++
		p := op.ctrl.pop()
		op.wireBytes += int64(p.Size)
		return p
	}
	if op.heldMask != 0 {
		return s.rcmDequeue(now, port)
	}
	if op.nonEmpty == 0 {
		return nil
	}
	// The queues holding packets, in round-robin order from rr: bit i of
	// the rotated mask is queue rr+i, so the loop visits only those.
	for m := bits.RotateLeft8(op.nonEmpty, -int(op.rr&(NumPrio-1))); m != 0; m &= m - 1 {
		q := (op.rr + uint8(bits.TrailingZeros8(m))) & (NumPrio - 1)
		if op.queue[q].pausedUntil > now {
			continue
		}
		p := op.queue[q].pop()
		if op.queue[q].len() == 0 {
			op.nonEmpty &^= 1 << q
		}
		s.depart(now, port, op, q, p, false)
		return p
	}
	return nil
}

// depart accounts for data packet p leaving queue q of port op at now;
// held says RCC held it back.
func (s *Switch) depart(now int64, port int, op *port, q uint8, p *Packet, held bool) {
	op.rr = q + 1
	eq := &op.queue[q]
	eq.bytes -= float64(p.Size)
	op.queued -= float64(p.Size)
	qlen := eq.bytes
	if s.rcm != nil {
		qlen = s.rcmDepart(port, q, p, held)
	}
	s.release(now, p)
	// RED/ECN on the queue the packet leaves behind, as the
	// instantaneous-queue marking of commodity switches does at dequeue.
	if p.ECT() && s.shouldMark(&op.mark, qlen) {
		p.ECN = CE
		op.marked++
	}
	if s.cfg.INTs != nil && p.Kind == Data && p.Aux != 0 {
		// HPCC's telemetry: the port's bytes sent before this packet and
		// everything it still holds, as the packet leaves.
		p.Aux = s.cfg.INTs.Push(p.Aux, INTHop{Time: now, TxBytes: op.wireBytes, QLen: int64(op.queued), Rate: op.rate})
	}
	op.wireBytes += int64(p.Size)
	if p.Kind != Data && p.Kind.Control() {
		op.ctrlPackets++ // an ACK in the data queue is still an ACK
		return
	}
	op.txPackets++
	op.txBytes += int64(p.Size)
}

// Next is the earliest time at or after at when port may have a packet to
// send: at itself if one is eligible then, otherwise the end of the first
// PFC hold that expires by itself; 0 when nothing waits, or only behind
// holds that a RESUME will lift.
func (s *Switch) Next(port int, at int64) int64 {
	op := &s.ports[port]
	if op.ctrl.len() > 0 {
		return at
	}
	var t int64
	for m := op.nonEmpty; m != 0; m &= m - 1 {
		q := bits.TrailingZeros8(m)
		u := op.queue[q].pausedUntil
		if u <= at {
			return at
		}
		if u != math.MaxInt64 && (t == 0 || u < t) {
			t = u
		}
	}
	if op.heldMask != 0 {
		if u := s.rcmNext(port, at); u != 0 && (t == 0 || u < t) {
			t = u
		}
	}
	return t
}

// release returns a departing data packet's bytes to its ingress account
// and sends RESUME when the ingress queue has drained enough.
func (s *Switch) release(now int64, p *Packet) {
	size := float64(p.Size)
	q := p.Prio
	if !s.isLossless(q) {
		s.shared -= size
		return
	}
	in := int(p.InPort)
	ip := &s.ports[in]
	fromHeadroom := atMost(ip.in[q].headroom, size)
	ip.in[q].headroom -= fromHeadroom
	ip.in[q].shared -= size - fromHeadroom
	s.shared -= size - fromHeadroom
	if ip.in[q].pauseSent && ip.in[q].headroom == 0 &&
		(ip.in[q].shared <= 0 || ip.in[q].shared+s.cfg.XONOffset <= s.xoff(ip, q)) {
		ip.in[q].pauseSent = false
		ip.in[q].pauseGen++
		s.sendPause(now, in, q, 0)
	}
}

// shouldMark draws RED/ECN's decision for a queue of qlen bytes: the
// draft's curve (0 up to KMin, a ramp to PMax, 1 from KMax), which is also
// rcm.p4's. No draw is made where the outcome is certain, so that the
// random stream depends only on the draws that matter.
func (s *Switch) shouldMark(m *Marking, qlen float64) bool {
	switch {
	case qlen <= m.KMin:
		return false
	case qlen >= m.KMax:
		return true
	case m.PMax == 0:
		return false
	}
	return s.rng.Float64() < m.PMax*(qlen-m.KMin)/(m.KMax-m.KMin)
}

// sendPause queues a PFC frame for priority q out of port (quanta 0 is
// RESUME) and, for a PAUSE, arms its refresh.
func (s *Switch) sendPause(now int64, port int, q uint8, quanta uint16) {
	pp := &s.ports[port]
	f := s.env.NewPacket()
	*f = Packet{Kind: Pause, Prio: q, Size: PauseFrame + EthOverhead, Flow: -1, PauseQuanta: quanta}
	pp.ctrl.push(f)
	if quanta > 0 {
		s.stats[port].PausesSent++
		if pp.pauseTime > 1 {
			s.env.Timer(now+pp.pauseTime/2, timerID(timerPauseRefresh, port, q, pp.in[q].pauseGen))
		}
	} else {
		s.stats[port].ResumesSent++
	}
	s.env.Kick(port)
}

// receivePause applies a PFC frame to the egress of port.
func (s *Switch) receivePause(now int64, port int, f *Packet) {
	op := &s.ports[port]
	q := f.Prio
	st := &s.stats[port]
	// Close the paused interval seen so far.
	if st.pausedTill[q] > st.pausedFrom[q] {
		end := min(st.pausedTill[q], now)
		st.PausedTime[q] += end - st.pausedFrom[q]
	}
	if f.PauseQuanta == 0 {
		st.ResumesReceived++
		op.queue[q].pausedUntil = 0
		st.pausedFrom[q], st.pausedTill[q] = now, now
		s.env.Kick(port)
		return
	}
	st.PausesReceived++
	d := pauseDuration(f.PauseQuanta, op.rate)
	op.queue[q].pausedUntil = now + d
	st.pausedFrom[q], st.pausedTill[q] = now, now+d
}

// pauseDuration is quanta pause quanta (512 bit times each) at rate, in
// picoseconds, rounded up; computed in one step so that exact values stay
// exact.
func pauseDuration(quanta uint16, rate float64) int64 {
	return int64(math.Ceil(float64(quanta) * 512e12 / rate))
}

// PausedUntil is when PFC releases the egress of port for priority q.
func (s *Switch) PausedUntil(port, q int) int64 { return s.ports[port].queue[q].pausedUntil }

// Timer kinds.
const (
	timerPauseRefresh = 1
)

// maxPorts is the most ports a switch can have: timer IDs carry the port
// in 12 bits.
const maxPorts = 1 << 12

// timerID packs a timer's kind (4 bits), port (12), priority (3) and
// generation (the low 21 bits) into the 40 bits a driver must carry. A
// refresh timer fires within half a pause time of being set, so its
// generation cannot have wrapped round by then.
func timerID(kind, port int, q uint8, gen uint32) uint64 {
	return uint64(kind)<<36 | uint64(port)<<24 | uint64(q)<<21 | uint64(gen&(1<<21-1))
}

// OnTimer runs a timer the switch asked for.
func (s *Switch) OnTimer(now int64, id uint64) {
	kind := int(id >> 36)
	port := int(id>>24) & 0xfff
	q := uint8(id>>21) & 7
	gen := uint32(id) & (1<<21 - 1)
	switch kind {
	case timerPauseRefresh:
		pp := &s.ports[port]
		if pp.in[q].pauseSent && pp.in[q].pauseGen&(1<<21-1) == gen {
			s.sendPause(now, port, q, s.cfg.PauseQuanta)
		}
	}
}
