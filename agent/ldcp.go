package agent

import (
	"fmt"
	"time"

	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/roce"
)

// LDCP on the agent: each flow's window is an ldcp.Sender, each flow
// received an ldcp.Receiver, the clock-agnostic state machines the
// simulator runs. The wire is RoCEv2's: the sender counts packets (PSNs)
// and the state machines bytes (LSNs); a flow's packet i starts at LSN
// i*MTU, every packet but the last being full, so the two convert exactly
// as long as both ends use the same MTU (every agent of a run does). An
// ACK's PSN is the last packet received in order, a NAK's the first
// missing one, as for DCQCN; the CE echo (ECE) rides in the BTH's BECN bit
// (roce.Packet.BECN), and n of eq. (2) is how far the ACK moves the
// sender's oldest unacknowledged packet.

// lsn is packet i's first byte.
func (f *sendFlow) lsn(i uint64) int64 { return min(int64(i)*f.mss, f.size) }

// ldcpPath is what flow f's sender knows of its path.
func (a *Agent) ldcpPath(dst int) (ldcp.Path, error) {
	rtt := a.cfg.BaseRTT(dst)
	if rtt <= 0 {
		return ldcp.Path{}, fmt.Errorf("base RTT to host %d is %v: want more than 0", dst, rtt)
	}
	return ldcp.Path{LineRate: a.cfg.LineRate, RTT: rtt.Nanoseconds() * 1000, MSS: a.mtu,
		Wire: frameLen(a.mtu) + WireExtra}, nil
}

// ldcpBlocked reports whether flow f's window keeps its next packet from
// going at now; wait gets when the sub-packet timer lets it go, or the
// retransmission timeout when only an ACK can.
func (a *Agent) ldcpBlocked(f *sendFlow, now int64, wait *int64) bool {
	t := f.lw.NextSendTime(now, f.payload(f.next, a.mtu))
	if t <= now {
		return false
	}
	if t != ldcp.Never {
		*wait = min(*wait, t-now)
	}
	if f.una < f.next {
		*wait = min(*wait, f.progress+int64(a.cfg.RTO)*1000-now)
	}
	return true
}

// ldcpMarks lets flow f's window sender decide the marks of packet f.next,
// about to leave at now: first-RTT packets go out Not-ECT (WRED drops them
// past K rather than queue them), and AckReq where the sender asks for an
// ACK at once.
func (a *Agent) ldcpMarks(f *sendFlow, now int64, p *roce.Packet) {
	last := f.next == f.packets-1
	pk := f.lw.OnSend(now, p.Payload, last)
	if pk.LSN != f.lsn(f.next) {
		// The two count the same packets through the same ACKs, NAKs and
		// timeouts; apart, the window would be the wrong one.
		panic(fmt.Sprintf("flow %d: LDCP sender at LSN %d, agent at packet %d (LSN %d)", f.id, pk.LSN, f.next, f.lsn(f.next)))
	}
	p.ECN = roce.NotECT
	if pk.ECT {
		p.ECN = roce.ECT0
	}
	p.AckReq = p.AckReq || pk.AckReq
}

// ldcpAck feeds an ACK or NAK the agent accepted to flow f's window
// sender: una is the flow's oldest unacknowledged packet before it, to the
// packet it now acknowledges up to (the first missing one for a NAK).
func (a *Agent) ldcpAck(f *sendFlow, now int64, una, to uint64, nak, ece bool) {
	n := 0
	if to > una {
		n = int(to - una)
	}
	f.lw.OnAck(now, ldcp.Ack{LSN: f.lsn(to), Packets: n, ECE: ece, NAK: nak})
	f.res.CNPs, f.res.RateCuts = int(f.lw.ECEs), int(f.lw.ECEs)
	// The window may have opened.
	a.kick()
}

// ldcpData is the receiver's side under LDCP: ldcp.Receiver decides the
// ACKs (one per packet with the draft's m = 1, CE echoed at once, a NAK
// per gap) and reply puts them on the wire.
func (a *Agent) ldcpData(now int64, rf *recvFlow, p *roce.Packet, reply func(*roce.Packet)) {
	mss := int64(a.mtu)
	i := unwrap(p.PSN, rf.expected)
	acks, n := rf.lr.OnData(now, int64(i)*mss, p.Payload, p.ECN == roce.CE, p.AckReq)
	// Every packet delivered but the flow's last is full: the packets
	// delivered are the bytes delivered over the MTU, rounded up.
	rf.expected = uint64((rf.lr.Expected() + mss - 1) / mss)
	for _, ack := range acks[:n] {
		packets := uint64((ack.LSN + mss - 1) / mss)
		r := a.replyTo(rf, roce.OpAck, 0)
		switch {
		case ack.NAK:
			r.Syndrome, r.PSN = roce.SyndromeSeqNAK, psn24(packets)
			a.stats.NAKsSent++
		case packets == 0:
			continue // nothing delivered yet: no PSN to acknowledge
		default:
			r.Syndrome, r.PSN, r.BECN = roce.SyndromeAck, psn24(packets-1), ack.ECE
			a.stats.AcksSent++
		}
		reply(&r)
	}
}

// ScaleLDCP returns LDCP settings for a NIC of rate bits per second from
// settings given at p.RefRate (100 Gb/s for the draft's), by Scale's rule:
// with k = p.RefRate / rate, times stretch by k (ProbeTimeout,
// CNPInterval), RefRate becomes rate, and bytes stay (KMin, KMax, K,
// BufMax: the switches scale them with their ports' rates over RefRate,
// so a port at the scaled rate keeps the bytes). The windows are in
// packets and BDPs and the increase and decrease steps in packets, so
// alpha, beta, gamma, eta, IW, MaxWindow and AckEvery stay: a path whose
// rate falls by k and whose RTT stretches by k has the same BDP in
// packets.
func ScaleLDCP(p ldcp.Params, rate float64) (ldcp.Params, error) {
	if !(rate > 0) || !(p.RefRate > 0) {
		return p, fmt.Errorf("scale LDCP %q from %g b/s to %g b/s: rates must be above 0", p.Name, p.RefRate, rate)
	}
	k := p.RefRate / rate
	stretch := func(t int64) int64 { return int64(float64(t) * k) }
	p.ProbeTimeout = stretch(p.ProbeTimeout)
	p.CNPInterval = stretch(p.CNPInterval)
	p.RefRate = rate
	if p.Name != "" {
		p.Name = fmt.Sprintf("%s at %g Mb/s", p.Name, rate/1e6)
	}
	return p, p.Validate()
}

// DefaultBaseRTT is the base RTT an LDCP sender assumes without a better
// one (the draft preset's 8 us path at 100 Gb/s), stretched to rate by
// Scale's rule.
func DefaultBaseRTT(rate float64) time.Duration {
	return time.Duration(8e3 * 100e9 / rate)
}
