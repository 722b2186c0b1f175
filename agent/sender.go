package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/flow"
	"github.com/p4rcm/p4rcm/internal/finetimer"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/roce"
)

// sendFlow is a flow this host sends. Packets are counted from 0 in 64
// bits; the wire carries the count's low 24 bits as the PSN, which wraps
// as RoCE's does.
type sendFlow struct {
	id, dst int
	dstIP   [4]byte
	qp      uint32
	sport   uint16
	size    int64
	packets uint64
	start   int64 // ps since the Epoch

	next, una uint64
	high      uint64 // one past the highest packet sent
	// nextAt is when the flow's rate lets its next packet go (ps);
	// progress is when una last moved, or when the flow sent with nothing
	// outstanding.
	nextAt, progress int64
	rp               dcqcn.RP
	lw               ldcp.Sender // LDCP's window, with Config.LDCP
	ack              *ackFlow    // with HPCC, TIMELY, DCTCP or a window
	mss              int64       // the MTU: a packet's LSN is its index times mss
	done             bool
	res              Result
}

func (a *Agent) newSendFlow(f flow.Flow) (*sendFlow, error) {
	if f.Size <= 0 {
		return nil, fmt.Errorf("flow %d: size %d bytes: want more than 0", f.ID, f.Size)
	}
	if f.ID < 0 || f.ID >= maxQP {
		return nil, fmt.Errorf("flow %d: the ID is its queue pair number, 0 to %d", f.ID, maxQP-1)
	}
	packets := (f.Size + int64(a.mtu) - 1) / int64(a.mtu)
	ip, ok := a.cfg.Addr(f.Dst)
	if !ok || ip.To4() == nil {
		return nil, fmt.Errorf("flow %d: no IPv4 address for destination host %d", f.ID, f.Dst)
	}
	if f.Start < 0 {
		return nil, fmt.Errorf("flow %d: start %d ps is before the epoch", f.ID, f.Start)
	}
	// The source port is the flow's ECMP entropy, from the ephemeral range.
	sport := uint16(49152 + f.ID%16384)
	sf := &sendFlow{id: f.ID, dst: f.Dst, dstIP: ip4(ip), qp: uint32(f.ID), sport: sport,
		size: f.Size, packets: uint64(packets), start: f.Start, nextAt: f.Start, mss: int64(a.mtu),
		res: Result{ID: f.ID, Src: f.Src, Dst: f.Dst, SrcPort: int(sport), Size: f.Size,
			Start: time.Duration(f.Start / 1000)}}
	if a.cfg.DCQCN != nil {
		sf.rp = dcqcn.NewRP(a.cfg.DCQCN, a.cfg.LineRate)
	}
	if a.cfg.LDCP != nil {
		path, err := a.ldcpPath(f.Dst)
		if err != nil {
			return nil, fmt.Errorf("flow %d: %w", f.ID, err)
		}
		if sf.lw, err = ldcp.NewSender(a.cfg.LDCP, path); err != nil {
			return nil, fmt.Errorf("flow %d: %w", f.ID, err)
		}
	}
	if a.scheme.ackDriven() || a.cfg.Window {
		var err error
		if sf.ack, err = a.newAckFlow(sf); err != nil {
			return nil, fmt.Errorf("flow %d: %w", f.ID, err)
		}
	}
	return sf, nil
}

// rate is the flow's sending rate now, b/s.
func (a *Agent) rate(f *sendFlow, now int64) float64 {
	switch a.scheme {
	case schemeDCQCN:
		return min(f.rp.Rate(now), a.cfg.LineRate)
	case schemeHPCC, schemeTIMELY, schemeDCTCP:
		return min(a.ackRate(f), a.cfg.LineRate)
	}
	return a.cfg.LineRate
}

// payload is the payload of packet i.
func (f *sendFlow) payload(i uint64, mtu int) int {
	if i == f.packets-1 {
		return int(f.size - int64(f.packets-1)*int64(mtu))
	}
	return mtu
}

// slack bounds how far behind its schedule a sender may be and still catch
// up at once: the sleeps of a send loop are coarse (about 1 ms when the
// process is idle), so a pacer that could not catch up would send below
// its rate; one that always could would burst after every pause.
const slack = 2 * int64(time.Millisecond) * 1000

// batch is how many frames one send call carries at most.
const batch = 32

// sendLoop puts the flows' packets on the wire as fast as the NIC's rate, each
// flow's rate and PAUSE allow, until ctx ends.
func (a *Agent) sendLoop(ctx context.Context) error {
	bufs := make([][]byte, batch)
	for i := range bufs {
		bufs[i] = make([]byte, frameLen(a.mtu)+roce.INTShimLen)
	}
	frames := make([][]byte, 0, batch)
	// The next packet is often a fraction of a millisecond away, which
	// the runtime's timers round up to one.
	timer, err := finetimer.New()
	if err != nil {
		return fmt.Errorf("host %d: %w", a.cfg.Host, err)
	}
	defer timer.Stop()
	for {
		var wait int64
		a.mu.Lock()
		frames, wait = a.fill(a.now(), bufs, frames[:0])
		a.mu.Unlock()
		if len(frames) > 0 {
			if err := a.port.Send(frames...); err != nil {
				return fmt.Errorf("host %d: send: %w", a.cfg.Host, err)
			}
			if ctx.Err() != nil {
				return nil
			}
			continue
		}
		due := time.Now().Add(time.Duration(wait / 1000))
		timer.Reset(time.Duration(wait / 1000))
		select {
		case <-ctx.Done():
			return nil
		case <-a.wake:
		case <-timer.C:
			a.late(time.Since(due))
		}
	}
}

// late counts a wake-up of the send loop d after it was due: the machine
// keeping the emulation's time or not (Stats.Behind).
func (a *Agent) late(d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stats.MaxLate = max(a.stats.MaxLate, d)
	if over := d - time.Duration(slack/1000); over > 0 {
		a.stats.Behind += over
	}
}

// fill writes the frames that may go at now into bufs and returns them,
// or none and how long until one may (ps). It is called with a.mu held.
func (a *Agent) fill(now int64, bufs, frames [][]byte) ([][]byte, int64) {
	wait := int64(time.Hour) * 1000
	a.settlePause(now)
	if a.pausedUntil > now {
		return frames, a.pausedUntil - now
	}
	a.nicAt = max(a.nicAt, now-slack)
	for len(frames) < len(bufs) && a.nicAt <= now {
		f := a.pick(now, &wait)
		if f == nil {
			break
		}
		frame := a.dataFrame(bufs[len(frames)], f, now)
		frames = append(frames, frame)
		n := len(frame)
		a.nicAt += wireTime(n, a.cfg.LineRate)
		rate := a.rate(f, now)
		if a.cfg.DCQCN != nil {
			f.rp.OnSent(now, n)
		}
		f.nextAt = max(f.nextAt, now-slack) + wireTime(n, rate)
		if f.ack != nil {
			a.ackSent(f, f.next, n, now, f.next < f.high)
		}
		if f.next < f.high {
			f.res.Retransmits++
			a.stats.Retransmits++
		}
		if f.una == f.next {
			// Nothing was outstanding: the timeout counts from now.
			f.progress = now
		}
		f.next++
		f.high = max(f.high, f.next)
		a.stats.DataSent++
	}
	if a.nicAt > now {
		wait = min(wait, a.nicAt-now)
	}
	return frames, max(wait, 1000)
}

// pick is the next flow, round robin, that may send at now; wait gets
// the time until others may.
func (a *Agent) pick(now int64, wait *int64) *sendFlow {
	n := len(a.send)
	for k := range n {
		i := (a.rr + k) % n
		f := a.send[i]
		switch {
		case f.done:
			continue
		case f.start > now:
			*wait = min(*wait, f.start-now)
			continue
		}
		if f.una < f.next && now-f.progress >= int64(a.cfg.RTO)*1000 {
			// No progress for an RTO: go back to the first packet not
			// acknowledged.
			f.next, f.progress = f.una, now
			a.stats.Timeouts++
			if a.cfg.LDCP != nil {
				f.lw.OnTimeout(now)
			}
		}
		switch {
		case f.next >= f.packets:
			if f.una < f.next {
				*wait = min(*wait, f.progress+int64(a.cfg.RTO)*1000-now)
			}
			continue
		case f.nextAt > now:
			*wait = min(*wait, f.nextAt-now)
			continue
		case a.cfg.LDCP != nil && a.ldcpBlocked(f, now, wait):
			continue
		case a.cfg.Window && a.windowBound(f, now):
			// Until an ACK, or the RTO.
			*wait = min(*wait, f.progress+int64(a.cfg.RTO)*1000-now)
			continue
		}
		a.rr = i + 1
		return f
	}
	return nil
}

// dataFrame writes f's packet f.next, leaving at now, into buf.
func (a *Agent) dataFrame(buf []byte, f *sendFlow, now int64) []byte {
	op := uint8(roce.OpSendMiddle)
	first, last := f.next == 0, f.next == f.packets-1
	switch {
	case first && last:
		op = roce.OpSendOnly
	case first:
		op = roce.OpSendFirst
	case last:
		op = roce.OpSendLast
	}
	p := roce.Packet{DstMAC: mac6(a.cfg.Gateway), SrcMAC: mac6(a.cfg.MAC),
		SrcIP: ip4(a.cfg.IP), DstIP: f.dstIP, DSCP: a.cfg.DSCP, ECN: roce.ECT0,
		SrcPort: f.sport, Opcode: op, DestQP: f.qp, AckReq: last, PSN: psn24(f.next),
		Payload: f.payload(f.next, a.mtu)}
	if a.cfg.LDCP != nil {
		a.ldcpMarks(f, now, &p)
	}
	if a.scheme == schemeHPCC || a.cfg.AskINT {
		// Ask every switch on the path for its record.
		p.DSCP |= roce.INTDSCP
		p.HasINT, p.INT = true, roce.INT{Remaining: roce.MaxINTHops}
	}
	frame, err := roce.Build(buf, &p)
	if err != nil {
		panic(err) // New checked every field's range
	}
	return frame
}

// psn24 is packet i's PSN on the wire.
func psn24(i uint64) uint32 { return uint32(i) & (maxPSN - 1) }

// unwrap is the packet count a wire PSN stands for, taken as the nearest
// to ref: PSNs within 2^23 ahead of ref are ahead of it, others behind.
func unwrap(psn uint32, ref uint64) uint64 {
	d := (psn - psn24(ref)) & (maxPSN - 1)
	if d < maxPSN/2 {
		return ref + uint64(d)
	}
	return ref - uint64(maxPSN-d)
}

// settlePause ends a PAUSE that has run out by now, adding it to the
// paused time.
func (a *Agent) settlePause(now int64) {
	if a.pausedFrom >= 0 && a.pausedUntil <= now {
		a.endPause(a.pausedUntil)
	}
}

// endPause ends the current PAUSE at t. The time it held the data does
// not count towards the flows' timeouts: a paused sender is waiting for
// the network to let it send, not for an answer.
func (a *Agent) endPause(t int64) {
	d := t - a.pausedFrom
	a.stats.Paused += time.Duration(d / 1000)
	for _, f := range a.send {
		if !f.done && f.una < f.next {
			f.progress += d
		}
	}
	a.pausedFrom = -1
}
