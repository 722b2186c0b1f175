package ldcp

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Params are the LDCP settings of one NIC: the window law of the stable
// stage (PAWA), the sub-packet window, fast start, the receiver's ACK
// policy, the rate-based variant's RTT probes, and the WRED/ECN settings
// the switches should apply for them. Times are picoseconds, sizes bytes,
// windows packets. The draft gives eta and the range of alpha, beta and
// gamma; the other values of the presets are this package's choices, each
// with its reason beside it.
type Params struct {
	Name string

	// Alpha is the additive increase of eq. (1): every unmarked ACK adds
	// Alpha/cw, so a window of unmarked ACKs adds Alpha packets per RTT.
	// The draft asks 0 < Alpha <= 1.
	Alpha float64
	// Beta is the decrease of eq. (1): every marked ACK takes Beta packets
	// off the window, so a fully marked round takes Beta*cw. The draft
	// asks 0 < Beta <= 1.
	Beta float64
	// Gamma is both the increase per unmarked ACK and the smallest window
	// when cw < 1 (the sub-packet mode); the draft names 1/4, 1/8 and
	// 1/16 as typical. It must be below 1.
	Gamma float64
	// Eta is the multiplicative decrease per marked ACK when cw < 1; the
	// draft chooses 1/2. It must be in (0, 1).
	Eta float64
	// MaxWindow caps the window, in BDPs of the sender's path. Without a
	// cap an application-limited flow's window grows by Alpha every RTT
	// for ever. +Inf removes the cap. It must be at least IW.
	MaxWindow float64

	// IW is the initial window of fast start, in BDPs of the sender's
	// path (the draft: one BDP). Zero turns fast start off: the flow then
	// starts in the stable stage with a window of one packet.
	IW float64

	// AckEvery is m, the most in-order data packets one ACK covers; 1 is
	// the per-packet ACK the draft prefers. A CE-marked packet, a packet
	// asking for an ACK, and a gap are acknowledged at once whatever m.
	AckEvery int

	// ProbeTimeout, in the rate-based variant, is how long a sender waits
	// for an RTT probe's response before it sends the next probe without
	// an increase.
	ProbeTimeout int64
	// CNPInterval, in the rate-based variant, is the receiving NIC's
	// least time between two CNPs of one flow (its notification point's
	// pacing); 0 sends one CNP per CE-marked packet. The sender cuts Beta
	// per CNP, so the interval bounds how fast a flow can be slowed.
	CNPInterval int64

	// The switch side (section 2.1 and eq. 3), in bytes of queue at
	// RefRate; switches scale them with their link rate. ECN-capable
	// packets are marked with probability 0 below KMin, rising linearly to
	// PMax at KMax, and 1 from KMax; packets that are not ECN-capable (the
	// first RTT's) are dropped from a queue of K bytes or more; anything
	// is dropped above BufMax.
	KMin, KMax float64
	PMax       float64
	K          float64
	BufMax     float64
	RefRate    float64
}

const (
	us = int64(1e6) // picoseconds
	kb = 1000.0
)

// Draft is the parameter set of the draft with this package's choices
// where the draft gives no value, at 100 Gb/s with 1 KB packets:
//
//   - Alpha 1: one packet per RTT of additive increase, as TCP and DCTCP.
//   - Beta 1/2: a round in which every packet is marked halves the window,
//     the deepest cut per RTT TCP makes; rounds with fewer marks cut less.
//   - Gamma 1/16: the smallest of the draft's typical values, so that an
//     incast of up to 16 times the path's BDP in senders still fits.
//   - Eta 1/2: the draft's.
//   - MaxWindow 2 BDPs: the path's BDP comes from a base RTT that may be
//     shorter than this flow's, so the cap leaves room for a longer path
//     while bounding the window of an application-limited flow.
//   - IW 1 BDP: the draft's.
//   - AckEvery 1: per-packet ACKs, the draft's preference.
//   - ProbeTimeout 100 us: ten base RTTs of a three-tier fabric, and more
//     than a probe queued behind a full BufMax in both directions.
//   - CNPInterval 0: one CNP per marked packet, so that the rate variant's
//     cuts keep pace with the marks as the window sender's ECE ACKs do;
//     with ConnectX's pacing of 4 us the simulator's queues sit at BufMax
//     (docs/ldcp.md).
//   - KMin 5 KB, KMax 20 KB, PMax 0.5: the stable stage's queue target of
//     a few packets; marking starts at five packets and is certain at
//     twenty. The closed-loop test of this package keeps eight flows'
//     queue between them.
//   - K 40 KB: above KMax, so that the stable stage's queue, held below
//     KMax by the marks, rarely reaches it and WRED only drops a burst of
//     first-RTT packets that would build the queue beyond it.
//   - BufMax 400 KB: four BDPs of a 100 Gb/s, 8 us path, room for a BDP
//     burst from several fast-starting senders on top of K.
func Draft() Params {
	return Params{
		Name:         "draft",
		Alpha:        1,
		Beta:         0.5,
		Gamma:        1.0 / 16,
		Eta:          0.5,
		MaxWindow:    2,
		IW:           1,
		AckEvery:     1,
		ProbeTimeout: 100 * us,
		KMin:         5 * kb,
		KMax:         20 * kb,
		PMax:         0.5,
		K:            40 * kb,
		BufMax:       400 * kb,
		RefRate:      100e9,
	}
}

// Delayed is Draft with a receiver that acknowledges every second
// in-order packet (m = 2, the delayed ACK of TCP, RFC 5681 section 4.2);
// the sender applies eq. (2).
func Delayed() Params {
	p := Draft()
	p.Name = "delayed"
	p.AckEvery = 2
	return p
}

var presets = map[string]func() Params{"draft": Draft, "delayed": Delayed}

// PresetNames lists the named parameter sets in sorted order.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preset returns a named parameter set.
func Preset(name string) (Params, error) {
	f, ok := presets[strings.ToLower(name)]
	if !ok {
		return Params{}, fmt.Errorf("unknown LDCP parameter set %q (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	return f(), nil
}

// ParamError names the parameter Validate rejects by its scenario key
// ("gamma", "buf_max"), so that a scenario reader can point at its line.
type ParamError struct {
	Field, Msg string
}

func (e *ParamError) Error() string { return "ldcp " + e.Field + ": " + e.Msg }

// Validate checks the parameters, naming the first bad field by its
// scenario key in a *ParamError. Every check is written so that NaN fails
// it.
func (p *Params) Validate() error {
	bad := func(field string, format string, args ...any) error {
		return &ParamError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case !(p.Alpha > 0 && p.Alpha <= 1):
		return bad("alpha", "must be in (0, 1], got %g", p.Alpha)
	case !(p.Beta > 0 && p.Beta <= 1):
		return bad("beta", "must be in (0, 1], got %g", p.Beta)
	case !(p.Gamma > 0 && p.Gamma < 1):
		return bad("gamma", "must be in (0, 1), got %g", p.Gamma)
	case !(p.Eta > 0 && p.Eta < 1):
		return bad("eta", "must be in (0, 1), got %g", p.Eta)
	case !(p.IW >= 0 && p.IW < math.Inf(1)):
		return bad("iw", "must be a finite number of BDPs, 0 or more, got %g", p.IW)
	case !(p.MaxWindow > 0 && p.MaxWindow >= p.IW):
		return bad("max_window", "must be positive and at least iw (%g BDPs), got %g", p.IW, p.MaxWindow)
	case p.AckEvery < 1:
		return bad("ack_every", "must be at least 1, got %d", p.AckEvery)
	case p.ProbeTimeout <= 0:
		return bad("probe_timeout", "must be positive")
	case p.CNPInterval < 0:
		return bad("cnp_interval", "must not be negative")
	case !(p.KMin >= 0 && p.KMin < math.Inf(1)):
		return bad("kmin", "must be a finite number of bytes, 0 or more, got %g", p.KMin)
	case !(p.KMax >= p.KMin && p.KMax < math.Inf(1)):
		return bad("kmax", "must be finite and at least kmin (%g), got %g", p.KMin, p.KMax)
	case !(p.PMax > 0 && p.PMax <= 1):
		return bad("pmax", "must be in (0, 1], got %g", p.PMax)
	case !(p.K > 0 && p.K < math.Inf(1)):
		return bad("k", "must be a positive number of bytes, got %g", p.K)
	case !(p.BufMax >= p.K && p.BufMax >= p.KMax && p.BufMax < math.Inf(1)):
		return bad("buf_max", "must be finite and at least k and kmax, got %g", p.BufMax)
	case !(p.RefRate > 0 && p.RefRate < math.Inf(1)):
		return bad("ref_rate", "must be positive, got %g", p.RefRate)
	}
	return nil
}

// Path is what a sender knows of its path: the numbers that turn the
// draft's windows in BDPs and packets into bytes, times and rates.
type Path struct {
	// LineRate is the sender's NIC rate, bits per second.
	LineRate float64
	// RTT is the base round-trip time, picoseconds: with LineRate it
	// gives the BDP, and it is the RTT of the sub-packet timer RTT/cw and
	// of the rate variant before its first probe.
	RTT int64
	// MSS is the payload of a full packet, bytes: the window's unit in
	// LSN bytes (a window of cw packets holds cw*MSS bytes in flight).
	MSS int
	// Wire is the size of a full packet on the wire, bytes, headers
	// included: the BDP in packets is LineRate*RTT/8/Wire, and the rate
	// variant's rate is cw*Wire*8/RTT. Zero means MSS.
	Wire int
}

// Validate checks the path, naming the first bad field.
func (p *Path) Validate() error {
	bad := func(field string, format string, args ...any) error {
		return fmt.Errorf("ldcp path %s: %s", field, fmt.Sprintf(format, args...))
	}
	switch {
	case !(p.LineRate > 0 && p.LineRate < math.Inf(1)):
		return bad("line_rate", "must be positive, got %g", p.LineRate)
	case p.RTT <= 0:
		return bad("rtt", "must be positive, got %d", p.RTT)
	case p.MSS <= 0:
		return bad("mss", "must be positive, got %d", p.MSS)
	case p.Wire < 0 || p.Wire > 0 && p.Wire < p.MSS:
		return bad("wire", "must be 0 or at least mss (%d), got %d", p.MSS, p.Wire)
	}
	return nil
}

// BDP is the path's bandwidth-delay product in full packets (not rounded).
func (p *Path) BDP() float64 {
	return p.LineRate * float64(p.RTT) / 1e12 / 8 / float64(p.wire())
}

func (p *Path) wire() int {
	if p.Wire == 0 {
		return p.MSS
	}
	return p.Wire
}
