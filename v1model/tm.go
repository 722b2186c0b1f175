package v1model

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// DefaultQueueDepth is simple_switch's queue capacity, in packets.
const DefaultQueueDepth = 64

// queue is one egress queue: a ring of packets, a capacity, and a pace.
type queue struct {
	ring  []*packet
	head  int
	n     int
	depth int
	pace  pacer
}

// pacer lets one packet through every 1/rate seconds, as simple_switch's
// rate-limited queues: rate 0 is no limit.
type pacer struct {
	gap  time.Duration
	next time.Duration
}

func (pc *pacer) ready(now time.Duration) bool { return pc.gap == 0 || now >= pc.next }

func (pc *pacer) sent(now time.Duration) {
	if pc.gap == 0 {
		return
	}
	// A queue idle for longer than a gap starts afresh, without a burst.
	pc.next = max(pc.next, now-pc.gap) + pc.gap
}

func (pc *pacer) set(pps float64) error {
	if pps < 0 || math.IsNaN(pps) || math.IsInf(pps, 0) {
		return fmt.Errorf("queue rate %v: want packets per second, 0 for no limit", pps)
	}
	pc.gap = 0
	if pps > 0 {
		pc.gap = time.Duration(float64(time.Second) / pps)
	}
	return nil
}

func (q *queue) push(p *packet) bool {
	if q.n >= q.depth {
		return false
	}
	if q.n == len(q.ring) {
		grown := make([]*packet, max(8, 2*len(q.ring)))
		for i := range q.n {
			grown[i] = q.ring[(q.head+i)%len(q.ring)]
		}
		q.ring, q.head = grown, 0
	}
	q.ring[(q.head+q.n)%len(q.ring)] = p
	q.n++
	return true
}

func (q *queue) pop() *packet {
	p := q.ring[q.head]
	q.ring[q.head] = nil
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	return p
}

// egressPort is a port's queues, one per priority, and the port's own
// pace (the link it emulates).
type egressPort struct {
	port   int
	queues []queue
	pace   pacer
	drops  uint64
}

func (sw *Switch) egressPort(port int) *egressPort {
	if ep := sw.ports[port]; ep != nil {
		return ep
	}
	ep := &egressPort{port: port, queues: make([]queue, sw.cfg.PriorityQueues)}
	ep.pace.set(sw.defaultRate) // checked when it was set
	for i := range ep.queues {
		ep.queues[i].depth = sw.defaultDepth
	}
	sw.ports[port] = ep
	i, _ := slices.BinarySearch(sw.portOrder, port)
	sw.portOrder = slices.Insert(sw.portOrder, i, port)
	return ep
}

// SetQueueRate sets how many packets per second an egress port sends
// (simple_switch_CLI set_queue_rate): prio -1 paces the port as a whole,
// prio 0 and up one of its priority queues. 0 removes the limit. Port -1
// sets every port, now and later.
func (sw *Switch) SetQueueRate(port, prio int, pps float64) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if prio >= sw.cfg.PriorityQueues {
		return fmt.Errorf("priority %d: the switch has %d queues per port", prio, sw.cfg.PriorityQueues)
	}
	if port == -1 {
		if prio != -1 {
			return fmt.Errorf("a rate for every port applies to the port, not to priority %d", prio)
		}
		var pc pacer
		if err := pc.set(pps); err != nil {
			return err
		}
		sw.defaultRate = pps
		for _, p := range sw.portOrder {
			if err := sw.ports[p].pace.set(pps); err != nil {
				return err
			}
		}
		return nil
	}
	ep := sw.egressPort(port)
	if prio < 0 {
		return ep.pace.set(pps)
	}
	return ep.queues[prio].pace.set(pps)
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
	if len(frame) > sw.cfg.MaxFrame {
		return fmt.Errorf("frame of %d bytes on port %d: longer than the %d-byte maximum", len(frame), port, sw.cfg.MaxFrame)
	}
	sw.live = true
	sw.runIngress(sw.arrive(port, frame))
	for len(sw.input) > 0 {
		p := sw.input[0]
		sw.input = slices.Delete(sw.input, 0, 1)
		sw.runIngress(p)
	}
	return nil
}

// ReceiveBatch runs frames received on a port through ingress and then
// sends, through egress to emit, whatever the queues let go at once: on
// ports without a rate limit a frame leaves in the receiving goroutine,
// without a hand-off to Serve. What must wait for a rate is left to
// Serve. emit is called under the switch's lock.
func (sw *Switch) ReceiveBatch(port int, frames [][]byte, emit Emit) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.live = true
	sw.inline = true
	var err error
	for _, f := range frames {
		if len(f) > sw.cfg.MaxFrame {
			err = fmt.Errorf("frame of %d bytes on port %d: longer than the %d-byte maximum", len(f), port, sw.cfg.MaxFrame)
			continue
		}
		sw.runIngress(sw.arrive(port, f))
	}
	for sw.serveReady(emit) == 0 {
	}
	sw.inline = false
	if sw.queuedLocked() > 0 {
		sw.wake()
	}
	return err
}

func (sw *Switch) wake() {
	select {
	case sw.kick <- struct{}{}:
	default:
	}
}

// enqueueLive puts a packet on its port's queue, or drops it when the
// queue is full (tail drop, as simple_switch).
func (sw *Switch) enqueueLive(p *packet, port, prio int) {
	ep := sw.egressPort(port)
	q := &ep.queues[prio]
	sw.set(p, sw.l.std.enqQdepth, uint64(q.n))
	if !q.push(p) {
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
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		sw.mu.Lock()
		wait := sw.serveReady(emit)
		sw.mu.Unlock()
		if wait == 0 {
			continue
		}
		if idle != nil {
			idle()
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-sw.kick:
		case <-timer.C:
		}
	}
}

// serveReady sends one packet if one may go now and returns 0; otherwise
// it returns how long until one may (an hour if every queue is empty).
func (sw *Switch) serveReady(emit Emit) time.Duration {
	for len(sw.input) > 0 {
		p := sw.input[0]
		sw.input = slices.Delete(sw.input, 0, 1)
		sw.runIngress(p)
	}
	now := sw.cfg.Clock()
	wait := time.Hour
	n := len(sw.portOrder)
	for k := range n {
		// Round robin over the ports, so that low port numbers do not
		// go first every time.
		ep := sw.ports[sw.portOrder[(sw.rr+k)%n]]
		for prio := len(ep.queues) - 1; prio >= 0; prio-- {
			q := &ep.queues[prio]
			if q.n == 0 {
				continue
			}
			if !ep.pace.ready(now) {
				wait = min(wait, ep.pace.next-now)
				break
			}
			if !q.pace.ready(now) {
				wait = min(wait, q.pace.next-now)
				continue
			}
			p := q.pop()
			ep.pace.sent(now)
			q.pace.sent(now)
			sw.set(p, sw.l.std.deqQdepth, uint64(q.n))
			sw.rr = (sw.rr + k + 1) % n
			sw.runEgress(p, ep.port, prio, emit)
			return 0
		}
	}
	return max(wait, time.Microsecond)
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
	n := len(sw.input)
	for _, ep := range sw.ports {
		for i := range ep.queues {
			n += ep.queues[i].n
		}
	}
	return n
}
