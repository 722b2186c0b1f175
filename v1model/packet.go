package v1model

// packet is one packet's state in the pipeline: its bytes and the values
// of every header field. It is allocated once, with room for the largest
// frame, and reused: nothing in the per-packet path allocates.
type packet struct {
	f     []uint64 // field values, by slot; signed fields sign-extended
	valid []bool   // per header instance
	next  []int    // per header stack: the index the next extract fills

	buf        []byte // the frame as received, with room to grow
	n          int    // its length
	payload    int    // offset of the first byte the parser did not extract
	port       int    // ingress port
	ingressLen int    // bytes received: what counters count

	lengthReg    int      // BMv2's packet-length register: n adjusted by add/remove_header
	cloneSession int      // mirror session + 1; 0 means no clone
	cloneList    int      // field list the clone copies
	learnList    int      // learn list of a digest, 0 for none
	resubmitList int      // field list of a resubmit, 0 for none
	recircList   int      // field list of a recirculate, 0 for none
	truncate     int      // bytes kept on output; 0 for all
	exited       bool     // exit was called: the control ends
	parserError  int      // error code of the last parse
	checksumErr  bool     // a verify_checksum failed
	adata        []uint64 // the running action's parameters
	out          []byte   // deparsed frame
	key          []byte   // parser select key
	hash         []byte   // hash and checksum input
	look         [8]byte  // lookahead bytes
	// heldBy is, while the packet waits in the live mode's
	// recirculation queue, the egress port that sent it round.
	heldBy *egressPort
}

func newPacket(l *layout, maxFrame int) *packet {
	p := &packet{
		f:     make([]uint64, l.slots),
		valid: make([]bool, len(l.headers)),
		next:  make([]int, len(l.stacks)),
		buf:   make([]byte, maxFrame+headroom),
		out:   make([]byte, 0, maxFrame+headroom),
		key:   make([]byte, 64),
		hash:  make([]byte, 128),
	}
	for i, h := range l.headers {
		p.valid[i] = h.metadata
	}
	return p
}

// headroom is how much a program may grow a frame by adding headers: as
// BMv2, which allows 512 bytes.
const headroom = 512

// reset clears the packet for a new frame: every header invalid, every
// field zero, metadata valid (BMv2 resets metadata on arrival).
func (p *packet) reset(l *layout) {
	clear(p.f)
	for i, h := range l.headers {
		p.valid[i] = h.metadata
	}
	clear(p.next)
	p.n, p.payload, p.port = 0, 0, 0
	p.heldBy = nil
	p.clearRegisters()
	p.exited = false
	p.parserError, p.checksumErr = 0, false
}

// clearRegisters clears the per-packet flags primitives set.
func (p *packet) clearRegisters() {
	p.lengthReg = p.n
	p.cloneSession, p.cloneList, p.learnList = 0, 0, 0
	p.resubmitList, p.recircList, p.truncate = 0, 0, 0
}

// resetMetadata zeroes every metadata field, as BMv2's reset_metadata.
func (p *packet) resetMetadata(l *layout) {
	for _, h := range l.headers {
		if h.metadata {
			clear(p.f[h.base : h.base+len(h.typ.fields)])
		}
	}
}

// copyFrom makes p a copy of q: fields, validity and bytes.
func (p *packet) copyFrom(q *packet) {
	copy(p.f, q.f)
	copy(p.valid, q.valid)
	copy(p.next, q.next)
	p.n = copy(p.buf, q.buf[:q.n])
	p.payload, p.port = q.payload, q.port
	p.lengthReg = q.lengthReg
	p.cloneSession, p.cloneList, p.learnList = 0, 0, 0
	p.resubmitList, p.recircList = 0, 0
	p.truncate = q.truncate
	p.exited = false
	p.parserError, p.checksumErr = q.parserError, q.checksumErr
}

// copyFields copies the listed slots from q (clone and recirculate field
// lists).
func (p *packet) copyFields(q *packet, slots []int) {
	for _, s := range slots {
		p.f[s] = q.f[s]
	}
}
