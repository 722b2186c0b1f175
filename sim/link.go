package sim

import (
	"math"

	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/sim/event"
)

// A port belongs to a host NIC or to a switch; it calls their methods
// directly rather than through an interface, this being the innermost
// loop of the simulator. Both have
//
//	dequeue: the packet the port sends now, or nil;
//	next(after): the earliest time at or after `after` at which the port
//	    may have a packet to send, 0 when nothing is pending (a later
//	    arrival will kick the port);
//	receive: take a packet that arrived on the port.

// Event arguments of a port.
const (
	evWake   = 0 // try to transmit
	evArrive = 1 // the packet at the head of the wire reaches the peer
)

// port is the transmit side of one end of a full-duplex link: it
// serialises one packet at a time onto the wire, and the wire delivers
// packets to the peer in order after the propagation delay. The wire is a
// FIFO with one pending arrival event for its head, so the event queue
// holds O(ports) entries however many packets are in flight.
type port struct {
	// The fields come in three cache lines. The first is what a frame's
	// arrival reads and writes: the wire and the peer. Across a cut
	// between parts, the arrivals run in the peer's part, on another
	// thread, while this port's part transmits: the transmitter's state
	// lives in the second line, so that the two threads do not pass one
	// line back and forth (TestCacheLines).
	wire wire
	// The switch model behind the peer (nil for a host) and the peer's
	// port number there, copied here so that a delivery reads one struct.
	peerDP    *dataplane.Switch
	peerLocal int32
	ref       event.Ref
	rx        *part // the part the peer is in, which runs the arrivals
	peerHost  *host

	// The transmitter: its state, and whether the frame crosses to
	// another part (the peer's part then holds the wire and frames leave
	// through this part's outbox) or completes a flow the parts must
	// hear of (ports facing hosts, with several parts: part.watch).
	busyUntil  int64 // end of the frame being serialised
	wakeAt     int64 // pending wake event, 0 none
	busyTime   int64 // for the port's utilisation
	cut, watch bool
	local      int32 // port number at the node
	psPerByte  int64
	delay      int64
	part       *part             // the part the port's node is in, which runs its wake-ups
	dp         *dataplane.Switch // the switch model behind this port, nil for a host

	// The third line is set up once and only read, by this port's part:
	// copies of what the first holds, so that the transmitter never
	// reads the line the arrivals write.
	sw      *switchNode // the owner: a switch,
	host    *host       // or a host
	peer    *port       // the other end
	rate    float64
	wakeRef event.Ref // ref, for the wake-ups
	rxPart  int32     // rx's id, for the outbox
	_       [24]byte  // to three whole lines
}

// serTime is the serialisation time of size bytes at rate, picoseconds,
// rounded up.
func serTime(size int32, rate float64) int64 {
	return int64(math.Ceil(float64(size) * 8e12 / rate))
}

// psPerByte is the serialisation time of a byte at rate, for ports, which
// multiply instead of divide per packet: a whole number of picoseconds
// where the rate allows (80 ps at 100 Gb/s, 20 at 400 Gb/s), else 0 and
// ports fall back to serTime.
func psPerByte(rate float64) int64 {
	ps := 8e12 / rate
	if ps == math.Trunc(ps) && ps < 1<<40 {
		return int64(ps)
	}
	return 0
}

// kick transmits if the port is idle and its node has a packet, and makes
// sure a wake-up is pending for whatever it will have next.
func (p *port) kick(now int64) {
	if p.busyUntil > now {
		p.wake(p.busyUntil)
		return
	}
	var pkt *dataplane.Packet
	if p.dp != nil {
		pkt = p.dp.Dequeue(now, int(p.local))
	} else {
		pkt = p.host.dequeue(now)
	}
	if pkt == nil {
		if t := p.next(now); t > now {
			p.wake(t)
		}
		return
	}
	p.send(now, pkt)
}

// idle reports whether the port can start a frame now.
func (p *port) idle(now int64) bool { return p.busyUntil <= now }

// next asks the owner when it may next have a packet for the port.
func (p *port) next(after int64) int64 {
	if p.dp != nil {
		return p.dp.Next(int(p.local), after)
	}
	return p.host.next(after)
}

// send starts serialising pkt; the port must be idle.
func (p *port) send(now int64, pkt *dataplane.Packet) {
	p.transmit(now, pkt)
	if t := p.next(p.busyUntil); t > 0 {
		p.wake(t)
	}
}

// transmit starts serialising pkt on an idle port whose node has nothing
// else queued for it, so no wake-up is needed.
func (p *port) transmit(now int64, pkt *dataplane.Packet) {
	ser := int64(pkt.Size) * p.psPerByte
	if ser == 0 {
		ser = serTime(pkt.Size, p.rate)
	}
	p.busyUntil = now + ser
	p.busyTime += ser
	at := p.busyUntil + p.delay
	if p.cut {
		p.part.send(p, pkt, at)
		return
	}
	if p.watch {
		p.part.watch(pkt, at)
	}
	if p.wire.n == 0 {
		p.rx.q.At(at, p.ref, evArrive)
	}
	p.wire.push(pkt, at)
}

// wake makes sure the port is woken at t (or earlier).
func (p *port) wake(t int64) {
	if p.wakeAt != 0 && p.wakeAt <= t && p.wakeAt >= p.part.q.Now() {
		return
	}
	p.wakeAt = t
	p.part.q.At(t, p.wakeRef, evWake)
}

// Handle runs the port's events: wake-ups in the port's part, arrivals in
// the peer's.
func (p *port) Handle(now event.Time, arg uint64) {
	if arg == evArrive {
		rx := p.rx
		pkt := p.wire.pop()
		if p.wire.n > 0 {
			rx.q.At(p.wire.headAt, p.ref, evArrive)
		}
		rx.hops++
		if p.peerDP != nil {
			p.peerDP.Receive(now, int(p.peerLocal), pkt)
		} else {
			p.peerHost.receive(now, pkt)
		}
		return
	}
	if p.wakeAt != now {
		// A wake-up that an earlier one replaced (wake): that one's kick
		// set up whatever the port does next.
		return
	}
	p.wakeAt = 0
	p.kick(now)
}

// wire is the FIFO of packets in flight on a link, threaded through the
// packets themselves: each packet's Next is the one behind it and its At is
// when that one arrives, so that a delivery reads only the packet it
// delivers (which the receiver reads anyway) to learn when the next is due.
type wire struct {
	head, tail *dataplane.Packet
	headAt     int64 // arrival of head
	n          int
}

func (w *wire) push(p *dataplane.Packet, at int64) {
	p.Next = nil
	if w.tail == nil {
		w.head, w.headAt = p, at
	} else {
		w.tail.Next, w.tail.At = p, at
	}
	w.tail = p
	w.n++
}

func (w *wire) pop() *dataplane.Packet {
	p := w.head
	w.head, w.headAt = p.Next, p.At
	if w.head == nil {
		w.tail = nil
	}
	p.Next = nil
	w.n--
	return p
}

// pool recycles packets so that steady-state forwarding does not
// allocate. With telemetry (ints set) it frees the record a data packet
// or ACK holds with the packet.
type pool struct {
	free []*dataplane.Packet
	ints *dataplane.INTStore
}

func (pl *pool) get() *dataplane.Packet {
	if n := len(pl.free); n > 0 {
		p := pl.free[n-1]
		pl.free = pl.free[:n-1]
		return p
	}
	return new(dataplane.Packet)
}

func (pl *pool) put(p *dataplane.Packet) {
	if pl.ints != nil && hasINT(p) {
		pl.ints.Release(p.Aux)
		p.Aux = 0
	}
	pl.free = append(pl.free, p)
}

// hasINT reports whether p, in a run with telemetry, holds a record.
func hasINT(p *dataplane.Packet) bool {
	return p.Aux != 0 && (p.Kind == dataplane.Data || p.Kind == dataplane.Ack || p.Kind == dataplane.Nack)
}

// fifo is a small packet queue for host NICs.
type fifo struct {
	buf  []*dataplane.Packet
	head int
}

func (f *fifo) len() int { return len(f.buf) - f.head }

func (f *fifo) push(p *dataplane.Packet) {
	if f.head > 0 && f.head == len(f.buf) {
		f.buf, f.head = f.buf[:0], 0
	}
	f.buf = append(f.buf, p)
}

func (f *fifo) peek() *dataplane.Packet { return f.buf[f.head] }

func (f *fifo) pop() *dataplane.Packet {
	p := f.buf[f.head]
	f.buf[f.head] = nil
	f.head++
	return p
}
