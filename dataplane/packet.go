// Package dataplane is the switch model shared by the simulator and the
// real-interface switch: parser view of a packet, egress queues per port and
// priority, a shared buffer with ingress accounting for PFC, RED/ECN marking
// and WRED dropping at egress, 802.1Qbb PAUSE generation and handling, and
// ECMP forwarding. It is a clock-agnostic state machine: every method takes
// the time, and whatever drives it (the discrete-event simulator or the
// netdev driver) owns time, links and timers through the Env interface.
package dataplane

import "github.com/p4rcm/p4rcm/hpcc"

// Kind is what a packet is.
type Kind uint8

const (
	// Data is a RoCEv2 data packet (UDP 4791, BTH).
	Data Kind = iota
	// Ack acknowledges data up to Seq; with CNPFlag set it also carries
	// congestion feedback (the ns-3 RDMA simulator's NP).
	Ack
	// Nack asks the sender to go back to Seq (go-back-N).
	Nack
	// CNP is a RoCEv2 congestion notification packet (BTH opcode 0x81).
	CNP
	// Pause is an 802.1Qbb PFC frame (EtherType 0x8808, opcode 0x0101).
	Pause
	// CN is an RCM congestion notification from a switch to its upstream
	// neighbour (the project's header on EtherType 0x88B5); Aux indexes its
	// body in the network's CNStore.
	CN
	// Probe is an RTT request of LDCP's rate-based variant (the NIC's
	// standalone RTT request packet); Seq carries its send time. It
	// travels in its flow's data queue, so that the RTT it measures
	// includes the queueing data sees.
	Probe
	// ProbeReply is the receiver's answer to a Probe, also data-queued,
	// carrying the probe's Seq back.
	ProbeReply
)

var kindNames = [...]string{"data", "ack", "nack", "cnp", "pause", "cn", "probe", "probe-reply"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// Control reports whether the packet travels in the strict-priority control
// queue, outside PFC and buffer admission: ACKs, NACKs and CNPs (sent with
// high priority, as the DCQCN paper recommends), PFC frames and CNs. Data
// and RTT probes are queued by priority.
func (k Kind) Control() bool { return k != Data && k < Probe }

// ECN codepoints of the IPv4 ToS byte (RFC 3168).
const (
	NotECT uint8 = 0
	ECT1   uint8 = 1
	ECT0   uint8 = 2
	CE     uint8 = 3
)

// NumPrio is the number of PFC priorities (traffic classes).
const NumPrio = 8

// Wire sizes in bytes.
const (
	// EthOverhead is preamble, start delimiter and inter-frame gap: what a
	// frame costs on the wire beyond its own bytes.
	EthOverhead = 8 + 12
	// RoCEHeaders is Ethernet (14) + IPv4 (20) + UDP (8) + BTH (12) + ICRC
	// (4) + FCS (4): the headers of a RoCEv2 data packet.
	RoCEHeaders = 14 + 20 + 8 + 12 + 4 + 4
	// AckFrame is a RoCEv2 ACK (BTH + 4-byte AETH) frame.
	AckFrame = RoCEHeaders + 4
	// CNPFrame is a RoCEv2 CNP frame (BTH + 16 reserved bytes).
	CNPFrame = RoCEHeaders + 16
	// PauseFrame is a PFC frame: the 64-byte minimum MAC control frame.
	PauseFrame = 64
)

// Packet is the switch's view of a frame. The simulator keeps packets in a
// pool; the real-interface switch fills one from each frame it parses.
type Packet struct {
	Kind Kind
	// Prio is the PFC priority (traffic class) the packet is queued in.
	Prio uint8
	// ECN is the IPv4 ECN codepoint.
	ECN uint8
	// CNPFlag marks an ACK that carries congestion feedback.
	CNPFlag bool
	// InPort is the ingress port at the switch holding the packet.
	InPort int16
	// PauseQuanta is a PFC frame's pause time for Prio in quanta of 512 bit
	// times; 0 resumes (XON).
	PauseQuanta uint16
	// Size is the frame's length on the wire, with EthOverhead.
	Size int32
	// Flow identifies the flow within its driver (the simulator's flow
	// index); -1 for none.
	Flow int32
	// Src and Dst are host identifiers (the simulator's node IDs, which
	// stand for IPv4 addresses).
	Src, Dst     int32
	SPort, DPort uint16
	// Hash is the flow's 5-tuple hash, computed once by the sender; each
	// switch mixes in its own seed for ECMP.
	Hash uint32
	// Payload is the data bytes a data packet carries.
	Payload int32
	// Aux is a CN's body: its index in the CNStore. An LDCP data packet
	// carries BTH's AckReq bit in it (AuxAckReq), an LDCP ACK the number of
	// data packets it acknowledges (n of the draft's eq. 2). A data packet
	// or ACK of a scheme with telemetry (HPCC's INT, TIMELY's timestamp)
	// carries its record in the driver's INTStore, 0 for none (INTAux).
	Aux uint32
	// Seq is the byte offset of a data packet's payload; for ACK and NACK
	// the next byte expected.
	Seq int64
	// Next and At are the driver's: a simulator threads the packets in
	// flight on a link through Next, with their arrival times in At, so
	// that a delivery touches only the packet it delivers.
	Next *Packet
	At   int64
}

// INTStore holds the telemetry records of packets, which carry them in
// Aux: the record's handle in the low INTHandleBits bits and the number of
// hops pushed above them (INTAux). A record lives apart from its packet so
// that packets of schemes without telemetry stay one cache line; the count
// travels in the packet, so that a switch's push writes the hop's line of
// the record without first reading another. Handles start at 1, so that
// Aux 0 carries none.
type INTStore struct {
	recs []INT
	free []uint32
}

// INTHandleBits is the width of a record's handle in Aux; the hop count
// has the bits above it, and saturates at MaxINTHops+1.
const INTHandleBits = 26

const intHandleMask = 1<<INTHandleBits - 1

// INTAux is the Aux of a packet carrying record handle h with n hops
// pushed.
func INTAux(h uint32, n int) uint32 { return h | uint32(n)<<INTHandleBits }

// INTHops is the number of hops pushed on the record a packet's Aux
// carries; past MaxINTHops the stack kept the first MaxINTHops and this
// tells the reader it overflowed.
func INTHops(aux uint32) int { return int(aux >> INTHandleBits) }

// Alloc returns a record with no hops and the Aux that carries it. A
// reused record keeps the old hops, which nothing reads: clearing them
// would write three cache lines per packet.
func (st *INTStore) Alloc() (uint32, *INT) {
	if n := len(st.free); n > 0 {
		h := st.free[n-1]
		st.free = st.free[:n-1]
		t := &st.recs[h-1]
		t.SentAt = 0
		return h, t
	}
	if len(st.recs) == intHandleMask {
		panic("dataplane: more INT records in flight than Aux can name")
	}
	st.recs = append(st.recs, INT{})
	return uint32(len(st.recs)), &st.recs[len(st.recs)-1]
}

// Get returns the record that Aux aux carries.
func (st *INTStore) Get(aux uint32) *INT { return &st.recs[aux&intHandleMask-1] }

// Release frees the record that Aux aux carries.
func (st *INTStore) Release(aux uint32) { st.free = append(st.free, aux&intHandleMask) }

// Push records hop h on the record that Aux aux carries and returns the
// packet's Aux with the hop counted.
func (st *INTStore) Push(aux uint32, h INTHop) uint32 {
	n := INTHops(aux)
	if n < MaxINTHops {
		st.recs[aux&intHandleMask-1].Hops[n] = h
	}
	if n > MaxINTHops {
		return aux // saturated: already past what the stack holds
	}
	return aux + 1<<INTHandleBits
}

// MaxINTHops is the most hops an INT stack records: the switches between
// two hosts of a three-tier fat tree, as HPCC's header holds.
const MaxINTHops = 5

// INT is in-band network telemetry: what each switch on a data packet's
// path wrote as the packet left it, and the sender's timestamp. How many
// hops it holds, the packet carries (INTHops).
//
// The record is three whole cache lines: the timestamp and the first hop
// in the first, two hops in each of the others. A switch's push then
// touches its hop's line, and a sender reading three hops reads two lines
// (TestINTLayout).
type INT struct {
	// SentAt is when the sender sent the packet, picoseconds: the
	// timestamp TIMELY's receiver echoes.
	SentAt int64
	_      [24]byte
	Hops   [MaxINTHops]INTHop
}

// INTHop is one switch's record, as HPCC's sender reads it: when the
// packet left the egress port (picoseconds), the bytes the port had sent
// before it (every frame, on the wire), the bytes queued at the port
// behind it, and the port's rate (bits per second). The switch writes
// HPCC's own type, so that the record reaches the sender uncopied.
type INTHop = hpcc.Hop

// AuxAckReq is the bit of a data packet's Aux that asks the receiver for an
// ACK at once (BTH's AckReq).
const AuxAckReq = 1

// ECT reports whether the packet is ECN-capable.
func (p *Packet) ECT() bool { return p.ECN != NotECT }

// FlowHash is the 5-tuple hash every sender computes once per flow:
// source and destination address, the UDP ports, protocol UDP.
func FlowHash(src, dst int32, sport, dport uint16) uint32 {
	// Addresses and ports are mixed in separate rounds so that no change of
	// one can cancel a change of another.
	h := mix64(uint64(uint32(src))<<32 | uint64(uint32(dst)))
	h = mix64(h ^ (uint64(sport)<<24 | uint64(dport)<<8 | 17))
	return uint32(h >> 32)
}

// mix64 is a 64-bit finaliser (splitmix64's): every input bit affects every
// output bit, so ECMP choices are uniform and independent across switches.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
