package dataplane

// ring is a FIFO of packets that grows by doubling and never shrinks, so a
// queue in steady state does not allocate.
type ring struct {
	buf  []*Packet
	head int
	n    int
}

func (r *ring) len() int { return r.n }

func (r *ring) push(p *Packet) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = p
	r.n++
}

func (r *ring) pop() *Packet {
	p := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return p
}

func (r *ring) grow() {
	size := max(8, 2*len(r.buf))
	buf := make([]*Packet, size)
	for i := 0; i < r.n; i++ {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}
