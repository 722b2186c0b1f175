package dataplane

// ring is a FIFO of packets that grows by doubling and never shrinks, so a
// queue in steady state does not allocate. Its head and count are 32 bits
// so that it takes 32 bytes: a port's control ring then shares the port's
// first cache line with the rest of what every packet reads (port), and an
// egress queue with its counters fits one line. A queue of 2^32 packets
// would need hundreds of gigabytes of buffer.
type ring struct {
	buf  []*Packet
	head uint32
	n    uint32
}

func (r *ring) len() int { return int(r.n) }

func (r *ring) push(p *Packet) {
	if int(r.n) == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&uint32(len(r.buf)-1)] = p
	r.n++
}

func (r *ring) pop() *Packet {
	p := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) & uint32(len(r.buf)-1)
	r.n--
	return p
}

func (r *ring) grow() {
	size := max(8, 2*len(r.buf))
	buf := make([]*Packet, size)
	for i := uint32(0); i < r.n; i++ {
		buf[i] = r.buf[(r.head+i)&uint32(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}
