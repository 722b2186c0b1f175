package agent

import (
	"fmt"
	"math"

	"github.com/p4rcm/p4rcm/dctcp"
	"github.com/p4rcm/p4rcm/hpcc"
	"github.com/p4rcm/p4rcm/roce"
	"github.com/p4rcm/p4rcm/timely"
)

// HPCC, TIMELY and DCTCP on the agent: each flow's sender is the
// simulator's own state machine (hpcc.Sender, timely.Sender,
// dctcp.Sender), fed by the ACKs the agent accepts, in wall-clock time;
// the flow is paced at its Rate. The state machines count bytes, the
// wire packets: an ACK of packet i acknowledges the flow's bytes below
// packet i+1's first (lsn), a NAK those below the packet it asks for.
//
//   - HPCC: data packets ask the switches for INT (roce.INTDSCP, a shim
//     after the BTH), the receiver echoes the stack it got in its ACK,
//     and the sender hands the records to hpcc.Sender in path order,
//     their 32-bit times and byte counts unwrapped into 64 bits from the
//     hop's last record. An ACK whose stack overflowed (Exceeded) is
//     taken without its telemetry, as the ns-3 simulator ignores a path
//     longer than its header holds.
//   - TIMELY: the sender notes when each packet left and takes the RTT
//     of the packet an ACK answers from its own clock, as a NIC with
//     completion timestamps does; packets sent again give no RTT (Karn),
//     nor do NAKs.
//   - DCTCP: the receiver echoes a CE mark in the BECN bit of its next
//     ACK or NAK, as LDCP's do.
//
// With Config.Window the NIC also bounds each flow's bytes in flight by
// the ns-3 simulator's window (sim.Window): the path's BDP, or with
// VariableWindow the BDP times the flow's rate over the line rate.

// scheme is which congestion control an agent runs.
type scheme uint8

const (
	schemeNone scheme = iota
	schemeDCQCN
	schemeLDCP
	schemeHPCC
	schemeTIMELY
	schemeDCTCP
)

// ackDriven reports whether s is one of the schemes ackcc.go carries.
func (s scheme) ackDriven() bool { return s == schemeHPCC || s == schemeTIMELY || s == schemeDCTCP }

// schemeOf is cfg's scheme, or an error when it sets more than one.
func schemeOf(cfg *Config) (scheme, error) {
	s, n := schemeNone, 0
	for _, c := range []struct {
		set bool
		s   scheme
	}{{cfg.DCQCN != nil, schemeDCQCN}, {cfg.LDCP != nil, schemeLDCP}, {cfg.HPCC != nil, schemeHPCC},
		{cfg.TIMELY != nil, schemeTIMELY}, {cfg.DCTCP != nil, schemeDCTCP}} {
		if c.set {
			s, n = c.s, n+1
		}
	}
	if n > 1 {
		return 0, fmt.Errorf("host %d: %d congestion controls set (Config.DCQCN, LDCP, HPCC, TIMELY, DCTCP): choose one", cfg.Host, n)
	}
	return s, nil
}

// checkAckCC checks the settings of the ACK-driven schemes and the window.
func checkAckCC(cfg *Config) error {
	if err := validate(cfg.HPCC); err != nil {
		return err
	}
	if err := validate(cfg.TIMELY); err != nil {
		return err
	}
	if err := validate(cfg.DCTCP); err != nil {
		return err
	}
	switch {
	case cfg.HPCC != nil && (cfg.BaseRTT == nil || cfg.BDP == nil):
		return fmt.Errorf("HPCC without its base RTT and BDP (Config.BaseRTT, Config.BDP)")
	case cfg.Window && cfg.BDP == nil:
		return fmt.Errorf("a window without a BDP (Config.BDP)")
	}
	return nil
}

// validate is p.Validate for a set parameter struct.
func validate[P any, PP interface {
	*P
	Validate() error
}](p PP) error {
	if p == nil {
		return nil
	}
	return p.Validate()
}

// ackFlow is a sending flow's state under HPCC, TIMELY or DCTCP.
type ackFlow struct {
	hp hpcc.Sender
	tm timely.Sender
	dc dctcp.Sender
	// bdp is the window's and HPCC's W, bytes.
	bdp float64
	// HPCC: the last record of each hop in path order, as it came and
	// unwrapped.
	hops int
	raw  [roce.MaxINTHops]roce.INTHop
	ext  [roce.MaxINTHops]hpcc.Hop
	// lastLen is the last data frame's bytes: HPCC's new rate applies to
	// the gap already scheduled after it.
	lastLen int
	// TIMELY: when each packet in flight left, by its index modulo the
	// ring's length (made at the flow's first packet, dropped when it
	// completes), and the last RTT measured, ps.
	sent []sentAt
	rtt  int64
}

// sentAt is when packet i left; at is -1 once the packet has been sent
// again (its ACK's RTT would be ambiguous).
type sentAt struct {
	i  uint64
	at int64
}

// maxSentRing bounds TIMELY's ring of send times: packets more than this
// many behind the newest give no RTT.
const maxSentRing = 4096

// newAckFlow is flow f's sender under the agent's scheme.
func (a *Agent) newAckFlow(f *sendFlow) (*ackFlow, error) {
	af := &ackFlow{}
	if a.cfg.BDP != nil {
		af.bdp = a.cfg.BDP(f.dst)
		if !(af.bdp > 0) {
			return nil, fmt.Errorf("BDP to host %d is %g bytes: want more than 0", f.dst, af.bdp)
		}
	}
	switch a.scheme {
	case schemeHPCC:
		rtt := a.cfg.BaseRTT(f.dst)
		if rtt <= 0 {
			return nil, fmt.Errorf("base RTT to host %d is %v: want more than 0", f.dst, rtt)
		}
		af.hp = hpcc.NewSender(a.cfg.HPCC, hpcc.Path{LineRate: a.cfg.LineRate, BaseRTT: rtt.Nanoseconds() * 1000, Window: af.bdp})
	case schemeTIMELY:
		af.tm = timely.NewSender(a.cfg.TIMELY, a.cfg.LineRate)
	case schemeDCTCP:
		af.dc = dctcp.NewSender(a.cfg.DCTCP, a.cfg.LineRate, a.mtu)
	}
	return af, nil
}

// ackRate is flow f's rate under its scheme, b/s.
func (a *Agent) ackRate(f *sendFlow) float64 {
	switch a.scheme {
	case schemeHPCC:
		return f.ack.hp.Rate()
	case schemeTIMELY:
		return f.ack.tm.Rate()
	}
	return f.ack.dc.Rate()
}

// windowBound reports whether flow f has its window's bytes in flight,
// as the ns-3 simulator's IsWinBound: W, or with VariableWindow W times
// the flow's rate over the line rate, a byte at least.
func (a *Agent) windowBound(f *sendFlow, now int64) bool {
	w := f.ack.bdp
	if a.cfg.VariableWindow {
		w = math.Max(1, math.Floor(w*a.rate(f, now)/a.cfg.LineRate))
	}
	return float64(f.lsn(f.next)-f.lsn(f.una)) >= w
}

// ackSent notes data packet i of flow f, n bytes on the wire, leaving at
// now (again, when again).
func (a *Agent) ackSent(f *sendFlow, i uint64, n int, now int64, again bool) {
	af := f.ack
	af.lastLen = n
	if a.scheme != schemeTIMELY {
		return
	}
	if af.sent == nil {
		size := 1
		for size < maxSentRing && uint64(size) < f.packets {
			size *= 2
		}
		af.sent = make([]sentAt, size)
	}
	e := &af.sent[i&uint64(len(af.sent)-1)]
	switch {
	case !again:
		*e = sentAt{i, now}
	case e.i == i:
		e.at = -1
	}
}

// ackFeedback hands an ACK or NAK the agent took for flow f to its
// scheme: acked is how many of the flow's packets it acknowledges (a
// NAK's: those before the one it asks for), p the frame.
func (a *Agent) ackFeedback(f *sendFlow, now int64, acked uint64, p *roce.Packet, nak bool) {
	af := f.ack
	ackSeq, sndNxt := f.lsn(acked), f.lsn(f.next)
	before := a.ackRate(f)
	switch a.scheme {
	case schemeHPCC:
		switch {
		case !p.HasINT:
			a.stats.NoINT++
		case p.INT.Exceeded:
			a.stats.INTExceeded++
		default:
			if af.hp.OnAck(ackSeq, sndNxt, af.path(&p.INT)) && af.lastLen > 0 {
				// As the ns-3 simulator's ChangeRate: the gap already
				// scheduled after the last packet takes the new rate.
				f.nextAt += wireTime(af.lastLen, af.hp.Rate()) - wireTime(af.lastLen, before)
			}
		}
	case schemeTIMELY:
		if nak || af.sent == nil || acked == 0 {
			break
		}
		i := acked - 1 // the packet whose arrival the ACK answers
		if e := af.sent[i&uint64(len(af.sent)-1)]; e.i == i && e.at >= 0 {
			af.rtt = now - e.at
			af.tm.OnAck(ackSeq, sndNxt, af.rtt)
		}
	case schemeDCTCP:
		if p.BECN {
			f.res.CNPs++
		}
		af.dc.OnAck(ackSeq, sndNxt, p.BECN)
	}
	if a.ackRate(f) < before {
		f.res.RateCuts++
	}
	// A new rate, or a window that opened, may let the flow send.
	a.kick()
}

// path is stack s's records in path order (the first switch's first),
// their times and byte counts unwrapped: each hop's new record moves its
// last by the 32-bit difference, taken as signed, so that the counters
// wrap without a jump and a record older than the last moves it back
// (HPCC then finds no time between them and skips the hop).
func (af *ackFlow) path(s *roce.INT) []hpcc.Hop {
	for j := range s.N {
		raw := s.Hops[s.N-1-j]
		e := &af.ext[j]
		if j >= af.hops {
			*e = hpcc.Hop{Time: int64(raw.TimeNs) * 1000, TxBytes: int64(raw.TxBytes)}
		} else {
			last := af.raw[j]
			e.Time += int64(int32(raw.TimeNs-last.TimeNs)) * 1000
			e.TxBytes += int64(int32(raw.TxBytes - last.TxBytes))
		}
		e.QLen, e.Rate = int64(raw.QLen), float64(raw.RateKbps)*1000
		af.raw[j] = raw
	}
	af.hops = max(af.hops, s.N)
	return af.ext[:s.N]
}

// ScaleHPCC returns HPCC settings for a NIC of rate bits per second from
// settings given at p.RefRate, by Scale's rule: with k = p.RefRate / rate
// the rates shrink by k (RAI, MinRate, RefRate) and bytes stay (the
// telemetry's units, INTMulti); eta and MIThresh are ratios and counts.
// Its times are the path's (Config.BaseRTT), which the caller stretches.
func ScaleHPCC(p hpcc.Params, rate float64) (hpcc.Params, error) {
	k, err := scaleBy(p.Name, "HPCC", p.RefRate, rate)
	if err != nil {
		return p, err
	}
	p.RAI /= k
	p.MinRate /= k
	p.RefRate = rate
	p.Name = scaledName(p.Name, rate)
	return p, p.Validate()
}

// ScaleTIMELY returns TIMELY settings for a NIC of rate bits per second
// from settings given at p.RefRate, by Scale's rule: times stretch by k =
// p.RefRate / rate (T_low, T_high, the least RTT), rates shrink by k
// (RAI, RHAI, MinRate, RefRate); alpha, beta and the rises before the
// hyper-active step stay.
func ScaleTIMELY(p timely.Params, rate float64) (timely.Params, error) {
	k, err := scaleBy(p.Name, "TIMELY", p.RefRate, rate)
	if err != nil {
		return p, err
	}
	stretch := func(t int64) int64 { return int64(float64(t) * k) }
	p.TLow, p.THigh, p.MinRTT = stretch(p.TLow), stretch(p.THigh), stretch(p.MinRTT)
	p.RAI /= k
	p.RHAI /= k
	p.MinRate /= k
	p.RefRate = rate
	p.Name = scaledName(p.Name, rate)
	return p, p.Validate()
}

// ScaleDCTCP returns DCTCP settings for a NIC of rate bits per second from
// settings given at p.RefRate, by Scale's rule: rates shrink by k =
// p.RefRate / rate (RAI, MinRate, RefRate); the marking thresholds stay in
// bytes (the switches scale them with their ports' rates over RefRate, so
// a port at the scaled rate keeps the bytes); g stays.
func ScaleDCTCP(p dctcp.Params, rate float64) (dctcp.Params, error) {
	k, err := scaleBy(p.Name, "DCTCP", p.RefRate, rate)
	if err != nil {
		return p, err
	}
	p.RAI /= k
	p.MinRate /= k
	p.RefRate = rate
	p.Name = scaledName(p.Name, rate)
	return p, p.Validate()
}

// scaleBy is Scale's k from ref to rate, or an error naming the scheme.
func scaleBy(name, scheme string, ref, rate float64) (float64, error) {
	if !(rate > 0) || !(ref > 0) {
		return 0, fmt.Errorf("scale %s %q from %g b/s to %g b/s: rates must be above 0", scheme, name, ref, rate)
	}
	return ref / rate, nil
}

// scaledName is a parameter set's name at rate.
func scaledName(name string, rate float64) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf("%s at %g Mb/s", name, rate/1e6)
}
