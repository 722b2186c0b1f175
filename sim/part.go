package sim

import (
	"fmt"
	"time"

	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/sim/event"
)

// part is one partition of the network: the nodes one thread runs, with
// their event queue, their packets and their counters. A part touches
// only its own nodes while it runs a window; what it sends to another
// part waits in its outbox until the window ends (see run.go).
//
// Hosts are never parted from their switch, so the flows a part's hosts
// send and receive are the part's to touch: a flow's sender state
// (Network.flows) belongs to the part of its source, its receiver state
// (Network.rx) to that of its destination.
type part struct {
	id  int
	net *Network
	q   event.Queue
	// pool holds the part's free packets. A frame that crosses to
	// another part is copied there into that part's packet, so packets
	// never change parts and no pool drains into another.
	pool pool
	// cns holds the bodies of the RCM notifications in the part, ints the
	// telemetry records of its packets (HPCC's INT, TIMELY's timestamps).
	cns  *dataplane.CNStore
	ints dataplane.INTStore

	// Counters, summed over the parts for the results.
	done        int // flows sent from here that completed
	started     int // flows started here
	dataPackets int64
	hops        int64
	outOfOrder  int64
	hostPauses  int64
	hostResumes int64

	// out holds the frames sent to other parts in a window, by part; two
	// sets alternate, so that a part fills one while the others read
	// what it sent in the window before from the other. outCN holds the
	// bodies of the RCM notifications among them, outINT and outHops
	// their telemetry: a record's count and timestamp, and its hops, only
	// as many as it holds.
	out     [2][][]crossing
	outCN   [2][][]dataplane.CNInfo
	outINT  [2][][]intCrossing
	outHops [2][][]dataplane.INTHop
	// sentMin is the earliest arrival among the frames sent this window.
	sentMin int64
	// announced counts the completions of flows sent from here announced
	// this window (with several parts; see watch); lastEnd is the latest
	// announced so far.
	announced int
	lastEnd   int64
	// bad records a completion that was not announced: a fault of the
	// simulator, which would make a parallel run end at the wrong time.
	bad string

	// win is the number of the window the part runs; ran is how many
	// events it ran in it, next the time of its next event after it.
	win  int64
	ran  uint64
	next int64
	// crossed counts the frames sent to other parts and busy is the wall
	// time of the last window, for ParallelStats.
	crossed int64
	busy    time.Duration
}

// intCrossing is a telemetry record crossing between parts without its
// hops, which follow in the outbox's hops.
type intCrossing struct {
	n      int
	sentAt int64
}

// crossing is a frame on a link between two parts: the port that sent it
// (whose wire the receiving part holds), its arrival time and a copy of
// it.
type crossing struct {
	port *port
	at   int64
	pkt  dataplane.Packet
}

func newPart(n *Network, id, parts int) *part {
	pt := &part{id: id, net: n, cns: &dataplane.CNStore{}, sentMin: maxTime, next: maxTime}
	for i := range pt.out {
		pt.out[i] = make([][]crossing, parts)
		pt.outCN[i] = make([][]dataplane.CNInfo, parts)
		pt.outINT[i] = make([][]intCrossing, parts)
		pt.outHops[i] = make([][]dataplane.INTHop, parts)
	}
	return pt
}

const maxTime = int64(^uint64(0) >> 1)

// send puts pkt, sent by p at the current time and arriving at the peer
// at at, into the outbox of the current window.
func (pt *part) send(p *port, pkt *dataplane.Packet, at int64) {
	w := pt.win & 1
	dst := p.rxPart
	c := crossing{port: p, at: at, pkt: *pkt}
	if pkt.Kind == dataplane.CN {
		// The body moves with the frame, from this part's store.
		c.pkt.Aux = uint32(len(pt.outCN[w][dst]))
		pt.outCN[w][dst] = append(pt.outCN[w][dst], *pt.cns.Get(pkt.Aux))
		pt.cns.Release(pkt.Aux)
	}
	if pt.pool.ints != nil && hasINT(pkt) {
		// So does the telemetry, numbered from 1 as handles are.
		rec, n := pt.ints.Get(pkt.Aux), dataplane.INTHops(pkt.Aux)
		pt.outINT[w][dst] = append(pt.outINT[w][dst], intCrossing{n: n, sentAt: rec.SentAt})
		pt.outHops[w][dst] = append(pt.outHops[w][dst], rec.Hops[:min(n, dataplane.MaxINTHops)]...)
		c.pkt.Aux = uint32(len(pt.outINT[w][dst]))
	}
	pt.out[w][dst] = append(pt.out[w][dst], c)
	pt.sentMin = min(pt.sentMin, at)
	pt.crossed++
	pt.pool.put(pkt)
}

// receive takes the frames the other parts sent this part in window w
// onto the wires they travel, scheduling an arrival for each wire that
// was empty. The order of the calls does not matter: a wire has one
// sender, whose frames come in the order sent, and events are ordered by
// their keys, not by when they were scheduled.
func (pt *part) receive(w int64) {
	for _, src := range pt.net.parts {
		l := src.out[w&1][pt.id]
		bodies := src.outCN[w&1][pt.id]
		ints, hops := src.outINT[w&1][pt.id], src.outHops[w&1][pt.id]
		for i := range l {
			c := &l[i]
			pkt := pt.pool.get()
			*pkt = c.pkt
			if pkt.Kind == dataplane.CN {
				idx, body := pt.cns.Alloc()
				*body = bodies[c.pkt.Aux]
				pkt.Aux = idx
			}
			if pt.pool.ints != nil && hasINT(pkt) {
				h, rec := pt.ints.Alloc()
				ic := &ints[c.pkt.Aux-1]
				rec.SentAt = ic.sentAt
				hops = hops[copy(rec.Hops[:min(ic.n, dataplane.MaxINTHops)], hops):]
				pkt.Aux = dataplane.INTAux(h, ic.n)
			}
			p := c.port
			if p.wire.n == 0 {
				pt.q.At(c.at, p.ref, evArrive)
			}
			p.wire.push(pkt, c.at)
			c.port = nil
		}
		src.out[w&1][pt.id] = l[:0]
		src.outCN[w&1][pt.id] = bodies[:0]
		src.outINT[w&1][pt.id] = ints[:0]
		src.outHops[w&1][pt.id] = src.outHops[w&1][pt.id][:0]
	}
}

// watch announces, with several parts, the completion of a flow sent
// from a host of this part: pkt leaves the host's switch for the host,
// arriving at at, and if it is the first ACK to cover the flow's last
// byte the flow completes then. Announced a link's delay ahead, a
// completion is known before the window it falls in starts, so that
// every part can stop at the last one (run.go).
func (pt *part) watch(pkt *dataplane.Packet, at int64) {
	if pkt.Kind != dataplane.Ack && pkt.Kind != dataplane.Nack {
		return
	}
	f := &pt.net.flows[pkt.Flow]
	if f.endAt == 0 && pkt.Seq >= f.size {
		f.endAt = at
		pt.announced++
		pt.lastEnd = max(pt.lastEnd, at)
	}
}

// completed counts flow f, which completed at now. With one part the
// run stops after the last; with several, each part knows when from the
// announcements and checks them here.
func (pt *part) completed(now int64, f *flow) {
	pt.done++
	n := pt.net
	if len(n.parts) == 1 {
		if pt.done == len(n.flows) && n.cfg.StopAt == 0 {
			pt.q.Halt()
		}
		return
	}
	if f.endAt != now && pt.bad == "" {
		pt.bad = fmt.Sprintf("simulator fault: flow %d completed at %d ps, announced for %d ps", f.id, now, f.endAt)
	}
}
