package sim

import (
	"math"
	"unsafe"

	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/dctcp"
	"github.com/p4rcm/p4rcm/hpcc"
	"github.com/p4rcm/p4rcm/timely"
)

// The hosts' side of the schemes whose feedback rides on ACKs, as the
// ns-3 RDMA simulator runs them (packages hpcc, timely and dctcp decide;
// this file carries): HPCC's data packets ask the switches for telemetry
// and its ACKs bring it back, TIMELY's carry their send time back,
// DCTCP's ACKs echo CE marks. The ns-3 simulator's sending window
// (Config.Window) is here too, since HPCC and DCTCP run with it.

// ackScheme is which of these schemes the hosts run.
type ackScheme uint8

const (
	ackOff ackScheme = iota
	ackHPCC
	ackTIMELY
	ackDCTCP
)

// Telemetry bytes on the wire, on every data packet and ACK, as the ns-3
// simulator's fixed-size headers count them: HPCC's five 8-byte hops and
// a 2-byte hop count, TIMELY's 8-byte timestamp.
const (
	hpccINTBytes   = dataplane.MaxINTHops*8 + 2
	timelyTSBytes  = 8
	maxWindowFloor = 1 // the ns-3 simulator's least variable window, bytes
)

// ackState is the state of every flow for these schemes, by flow ID; only
// the slice of the scheme in use is made.
type ackState struct {
	scheme ackScheme
	// extra is the telemetry's bytes on each data packet and ACK.
	extra  int32
	hpcc   []hpccSender
	timely []timelySender
	dctcp  []dctcpSender
	// The window: base is W (bytes) of the fabric's longest path, or per
	// flow (perFlow) with Config.Window.PerPath.
	window  bool
	base    float64
	perFlow []float64
}

// Per-flow state padded to whole cache lines: a flow's sender and
// receiver may be run by different threads.
type (
	hpccSender struct {
		hpcc.Sender
		_ [(cacheLine - unsafe.Sizeof(hpcc.Sender{})%cacheLine) % cacheLine]byte
	}
	timelySender struct {
		timely.Sender
		_ [(cacheLine - unsafe.Sizeof(timely.Sender{})%cacheLine) % cacheLine]byte
	}
	dctcpSender struct {
		dctcp.Sender
		_ [(cacheLine - unsafe.Sizeof(dctcp.Sender{})%cacheLine) % cacheLine]byte
	}
)

// pathRTT is the ns-3 simulator's base RTT of a path and its BDP:
// propagation both ways plus one payload serialised at every hop, and
// that RTT at the path's slowest link, in whole bytes.
func (n *Network) pathRTT(src, dst int) (rtt int64, bdp float64) {
	pi := n.routes.PathInfo(src, dst)
	rtt = 2 * pi.Delay
	for _, r := range pi.Rates {
		rtt += serTime(int32(n.cfg.MTU), r)
	}
	return rtt, math.Floor(float64(rtt) * pi.MinRate / 8e12)
}

// longestPath is the largest base RTT and the largest BDP over every pair
// of hosts, as the ns-3 simulator's GLOBAL_T takes them. Hosts that share
// an edge switch, a link rate and a link delay have the same paths to
// everyone else and to each other, so two of each such class stand for
// the rest: one for the paths to other classes, the pair for the path
// within it (a star's only class has no other).
func (n *Network) longestPath() (rtt int64, bdp float64) {
	type class struct {
		edge  int
		rate  float64
		delay int64
	}
	seen := map[class]int{}
	var reps []int
	for _, h := range n.topo.Hosts() {
		at, _ := n.routes.HostPort(h)
		p := &n.ports[h][0]
		c := class{at.Node, p.rate, p.delay}
		if seen[c] < 2 {
			seen[c]++
			reps = append(reps, h)
		}
	}
	for _, a := range reps {
		for _, b := range reps {
			if a == b {
				continue
			}
			r, w := n.pathRTT(a, b)
			rtt, bdp = max(rtt, r), max(bdp, w)
		}
	}
	return rtt, bdp
}

// initAckCC makes each flow's sender for HPCC, TIMELY or DCTCP, and the
// window, for whichever scheme runs.
func (n *Network) initAckCC() {
	a := &n.ack
	switch n.cfg.CC {
	case "hpcc":
		a.scheme, a.extra = ackHPCC, hpccINTBytes
		a.hpcc = make([]hpccSender, len(n.flows))
	case "timely":
		a.scheme, a.extra = ackTIMELY, timelyTSBytes
		a.timely = make([]timelySender, len(n.flows))
	case "dctcp":
		a.scheme = ackDCTCP
		a.dctcp = make([]dctcpSender, len(n.flows))
	}
	if a.extra > 0 {
		for _, pt := range n.parts {
			pt.pool.ints = &pt.ints
		}
	}
	w := n.cfg.Window
	a.window = w.Enabled
	// The window and HPCC's T and W come from the longest path or each
	// flow's own.
	paths := w.Enabled || a.scheme == ackHPCC
	var rtt int64
	if paths && !w.PerPath {
		rtt, a.base = n.longestPath()
	}
	if paths && w.PerPath {
		a.perFlow = make([]float64, len(n.flows))
	}
	for i := range n.flows {
		f := &n.flows[i]
		r, bdp := rtt, a.base
		if a.perFlow != nil {
			r, bdp = n.pathRTT(f.src.id, f.dst.id)
			a.perFlow[i] = bdp
		}
		switch a.scheme {
		case ackHPCC:
			a.hpcc[i].Sender = hpcc.NewSender(&n.cfg.HPCC, hpcc.Path{LineRate: f.src.lineRate, BaseRTT: r, Window: bdp})
		case ackTIMELY:
			a.timely[i].Sender = timely.NewSender(&n.cfg.TIMELY, f.src.lineRate)
		case ackDCTCP:
			a.dctcp[i].Sender = dctcp.NewSender(&n.cfg.DCTCP, f.src.lineRate, n.cfg.MTU)
		}
	}
}

// ackRate is flow id's rate under the scheme, bits/s.
func (n *Network) ackRate(id int32) float64 {
	switch n.ack.scheme {
	case ackHPCC:
		return n.ack.hpcc[id].Rate()
	case ackTIMELY:
		return n.ack.timely[id].Rate()
	default:
		return n.ack.dctcp[id].Rate()
	}
}

// windowBound reports whether flow f has its window's worth of bytes
// unacknowledged: W, or with Variable W times the flow's rate over its
// line rate (at least a byte), as the ns-3 simulator's IsWinBound.
func (h *host) windowBound(f *flow) bool {
	a := &h.net.ack
	w := a.base
	if a.perFlow != nil {
		w = a.perFlow[f.id]
	}
	if h.net.cfg.Window.Variable {
		w = max(maxWindowFloor, math.Floor(w*h.rate(f)/h.lineRate))
	}
	return float64(f.sndNxt-f.sndUna) >= w
}

// rate is flow f's current rate, bits/s, whatever the scheme.
func (h *host) rate(f *flow) float64 {
	n := h.net
	switch {
	case n.ack.scheme != ackOff:
		return n.ackRate(f.id)
	case n.cc:
		return f.rp.Rate(h.part.q.Now())
	case n.ldcp.mode == ldcpRate:
		return n.ldcp.rate[f.id].Rate()
	}
	return h.lineRate
}

// ackStamp readies data packet p of flow f for its scheme: HPCC's packet
// asks the switches for telemetry, TIMELY's carries its send time.
func (h *host) ackStamp(now int64, p *dataplane.Packet) {
	a := &h.net.ack
	if a.scheme != ackHPCC && a.scheme != ackTIMELY {
		return
	}
	p.Size += a.extra
	var rec *dataplane.INT
	p.Aux, rec = h.part.ints.Alloc()
	rec.SentAt = now
}

// ackFeedback takes an ACK or NACK of flow f at its sender: the scheme
// decides the rate, and HPCC's new rate applies to the gap already
// scheduled after the last packet, as the ns-3 simulator's ChangeRate
// does.
func (h *host) ackFeedback(now int64, f *flow, p *dataplane.Packet) {
	a := &h.net.ack
	switch a.scheme {
	case ackHPCC:
		if p.Aux == 0 {
			return
		}
		n := dataplane.INTHops(p.Aux)
		if n > hpcc.MaxHops {
			return // a longer path than the header holds, as ns-3 ignores
		}
		s := &a.hpcc[f.id]
		old := s.Rate()
		if s.OnAck(p.Seq, f.sndNxt, h.part.ints.Get(p.Aux).Hops[:n]) && f.lastSize > 0 {
			f.nextAvail += serTime(f.lastSize, s.Rate()) - serTime(f.lastSize, old)
		}
	case ackTIMELY:
		if p.Aux != 0 {
			a.timely[f.id].OnAck(p.Seq, f.sndNxt, now-h.part.ints.Get(p.Aux).SentAt)
		}
	case ackDCTCP:
		a.dctcp[f.id].OnAck(p.Seq, f.sndNxt, p.CNPFlag)
	}
}
