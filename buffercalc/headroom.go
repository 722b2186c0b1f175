package buffercalc

import (
	"fmt"
	"strconv"
)

// Frame sizes on the wire, bytes.
const (
	// frameOverhead is what an MTU-sized IP packet carries on the wire besides
	// itself: Ethernet header 14, 802.1Q tag 4 (it holds the PFC priority),
	// FCS 4, preamble and start delimiter 8, minimum inter-frame gap 12.
	frameOverhead = 14 + 4 + 4 + 8 + 12
	// pauseWireBytes is a PFC frame (a minimum-size 64 B MAC control frame)
	// with its preamble and inter-frame gap.
	pauseWireBytes = 64 + 8 + 12
	// QuantumBits is one PAUSE quantum: 512 bit times (IEEE 802.3 clause 31B).
	QuantumBits = 512
)

// phyFigures are the per-rate worst-case delays of the standards, in bit
// times of the link.
type phyFigures struct {
	rate float64 // b/s
	// responseQuanta bounds how long a MAC may take to stop sending once a
	// PAUSE has arrived (IEEE 802.3 annex 31B, PAUSE reaction timing).
	responseQuanta float64
	// interfaceBits bounds the delay through one end's PHY and MAC
	// (transmit or receive path), as tabulated for PFC headroom sizing in
	// the 802.1Qbb delay model.
	interfaceBits float64
}

// phyTable is ordered by rate. The 400 Gb/s interface delay has no published
// figure that we know of; it is the 100 GbE delay in time (1.2288 us) turned
// into 400 Gb/s bit times.
var phyTable = []phyFigures{
	{rate: 10e9, responseQuanta: 60, interfaceBits: 8192},
	{rate: 25e9, responseQuanta: 80, interfaceBits: 6144},
	{rate: 40e9, responseQuanta: 118, interfaceBits: 24576},
	{rate: 100e9, responseQuanta: 394, interfaceBits: 122880},
	{rate: 400e9, responseQuanta: 905, interfaceBits: 491520},
}

// figuresFor picks the standard figures for a rate. A rate between tabulated
// ones takes the next faster rate's bit-time figures, which is conservative:
// the standards' bit-time allowances grow with the rate. Above the table the
// fastest row's delays are kept in time and converted to bit times.
func figuresFor(rate float64) (phyFigures, string) {
	for _, f := range phyTable {
		if rate == f.rate {
			return f, FormatRate(f.rate) + " figures"
		}
		if rate < f.rate {
			return f, FormatRate(f.rate) + " figures (next faster standard rate)"
		}
	}
	last := phyTable[len(phyTable)-1]
	scale := rate / last.rate
	return phyFigures{
		rate:           rate,
		responseQuanta: last.responseQuanta * scale,
		interfaceBits:  last.interfaceBits * scale,
	}, FormatRate(last.rate) + " delays in time, scaled to this rate"
}

// DefaultNsPerMeter is the propagation delay of the cable: light in fibre
// or twin-ax copper travels at about two thirds of c, 5 ns per metre.
const DefaultNsPerMeter = 5.0

// DefaultCableMeters is the cable length assumed when none is given: a
// 100 m run, the longest the usual datacenter optics and PFC guidelines plan
// for inside a building.
const DefaultCableMeters = 100.0

// Link is what PFC headroom depends on: one port, the cable behind it and
// the peer at its far end.
type Link struct {
	Rate           float64 // b/s
	MTU            float64 // bytes, the largest IP packet of any priority
	CableMeters    float64 // one way
	NsPerMeter     float64 // propagation delay
	InterfaceBits  float64 // delay through one end's PHY and MAC, bit times
	ResponseQuanta float64 // the peer's PAUSE reaction time, in quanta
	// FiguresFrom says where InterfaceBits and ResponseQuanta came from.
	FiguresFrom string
}

// StandardLink is a link at the given rate and MTU with the standards'
// worst-case delays and a DefaultCableMeters cable.
func StandardLink(rate, mtu float64) Link {
	f, from := figuresFor(rate)
	return Link{
		Rate:           rate,
		MTU:            mtu,
		CableMeters:    DefaultCableMeters,
		NsPerMeter:     DefaultNsPerMeter,
		InterfaceBits:  f.interfaceBits,
		ResponseQuanta: f.responseQuanta,
		FiguresFrom:    from,
	}
}

// MinMTU and MaxMTU bound Link.MTU, the largest IP packet: IPv4's
// smallest MTU, and the largest jumbo frame datacenter switches take.
const (
	MinMTU = 68
	MaxMTU = 9216
)

// Validate checks every field, naming the first bad one.
func (l Link) Validate() error {
	switch {
	case l.Rate <= 0:
		return fieldErr("rate", "must be greater than zero, got %g b/s", l.Rate)
	case l.MTU < MinMTU || l.MTU > MaxMTU:
		return fieldErr("mtu", "must be %g to %g B (IPv4's smallest packet to the largest jumbo frame switches take), got %s", float64(MinMTU), float64(MaxMTU), FormatSize(l.MTU))
	case l.CableMeters < 0:
		return fieldErr("cable", "must not be negative, got %g m", l.CableMeters)
	case l.NsPerMeter <= 0:
		return fieldErr("ns-per-meter", "must be greater than zero, got %g", l.NsPerMeter)
	case l.InterfaceBits < 0:
		return fieldErr("interface-bits", "must not be negative, got %g", l.InterfaceBits)
	case l.ResponseQuanta < 0:
		return fieldErr("response-quanta", "must not be negative, got %g", l.ResponseQuanta)
	}
	return nil
}

// Term is one contribution to the headroom.
type Term struct {
	Name  string  `json:"name"`
	Basis string  `json:"basis"` // how the figure was obtained
	Bytes float64 `json:"bytes"`
}

// Headroom is t_flight, the buffer a port must hold back per lossless
// priority for what arrives between deciding to send a PAUSE and the peer
// falling silent, itemised.
type Headroom struct {
	Terms []Term  `json:"terms"`
	Total float64 `json:"total_bytes"`
}

// bytesPerNs is how many bytes the link carries in a nanosecond.
func (l Link) bytesPerNs() float64 { return l.Rate / 8 / 1e9 }

// Headroom computes the worst case after the 802.1Qbb delay model and the
// Cisco PFC guidelines the DCQCN paper follows: the PAUSE waits for the frame
// this port has begun to send, is itself serialised, crosses the cable and
// both ends' interfaces, the peer takes its allowed response time to react
// and then finishes the frame it had begun; meanwhile the cable keeps
// delivering what the peer sent before it stopped.
func (l Link) Headroom() (Headroom, error) {
	if err := l.Validate(); err != nil {
		return Headroom{}, err
	}
	frame := l.MTU + frameOverhead
	g := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	terms := []Term{
		{"frame in transmission at this port", "MTU " + g(l.MTU) + " B + 42 B header, tag, FCS, preamble and gap: a PAUSE cannot preempt it", frame},
		{"PAUSE frame", "64 B + 20 B preamble and gap", pauseWireBytes},
		{"cable, both ways", fmt.Sprintf("2 x %s m x %s ns/m at %s", g(l.CableMeters), g(l.NsPerMeter), FormatRate(l.Rate)), 2 * l.CableMeters * l.NsPerMeter * l.bytesPerNs()},
		{"interfaces, both ends", fmt.Sprintf("2 x %s bit times (%s)", g(l.InterfaceBits), l.FiguresFrom), 2 * l.InterfaceBits / 8},
		{"peer response time", fmt.Sprintf("%s quanta x 512 bit times (%s)", g(l.ResponseQuanta), l.FiguresFrom), l.ResponseQuanta * QuantumBits / 8},
		{"frame in transmission at the peer", "the peer finishes the frame it has begun", frame},
	}
	var total float64
	for _, t := range terms {
		total += t.Bytes
	}
	return Headroom{Terms: terms, Total: total}, nil
}

// CableFor is the inverse of Headroom: the longest cable for which this link
// needs no more than the given headroom. ok is false when even a cable of
// zero length needs more.
func (l Link) CableFor(headroom float64) (meters float64, ok bool) {
	zero := l
	zero.CableMeters = 0
	h, err := zero.Headroom()
	if err != nil || h.Total > headroom {
		return 0, false
	}
	return (headroom - h.Total) / (2 * l.NsPerMeter * l.bytesPerNs()), true
}
