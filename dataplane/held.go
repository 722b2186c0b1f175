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
// order.
type heldQueue struct {
	pkts  ring
	meta  metaRing
	bytes float64
}

func (h *heldQueue) len() int { return h.pkts.len() }

func (h *heldQueue) push(p *Packet, m heldMeta) {
	h.pkts.push(p)
	h.meta.push(m)
	h.bytes += float64(m.size)
}

func (h *heldQueue) pop() (*Packet, heldMeta) {
	m := h.meta.pop()
	if h.bytes -= float64(m.size); h.pkts.len() == 1 {
		h.bytes = 0 // no float residue
	}
	return h.pkts.pop(), m
}

// headStamp is the first packet's stamp; the queue must not be empty.
func (h *heldQueue) headStamp() uint32 { return h.meta.peek().stamp }

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
	*h, *stay = *stay, *h // h's old buffers, emptied, are stay's now
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

// metaRing is a FIFO of heldMeta that grows by doubling.
type metaRing struct {
	buf  []heldMeta
	head int
	n    int
}

func (r *metaRing) push(m heldMeta) {
	if r.n == len(r.buf) {
		b := make([]heldMeta, max(8, 2*len(r.buf)))
		for i := 0; i < r.n; i++ {
			b[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
		}
		r.buf, r.head = b, 0
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = m
	r.n++
}

func (r *metaRing) pop() heldMeta {
	m := r.buf[r.head]
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return m
}

func (r *metaRing) peek() heldMeta { return r.buf[r.head] }

// at is the i-th entry from the front.
func (r *metaRing) at(i int) heldMeta { return r.buf[(r.head+i)&(len(r.buf)-1)] }
