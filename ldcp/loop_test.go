package ldcp_test

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/p4rcm/p4rcm/ldcp"
)

// This file closes the loop around the package with the smallest network
// that exercises it: senders on 100 Gb/s NICs, one switch queue draining
// at 100 Gb/s with the draft's ECN marking curve, WRED drop of packets
// that are not ECN-capable at K and a buffer of BufMax, and receivers
// whose ACKs come back over a fixed delay. It is a test of the window
// dynamics, not a simulator: one bottleneck, no PFC, no routing.

type evKind uint8

const (
	evWake   evKind = iota // a sender may be able to send
	evSwitch               // a data packet reaches the switch queue
	evDepart               // it leaves the queue
	evRecv                 // it reaches the receiver
	evAck                  // an ACK reaches the sender
	evRTO                  // a sender's retransmission timer
	evFlush                // a flow's merged ACK leaves (loop.merge)
)

type loopPkt struct {
	lsn             int64
	size            int
	ect, ce, ackReq bool
	firstRTT        bool
}

type event struct {
	at   int64
	seq  uint64
	kind evKind
	flow int
	pk   loopPkt
	ack  ldcp.Ack
	gen  uint64 // evFlush: the merge it ends (loopFlow.mergedGen)
}

type evHeap []event

func (h evHeap) Len() int { return len(h) }
func (h evHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}
func (h evHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *evHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *evHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

type loopFlow struct {
	s            ldcp.Sender
	r            ldcp.Receiver
	size         int64 // bytes; 0 for a flow that never ends
	nicFree      int64
	wakeAt       int64
	lastProgress int64
	done         int64 // completion time, 0 while running
	delivered    int64 // bytes delivered in order since the measurement began
	minWindow    float64
	dropsFirst   int       // first-RTT packets dropped
	dropsOther   int       // any other packet dropped
	merged       *ldcp.Ack // ACKs being merged (loop.merge), nil if none
	mergedGen    uint64    // which merge a flush event is for
}

type loop struct {
	t     *testing.T
	p     *ldcp.Params
	rng   *rand.Rand
	h     evHeap
	seq   uint64
	flows []*loopFlow

	rate             float64 // bits per second, NICs and bottleneck
	dUp, dDown, dAck int64   // propagation: sender-switch, switch-receiver, receiver-sender
	rto              int64
	// merge, when above 1, merges each flow's ACKs on their way back, as
	// an ACK-coalescing NIC would: consecutive ACKs with the same ECE,
	// up to merge packets' worth, leaving mergeWait after the first.
	merge     int
	mergeWait int64

	qBytes     float64
	lastDepart int64

	from     int64     // measurement start
	qSeen    []float64 // queue bytes seen by each arriving packet from `from`
	departed int64     // bytes that left the queue from `from`
	events   int
}

// newLoop builds the network: with 80 ns per 1000-byte packet at each of
// the NIC and the switch, the propagation delays make the base RTT 8 us,
// the path100G the senders are told.
func newLoop(t *testing.T, p *ldcp.Params, seed uint64) *loop {
	return &loop{t: t, p: p, rng: rand.New(rand.NewPCG(seed, 0x1dc9)),
		rate: 100e9, dUp: 2 * us, dDown: 2 * us, dAck: 8*us - 4*us - 160*ns, rto: 500 * us}
}

func (l *loop) ser(size int) int64 { return int64(float64(size) * 8 / l.rate * 1e12) }

func (l *loop) push(e event) {
	l.seq++
	e.seq = l.seq
	heap.Push(&l.h, e)
}

// addFlow starts a flow of size bytes (0: unlimited) at start.
func (l *loop) addFlow(start, size int64) int {
	s := newSender(l.t, l.p, path100G)
	f := &loopFlow{s: *s, r: ldcp.NewReceiver(l.p), size: size, lastProgress: start, minWindow: s.Window()}
	l.flows = append(l.flows, f)
	id := len(l.flows) - 1
	l.push(event{at: start, kind: evWake, flow: id})
	l.push(event{at: start + l.rto, kind: evRTO, flow: id})
	return id
}

func (l *loop) wake(id int, at int64) {
	f := l.flows[id]
	if f.wakeAt != 0 && f.wakeAt <= at {
		return // an earlier wake is pending
	}
	f.wakeAt = at
	l.push(event{at: at, kind: evWake, flow: id})
}

func (l *loop) trySend(id int, now int64) {
	f := l.flows[id]
	if f.done != 0 || f.size > 0 && f.s.Next() >= f.size {
		return
	}
	if now < f.nicFree {
		l.wake(id, f.nicFree)
		return
	}
	size := int64(mss)
	if f.size > 0 {
		size = min(size, f.size-f.s.Next())
	}
	if !f.s.CanSend(now, int(size)) {
		if t := f.s.NextSendTime(now, int(size)); t != ldcp.Never {
			l.wake(id, t)
		}
		return
	}
	last := f.size > 0 && f.s.Next()+size >= f.size
	pk := f.s.OnSend(now, int(size), last)
	f.nicFree = now + l.ser(int(size))
	l.push(event{at: f.nicFree + l.dUp, kind: evSwitch, flow: id,
		pk: loopPkt{lsn: pk.LSN, size: int(size), ect: pk.ECT, ackReq: pk.AckReq, firstRTT: pk.FirstRTT}})
	l.wake(id, f.nicFree)
}

// mark is the ECN curve of section 2.1 on the instantaneous queue.
func (l *loop) mark(q float64) bool {
	p := l.p
	switch {
	case q < p.KMin:
		return false
	case q >= p.KMax:
		return true
	}
	return l.rng.Float64() < (q-p.KMin)/(p.KMax-p.KMin)*p.PMax
}

func (l *loop) run(until int64) {
	for l.h.Len() > 0 && l.h[0].at <= until {
		e := heap.Pop(&l.h).(event)
		l.events++
		now := e.at
		f := l.flows[e.flow]
		switch e.kind {
		case evWake:
			if f.wakeAt == now {
				f.wakeAt = 0
			}
			l.trySend(e.flow, now)
		case evSwitch:
			q := l.qBytes
			if now >= l.from {
				l.qSeen = append(l.qSeen, q)
			}
			size := float64(e.pk.size)
			if q+size > l.p.BufMax || !e.pk.ect && q >= l.p.K {
				if e.pk.firstRTT && !e.pk.ect {
					f.dropsFirst++
				} else {
					f.dropsOther++
				}
				continue
			}
			e.pk.ce = e.pk.ect && l.mark(q)
			l.qBytes += size
			l.lastDepart = max(now, l.lastDepart) + l.ser(e.pk.size)
			e.kind, e.at = evDepart, l.lastDepart
			l.push(e)
		case evDepart:
			l.qBytes -= float64(e.pk.size)
			if now >= l.from {
				l.departed += int64(e.pk.size)
			}
			e.kind, e.at = evRecv, now+l.dDown
			l.push(e)
		case evRecv:
			before := f.r.Expected()
			acks, n := f.r.OnData(now, e.pk.lsn, e.pk.size, e.pk.ce, e.pk.ackReq)
			if now >= l.from {
				f.delivered += f.r.Expected() - before
			}
			for _, a := range acks[:n] {
				l.ackBack(e.flow, now, a)
			}
		case evFlush:
			if f.merged != nil && e.gen == f.mergedGen {
				l.push(event{at: now + l.dAck, kind: evAck, flow: e.flow, ack: *f.merged})
				f.merged = nil
			}
		case evAck:
			una := f.s.Una()
			f.s.OnAck(now, e.ack)
			f.minWindow = math.Min(f.minWindow, f.s.Window())
			if f.s.Una() > una {
				f.lastProgress = now
			}
			if f.size > 0 && f.s.Una() >= f.size && f.done == 0 {
				f.done = now
			}
			l.trySend(e.flow, now)
		case evRTO:
			if f.done != 0 {
				continue
			}
			if f.s.InFlight() > 0 && now-f.lastProgress >= l.rto {
				f.s.OnTimeout(now)
				f.lastProgress = now
				l.trySend(e.flow, now)
			}
			l.push(event{at: now + l.rto/4, kind: evRTO, flow: e.flow})
		}
	}
}

// ackBack sends a receiver's ACK back to its sender, merged with the
// ones before it when the loop merges ACKs.
func (l *loop) ackBack(id int, now int64, a ldcp.Ack) {
	f := l.flows[id]
	if l.merge <= 1 {
		l.push(event{at: now + l.dAck, kind: evAck, flow: id, ack: a})
		return
	}
	if m := f.merged; m != nil && (m.ECE != a.ECE || m.NAK || a.NAK || m.Packets+a.Packets > l.merge) {
		l.push(event{at: now + l.dAck, kind: evAck, flow: id, ack: *m})
		f.merged = nil
	}
	if f.merged == nil {
		f.merged = &a
		f.mergedGen++
		l.push(event{at: now + l.mergeWait, kind: evFlush, flow: id, gen: f.mergedGen})
		return
	}
	f.merged.LSN, f.merged.Packets = a.LSN, f.merged.Packets+a.Packets
}

// quantile of the queue samples, in packets.
func (l *loop) queueQuantile(q float64) float64 {
	s := slices.Clone(l.qSeen)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(q*float64(len(s))))] / mss
}

// jain is Jain's fairness index of the flows' delivered bytes.
func jain(flows []*loopFlow) float64 {
	var sum, sq float64
	for _, f := range flows {
		x := float64(f.delivered)
		sum += x
		sq += x * x
	}
	return sum * sum / (float64(len(flows)) * sq)
}

// TestLoopLongFlows: eight long flows join a 100 Gb/s bottleneck 20 us
// apart, each with a fast start into the others' queue. Past the first
// millisecond the queue stays at a few packets, the link stays busy, the
// flows share it evenly, and none of their stable-stage packets is lost.
func TestLoopLongFlows(t *testing.T) {
	for _, name := range ldcp.PresetNames() {
		t.Run(name, func(t *testing.T) {
			p, _ := ldcp.Preset(name)
			l := newLoop(t, &p, 1)
			for i := range 8 {
				l.addFlow(int64(i)*20*us, 0)
			}
			l.from = 1000 * us
			end := 3000 * us
			l.run(end)
			med, p99 := l.queueQuantile(0.5), l.queueQuantile(0.99)
			util := float64(l.departed) * 8 / l.rate / (float64(end-l.from) / 1e12)
			fair := jain(l.flows)
			t.Logf("queue median %.1f p99 %.1f packets, utilisation %.4f, Jain %.4f, events %d", med, p99, util, fair, l.events)
			for i, f := range l.flows {
				t.Logf("flow %d: window %.2f, %d first-RTT drops, %d other drops, %.1f Gb/s",
					i, f.s.Window(), f.dropsFirst, f.dropsOther, float64(f.delivered)*8/(float64(end-l.from)/1e12)/1e9)
				if f.dropsOther != 0 {
					t.Errorf("flow %d lost %d packets that were not first-RTT packets", i, f.dropsOther)
				}
			}
			if med > 10 || p99 > 20 {
				t.Errorf("queue median %.1f p99 %.1f packets, want at most 10 and 20", med, p99)
			}
			if util < 0.95 {
				t.Errorf("utilisation %.4f, want at least 0.95", util)
			}
			if fair < 0.98 {
				t.Errorf("Jain's index %.4f, want at least 0.98", fair)
			}
		})
	}
}

// TestLoopIncast: 100 senders start a 50-packet message each at once.
// Fast start floods the queue with first-RTT packets, which WRED drops
// from K; each flow's last fast-start packet is ECN-capable, gets through,
// and reveals the loss, and the flows go on from the packets that
// arrived. A hundred windows of even one packet are a full BDP of queue,
// so the windows fall below one packet. The queue stays bounded without
// PFC, no packet but a first-RTT one is lost, and every flow finishes.
func TestLoopIncast(t *testing.T) {
	p := ldcp.Draft()
	l := newLoop(t, &p, 2)
	const n, size = 100, 50 * mss
	for range n {
		l.addFlow(0, size)
	}
	l.from = 100 * us // past the first-RTT burst
	l.run(20_000 * us)
	var last int64
	sub, dropsFirst := 0, 0
	for i, f := range l.flows {
		if f.done == 0 {
			t.Fatalf("flow %d did not finish: %d of %d bytes acknowledged, window %g", i, f.s.Una(), size, f.s.Window())
		}
		if f.dropsOther != 0 {
			t.Errorf("flow %d lost %d packets that were not first-RTT packets", i, f.dropsOther)
		}
		if f.minWindow < 1 {
			sub++
		}
		dropsFirst += f.dropsFirst
		last = max(last, f.done)
	}
	// The link needs 5000 packets * 80 ns = 400 us at least.
	ideal := int64(float64(n*size) * 8 / l.rate * 1e12)
	med, p99, top := l.queueQuantile(0.5), l.queueQuantile(0.99), l.queueQuantile(1)
	t.Logf("last flow done at %d us (ideal %d us); %d flows went below one packet; %d first-RTT drops; queue median %.1f p99 %.1f max %.1f packets",
		last/us, ideal/us, sub, dropsFirst, med, p99, top)
	if sub == 0 {
		t.Error("no window went below one packet")
	}
	if dropsFirst == 0 {
		t.Error("WRED dropped no first-RTT packet")
	}
	if top*mss > p.K+float64(n*mss) {
		t.Errorf("queue reached %.0f packets, want at most K plus one packet per flow", top)
	}
	if p99 > 40 {
		t.Errorf("queue p99 %.1f packets after the first RTT, want at most 40", p99)
	}
	if last > 3*ideal {
		t.Errorf("the incast took %d us, want at most three times the ideal %d us", last/us, ideal/us)
	}
}

// TestLoopFastStartSparesRunningFlows: four long flows hold the link when
// sixteen 64 KB flows start at once. WRED drops only the newcomers'
// first-RTT packets: the running flows lose nothing, and every new flow
// finishes.
func TestLoopFastStartSparesRunningFlows(t *testing.T) {
	p := ldcp.Draft()
	l := newLoop(t, &p, 3)
	for i := range 4 {
		l.addFlow(int64(i)*20*us, 0)
	}
	const burst = 1000 * us
	for range 16 {
		l.addFlow(burst, 64*mss)
	}
	l.run(burst - 1)
	var before [4]int
	for i := range before {
		before[i] = l.flows[i].dropsFirst + l.flows[i].dropsOther
	}
	l.run(burst + 2000*us)
	drops := 0
	for i, f := range l.flows {
		if i < 4 {
			if lost := f.dropsFirst + f.dropsOther - before[i]; lost != 0 {
				t.Errorf("running flow %d lost %d packets to the burst", i, lost)
			}
			continue
		}
		if f.dropsOther != 0 {
			t.Errorf("new flow %d lost %d packets other than first-RTT ones", i, f.dropsOther)
		}
		if f.done == 0 {
			t.Errorf("new flow %d did not finish", i)
		}
		drops += f.dropsFirst
	}
	if drops == 0 {
		t.Error("the burst lost no first-RTT packet: the test does not exercise WRED")
	}
	t.Logf("new flows lost %d first-RTT packets", drops)
}

// TestLoopMergedAcks: eq. (2) applies an ACK covering n packets as n
// ACKs, each growing the window by alpha/cw or cutting it by beta, so
// that the window follows the marks packet by packet however the ACKs
// come back. Each case runs with an ACK per packet and with the ACKs
// merged on their way back, up to 4 packets of the same ECE in one ACK
// (as an ACK-coalescing NIC waiting up to 320 ns, four packets' time):
//
//   - eight long flows as in TestLoopLongFlows, where most ACKs are
//     unmarked and merge, and growth per packet matters: the queue's
//     median and p99 within a packet of the per-packet run's, the mean
//     window within 5%;
//   - the 100-flow incast of TestLoopIncast, where the queue passes
//     K_max and marks come in runs that merge into ACKs with ECE
//     covering several packets, whose cut must be n beta: the queue's
//     median within a packet, its p99 within TestLoopIncast's 40.
func TestLoopMergedAcks(t *testing.T) {
	p := ldcp.Draft()
	long := func(merge int) (med, p99, window float64) {
		l := newLoop(t, &p, 1)
		l.merge, l.mergeWait = merge, 4*80*ns
		for i := range 8 {
			l.addFlow(int64(i)*20*us, 0)
		}
		l.from = 1000 * us
		l.run(3000 * us)
		for _, f := range l.flows {
			window += f.s.Window() / 8
		}
		return l.queueQuantile(0.5), l.queueQuantile(0.99), window
	}
	m1, q1, w1 := long(1)
	m4, q4, w4 := long(4)
	t.Logf("long flows, per-packet ACKs: queue median %.1f p99 %.1f packets, mean window %.2f; merged: %.1f, %.1f, %.2f", m1, q1, w1, m4, q4, w4)
	if math.Abs(m4-m1) > 1 || math.Abs(q4-q1) > 1 || math.Abs(w4/w1-1) > 0.05 {
		t.Errorf("long flows with ACKs merged up to 4 packets: queue median %.1f p99 %.1f packets, mean window %.2f; per-packet ACKs: %.1f, %.1f, %.2f; want the same within a packet and 5%%",
			m4, q4, w4, m1, q1, w1)
	}

	incast := func(merge int) (med, p99 float64) {
		l := newLoop(t, &p, 2)
		l.merge, l.mergeWait = merge, 4*80*ns
		for range 100 {
			l.addFlow(0, 50*mss)
		}
		l.from = 100 * us
		l.run(20_000 * us)
		for i, f := range l.flows {
			if f.done == 0 || f.dropsOther != 0 {
				t.Fatalf("merge %d: flow %d done %v, %d packets lost past the first RTT", merge, i, f.done != 0, f.dropsOther)
			}
		}
		return l.queueQuantile(0.5), l.queueQuantile(0.99)
	}
	m1, q1 = incast(1)
	m4, q4 = incast(4)
	t.Logf("incast, per-packet ACKs: queue median %.1f p99 %.1f packets; merged: %.1f, %.1f", m1, q1, m4, q4)
	if math.Abs(m4-m1) > 1 || q4 > 40 {
		t.Errorf("incast with ACKs merged up to 4 packets: queue median %.1f p99 %.1f packets; per-packet ACKs: %.1f, %.1f; want the median within a packet, p99 at most 40", m4, q4, m1, q1)
	}
}
