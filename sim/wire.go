package sim

import (
	"fmt"
	"math"

	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/sim/topo"
)

// Wire says how frames are sized on the links, and so what a flow's
// ideal FCT counts.
type Wire uint8

const (
	// WireEthernet sizes frames as RoCEv2 over Ethernet: a data frame is
	// its payload and 62 bytes of Ethernet, IPv4, UDP, BTH, ICRC and FCS,
	// an ACK 66 bytes, a CNP 78, each with 20 bytes of preamble and gap on
	// the link.
	WireEthernet Wire = iota
	// WireNS3 sizes them as the ns-3 RDMA simulator does: a data packet is
	// its payload and 36 bytes (PPP, IPv4, UDP and its sequence header),
	// an ACK 48 bytes (padded to a minimum frame), with nothing between
	// frames; HPCC's and TIMELY's telemetry comes on top in both. Its
	// ideal FCT is that simulator's standalone FCT.
	WireNS3
)

// WireNames are the names scenarios give the wires.
var WireNames = []string{"ethernet", "ns3"}

func (w Wire) String() string {
	if int(w) < len(WireNames) {
		return WireNames[w]
	}
	return fmt.Sprintf("wire(%d)", uint8(w))
}

// The ns-3 simulator's sizes, bytes.
const (
	ns3DataHeaders = 2 + 20 + 8 + 6 // PPP, IPv4, UDP, SeqTsHeader without INT
	ns3AckHeaders  = 2 + 20 + 12    // PPP, IPv4, qbbHeader without INT
	ns3AckPadded   = 2 + 20 + 26    // an ACK padded to 60 bytes of Ethernet frame less 14
	// ns3IdealHeaders is what its fct.txt's standalone FCT counts per
	// packet: 14 + 20 + 8 + 6, an Ethernet header where the packets have
	// PPP's.
	ns3IdealHeaders = 14 + 20 + 8 + 6
)

// dataOverhead is a data frame's bytes beyond its payload on the wire,
// telemetry excluded.
func (w Wire) dataOverhead() int32 {
	if w == WireNS3 {
		return ns3DataHeaders
	}
	return dataplane.RoCEHeaders + dataplane.EthOverhead
}

// ackSize is an ACK's or NACK's bytes on the wire carrying extra bytes of
// telemetry.
func (w Wire) ackSize(extra int32) int32 {
	if w == WireNS3 {
		return max(ns3AckPadded, ns3AckHeaders+extra)
	}
	return dataplane.AckFrame + dataplane.EthOverhead + extra
}

// IdealFCT is a flow's completion time alone in the network: the base
// RTT (propagation both ways plus one full frame's serialisation at every
// hop, as the ns-3 simulator counts it) plus the flow's bytes on the wire
// over the path's bottleneck, for packets of mtu bytes of payload, on an
// Ethernet wire.
func IdealFCT(routes *topo.Routes, src, dst int, size int64, mtu int) int64 {
	return WireEthernet.IdealFCT(routes, src, dst, size, mtu)
}

// IdealFCT is a flow's completion time alone in the network on this wire.
// On Ethernet: the base RTT (propagation both ways plus one full frame's
// serialisation at every hop) plus the flow's bytes on the wire over the
// path's bottleneck. On ns-3's: its standalone FCT, the base RTT with one
// payload serialised at every hop plus the flow with 48 bytes per packet
// over the bottleneck, in whole nanoseconds.
func (w Wire) IdealFCT(routes *topo.Routes, src, dst int, size int64, mtu int) int64 {
	pi := routes.PathInfo(src, dst)
	packets := (size + int64(mtu) - 1) / int64(mtu)
	if w == WireNS3 {
		base := 2 * pi.Delay / 1000 // ns
		for _, rate := range pi.Rates {
			base += int64(float64(mtu) * 8e9 / rate)
		}
		wire := size + packets*ns3IdealHeaders
		return (base + int64(float64(wire)*8e9/pi.MinRate)) * 1000
	}
	frame := int32(mtu) + w.dataOverhead()
	base := 2 * pi.Delay
	for _, rate := range pi.Rates {
		base += serTime(frame, rate)
	}
	wire := float64(size) + float64(packets)*float64(w.dataOverhead())
	return base + int64(math.Ceil(wire*8e12/pi.MinRate))
}
