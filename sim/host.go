package sim

import (
	"math"
	"unsafe"

	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/sim/event"
)

// flow is the sender's side of one message: its queue pair with the
// DCQCN reaction point, in whole cache lines: neighbouring flows may have
// their senders in different parts, run by different threads, and two
// threads writing one line would pass it back and forth
// (TestCacheLines).
type flow struct {
	flowState
	_ [(cacheLine - unsafe.Sizeof(flowState{})%cacheLine) % cacheLine]byte
}

// cacheLine is the size of a cache line on the machines the simulator
// runs on (amd64, arm64).
const cacheLine = 64

// flowState is a flow's state. Fields the per-packet paths use come
// first.
type flowState struct {
	sndNxt, sndUna int64
	size           int64
	nextAvail      int64
	highest        int64 // highest offset sent, to tell retransmissions
	finish         int64 // 0 until the last ACK arrives
	lastProgress   int64
	src, dst       *host
	hash           uint32 // data direction
	id             int32
	sport, dport   uint16
	prio           uint8
	sending        bool // in the host's sending list
	rtoArmed       bool
	// lastSize is the last data packet's size on the wire: HPCC's new
	// rate reschedules the gap after it.
	lastSize int32
	rp       dcqcn.RP

	start       int64
	sentPackets int64
	retransmits int64
	// endAt is when the ACK that completes the flow arrives, known from
	// when its switch sends it (with several parts; see part.watch).
	endAt int64
}

// rxFlow is the receiver's side of a message: what it has received and
// what it needs to acknowledge it, in one cache line or so, because the
// receiver touches it for every data packet.
type rxFlow struct {
	expected     int64 // next byte expected; bytes delivered in order
	size         int64
	lastNack     int64
	np           dcqcn.NP
	sinceAck     int32
	src, dst     int32 // of the data direction
	ackHash      uint32
	sport, dport uint16 // of the data direction
	prio         uint8
	ceSince      bool // a CE mark since the last ACK
	nackSent     bool
}

// Host timer kinds (top byte of the event argument).
const (
	hostFlowStart = iota + 1
	hostNPTimer
	hostRTO
	hostProbe // LDCP's rate variant: the RTT probe's timeout
)

// host is a server with one RoCEv2 NIC.
type host struct {
	net      *Network
	part     *part
	ref      event.Ref
	id       int
	port     *port
	lineRate float64
	ctrl     fifo
	// pausedUntil holds the NIC's egress per priority (PFC from the ToR).
	pausedUntil [dataplane.NumPrio]int64
	sending     []int32 // flows with data not yet sent, in round-robin order
	rr          int
	// starts are the host's flows in start order; nextStart is the next
	// to start.
	starts    []int32
	nextStart int
}

func hostArg(kind int, f int32) uint64 { return uint64(kind)<<32 | uint64(uint32(f)) }

// Handle runs the host's timers.
func (h *host) Handle(now event.Time, arg uint64) {
	f := &h.net.flows[uint32(arg)]
	switch arg >> 32 {
	case hostFlowStart:
		h.part.started++
		h.nextStart++
		h.scheduleStart()
		h.addSending(f)
		f.lastProgress = now
		if h.net.ldcp.mode == ldcpRate {
			h.ldcpProbeTimer(now, f)
		}
		h.port.kick(now)
	case hostProbe:
		h.ldcpProbeTimer(now, f)
	case hostNPTimer:
		// The receiver's timer: f is the sender's, another part's.
		rx := &h.net.rx[uint32(arg)]
		if rx.np.OnTimer(now, h.net.cnpInterval) {
			h.sendCNP(now, rx, int32(uint32(arg)))
		}
	case hostRTO:
		f.rtoArmed = false
		if f.finish != 0 || f.sndUna >= f.size {
			return
		}
		rto := h.net.cfg.RTO
		if now-f.lastProgress >= rto {
			f.sndNxt = f.sndUna
			if h.net.ldcp.mode == ldcpWindow {
				h.ldcpTimeout(now, f)
			}
			f.lastProgress = now
			h.addSending(f)
			h.port.kick(now)
		}
		h.armRTO(f)
	}
}

// scheduleStart schedules the host's next flow start, if any.
func (h *host) scheduleStart() {
	if h.nextStart < len(h.starts) {
		id := h.starts[h.nextStart]
		h.part.q.At(h.net.flows[id].start, h.ref, hostArg(hostFlowStart, id))
	}
}

func (h *host) addSending(f *flow) {
	if !f.sending && f.sndNxt < f.size {
		f.sending = true
		h.sending = append(h.sending, f.id)
	}
}

func (h *host) armRTO(f *flow) {
	if h.net.lossless&(1<<f.prio) != 0 || f.rtoArmed || f.finish != 0 {
		return
	}
	f.rtoArmed = true
	h.part.q.At(max(f.lastProgress+h.net.cfg.RTO, h.part.q.Now()+1), h.ref, hostArg(hostRTO, f.id))
}

func (h *host) paused(prio uint8, at int64) bool { return h.pausedUntil[prio] > at }

// dequeue is the NIC's scheduler: control packets first, then the flows
// whose rate limiter allows a packet, in round robin.
func (h *host) dequeue(now int64) *dataplane.Packet {
	if h.ctrlReady(now) {
		return h.ctrl.pop()
	}
	n := len(h.sending)
	for i := 0; i < n; i++ {
		idx := (h.rr + i) % n
		f := &h.net.flows[h.sending[idx]]
		if f.nextAvail > now || h.paused(f.prio, now) {
			continue
		}
		if h.net.ldcp.mode == ldcpWindow && !h.ldcpMaySend(now, f) {
			continue
		}
		if h.net.ack.window && h.windowBound(f) {
			continue // until an ACK
		}
		p := h.dataPacket(now, f)
		if f.sndNxt >= f.size {
			f.sending = false
			copy(h.sending[idx:], h.sending[idx+1:])
			h.sending = h.sending[:n-1]
			h.rr = idx
			h.armRTO(f)
		} else {
			h.rr = idx + 1
		}
		return p
	}
	return nil
}

func (h *host) dataPacket(now int64, f *flow) *dataplane.Packet {
	n := h.net
	payload := int32(min(int64(n.cfg.MTU), f.size-f.sndNxt))
	p := h.part.pool.get()
	*p = dataplane.Packet{
		Kind: dataplane.Data, Prio: f.prio, ECN: n.dataECN,
		Size: payload + n.cfg.Wire.dataOverhead(),
		Flow: f.id, Src: int32(f.src.id), Dst: int32(f.dst.id), SPort: f.sport, DPort: f.dport,
		Hash: f.hash, Seq: f.sndNxt, Payload: payload,
	}
	if f.sndNxt < f.highest {
		f.retransmits++
	}
	h.ackStamp(now, p)
	f.lastSize = p.Size
	if n.ldcp.mode == ldcpWindow {
		h.ldcpSent(now, f, p)
		// A window flow may lose what it has in flight at any point, not
		// only after its last byte: the timer runs while it sends.
		defer h.armRTO(f)
	}
	f.sndNxt += int64(payload)
	f.highest = max(f.highest, f.sndNxt)
	f.sentPackets++
	h.part.dataPackets++
	rate := h.lineRate
	switch {
	case n.cc:
		rate = f.rp.Rate(now)
		f.rp.OnSent(now, int(p.Size))
	case n.ldcp.mode == ldcpRate:
		rate = n.ldcp.rate[f.id].Rate()
	case n.ack.scheme != ackOff:
		rate = n.ackRate(f.id)
	}
	f.nextAvail = now + serTime(p.Size, rate)
	return p
}

// next is when the NIC may next have a packet.
func (h *host) next(after int64) int64 {
	var t int64
	if h.ctrl.len() > 0 {
		c := h.ctrl.peek()
		if !h.inData(c) || !h.paused(c.Prio, after) {
			return after
		}
		if u := h.pausedUntil[c.Prio]; u != math.MaxInt64 {
			t = u
		}
	}
	for _, id := range h.sending {
		f := &h.net.flows[id]
		if f.nextAvail == ldcpBlocked {
			continue // until an ACK or the timer
		}
		if h.net.ack.window && h.windowBound(f) {
			continue // until an ACK
		}
		e := max(f.nextAvail, after)
		if u := h.pausedUntil[f.prio]; u > e {
			if u == math.MaxInt64 {
				continue
			}
			e = u
		}
		if t == 0 || e < t {
			t = e
		}
	}
	return t
}

// receive handles a packet arriving at the NIC.
func (h *host) receive(now int64, p *dataplane.Packet) {
	n := h.net
	switch p.Kind {
	case dataplane.Data:
		h.receiveData(now, p)
	case dataplane.Ack, dataplane.Nack:
		f := &n.flows[p.Flow]
		if n.ldcp.mode == ldcpWindow {
			h.ldcpAck(now, f, p) // the sender handles NAKs and ECE too
		} else {
			if p.Seq > f.sndUna {
				f.sndUna = p.Seq
				f.lastProgress = now
			}
			if p.Kind == dataplane.Nack && p.Seq < f.sndNxt {
				f.sndNxt = max(p.Seq, f.sndUna)
				h.addSending(f)
				h.port.kick(now)
			}
		}
		if p.CNPFlag && n.cc {
			f.rp.OnCNP(now)
		}
		if n.ack.scheme != ackOff {
			h.ackFeedback(now, f, p)
		}
		if n.ack.scheme != ackOff || n.ack.window {
			// A new rate or an opened window may let the NIC send.
			h.addSending(f)
			h.port.kick(now)
		}
		if f.sndUna >= f.size && f.finish == 0 {
			f.finish = now
			h.part.completed(now, f)
		}
	case dataplane.CNP:
		switch {
		case n.cc:
			n.flows[p.Flow].rp.OnCNP(now)
		case n.ldcp.mode == ldcpRate:
			n.ldcp.rate[p.Flow].OnCNP(now)
		}
	case dataplane.CN:
		h.part.cns.Release(p.Aux) // RCM notifications are for switches
	case dataplane.Probe:
		h.ldcpProbe(now, p)
	case dataplane.ProbeReply:
		h.ldcpProbeReply(now, p)
	case dataplane.Pause:
		q := p.Prio
		if p.PauseQuanta == 0 {
			h.pausedUntil[q] = 0
			h.port.kick(now)
			h.part.hostResumes++
		} else {
			h.pausedUntil[q] = now + int64(math.Ceil(float64(p.PauseQuanta)*512/h.lineRate*1e12))
			h.part.hostPauses++
		}
	}
	h.part.pool.put(p)
}

func (h *host) receiveData(now int64, p *dataplane.Packet) {
	n := h.net
	rx := &n.rx[p.Flow]
	if n.ldcp.mode == ldcpWindow {
		h.ldcpData(now, rx, p)
		return
	}
	ce := p.ECN == dataplane.CE
	// The NP sends CNPs for marked packets in order or not, so that
	// losses do not silence it; LDCP's rate variant cuts once per CNP.
	if ce && n.ldcp.mode == ldcpRate && n.cnpInterval == 0 {
		h.sendCNP(now, rx, p.Flow)
	} else if ce && (n.cc || n.ldcp.mode == ldcpRate) && n.cnpInterval > 0 {
		if send, wake := rx.np.OnMarked(now, n.cnpInterval); send {
			h.sendCNP(now, rx, p.Flow)
		} else if wake != 0 {
			h.part.q.At(wake, h.ref, hostArg(hostNPTimer, p.Flow))
		}
	}
	// Every marked packet counts, in order or not, so that a NACK carries
	// the congestion too.
	rx.ceSince = rx.ceSince || ce
	switch {
	case p.Seq == rx.expected:
		rx.expected += int64(p.Payload)
		rx.sinceAck++
		rx.nackSent = false
		if int(rx.sinceAck) >= n.cfg.AckInterval || rx.expected >= rx.size {
			h.sendAck(now, rx, p, dataplane.Ack)
		}
	case p.Seq > rx.expected:
		h.part.outOfOrder++
		// A gap: go-back-N asks once per missing offset.
		if !rx.nackSent || rx.lastNack != rx.expected {
			rx.nackSent, rx.lastNack = true, rx.expected
			h.sendAck(now, rx, p, dataplane.Nack)
		}
	default:
		// A duplicate of data already delivered (after a go-back): ACK it
		// again so that the sender learns where the receiver stands.
		if rx.expected >= rx.size {
			h.sendAck(now, rx, p, dataplane.Ack)
		}
	}
}

// ctrlReady reports whether the NIC's next control packet may go at now:
// there is one, and it is not an ACK queued with data that PFC holds.
func (h *host) ctrlReady(now int64) bool {
	if h.ctrl.len() == 0 {
		return false
	}
	c := h.ctrl.peek()
	return !h.inData(c) || !h.paused(c.Prio, now)
}

// inData reports whether control packet p waits while PFC pauses its
// priority (Config.AckObeysPFC).
func (h *host) inData(p *dataplane.Packet) bool {
	return h.net.cfg.AckObeysPFC && (p.Kind == dataplane.Ack || p.Kind == dataplane.Nack)
}

// sendCtrl sends a control packet: at once if the NIC is idle with nothing
// queued, else after what is queued.
func (h *host) sendCtrl(now int64, p *dataplane.Packet) {
	if h.ctrl.len() == 0 && h.port.idle(now) && (!h.inData(p) || !h.paused(p.Prio, now)) {
		h.port.send(now, p)
		return
	}
	h.ctrl.push(p)
	h.port.kick(now)
}

// sendAck acknowledges (or with kind Nack asks to go back to) rx's next
// expected byte, answering data packet d: the ACK carries d's telemetry
// back.
func (h *host) sendAck(now int64, rx *rxFlow, d *dataplane.Packet, kind dataplane.Kind) {
	n := h.net
	p := h.part.pool.get()
	*p = dataplane.Packet{
		Kind: kind, Prio: rx.prio, Size: n.cfg.Wire.ackSize(n.ack.extra),
		Flow: d.Flow, Src: rx.dst, Dst: rx.src, SPort: rx.dport, DPort: rx.sport,
		Hash: rx.ackHash, Seq: rx.expected,
		// The ns-3 simulator's NP: every ACK of a marked packet carries the
		// CNP flag when there are no separate CNPs; DCTCP's ACKs echo CE.
		CNPFlag: rx.ceSince && (n.ack.scheme == ackDCTCP || n.cfg.DCQCN.CNPInterval == 0 && n.ldcp.mode == ldcpOff),
	}
	if n.ack.extra > 0 {
		// The ACK takes the data packet's telemetry back to the sender.
		p.Aux, d.Aux = d.Aux, 0
	}
	rx.sinceAck, rx.ceSince = 0, false
	h.sendCtrl(now, p)
}

func (h *host) sendCNP(now int64, rx *rxFlow, id int32) {
	p := h.part.pool.get()
	*p = dataplane.Packet{
		Kind: dataplane.CNP, Prio: rx.prio, Size: dataplane.CNPFrame + dataplane.EthOverhead,
		Flow: id, Src: rx.dst, Dst: rx.src, SPort: rx.dport, DPort: rx.sport,
		Hash: rx.ackHash,
	}
	h.sendCtrl(now, p)
}
