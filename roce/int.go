package roce

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// In-band telemetry (INT) for HPCC, in the format rcm.p4 reads and
// writes (p4/README.md, "INT"). A data packet asks the switches for
// telemetry with bit INTDSCP of its DSCP, which leaves the class selector
// (DSCP >> 3, the PFC priority) as it is: RoCE's 26 asks as 27. Its INT
// header follows the BTH: a 4-byte shim, then a 16-byte record per
// switch that pushed one, the last switch's first. A receiver echoes the
// stack it got in its ACK (or NAK), after the AETH; the ACK does not ask
// (its DSCP bit is clear), so the switches pass it untouched.
const (
	// INTDSCP is the DSCP bit that asks for INT.
	INTDSCP = 1
	// INTVersion is the shim's version.
	INTVersion = 1
	// INTShimLen and INTHopLen are the shim's and a hop record's bytes.
	INTShimLen = 4
	INTHopLen  = 16
	// MaxINTHops is the most records a stack holds: the switches between
	// two hosts of a three-tier fat tree.
	MaxINTHops = 5
	// MaxINTLen is a full stack's bytes.
	MaxINTLen = INTShimLen + MaxINTHops*INTHopLen
)

// INTHop is one switch's record, written as the packet left its egress
// port. The counters are 32 bits wide and wrap: a reader takes
// differences between two records of the same hop.
type INTHop struct {
	// TimeNs is when the packet left: the low 32 bits of the switch's
	// clock, in nanoseconds.
	TimeNs uint32
	// TxBytes is what the port had sent before the packet, bytes on the
	// wire (every frame, with FCS, preamble and gap), modulo 2^32.
	TxBytes uint32
	// QLen is what was queued at the port behind the packet, bytes.
	QLen uint32
	// RateKbps is the port's rate as the controller set it, kb/s.
	RateKbps uint32
}

// INT is a telemetry stack: Hops[:N], the last switch's record first.
type INT struct {
	// Exceeded says a switch found no room for its record (the stack
	// full, or Remaining 0) and passed the packet without one.
	Exceeded bool
	// Remaining is how many more records the stack may take: a sender
	// sets it to MaxINTHops, each switch that pushes takes one off.
	Remaining uint8
	N         int
	Hops      [MaxINTHops]INTHop
}

// Len is the stack's bytes on the wire.
func (s *INT) Len() int { return INTShimLen + s.N*INTHopLen }

// ErrMalformedINT is returned by Parse for a frame whose INT no switch
// or host can account for: a shim of another version, more than
// MaxINTHops records, or a stack that does not fit the frame (an ACK's
// echo must fill it exactly). rcm.p4 drops such a data packet and counts
// it; the agents drop such a frame and count it.
var ErrMalformedINT = errors.New("malformed INT stack")

// putINT writes s at b (s.Len() bytes).
func putINT(b []byte, s *INT) {
	b[0] = INTVersion << 4
	if s.Exceeded {
		b[0] |= 0x08
	}
	b[1], b[2], b[3] = byte(s.N), s.Remaining, 0
	for i, h := range s.Hops[:s.N] {
		r := b[INTShimLen+i*INTHopLen:]
		binary.BigEndian.PutUint32(r[0:], h.TimeNs)
		binary.BigEndian.PutUint32(r[4:], h.TxBytes)
		binary.BigEndian.PutUint32(r[8:], h.QLen)
		binary.BigEndian.PutUint32(r[12:], h.RateKbps)
	}
}

// readINT reads a stack from b, which holds at least it; n is its length.
// exact says the stack must fill b.
func readINT(b []byte, s *INT, exact bool) (n int, err error) {
	if len(b) < INTShimLen {
		return 0, fmt.Errorf("%w: %d bytes, less than its %d-byte header", ErrMalformedINT, len(b), INTShimLen)
	}
	if v := b[0] >> 4; v != INTVersion {
		return 0, fmt.Errorf("%w: version %d, want %d", ErrMalformedINT, v, INTVersion)
	}
	hops := int(b[1])
	if hops > MaxINTHops {
		return 0, fmt.Errorf("%w: %d hops, at most %d", ErrMalformedINT, hops, MaxINTHops)
	}
	n = INTShimLen + hops*INTHopLen
	if len(b) < n || exact && len(b) != n {
		return 0, fmt.Errorf("%w: %d hops (%d bytes) in %d bytes", ErrMalformedINT, hops, n, len(b))
	}
	s.Exceeded, s.N, s.Remaining = b[0]&0x08 != 0, hops, b[2]
	for i := range s.Hops[:hops] {
		r := b[INTShimLen+i*INTHopLen:]
		s.Hops[i] = INTHop{TimeNs: binary.BigEndian.Uint32(r[0:]), TxBytes: binary.BigEndian.Uint32(r[4:]),
			QLen: binary.BigEndian.Uint32(r[8:]), RateKbps: binary.BigEndian.Uint32(r[12:])}
	}
	return n, nil
}
