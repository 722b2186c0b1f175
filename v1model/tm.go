package v1model

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/p4rcm/p4rcm/internal/finetimer"
)

// DefaultQueueDepth is simple_switch's queue capacity, in packets.
const DefaultQueueDepth = 64

// queue is one egress queue: a ring of packets, a capacity, and a rate.
// As in simple_switch's rate-limited queues, a packet's departure time
// is fixed when it is queued: the later of its arrival and one gap after
// the departure of the packet before it.
type queue struct {
	ring  []slot
	head  int
	n     int
	depth int
	gap   time.Duration // 1/rate; 0 is no limit
	last  time.Duration // departure time of the last packet queued
	used  bool          // a packet has been queued: last counts
}

type slot struct {
	p    *packet
	send time.Duration
}

// setRate sets the queue's rate in packets per second; 0 is no limit.
func (q *queue) setRate(pps float64) error {
	if pps < 0 || math.IsNaN(pps) || math.IsInf(pps, 0) {
		return fmt.Errorf("queue rate %v: want packets per second, 0 for no limit", pps)
	}
	q.gap = 0
	if pps > 0 {
		q.gap = time.Duration(float64(time.Second) / pps)
	}
	return nil
}

func (q *queue) push(p *packet, now time.Duration) bool {
	if q.n >= q.depth {
		return false
	}
	if q.n == len(q.ring) {
		grown := make([]slot, max(8, 2*len(q.ring)))
		for i := range q.n {
			grown[i] = q.ring[(q.head+i)%len(q.ring)]
		}
		q.ring, q.head = grown, 0
	}
	send := now
	if q.gap > 0 && q.used {
		send = max(now, q.last+q.gap)
	}
	q.last, q.used = send, true
	q.ring[(q.head+q.n)%len(q.ring)] = slot{p: p, send: send}
	q.n++
	return true
}

// due is when the head packet may leave.
func (q *queue) due() time.Duration { return q.ring[q.head].send }

func (q *queue) pop() *packet {
	p := q.ring[q.head].p
	q.ring[q.head] = slot{}
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	return p
}

// egressPort is a port's queues, one per priority.
type egressPort struct {
	port   int
	queues []queue
	drops  uint64
	// lineRate, when above 0, is the port's link in bits per second,
	// shared by its queues; free is when the link has sent the last
	// frame given to it.
	lineRate float64
	free     time.Duration
	// delay, when above 0, is the link's propagation delay: a frame
	// reaches the far end delay after its last bit left the port, and
	// waits in inFlight until then.
	delay    time.Duration
	inFlight []delayed
	// looping counts the packets this port's egress sent round that
	// wait in the recirculation queue. While the link is free with
	// nothing queued and some of them wait, the queue may run up to
	// ahead passes before their time; roundTaken says the port has
	// had that allowance since it last sent (see passAhead).
	looping, ahead int
	roundTaken     bool
}

// delayed is a frame on its way down a link with a delay, and when it
// arrives.
type delayed struct {
	at    time.Duration
	frame []byte
}

// LineOverhead is what a frame costs a port's link beyond the bytes the
// pipeline emits: the FCS, the preamble and start delimiter, and the
// inter-frame gap, which a veth does not carry but a link's rate counts.
const LineOverhead = 4 + 8 + 12

// lineTime is how long n bytes take on a link of rate bits per second.
func lineTime(n int, rate float64) time.Duration {
	return time.Duration(float64(n+LineOverhead) * 8 / rate * float64(time.Second))
}

func (sw *Switch) egressPort(port int) *egressPort {
	if ep := sw.ports[port]; ep != nil {
		return ep
	}
	ep := &egressPort{port: port, queues: make([]queue, sw.cfg.PriorityQueues), lineRate: sw.defaultLine, delay: sw.defaultDelay}
	for i := range ep.queues {
		ep.queues[i].depth = sw.defaultDepth
		ep.queues[i].setRate(sw.defaultRate) // checked when it was set
	}
	sw.ports[port] = ep
	i, _ := slices.BinarySearch(sw.portOrder, port)
	sw.portOrder = slices.Insert(sw.portOrder, i, port)
	return ep
}

// SetQueueRate sets how many packets per second an egress queue sends
// (simple_switch_CLI set_queue_rate): prio -1 sets every priority queue
// of the port, each to that rate, as simple_switch does; 0 removes the
// limit. Port -1 sets every port, now and later.
func (sw *Switch) SetQueueRate(port, prio int, pps float64) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if prio >= sw.cfg.PriorityQueues {
		return fmt.Errorf("priority %d: the switch has %d queues per port", prio, sw.cfg.PriorityQueues)
	}
	var probe queue
	if err := probe.setRate(pps); err != nil {
		return err
	}
	if port == -1 {
		if prio != -1 {
			return fmt.Errorf("a rate for every port sets all their queues, not priority %d", prio)
		}
		sw.defaultRate = pps
	}
	for _, p := range sw.portsOrAll(port) {
		ep := sw.egressPort(p)
		for i := range ep.queues {
			if prio < 0 || i == prio {
				ep.queues[i].setRate(pps)
			}
		}
	}
	return nil
}

// SetPortRate makes an egress port a link of bps bits per second shared
// by its priority queues, as a real switch's port: a frame occupies the
// link for its length plus LineOverhead, and no queue sends while it is
// busy; the highest priority with a packet due goes next. A frame the
// pipeline drops or recirculates takes no link time. Queue rates
// (SetQueueRate) still apply on top. 0 removes the link; port -1 sets
// every port, now and later. BMv2 has no such setting: its queue rates
// count packets, and each priority queue has its own.
func (sw *Switch) SetPortRate(port int, bps float64) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if bps < 0 || math.IsNaN(bps) || math.IsInf(bps, 0) {
		return fmt.Errorf("port rate %v: want bits per second, 0 for no limit", bps)
	}
	if port == -1 {
		sw.defaultLine = bps
	}
	for _, p := range sw.portsOrAll(port) {
		sw.egressPort(p).lineRate = bps
	}
	return nil
}

// portsOrAll is port, or every port the switch has for -1.
func (sw *Switch) portsOrAll(port int) []int {
	if port == -1 {
		return sw.portOrder
	}
	return []int{port}
}

// SetPortDelay gives an egress port's link a propagation delay: a frame
// reaches the far end d after its last bit has left the port (by the
// port's link rate, SetPortRate, when it has one), where a veth would
// hand it over at once. 0 removes the delay; port -1 sets every port,
// now and later. BMv2 has no such setting.
func (sw *Switch) SetPortDelay(port int, d time.Duration) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if d < 0 {
		return fmt.Errorf("port delay %v: want 0 or more", d)
	}
	if port == -1 {
		sw.defaultDelay = d
	}
	for _, p := range sw.portsOrAll(port) {
		sw.egressPort(p).delay = d
	}
	return nil
}

// SetQueueDepth sets the capacity of an egress port's queues, in packets
// (simple_switch_CLI set_queue_depth): prio -1 for all of them; port -1
// for every port, now and later.
func (sw *Switch) SetQueueDepth(port, prio, packets int) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if packets < 1 {
		return fmt.Errorf("queue depth %d: want at least 1 packet", packets)
	}
	if prio >= sw.cfg.PriorityQueues {
		return fmt.Errorf("priority %d: the switch has %d queues per port", prio, sw.cfg.PriorityQueues)
	}
	if port == -1 {
		sw.defaultDepth = packets
		for _, p := range sw.portOrder {
			for i := range sw.ports[p].queues {
				sw.ports[p].queues[i].depth = packets
			}
		}
		return nil
	}
	ep := sw.egressPort(port)
	for i := range ep.queues {
		if prio < 0 || i == prio {
			ep.queues[i].depth = packets
		}
	}
	return nil
}

// SetRecirculationRate sets how many recirculated packets per second
// come back to ingress in the live mode; 0 (the default) is as fast as
// the switch runs, as in simple_switch.
//
// simple_switch drops a recirculated packet that finds its 1,024-packet
// queue full, which its loop, as fast as the switch, seldom fills. A
// paced loop holds every packet a program keeps going round at once (a
// PFC hold's whole backlog: egress hands held packets straight back),
// so with a rate the queue holds up to RecirculationDepth packets, more
// than a switch's buffer holds frames, and a hold loses nothing.
func (sw *Switch) SetRecirculationRate(pps float64) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if err := sw.recirc.setRate(pps); err != nil {
		return fmt.Errorf("recirculation rate %v: want packets per second, 0 for no limit", pps)
	}
	sw.recirc.depth = bmv2RecirculationDepth
	if pps > 0 {
		sw.recirc.depth = RecirculationDepth
	}
	return nil
}

// bmv2RecirculationDepth is simple_switch's recirculation queue, in
// packets; RecirculationDepth the Go target's once its loop is paced.
const (
	bmv2RecirculationDepth = 1024
	RecirculationDepth     = 1 << 16
)

// RecirculationDrops is how many recirculated packets found the
// recirculation queue full and were dropped (live mode).
func (sw *Switch) RecirculationDrops() uint64 {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.recircDrops
}

// QueueDrops is how many packets an egress port's full queues dropped.
func (sw *Switch) QueueDrops(port int) uint64 {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if ep := sw.ports[port]; ep != nil {
		return ep.drops
	}
	return 0
}

// Receive runs a frame received on a port through the parser and
// ingress and puts what it forwards on the egress queues, where Serve
// takes it. It is the live mode; Process is the replay mode.
func (sw *Switch) Receive(port int, frame []byte) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.fatal != nil {
		return sw.fatal
	}
	if err := sw.checkFrame(port, frame); err != nil {
		return err
	}
	sw.live = true
	sw.runIngress(sw.arrive(port, frame))
	sw.runPending()
	return nil
}

// ReceiveBatch runs frames received on a port through ingress and then
// sends, through egress to emit, whatever the queues let go at once: on
// ports without a rate limit a frame leaves in the receiving goroutine,
// without a hand-off to Serve. What must wait for a rate is left to
// Serve. emit is called under the switch's lock.
func (sw *Switch) ReceiveBatch(port int, frames [][]byte, emit Emit) error {
	return sw.ReceiveBatchLate(port, frames, nil, emit)
}

// ReceiveBatchLate is ReceiveBatch for frames that came over a link
// whose far end keeps the link's clock (a link in memory to another
// switch of the process): late[i], if late is not nil, is how long ago
// that clock delivered frames[i] (EmitLateness at the sender plus the
// hand-off since). What the frame's ingress queues counts on this
// switch's links from then, not from now: a serve loop or a hand-off
// that ran late costs the receiving link no time it would have been
// busy. The program sees the time the frame came in, as for any frame.
func (sw *Switch) ReceiveBatchLate(port int, frames [][]byte, late []time.Duration, emit Emit) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.fatal != nil {
		return sw.fatal
	}
	sw.live = true
	sw.inline = true
	sw.batchAt, sw.inBatch = sw.cfg.Clock(), true
	defer func() { sw.inBatch = false }()
	var err error
	for i, f := range frames {
		if e := sw.checkFrame(port, f); e != nil {
			err = e
			continue
		}
		if late != nil {
			sw.arrivedLate = max(0, min(late[i], sw.batchAt))
		}
		sw.runIngress(sw.arrive(port, f))
		sw.arrivedLate = 0
	}
	// What is ready goes out at once, up to a bound: a program that
	// holds packets by recirculating them, with no recirculation rate,
	// keeps packets ready until time passes, and the caller flushes
	// what emit batched only once this returns (nor may the other
	// ports' frames wait that long for the lock). Serve takes over.
	// serveReady returns 0 for every packet it sends, so a batch of
	// inlineServeMax frames (a full receive) takes one call more to find
	// the queues empty: without it every full batch woke Serve for
	// nothing, an eventfd write and two context switches, and Serve
	// then took the lock from the next batch.
	var wait time.Duration
	for range inlineServeMax + 1 {
		if wait = sw.serveReady(emit); wait != 0 {
			break
		}
	}
	sw.inline = false
	// Serve is woken only when what is left is due before the time it
	// already waits for: every wake-up is a context switch, which on
	// this class of machine costs more than the pipeline.
	if wait == 0 || sw.queuedLocked() > 0 && sw.batchAt+wait < sw.serveUntil {
		sw.wake()
	}
	if sw.fatal != nil {
		return sw.fatal
	}
	return err
}

// inlineServeMax is about the most packets ReceiveBatch sends itself
// (one more at most), and how many Serve sends back to back before it
// calls idle (flushes). It is afpacket.Batch, what one receive returns
// at most: a full receive goes out whole.
const inlineServeMax = 64

// wake tells Serve that a packet may be ready. Under sw.mu.
func (sw *Switch) wake() {
	sw.wakes++
	if w := sw.waiter.Load(); w != nil {
		w.Wake()
	}
}

// runPending runs the packets waiting for ingress (resubmitted ones), in
// order, those they resubmit in turn included.
func (sw *Switch) runPending() {
	for i := 0; i < len(sw.input); i++ {
		sw.runIngress(sw.input[i])
	}
	sw.input = sw.input[:0]
}

// enqueueLive puts a packet on its port's queue, or drops it when the
// queue is full (tail drop, as simple_switch).
func (sw *Switch) enqueueLive(p *packet, port, prio int) {
	ep := sw.egressPort(port)
	q := &ep.queues[prio]
	sw.set(p, sw.l.std.enqQdepth, uint64(q.n))
	// A frame its link delivered late (the sending switch's serve loop,
	// or the hand-off between switches, behind the link's clock) joins
	// the queue when it arrived on that clock, so that the emulator's
	// own delays do not idle this port's link either.
	if !q.push(p, sw.clock()-sw.arrivedLate) {
		ep.drops++
		sw.put(p)
		return
	}
	if !sw.inline {
		sw.wake()
	}
}

// Serve runs the egress side until ctx ends: it takes packets off the
// queues, highest priority first and as the rates allow, through egress
// and the deparser, and hands each frame to emit (under the switch's
// lock: emit must not call the Switch). Before it waits for more, it
// calls idle, if not nil, without the lock: the moment to flush frames
// emit batched.
func (sw *Switch) Serve(ctx context.Context, emit Emit, idle func()) error {
	// Departures and link delays are often a fraction of a millisecond
	// away, which the runtime's timers round up to one; a finetimer
	// Waiter waits them out, and packets enqueued meanwhile (wake) end
	// the wait.
	w, err := finetimer.NewWaiter()
	if err != nil {
		return err
	}
	defer w.Close()
	sw.waiter.Store(w)
	defer sw.waiter.Store(nil)
	defer context.AfterFunc(ctx, w.Wake)()
	for busy := 0; ; {
		sw.mu.Lock()
		wait := sw.serveReady(emit)
		sw.serveUntil = sw.cfg.Clock() + wait
		sw.mu.Unlock()
		if wait == 0 {
			// Always busy (packets going round with no recirculation
			// rate), it still hands on what emit batched.
			if busy++; busy == inlineServeMax && idle != nil {
				busy = 0
				idle()
			}
			continue
		}
		busy = 0
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if idle != nil {
			idle()
		}
		w.Wait(wait)
	}
}

// passAhead reports whether the recirculation queue's next pass may run
// now, ahead of the queue's rate, and if so takes it from a port's
// allowance: it may while a port's link is free with nothing queued and
// packets its egress sent round wait in the queue.
//
// A program that holds packets by recirculating them (rcm.p4: a
// flow's packets waiting for its older ones in the other queue, a
// paused priority) lets one leave only when it comes round, so at the
// recirculation rate a link can stand idle for a round of the queue
// while the packet it may send is in it: in the emulated incast, RCM's
// bottleneck was idle about 5% of the time at the default rate, most
// gaps ended by a packet that had gone round (docs/emulation.md). Run ahead,
// the round takes the CPU time of its passes. The allowance is one
// round (the queue's length when the port starts to run ahead) until
// the port sends again, so a port held for long, by a pause, does not
// spin the loop. The timing of passes is the target's; no program
// decision changes.
func (sw *Switch) passAhead(now time.Duration) bool {
	for _, p := range sw.portOrder {
		ep := sw.ports[p]
		if ep.looping == 0 || ep.lineRate == 0 || ep.free > now || ep.queued() {
			continue
		}
		if !ep.roundTaken {
			ep.roundTaken, ep.ahead = true, sw.recirc.n
		}
		if ep.ahead > 0 {
			ep.ahead--
			return true
		}
	}
	return false
}

// queued reports whether any of the port's queues holds a packet.
func (ep *egressPort) queued() bool {
	for i := range ep.queues {
		if ep.queues[i].n > 0 {
			return true
		}
	}
	return false
}

// serveReady sends one packet if one may go now and returns 0; otherwise
// it returns how long until one may (an hour if every queue is empty).
func (sw *Switch) serveReady(emit Emit) time.Duration {
	sw.runPending()
	now := sw.clock()
	wait := time.Hour
	if q := &sw.recirc; q.n > 0 {
		if q.due() <= now || sw.passAhead(now) {
			p := q.pop()
			if p.heldBy != nil {
				p.heldBy.looping--
			}
			sw.runIngress(p)
			return 0
		}
		wait = q.due() - now
	}
	// Frames whose links' delays have run out arrive (a loop over the
	// ports only while some frame is on its way).
	for _, p := range sw.portOrder {
		if sw.inFlight == 0 {
			break
		}
		ep := sw.ports[p]
		i := 0
		for ; i < len(ep.inFlight) && ep.inFlight[i].at <= now; i++ {
			sw.emitLate = now - ep.inFlight[i].at
			emit(ep.port, ep.inFlight[i].frame)
			sw.emitLate = 0
			sw.frameFree = append(sw.frameFree, ep.inFlight[i].frame[:0])
			ep.inFlight[i] = delayed{}
		}
		if i > 0 {
			ep.inFlight = append(ep.inFlight[:0], ep.inFlight[i:]...)
			sw.inFlight -= i
		}
		if len(ep.inFlight) > 0 {
			wait = min(wait, ep.inFlight[0].at-now)
		}
	}
	n := len(sw.portOrder)
	for k := range n {
		// Round robin over the ports, so that low port numbers do not
		// go first every time.
		ep := sw.ports[sw.portOrder[(sw.rr+k)%n]]
		if ep.lineRate > 0 && ep.free > now {
			wait = min(wait, ep.free-now)
			continue
		}
		for prio := len(ep.queues) - 1; prio >= 0; prio-- {
			q := &ep.queues[prio]
			if q.n == 0 {
				continue
			}
			if d := q.due(); d > now {
				// As simple_switch: a queue past its rate lets the next
				// priority down be served.
				wait = min(wait, d-now)
				continue
			}
			due := q.due()
			p := q.pop()
			sw.set(p, sw.l.std.deqQdepth, uint64(q.n))
			sw.rr = (sw.rr + k + 1) % n
			out := emit
			if ep.delay > 0 {
				out = sw.holdFrame
			}
			sent := sw.runEgress(p, ep.port, prio, out)
			if sent > 0 {
				ep.roundTaken = false
			}
			if sent > 0 && ep.lineRate > 0 {
				// The link's own clock: a serve loop that woke late
				// sends what the link would have sent meanwhile, back
				// to back, so lateness costs no capacity.
				ep.free = max(ep.free, due) + lineTime(sent, ep.lineRate)
			}
			if sent > 0 && ep.delay > 0 {
				at := max(now, due) + ep.delay
				if ep.lineRate > 0 {
					at = ep.free + ep.delay
				}
				ep.inFlight = append(ep.inFlight, delayed{at: at, frame: sw.held})
				sw.inFlight++
				sw.held = nil
			}
			return 0
		}
	}
	return max(wait, time.Microsecond)
}

// EmitLateness, called by an Emit while it runs, is how long ago the
// frame it was given reached the far end of its link on the link's
// clock: a frame leaves a link with a delay only once the serve loop
// gets round to it, which may be after its time. 0 for a frame of a
// port without a delay. The far end may count the frame's arrival from
// then (ReceiveBatchLate).
func (sw *Switch) EmitLateness() time.Duration { return sw.emitLate }

// holdFrame is the Emit of a port with a delay: it keeps a copy of the
// frame (in sw.held) for serveReady to put on the link's delay line.
func (sw *Switch) holdFrame(_ int, frame []byte) {
	var buf []byte
	if k := len(sw.frameFree); k > 0 {
		buf, sw.frameFree = sw.frameFree[k-1], sw.frameFree[:k-1]
	}
	sw.held = append(buf, frame...)
}

// serveLocked is serveReady under the lock, for replays.
func (sw *Switch) serveLocked(emit Emit) time.Duration {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.serveReady(emit)
}

// queued counts the packets waiting in the egress queues.
func (sw *Switch) queued() int {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.queuedLocked()
}

func (sw *Switch) queuedLocked() int {
	n := len(sw.input) + sw.recirc.n
	for _, ep := range sw.ports {
		for i := range ep.queues {
			n += ep.queues[i].n
		}
	}
	n += sw.inFlight
	return n
}
