package dataplane

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"testing"
)

// This file runs a switch inside a small discrete-event network, once with
// a driver whose Idle always says no (every packet goes through a queue and
// Dequeue) and once with one that reports idle ports truthfully (packets
// that find their egress idle and empty cut through with Send or TrySend).
// The two runs must be indistinguishable from outside: the same frames on
// every port at the same times with the same ECN codepoints, the same PFC
// frames, drops and counters.
//
// Ports 0-2 face senders that honour PFC: each keeps per-priority FIFOs and
// stops a priority while paused. Port 3 faces a receiver that sends ACKs
// back and now and then pauses the switch itself.

const (
	ctHosts   = 3
	ctPorts   = 4
	ctProp    = 1 * us
	ctHorizon = 3000 * us
)

type ctKind uint8

const (
	ctArrive ctKind = iota // p arrives at the switch on port
	ctFree                 // the switch's port finished a frame
	ctWake                 // a PFC hold at the switch's port may have expired
	ctTimer                // a switch timer
	ctUpTry                // sender port may send
	ctUpPFC                // a PFC frame from the switch reaches sender port
)

type ctEvent struct {
	at   int64
	seq  int
	kind ctKind
	port int
	p    *Packet
	id   uint64
}

type ctQueue []ctEvent

func (q ctQueue) Len() int { return len(q) }
func (q ctQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q ctQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *ctQueue) Push(x any)   { *q = append(*q, x.(ctEvent)) }
func (q *ctQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// ctTx is a frame put on a wire by the switch.
type ctTx struct {
	at        int64
	kind      Kind
	flow      int32
	seq       int64
	prio, ecn uint8
	quanta    uint16
	size      int32
}

func (x ctTx) key() string {
	return fmt.Sprintf("%d %v f%d s%d p%d e%d q%d %dB", x.at, x.kind, x.flow, x.seq, x.prio, x.ecn, x.quanta, x.size)
}

// ctSender is the host behind ports 0-2.
type ctSender struct {
	fifo        [NumPrio][]*Packet // with release times in At
	busy        int64
	pausedUntil [NumPrio]int64
	tryAt       int64 // a ctUpTry is pending at this time (0: none)
}

type ctNet struct {
	t      testing.TB
	cut    bool
	sw     *Switch
	now    int64
	q      ctQueue
	seq    int
	busy   [ctPorts]int64
	kicked []int
	tx     [ctPorts][]ctTx
	up     [ctHosts]ctSender
	// counts
	direct, freed, received int
}

func ser(size int32) int64 { return int64(size) * 80 } // 100 Gb/s: 80 ps per byte

func (n *ctNet) at(at int64, kind ctKind, port int, p *Packet, id uint64) {
	n.seq++
	heap.Push(&n.q, ctEvent{at: at, seq: n.seq, kind: kind, port: port, p: p, id: id})
}

// Env.
func (n *ctNet) Kick(port int)             { n.kicked = append(n.kicked, port) }
func (n *ctNet) Idle(port int) bool        { return n.cut && n.busy[port] <= n.now }
func (n *ctNet) Timer(at int64, id uint64) { n.at(at, ctTimer, 0, nil, id) }
func (n *ctNet) NewPacket() *Packet        { return new(Packet) }
func (n *ctNet) Free(*Packet)              { n.freed++ }
func (n *ctNet) Send(port int, p *Packet) {
	if !n.Idle(port) {
		n.t.Fatalf("Send on busy port %d", port)
	}
	n.direct++
	n.transmit(port, p)
}
func (n *ctNet) TrySend(port int, p *Packet) bool {
	if !n.Idle(port) {
		return false
	}
	n.direct++
	n.transmit(port, p)
	return true
}

func (n *ctNet) transmit(port int, p *Packet) {
	if n.busy[port] > n.now {
		n.t.Fatalf("port %d sends at %d while busy until %d", port, n.now, n.busy[port])
	}
	n.tx[port] = append(n.tx[port], ctTx{at: n.now, kind: p.Kind, flow: p.Flow, seq: p.Seq, prio: p.Prio,
		ecn: p.ECN, quanta: p.PauseQuanta, size: p.Size})
	n.busy[port] = n.now + ser(p.Size)
	n.at(n.busy[port], ctFree, port, nil, 0)
	if p.Kind == Pause && port < ctHosts {
		n.at(n.busy[port]+ctProp, ctUpPFC, port, p, 0)
	}
}

// pump lets an idle port send what the switch has for it.
func (n *ctNet) pump(port int) {
	if n.busy[port] > n.now {
		return // its ctFree event will pump
	}
	if p := n.sw.Dequeue(n.now, port); p != nil {
		n.transmit(port, p)
		return
	}
	if t := n.sw.Next(port, n.now); t > n.now {
		n.at(t, ctWake, port, nil, 0)
	}
}

func (n *ctNet) runKicks() {
	for len(n.kicked) > 0 {
		port := n.kicked[0]
		n.kicked = n.kicked[1:]
		n.pump(port)
	}
}

// upTry sends the sender's next eligible packet: the oldest released head
// of an unpaused priority.
func (n *ctNet) upTry(h int) {
	u := &n.up[h]
	if u.tryAt == n.now {
		u.tryAt = 0
	}
	if u.busy > n.now {
		n.upSchedule(h, u.busy)
		return
	}
	best, next := -1, int64(0)
	for q := range NumPrio {
		if len(u.fifo[q]) == 0 {
			continue
		}
		ready := max(u.fifo[q][0].At, u.pausedUntil[q])
		if ready <= n.now && (best < 0 || u.fifo[q][0].At < u.fifo[best][0].At) {
			best = q
		}
		if ready > n.now && (next == 0 || ready < next) {
			next = ready
		}
	}
	if best < 0 {
		if next > 0 {
			n.upSchedule(h, next)
		}
		return
	}
	p := u.fifo[best][0]
	u.fifo[best] = u.fifo[best][1:]
	u.busy = n.now + ser(p.Size)
	p.At = 0
	n.at(u.busy+ctProp, ctArrive, h, p, 0)
	n.upSchedule(h, u.busy)
}

func (n *ctNet) upSchedule(h int, at int64) {
	u := &n.up[h]
	if u.tryAt != 0 && u.tryAt <= at && u.tryAt >= n.now {
		return
	}
	u.tryAt = at
	n.at(at, ctUpTry, h, nil, 0)
}

func (n *ctNet) run() {
	for n.q.Len() > 0 {
		e := heap.Pop(&n.q).(ctEvent)
		n.now = e.at
		if n.now > 10*ctHorizon {
			n.t.Fatalf("still busy at %d ps, long after the workload ended", n.now)
		}
		switch e.kind {
		case ctArrive:
			n.received++
			n.sw.Receive(n.now, e.port, e.p)
		case ctFree, ctWake:
			n.pump(e.port)
		case ctTimer:
			n.sw.OnTimer(n.now, e.id)
		case ctUpTry:
			n.upTry(e.port)
		case ctUpPFC:
			u := &n.up[e.port]
			if e.p.PauseQuanta == 0 {
				u.pausedUntil[e.p.Prio] = 0
			} else {
				u.pausedUntil[e.p.Prio] = n.now + int64(e.p.PauseQuanta)*512*10 // 100 Gb/s: 10 ps per bit
			}
			n.upSchedule(e.port, n.now)
		}
		n.runKicks()
	}
}

// newCTNet builds the network and its seeded workload.
func newCTNet(t testing.TB, cut bool, seed uint64) *ctNet {
	n := &ctNet{t: t, cut: cut}
	mark := Marking{KMin: 20e3, KMax: 200e3, PMax: 0.2, WREDK: 150e3}
	cfg := Config{Name: "ct", Buffer: 1.2e6, Lossless: 1 << 3, XONOffset: 2000, PauseQuanta: 0xffff,
		QueueLimit: 250e3, Seed: seed,
		Ports: []PortConfig{
			{Rate: rate100G, Marking: mark, XOFF: 40e3, Headroom: 40e3},
			{Rate: rate100G, Marking: mark, XOFF: 60e3, Headroom: 40e3},
			{Rate: rate100G, Marking: mark, Beta: 0.125, Headroom: 40e3},
			{Rate: rate100G, Marking: mark, XOFF: 40e3, Headroom: 40e3},
		}}
	fib := mapFIB{0: {0}, 1: {1}, 2: {2}, 3: {3}}
	n.sw = mustNew(t, cfg, fib, n)

	rng := rand.New(rand.NewPCG(seed, 99))
	flow := int32(0)
	for h := range ctHosts {
		for at := rng.Int64N(20 * us); at < ctHorizon; at += rng.Int64N(120 * us) {
			flow++
			prio, ecn := uint8(3), ECT0
			switch r := rng.IntN(20); {
			case r < 4:
				prio = 1
			case r < 6:
				prio, ecn = 0, NotECT
			}
			for i := range 1 + rng.IntN(250) {
				size := int32(1082)
				if rng.IntN(8) == 0 {
					size = 64 + rng.Int32N(1000)
				}
				p := dataPkt(flow, 3, prio, size, ecn)
				p.Seq, p.At = int64(i), at
				n.up[h].fifo[prio] = append(n.up[h].fifo[prio], p)
			}
		}
		n.upSchedule(h, 0)
	}
	// The receiver behind port 3: ACKs to the senders, and PFC frames of
	// its own for priorities 3 and 1.
	for at := int64(0); at < ctHorizon; at += 1 + rng.Int64N(4*us) {
		n.at(at, ctArrive, 3, &Packet{Kind: Ack, Dst: rng.Int32N(ctHosts), Size: AckFrame, Flow: -2, Seq: at}, 0)
	}
	for at := rng.Int64N(100 * us); at < ctHorizon; at += rng.Int64N(200 * us) {
		prio := uint8(3)
		if rng.IntN(3) == 0 {
			prio = 1
		}
		n.at(at, ctArrive, 3, &Packet{Kind: Pause, Prio: prio, PauseQuanta: uint16(200 + rng.IntN(3000))}, 0)
		if rng.IntN(3) == 0 {
			n.at(at+rng.Int64N(10*us), ctArrive, 3, &Packet{Kind: Pause, Prio: prio}, 0)
		}
	}
	return n
}

func TestCutThroughMatchesQueued(t *testing.T) {
	var wredDrops int64
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			queued, cut := newCTNet(t, false, seed), newCTNet(t, true, seed)
			queued.run()
			cut.run()
			if queued.direct != 0 {
				t.Fatalf("queued run sent %d packets around the queues", queued.direct)
			}
			end := int64(ctHorizon * 10)
			var stats [ctPorts]PortStats
			for port := range ctPorts {
				a, b := queued.tx[port], cut.tx[port]
				for i := range min(len(a), len(b)) {
					if a[i].key() != b[i].key() {
						t.Fatalf("port %d frame %d: queued %s, cut-through %s", port, i, a[i].key(), b[i].key())
					}
				}
				if len(a) != len(b) {
					t.Fatalf("port %d: %d frames queued, %d with cut-through", port, len(a), len(b))
				}
				stats[port] = queued.sw.Stats(port, end)
				if sc := cut.sw.Stats(port, end); sc != stats[port] {
					t.Errorf("port %d stats differ:\n queued %+v\n cut    %+v", port, stats[port], sc)
				}
			}
			if queued.freed != cut.freed || queued.received != cut.received {
				t.Errorf("freed %d/%d received %d/%d", queued.freed, cut.freed, queued.received, cut.received)
			}
			// The workload must exercise what it compares.
			var pauses, resumes, marked, wred, lossyDrops, lostLossless, paused int64
			for port := range ctPorts {
				st := stats[port]
				pauses += st.PausesSent
				resumes += st.ResumesSent
				marked += st.Marked
				wred += st.Drops[DropWRED]
				lossyDrops += st.Drops[DropQueueLimit]
				paused += st.PausedTime[3]
				if port < ctHosts {
					lostLossless += st.Drops[DropHeadroomFull]
				}
			}
			t.Logf("cut through %d of %d; PAUSE %d RESUME %d; marked %d; drops wred %d queue-limit %d buffer-full %d; port 3 paused %d ps",
				cut.direct, cut.received, pauses, resumes, marked, wred, lossyDrops, lostLossless, paused)
			if cut.direct < 100 || pauses < 3 || resumes < 3 || marked < 100 || paused == 0 {
				t.Errorf("workload too tame to compare the paths")
			}
			wredDrops += wred
			if lostLossless != 0 {
				t.Errorf("%d lossless packets dropped with PFC honoured by the senders", lostLossless)
			}
		})
	}
	if wredDrops == 0 {
		t.Errorf("no WRED drops in any run")
	}
}
