package dataplane

import "github.com/p4rcm/p4rcm/rcm"

// heldMeta is what RCC reads about a held packet. It is kept beside the
// packet's pointer so that the scheduler and releases need not touch the
// packets themselves, which by then are mostly out of the CPU's cache.
type heldMeta struct {
	// stamp is the count of packets the port's queue must have sent
	// before this one may go: the packets queued ahead of it when it was
	// held (see rcmPort.deq).
	stamp uint32
	flow  rcm.FlowID
	size  int32
}

// heldQueue is one priority's packets held by RCC on a port, in arrival
// order: a FIFO of held entries that grows by doubling.
type heldQueue struct {
	buf   []heldEntry
	head  int
	n     int
	bytes float64
}

// heldEntry is a held packet with what RCC reads about it, side by side, so
// that a push or a pop touches one place.
type heldEntry struct {
	p *Packet
	heldMeta
}

func (h *heldQueue) len() int { return h.n }

func (h *heldQueue) push(p *Packet, m heldMeta) {
	if h.n == len(h.buf) {
		b := make([]heldEntry, max(8, 2*len(h.buf)))
		for i := 0; i < h.n; i++ {
			b[i] = h.buf[(h.head+i)&(len(h.buf)-1)]
		}
		h.buf, h.head = b, 0
	}
	h.buf[(h.head+h.n)&(len(h.buf)-1)] = heldEntry{p, m}
	h.n++
	h.bytes += float64(m.size)
}

func (h *heldQueue) pop() (*Packet, heldMeta) {
	e := &h.buf[h.head]
	p, m := e.p, e.heldMeta
	e.p = nil
	h.head = (h.head + 1) & (len(h.buf) - 1)
	if h.n--; h.n == 0 {
		h.bytes = 0 // no float residue
	} else {
		h.bytes -= float64(m.size)
	}
	return p, m
}

// headStamp is the first packet's stamp; the queue must not be empty.
func (h *heldQueue) headStamp() uint32 { return h.buf[h.head].stamp }

// at is the i-th entry's meta from the front.
func (h *heldQueue) at(i int) heldMeta { return h.buf[(h.head+i)&(len(h.buf)-1)].heldMeta }

// split moves the packets whose flow keep rejects into rel (empty), both
// in arrival order. The stamps of the packets that stay count the moved
// ones that were held before them, which the caller puts back into the
// port's queue ahead of them.
func (h *heldQueue) split(keep func(rcm.FlowID) bool, stay, rel *heldQueue) {
	moved := uint32(0)
	for h.len() > 0 {
		p, m := h.pop()
		if keep(m.flow) {
			m.stamp += moved
			stay.push(p, m)
		} else {
			rel.push(p, m)
			moved++
		}
	}
	*h, *stay = *stay, *h // h's old buffer, emptied, is stay's now
}

// mergeInto puts the packets of h into the queue n, whose first packet is
// the deq-th the queue sends, each after the packets that were queued
// before it; h is left empty. scratch is an empty ring whose buffer is
// reused, and gets n's old one.
func (h *heldQueue) mergeInto(n, scratch *ring, deq uint32) {
	for idx := deq; n.len() > 0; idx++ {
		for h.len() > 0 && int32(idx-h.headStamp()) >= 0 {
			p, _ := h.pop()
			scratch.push(p)
		}
		scratch.push(n.pop())
	}
	for h.len() > 0 {
		p, _ := h.pop()
		scratch.push(p)
	}
	*n, *scratch = *scratch, *n
}
