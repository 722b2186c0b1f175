package sim

import (
	"math"
	"unsafe"

	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/ldcp"
)

// The hosts' side of LDCP (package ldcp drives the decisions; this file
// only carries them): the window sender gates each flow's packets, marks
// first-RTT packets not ECN-capable and asks for ACKs; the receiver
// answers every data packet with an ACK that echoes CE and counts the
// packets it covers; the rate variant paces at the RateSender's rate,
// cuts on CNP-flagged ACKs and keeps one RTT probe out per flow.

// ldcpMode is which LDCP the hosts run.
type ldcpMode uint8

const (
	ldcpOff ldcpMode = iota
	ldcpWindow
	ldcpRate
)

// ldcpBlocked is a window sender's nextAvail while only an ACK or the
// retransmission timer can let it send.
const ldcpBlocked = math.MaxInt64

// ldcpState is the LDCP state of every flow, by flow ID; only the slices
// of the mode in use are made, so DCQCN runs pay nothing for it.
type ldcpState struct {
	mode ldcpMode
	tx   []ldcpSender
	rate []ldcpRateSender
	rx   []ldcpReceiver
	path []ldcp.Path // per flow: what its sender knows of its path
}

// LDCP's per-flow state, padded to whole cache lines: a flow's sender and
// receiver may be run by different threads (parts), and two threads
// writing one line would pass it back and forth. TestCacheLines checks
// the sizes.
type (
	ldcpSender struct {
		ldcp.Sender
		_ [(cacheLine - unsafe.Sizeof(ldcp.Sender{})%cacheLine) % cacheLine]byte
	}
	ldcpRateSender struct {
		ldcp.RateSender
		_ [(cacheLine - unsafe.Sizeof(ldcp.RateSender{})%cacheLine) % cacheLine]byte
	}
	ldcpReceiver struct {
		ldcp.Receiver
		_ [(cacheLine - unsafe.Sizeof(ldcp.Receiver{})%cacheLine) % cacheLine]byte
	}
)

// ldcpProbeFrame is an RTT probe on the wire: a RoCEv2 frame with a
// 16-byte body (the timestamp), as a CNP.
const ldcpProbeFrame = dataplane.CNPFrame + dataplane.EthOverhead

// initLDCP makes each flow's LDCP sender and receiver. A sender's path is
// its NIC's rate and the unloaded RTT of its route: propagation both ways
// plus a full data frame serialised at every hop out and an ACK at every
// hop back.
func (n *Network) initLDCP() error {
	switch n.cfg.CC {
	case "ldcp":
		n.ldcp.mode = ldcpWindow
	case "ldcp-rate":
		n.ldcp.mode = ldcpRate
	default:
		return nil
	}
	p := &n.cfg.LDCP
	frame := int32(n.cfg.MTU + dataplane.RoCEHeaders + dataplane.EthOverhead)
	ack := int32(dataplane.AckFrame + dataplane.EthOverhead)
	n.ldcp.path = make([]ldcp.Path, len(n.flows))
	if n.ldcp.mode == ldcpWindow {
		n.ldcp.tx = make([]ldcpSender, len(n.flows))
		n.ldcp.rx = make([]ldcpReceiver, len(n.flows))
	} else {
		n.ldcp.rate = make([]ldcpRateSender, len(n.flows))
	}
	for i := range n.flows {
		f := &n.flows[i]
		pi := n.routes.PathInfo(f.src.id, f.dst.id)
		rtt := 2 * pi.Delay
		for _, r := range pi.Rates {
			rtt += serTime(frame, r) + serTime(ack, r)
		}
		path := ldcp.Path{LineRate: f.src.lineRate, RTT: rtt, MSS: n.cfg.MTU, Wire: int(frame)}
		n.ldcp.path[i] = path
		var err error
		if n.ldcp.mode == ldcpWindow {
			n.ldcp.tx[i].Sender, err = ldcp.NewSender(p, path)
			n.ldcp.rx[i].Receiver = ldcp.NewReceiver(p)
		} else {
			n.ldcp.rate[i].RateSender, err = ldcp.NewRateSender(p, path)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ldcpMaySend reports whether window flow f may send its next packet at
// now; if not, it sets f.nextAvail to when it may (the sub-packet timer)
// or to ldcpBlocked.
func (h *host) ldcpMaySend(now int64, f *flow) bool {
	s := &h.net.ldcp.tx[f.id]
	size := int(min(int64(h.net.cfg.MTU), f.size-f.sndNxt))
	if s.CanSend(now, size) {
		return true
	}
	if t := s.NextSendTime(now, size); t != ldcp.Never {
		f.nextAvail = t
	} else {
		f.nextAvail = ldcpBlocked
	}
	return false
}

// ldcpSent lets the window sender decide the marks of data packet p,
// about to leave: ECN-capable or not, and AckReq.
func (h *host) ldcpSent(now int64, f *flow, p *dataplane.Packet) {
	s := &h.net.ldcp.tx[f.id]
	pk := s.OnSend(now, int(p.Payload), f.sndNxt+int64(p.Payload) >= f.size)
	p.ECN = dataplane.NotECT
	if pk.ECT {
		p.ECN = dataplane.ECT0
	}
	if pk.AckReq {
		p.Aux = dataplane.AuxAckReq
	}
}

// ldcpAck takes an ACK or NAK of a window flow: the sender adjusts its
// window and LSNs, and the flow may send again.
func (h *host) ldcpAck(now int64, f *flow, p *dataplane.Packet) {
	s := &h.net.ldcp.tx[f.id]
	s.OnAck(now, ldcp.Ack{LSN: p.Seq, Packets: int(p.Aux), ECE: p.CNPFlag, NAK: p.Kind == dataplane.Nack})
	if u := s.Una(); u > f.sndUna {
		f.sndUna = u
		f.lastProgress = now
	}
	f.sndNxt = s.Next()
	// The window or its sub-packet timer changed: look again now.
	f.nextAvail = min(f.nextAvail, now)
	h.addSending(f)
	h.port.kick(now)
}

// ldcpTimeout takes the retransmission timer of a window flow: back to
// the oldest unacknowledged byte, with the window the sender decides.
func (h *host) ldcpTimeout(now int64, f *flow) {
	s := &h.net.ldcp.tx[f.id]
	s.OnTimeout(now)
	f.sndNxt = s.Next()
	f.nextAvail = now
}

// ldcpData takes a data packet of a window flow at its receiver and sends
// the ACKs the receiver decides.
func (h *host) ldcpData(now int64, rx *rxFlow, p *dataplane.Packet) {
	n := h.net
	r := &n.ldcp.rx[p.Flow]
	if p.Seq > r.Expected() {
		h.part.outOfOrder++
	}
	acks, k := r.OnData(now, p.Seq, int(p.Payload), p.ECN == dataplane.CE, p.Aux&dataplane.AuxAckReq != 0)
	rx.expected = r.Expected()
	for _, a := range acks[:k] {
		kind := dataplane.Ack
		if a.NAK {
			kind = dataplane.Nack
		}
		q := h.part.pool.get()
		*q = dataplane.Packet{
			Kind: kind, Prio: rx.prio, Size: dataplane.AckFrame + dataplane.EthOverhead,
			Flow: p.Flow, Src: rx.dst, Dst: rx.src, SPort: rx.dport, DPort: rx.sport,
			Hash: rx.ackHash, Seq: a.LSN, CNPFlag: a.ECE, Aux: uint32(a.Packets),
		}
		h.sendCtrl(now, q)
	}
}

// ldcpSendProbe sends rate flow f's RTT probe at now, in its data
// priority and path.
func (h *host) ldcpSendProbe(now int64, f *flow) {
	n := h.net
	n.ldcp.rate[f.id].OnProbeSent(now)
	p := h.part.pool.get()
	*p = dataplane.Packet{
		Kind: dataplane.Probe, Prio: f.prio, ECN: dataplane.ECT0, Size: ldcpProbeFrame,
		Flow: f.id, Src: int32(f.src.id), Dst: int32(f.dst.id), SPort: f.sport, DPort: f.dport,
		Hash: f.hash, Seq: now,
	}
	h.sendCtrl(now, p)
}

// ldcpProbeTimer runs rate flow f's probe timer: a probe that has waited
// ProbeTimeout is given up and the next one sent. One timer is pending
// per flow while it runs; a response sends the next probe without one.
func (h *host) ldcpProbeTimer(now int64, f *flow) {
	if f.finish != 0 {
		return
	}
	r := &h.net.ldcp.rate[f.id]
	if r.ProbeDue(now) {
		h.ldcpSendProbe(now, f)
	}
	h.part.q.At(r.NextProbeTime(now), h.ref, hostArg(hostProbe, f.id))
}

// ldcpProbe answers an RTT probe at the receiver, in the reverse path's
// data queue.
func (h *host) ldcpProbe(now int64, p *dataplane.Packet) {
	rx := &h.net.rx[p.Flow]
	q := h.part.pool.get()
	*q = dataplane.Packet{
		Kind: dataplane.ProbeReply, Prio: rx.prio, ECN: dataplane.ECT0, Size: ldcpProbeFrame,
		Flow: p.Flow, Src: rx.dst, Dst: rx.src, SPort: rx.dport, DPort: rx.sport,
		Hash: rx.ackHash, Seq: p.Seq,
	}
	h.sendCtrl(now, q)
}

// ldcpProbeReply takes a probe's response at the sender: the RTT and the
// additive increase, then the next probe at once.
func (h *host) ldcpProbeReply(now int64, p *dataplane.Packet) {
	f := &h.net.flows[p.Flow]
	if f.finish != 0 {
		return
	}
	r := &h.net.ldcp.rate[f.id]
	r.OnProbeResponse(now, p.Seq)
	if r.ProbeDue(now) {
		h.ldcpSendProbe(now, f)
	}
}

// ldcpWindowRate is the rate a window sender's cw gives over its base
// RTT, bits/s, capped at its line rate: for cc.csv.
func (n *Network) ldcpWindowRate(id int) float64 {
	path := &n.ldcp.path[id]
	cw := n.ldcp.tx[id].Window()
	return min(path.LineRate, cw*float64(path.Wire)*8e12/float64(path.RTT))
}
