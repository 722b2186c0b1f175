package p4switch

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/p4rcm/p4rcm/afpacket"
)

// link is what a port receives from and sends on: a packet socket on an
// interface (socket) or one end of a link in memory to another switch
// of the same process (memEnd).
type link interface {
	Recv() ([][]byte, error)
	Send(frames ...[]byte) error
	Close() error
	// dropped counts the frames the link lost before the switch saw
	// them, and says why, for the port's stats line.
	dropped() (n uint64, why string)
}

// socket is a packet socket as a link: what it drops are frames longer
// than a port takes (afpacket.Port.Truncated).
type socket struct{ *afpacket.Port }

func (s socket) dropped() (uint64, string) {
	return s.Truncated(), fmt.Sprintf("dropped as longer than %d bytes", afpacket.MaxFrame-4)
}

// memPrefix names a link in memory in -i PORT@mem:NAME. Linux refuses
// ':' in an interface's name, so no interface is mistaken for one.
const memPrefix = "mem:"

// memName is the link's name in -i PORT@mem:NAME, and whether iface
// names one.
func memName(iface string) (string, bool) {
	return strings.CutPrefix(iface, memPrefix)
}

// memQueueMax bounds the frames waiting at one end of a link in memory,
// as a veth's backlog bounds them: a receiver that falls that far behind
// loses what comes next (counted), rather than the process its memory.
// The sending switch's port rate paces the link, so only a receiver
// starved of the CPU gets there.
const memQueueMax = 4096

// memEnd is one end of a link in memory between two ports of switches in
// one process. What one switch's port sends the other's port receives,
// in order, through a queue: Send copies the frames in and returns at
// once, without touching the receiving switch (it is called where the
// sending switch may hold its own lock); the receiving port's goroutine
// takes them in batches (Recv) and runs them through its switch, as it
// does the frames of a packet socket. No system call, no veth.
type memEnd struct {
	name string
	peer *memEnd

	mu      sync.Mutex
	queue   [][]byte      // frames sent to this end, oldest first
	at      []time.Time   // when the link delivered each (sendAt), or zero
	free    [][]byte      // buffers to copy frames into
	batch   [][]byte      // what the last Recv returned, reused by the next
	batchAt []time.Time   // and when the link delivered them
	ready   chan struct{} // a frame was queued (capacity 1)
	closed  chan struct{}
	once    sync.Once
	lost    atomic.Uint64
}

// newMemLink makes the two ends of the link in memory called name.
func newMemLink(name string) (a, b *memEnd) {
	a = &memEnd{name: name, ready: make(chan struct{}, 1), closed: make(chan struct{})}
	b = &memEnd{name: name, ready: make(chan struct{}, 1), closed: make(chan struct{})}
	a.peer, b.peer = b, a
	return a, b
}

// Send hands frames to the far end, copied: they are the caller's again
// once it returns. A closed far end (its switch stopped) takes nothing,
// as a veth whose peer is down.
func (m *memEnd) Send(frames ...[]byte) error { return m.sendAt(frames, nil) }

// sendAt is Send with, for each frame, when the sending switch's link
// delivered it (at nil: now): the receiving switch counts the frame from
// then (lateness), so that a late serve loop or hand-off does not idle
// its links.
func (m *memEnd) sendAt(frames [][]byte, at []time.Time) error {
	select {
	case <-m.closed:
		return afpacket.ErrClosed
	case <-m.peer.closed:
		return nil // the far end is down: what is sent is lost
	default:
	}
	p := m.peer
	var now time.Time
	if at == nil {
		now = time.Now()
	}
	p.mu.Lock()
	for i, f := range frames {
		if len(p.queue) >= memQueueMax {
			p.lost.Add(1)
			continue
		}
		var buf []byte
		if k := len(p.free); k > 0 {
			buf, p.free = p.free[k-1], p.free[:k-1]
		}
		p.queue = append(p.queue, append(buf[:0], f...))
		if at != nil {
			p.at = append(p.at, at[i])
		} else {
			p.at = append(p.at, now)
		}
	}
	p.mu.Unlock()
	select {
	case p.ready <- struct{}{}:
	default: // a wake-up is pending already
	}
	return nil
}

// Recv waits for frames and returns up to afpacket.Batch of them, oldest
// first, valid until the next Recv. It returns afpacket.ErrClosed once
// the end is closed.
func (m *memEnd) Recv() ([][]byte, error) {
	for {
		m.mu.Lock()
		// The previous batch's buffers are free again.
		m.free = append(m.free, m.batch...)
		m.batch = m.batch[:0]
		if n := min(len(m.queue), afpacket.Batch); n > 0 {
			m.batch = append(m.batch, m.queue[:n]...)
			m.batchAt = append(m.batchAt[:0], m.at[:n]...)
			rest := copy(m.queue, m.queue[n:])
			clear(m.queue[rest:])
			m.queue = m.queue[:rest]
			m.at = m.at[:copy(m.at, m.at[n:])]
			m.mu.Unlock()
			return m.batch, nil
		}
		m.mu.Unlock()
		select {
		case <-m.ready:
		case <-m.closed:
			return nil, afpacket.ErrClosed
		}
	}
}

// lateness appends to buf, for each frame the last Recv returned, how
// long ago its link delivered it.
func (m *memEnd) lateness(buf []time.Duration) []time.Duration {
	now := time.Now()
	for _, at := range m.batchAt {
		buf = append(buf, now.Sub(at))
	}
	return buf
}

// Close ends this end: a Recv waiting returns afpacket.ErrClosed, and
// what this end sends from now on goes nowhere.
func (m *memEnd) Close() error {
	m.once.Do(func() { close(m.closed) })
	return nil
}

// dropped counts the frames this end lost arriving at a full queue
// (a link in memory truncates nothing).
func (m *memEnd) dropped() (uint64, string) {
	return m.lost.Load(), fmt.Sprintf("lost arriving at a full link queue (%d frames)", memQueueMax)
}

// memLinks are the links in memory of one process, by name, each joining
// the two ports that name it.
type memLinks struct {
	mu   sync.Mutex         // the switches of a group start at once
	ends map[string]*memEnd // the end still unclaimed
}

// claim gives the port that names link in memory name an end of it: the
// first end to the first claim, the other to the second.
func (l *memLinks) claim(name string) *memEnd {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ends == nil {
		l.ends = map[string]*memEnd{}
	}
	if e, ok := l.ends[name]; ok {
		delete(l.ends, name)
		return e
	}
	a, b := newMemLink(name)
	l.ends[name] = b
	return a
}

// pairMemLinks checks that every link in memory the switches name joins exactly
// two ports: uses[name] lists who names it ("switch s1, port 3").
func pairMemLinks(uses map[string][]string) error {
	for name, who := range uses {
		switch {
		case len(who) == 1:
			return usage("%s: -i %s%s names a link in memory no other port of this process joins (give the same name on the port at its other end)", who[0], memPrefix, name)
		case len(who) > 2:
			return usage("-i %s%s: a link in memory joins two ports, and %d name it: %s", memPrefix, name, len(who), strings.Join(who, "; "))
		}
	}
	return nil
}

// String is the link's name, for the port's summary.
func (m *memEnd) String() string { return fmt.Sprintf("%s%s", memPrefix, m.name) }
