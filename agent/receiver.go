package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/p4rcm/p4rcm/afpacket"
	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/roce"
)

// recvKey names a flow sent to this host: its sender and queue pair.
type recvKey struct {
	src [4]byte
	qp  uint32
}

// recvFlow is a flow this host receives.
type recvFlow struct {
	key      recvKey
	sport    uint16
	expected uint64 // the next packet in order (its PSN: psn24)
	nakSent  bool   // a NAK went out for the current gap
	sinceAck int    // in-order packets since the last ACK
	ceSince  bool   // a CE mark since the last ACK, for DCTCP's echo
	np       dcqcn.NP
	lr       ldcp.Receiver // with Config.LDCP
}

// controlLen is the largest control frame: an ACK echoing a full INT
// stack.
const controlLen = roce.EthLen + roce.IPv4Len + roce.UDPLen + roce.BTHLen + roce.AETHLen + roce.MaxINTLen + roce.ICRCLen

// receiveLoop takes the frames the port receives until it is closed.
func (a *Agent) receiveLoop() error {
	var (
		p       roce.Packet
		done    []Result
		replies [][]byte
		bufs    [][]byte
	)
	for {
		frames, err := a.port.Recv()
		if err != nil {
			if errors.Is(err, afpacket.ErrClosed) {
				return nil
			}
			return fmt.Errorf("host %d: receive: %w", a.cfg.Host, err)
		}
		done, replies = done[:0], replies[:0]
		a.mu.Lock()
		now := a.now()
		for _, f := range frames {
			a.handle(now, f, &p, &done, func(r *roce.Packet) {
				if len(replies) == len(bufs) {
					bufs = append(bufs, make([]byte, controlLen))
				}
				replies = append(replies, a.control(bufs[len(replies)], r))
			})
		}
		a.mu.Unlock()
		if len(replies) > 0 {
			if err := a.port.Send(replies...); err != nil && !errors.Is(err, afpacket.ErrClosed) {
				return fmt.Errorf("host %d: send: %w", a.cfg.Host, err)
			}
		}
		if a.cfg.OnDone != nil {
			for _, r := range done {
				a.cfg.OnDone(r)
			}
		}
	}
}

// handle takes one frame; reply queues a control frame to send.
func (a *Agent) handle(now int64, f []byte, p *roce.Packet, done *[]Result, reply func(*roce.Packet)) {
	if pause, ok := roce.ParsePause(f); ok {
		a.onPause(now, pause)
		return
	}
	if err := roce.Parse(f, p); err != nil || p.DstIP != ip4(a.cfg.IP) {
		if errors.Is(err, roce.ErrMalformedINT) {
			// Dropped: where its payload starts, or what its echo says,
			// is not known. The sender recovers data by go-back-N; a
			// later ACK acknowledges what this one did.
			a.stats.INTMalformed++
			return
		}
		a.stats.Ignored++
		return
	}
	switch p.Opcode {
	case roce.OpSendFirst, roce.OpSendMiddle, roce.OpSendLast, roce.OpSendOnly:
		a.onData(now, p, reply)
	case roce.OpAck:
		if r, ok := a.onAck(now, p); ok {
			*done = append(*done, r)
		}
	case roce.OpCNP:
		a.onCNP(now, p)
	default:
		a.stats.Ignored++
	}
}

// onPause holds or releases the data's priority.
func (a *Agent) onPause(now int64, pause roce.Pause) {
	if pause.Enable&(1<<a.prio) == 0 {
		return
	}
	a.settlePause(now)
	q := pause.Quanta[a.prio]
	if q == 0 {
		a.stats.Resumes++
		if a.pausedFrom >= 0 {
			a.endPause(now)
		}
		a.pausedUntil = now
		a.kick()
		return
	}
	a.stats.Pauses++
	if a.pausedFrom < 0 {
		a.pausedFrom = now
	}
	// A quantum is 512 bit times at the NIC's rate.
	a.pausedUntil = now + int64(float64(q)*512/a.cfg.LineRate*1e12)
}

// onData is the receiver's side: in-order delivery, ACKs, a NAK per gap,
// and CNPs for CE-marked packets.
func (a *Agent) onData(now int64, p *roce.Packet, reply func(*roce.Packet)) {
	a.stats.DataReceived++
	k := recvKey{p.SrcIP, p.DestQP}
	rf := a.recv[k]
	if rf == nil {
		rf = &recvFlow{key: k, sport: p.SrcPort}
		if a.cfg.LDCP != nil {
			rf.lr = ldcp.NewReceiver(a.cfg.LDCP)
		}
		a.recv[k] = rf
	}
	if p.ECN == roce.CE {
		a.stats.Marked++
		a.onMarked(now, rf, reply)
		rf.ceSince = true
	}
	if p.HasINT && p.INT.N > 0 {
		a.stats.INTQueue.Add(int64(p.INT.Hops[0].QLen))
	}
	if a.cfg.LDCP != nil {
		a.ldcpData(now, rf, p, reply)
		return
	}
	ack := func(syndrome uint8, psn uint32) {
		r := a.replyTo(rf, roce.OpAck, psn)
		r.Syndrome = syndrome
		// The telemetry the packet gathered goes back to its sender, and
		// under DCTCP the marks since the last ACK.
		r.HasINT, r.INT = p.HasINT, p.INT
		if a.scheme == schemeDCTCP {
			r.BECN, rf.ceSince = rf.ceSince, false
		}
		reply(&r)
	}
	switch i := unwrap(p.PSN, rf.expected); {
	case i == rf.expected:
		rf.expected++
		rf.nakSent = false
		rf.sinceAck++
		last := p.Opcode == roce.OpSendLast || p.Opcode == roce.OpSendOnly
		if last || p.AckReq || rf.sinceAck >= a.cfg.AckEvery {
			ack(roce.SyndromeAck, psn24(rf.expected-1))
			rf.sinceAck = 0
			a.stats.AcksSent++
		}
	case i > rf.expected:
		// A gap: one NAK asks the sender to go back to it.
		if !rf.nakSent {
			ack(roce.SyndromeSeqNAK, psn24(rf.expected))
			rf.nakSent = true
			a.stats.NAKsSent++
		}
	default:
		// A packet sent again: acknowledge what arrived, in case the ACK
		// was lost.
		if rf.expected > 0 {
			ack(roce.SyndromeAck, psn24(rf.expected-1))
			a.stats.AcksSent++
		}
	}
}

// onMarked runs the notification point: a CNP now, or at the end of the
// interval.
func (a *Agent) onMarked(now int64, rf *recvFlow, reply func(*roce.Packet)) {
	if a.cfg.DCQCN == nil {
		return
	}
	interval := a.cfg.DCQCN.CNPInterval
	if interval == 0 {
		// No CNP pacing configured: one CNP per marked packet.
		a.sendCNP(rf, reply)
		return
	}
	now2, wake := rf.np.OnMarked(now, interval)
	if now2 {
		a.sendCNP(rf, reply)
	}
	if wake > 0 {
		a.cnpTimer(rf, wake, interval)
	}
}

// cnpTimer sends the CNP due at the end of an interval, at wake.
func (a *Agent) cnpTimer(rf *recvFlow, wake, interval int64) {
	time.AfterFunc(time.Duration((wake-a.now())/1000)+time.Microsecond, func() {
		a.mu.Lock()
		now := a.now()
		if now < wake {
			a.mu.Unlock()
			a.cnpTimer(rf, wake, interval)
			return
		}
		var frame []byte
		if rf.np.OnTimer(now, interval) {
			r := a.replyTo(rf, roce.OpCNP, 0)
			frame = a.control(make([]byte, controlLen), &r)
			a.stats.CNPsSent++
		}
		a.mu.Unlock()
		if frame != nil {
			_ = a.port.Send(frame) // a closed port: the agent is stopping
		}
	})
}

func (a *Agent) sendCNP(rf *recvFlow, reply func(*roce.Packet)) {
	r := a.replyTo(rf, roce.OpCNP, 0)
	reply(&r)
	a.stats.CNPsSent++
}

// replyTo is a control packet back to rf's sender.
func (a *Agent) replyTo(rf *recvFlow, op uint8, psn uint32) roce.Packet {
	return roce.Packet{DstMAC: mac6(a.cfg.Gateway), SrcMAC: mac6(a.cfg.MAC),
		SrcIP: ip4(a.cfg.IP), DstIP: rf.key.src, DSCP: a.cfg.ControlDSCP, ECN: roce.NotECT,
		SrcPort: rf.sport, Opcode: op, DestQP: rf.key.qp, PSN: psn}
}

// control writes a control packet into buf.
func (a *Agent) control(buf []byte, p *roce.Packet) []byte {
	f, err := roce.Build(buf, p)
	if err != nil {
		panic(err) // fields come from a parsed frame
	}
	return f
}

// onAck is the sender's side of ACKs and NAKs; it returns the flow's
// result when the ACK completes it.
func (a *Agent) onAck(now int64, p *roce.Packet) (Result, bool) {
	f := a.byQP[p.DestQP]
	if f == nil || f.done || f.dstIP != p.SrcIP {
		a.stats.Ignored++
		return Result{}, false
	}
	// The PSN is the last packet received in order (ACK) or the first
	// missing (NAK); one past the highest sent is as far as it can be.
	i := unwrap(p.PSN, f.una)
	if p.Syndrome == roce.SyndromeSeqNAK {
		if i > f.high {
			a.stats.Ignored++
			return Result{}, false
		}
		// Everything before packet i arrived; go back to it.
		una := f.una
		if i > f.una {
			f.una, f.progress = i, now
		}
		f.next = max(min(f.next, i), f.una)
		if a.cfg.LDCP != nil {
			a.ldcpAck(f, now, una, i, true, false)
		}
		if a.scheme.ackDriven() {
			a.ackFeedback(f, now, i, p, true)
		}
		a.kick()
		return Result{}, false
	}
	if i+1 > f.high || i+1 <= f.una {
		return Result{}, false // stale, or from before a wrap
	}
	if a.cfg.LDCP != nil {
		a.ldcpAck(f, now, f.una, i+1, false, p.BECN)
	}
	f.una, f.progress = i+1, now
	f.next = max(f.next, f.una)
	if a.scheme.ackDriven() {
		a.ackFeedback(f, now, i+1, p, false)
	} else if f.ack != nil {
		a.kick() // the window may have opened
	}
	if f.una < f.packets {
		return Result{}, false
	}
	f.done = true
	if f.ack != nil {
		f.ack.sent = nil
	}
	f.res.Finish = time.Duration(now / 1000)
	f.res.Delivered = f.size
	if a.cfg.DCQCN != nil {
		f.res.RateCuts = f.rp.Cuts
	}
	return f.res, true
}

// onCNP is the reaction point's input.
func (a *Agent) onCNP(now int64, p *roce.Packet) {
	a.stats.CNPsReceived++
	f := a.byQP[p.DestQP]
	if f == nil || f.done || a.cfg.DCQCN == nil {
		return
	}
	f.res.CNPs++
	f.rp.OnCNP(now)
}
