// Package roce writes and reads the frames a RoCEv2 NIC exchanges, as the
// host agents put them on the wire: data (Ethernet, IPv4 with the ECN
// bits, UDP to port 4791, the InfiniBand base transport header, payload,
// ICRC), acknowledgements (BTH and AETH, with LDCP's and DCTCP's CE echo
// in the BTH's BECN bit), congestion notification packets (BTH opcode
// 0x81), the in-band telemetry HPCC's data packets gather and their ACKs
// echo (int.go), and the 802.1Qbb PAUSE frames a switch sends back.
//
// Frames are written into the caller's buffer and read into the caller's
// struct: nothing is allocated per frame.
package roce

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// UDPPort is RoCEv2's UDP destination port.
const UDPPort = 4791

// BTH opcodes the agents use (InfiniBand Architecture Specification,
// reliable connection; CNP from the RoCEv2 annex).
const (
	OpSendFirst  = 0x00
	OpSendMiddle = 0x01
	OpSendLast   = 0x02
	OpSendOnly   = 0x04
	OpAck        = 0x11
	OpCNP        = 0x81
)

// AETH syndromes: an ACK, or a NAK for a PSN sequence error (go-back-N
// from the PSN the NAK carries).
const (
	SyndromeAck    = 0x00
	SyndromeSeqNAK = 0x60
)

// ECN codepoints of the IPv4 ToS byte's low bits.
const (
	NotECT = 0
	ECT1   = 1
	ECT0   = 2
	CE     = 3
)

// Sizes of the headers, bytes.
const (
	EthLen  = 14
	IPv4Len = 20
	UDPLen  = 8
	BTHLen  = 12
	AETHLen = 4
	// CNPPad is the 16 reserved bytes after a CNP's BTH.
	CNPPad  = 16
	ICRCLen = 4
	// Overhead is the bytes of a data frame that are not payload.
	Overhead = EthLen + IPv4Len + UDPLen + BTHLen + ICRCLen
)

const (
	etherTypeIPv4   = 0x0800
	etherTypeMACCtl = 0x8808
	opcodePFC       = 0x0101
	protoUDP        = 17
	defaultPKey     = 0xffff
	// becnBit is BECN in the BTH's fifth byte, whose top bit is FECN.
	becnBit = 0x40
)

// Packet is one RoCEv2 frame's fields. Build writes them; Parse fills
// them.
type Packet struct {
	DstMAC, SrcMAC [6]byte
	SrcIP, DstIP   [4]byte
	// DSCP (6 bits) selects the PFC priority on the switches (rcm.p4 takes
	// DSCP >> 3); ECN is the ToS byte's low 2 bits.
	DSCP, ECN uint8
	TTL       uint8
	// SrcPort is the UDP source port: the flow's entropy for ECMP.
	SrcPort uint16
	Opcode  uint8
	DestQP  uint32 // 24 bits
	AckReq  bool
	// BECN is the BTH's backward explicit congestion notification bit
	// (bit 6 of its fifth byte; InfiniBand Architecture Specification
	// 1.2.1, Annex A10): a responder sets it on a packet back to the
	// requester to say a request of its reached it marked. RoCEv2 carries
	// the forward mark in IP's ECN field and answers it with CNPs, so the
	// bit is otherwise unused on RoCE; LDCP's ACKs echo CE in it (ECE).
	BECN bool
	PSN  uint32 // 24 bits
	// Syndrome and MSN are the AETH's, on OpAck.
	Syndrome uint8
	MSN      uint32 // 24 bits
	// Payload is the number of payload bytes (their content is zeros).
	Payload int
	// HasINT says the frame carries an INT stack: a data packet's after
	// its BTH (its DSCP then has the INTDSCP bit), an ACK's or NAK's echo
	// after its AETH.
	HasINT bool
	INT    INT
}

// asksINT reports whether a packet of opcode op may ask for INT: a
// switch reads a stack after the BTH of any packet whose DSCP asks, so
// ACKs (whose AETH comes there) and CNPs never do.
func asksINT(op uint8) bool { return op != OpAck && op != OpCNP }

// Len is the frame's length in bytes.
func (p *Packet) Len() int {
	n := EthLen + IPv4Len + UDPLen + BTHLen + ICRCLen
	switch p.Opcode {
	case OpAck:
		n += AETHLen
	case OpCNP:
		n += CNPPad
	default:
		n += p.Payload
	}
	if p.HasINT {
		n += p.INT.Len()
	}
	return n
}

// Build writes p into buf, which must hold p.Len() bytes, and returns the
// frame (buf's first p.Len() bytes). The IPv4 checksum is computed; the
// UDP checksum is zero, as RoCEv2 allows; the ICRC is written as zeros
// (nothing on the path checks it).
func Build(buf []byte, p *Packet) ([]byte, error) {
	n := p.Len()
	if len(buf) < n {
		return nil, fmt.Errorf("a %d-byte frame in a %d-byte buffer", n, len(buf))
	}
	if p.DestQP >= 1<<24 || p.PSN >= 1<<24 || p.MSN >= 1<<24 || p.DSCP >= 64 || p.ECN > 3 {
		return nil, fmt.Errorf("field out of range: QP %d, PSN %d, MSN %d, DSCP %d, ECN %d", p.DestQP, p.PSN, p.MSN, p.DSCP, p.ECN)
	}
	// The switches read an INT stack after the BTH of any packet whose
	// DSCP asks: a packet carries one there exactly when it asks.
	asks := p.DSCP&INTDSCP != 0
	switch {
	case asksINT(p.Opcode) && asks != p.HasINT:
		return nil, fmt.Errorf("DSCP %d with INT %v: a packet carries an INT stack after its BTH exactly when its DSCP has bit %d", p.DSCP, p.HasINT, INTDSCP)
	case !asksINT(p.Opcode) && asks:
		return nil, fmt.Errorf("DSCP %d on opcode %#x: ACKs and CNPs never ask for INT (DSCP bit %d)", p.DSCP, p.Opcode, INTDSCP)
	case p.HasINT && p.Opcode == OpCNP:
		return nil, fmt.Errorf("INT on a CNP: only data packets and ACKs carry a stack")
	case p.HasINT && (p.INT.N < 0 || p.INT.N > MaxINTHops):
		return nil, fmt.Errorf("INT of %d hops: want 0 to %d", p.INT.N, MaxINTHops)
	}
	f := buf[:n]
	clear(f)
	copy(f[0:6], p.DstMAC[:])
	copy(f[6:12], p.SrcMAC[:])
	binary.BigEndian.PutUint16(f[12:], etherTypeIPv4)

	ip := f[EthLen:]
	ip[0] = 0x45
	ip[1] = p.DSCP<<2 | p.ECN
	binary.BigEndian.PutUint16(ip[2:], uint16(n-EthLen))
	binary.BigEndian.PutUint16(ip[6:], 0x4000) // don't fragment
	ip[8] = p.TTL
	if ip[8] == 0 {
		ip[8] = 64
	}
	ip[9] = protoUDP
	copy(ip[12:16], p.SrcIP[:])
	copy(ip[16:20], p.DstIP[:])
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip[:IPv4Len]))

	udp := ip[IPv4Len:]
	binary.BigEndian.PutUint16(udp[0:], p.SrcPort)
	binary.BigEndian.PutUint16(udp[2:], UDPPort)
	binary.BigEndian.PutUint16(udp[4:], uint16(n-EthLen-IPv4Len))

	bth := udp[UDPLen:]
	bth[0] = p.Opcode
	binary.BigEndian.PutUint16(bth[2:], defaultPKey)
	binary.BigEndian.PutUint32(bth[4:], p.DestQP)
	if p.BECN {
		bth[4] |= becnBit
	}
	binary.BigEndian.PutUint32(bth[8:], p.PSN)
	if p.AckReq {
		bth[8] |= 0x80
	}
	if p.Opcode == OpAck {
		binary.BigEndian.PutUint32(bth[BTHLen:], uint32(p.Syndrome)<<24|p.MSN)
	}
	if p.HasINT {
		at := BTHLen
		if p.Opcode == OpAck {
			at += AETHLen
		}
		putINT(bth[at:], &p.INT)
	}
	return f, nil
}

// ErrNotRoCE is returned by Parse for a frame that is not RoCEv2 (another
// EtherType, protocol or UDP port).
var ErrNotRoCE = errors.New("not a RoCEv2 frame")

// Parse reads a RoCEv2 frame into p. A frame that is not RoCEv2 gives
// ErrNotRoCE; one whose INT stack is malformed, ErrMalformedINT (wrapped);
// one that is cut short or inconsistent otherwise, another error saying
// what is wrong.
func Parse(f []byte, p *Packet) error {
	if len(f) < EthLen || binary.BigEndian.Uint16(f[12:]) != etherTypeIPv4 {
		return ErrNotRoCE
	}
	ip := f[EthLen:]
	if len(ip) < IPv4Len || ip[0]>>4 != 4 || ip[9] != protoUDP {
		return ErrNotRoCE
	}
	ihl := int(ip[0]&0x0f) * 4
	if ihl < IPv4Len || len(ip) < ihl+UDPLen {
		return ErrNotRoCE
	}
	udp := ip[ihl:]
	if binary.BigEndian.Uint16(udp[2:]) != UDPPort {
		return ErrNotRoCE
	}
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if total > len(ip) || total < ihl+UDPLen+BTHLen+ICRCLen {
		return fmt.Errorf("IPv4 total length %d in a %d-byte packet", total, len(ip))
	}
	copy(p.DstMAC[:], f[0:6])
	copy(p.SrcMAC[:], f[6:12])
	copy(p.SrcIP[:], ip[12:16])
	copy(p.DstIP[:], ip[16:20])
	p.DSCP, p.ECN, p.TTL = ip[1]>>2, ip[1]&3, ip[8]
	p.SrcPort = binary.BigEndian.Uint16(udp[0:])
	bth := udp[UDPLen:]
	p.Opcode = bth[0]
	p.DestQP = binary.BigEndian.Uint32(bth[4:]) & 0xffffff
	p.BECN = bth[4]&becnBit != 0
	p.AckReq = bth[8]&0x80 != 0
	p.PSN = binary.BigEndian.Uint32(bth[8:]) & 0xffffff
	p.Syndrome, p.MSN, p.Payload, p.HasINT = 0, 0, 0, false
	rest := total - ihl - UDPLen - BTHLen - ICRCLen
	after := bth[BTHLen : BTHLen+rest]
	if !asksINT(p.Opcode) && p.DSCP&INTDSCP != 0 {
		// A switch took its AETH or padding for a stack, and dropped it.
		return fmt.Errorf("%w: DSCP %d asks for INT on opcode %#x", ErrMalformedINT, p.DSCP, p.Opcode)
	}
	switch p.Opcode {
	case OpAck:
		if rest < AETHLen {
			return fmt.Errorf("ACK without its AETH (%d bytes after the BTH)", rest)
		}
		aeth := binary.BigEndian.Uint32(after)
		p.Syndrome, p.MSN = uint8(aeth>>24), aeth&0xffffff
		if rest > AETHLen {
			// An echo: exactly a stack, nothing after it.
			if _, err := readINT(after[AETHLen:], &p.INT, true); err != nil {
				return fmt.Errorf("ACK's echo: %w", err)
			}
			p.HasINT = true
		}
	case OpCNP:
	default:
		if p.DSCP&INTDSCP != 0 {
			n, err := readINT(after, &p.INT, false)
			if err != nil {
				return fmt.Errorf("data packet's INT: %w", err)
			}
			p.HasINT = true
			rest -= n
		}
		p.Payload = rest
	}
	return nil
}

// Pause is an 802.1Qbb priority flow control frame: for each priority
// whose bit is set in Enable, Quanta[prio] units of 512 bit times to hold
// it (0: resume now).
type Pause struct {
	Enable uint8
	Quanta [8]uint16
}

// ParsePause reads f as a PFC frame; ok is false if it is not one.
func ParsePause(f []byte) (p Pause, ok bool) {
	if len(f) < EthLen+2+2+16 || binary.BigEndian.Uint16(f[12:]) != etherTypeMACCtl ||
		binary.BigEndian.Uint16(f[14:]) != opcodePFC {
		return Pause{}, false
	}
	p.Enable = f[17] // the class-enable vector's low byte; the high byte is reserved
	for i := range p.Quanta {
		p.Quanta[i] = binary.BigEndian.Uint16(f[18+2*i:])
	}
	return p, true
}

func ipChecksum(h []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(h); i += 2 {
		s += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}
