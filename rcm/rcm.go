// Package rcm implements Regional Congestion Mitigation (RCM) for lossless
// datacenter switches: congestion region detection (CRD), congestion flow
// recognition (CFR), regional congestion control (RCC) and switch-level
// adaptive routing (SAR), after "Regional Congestion Mitigation in Lossless
// Datacenter Networks" (the RCM paper). The pieces are clock-agnostic state
// machines that the switch model (package dataplane) drives: every method
// takes the time or the queue length it needs and none reads a clock.
//
// The paper leaves its constants open. Params documents the value chosen
// for each, and why; every one is configurable.
package rcm

import "fmt"

// FlowID identifies a flow: what CFR samples and CNs carry.
//
// A switch tells flows apart by the hash of their 5-tuple, which every
// switch computes alike; the model uses the hash as the ID, four bytes to
// store and compare where CFR's CAM and the harmful-flow lists of a
// hardware switch hold the 5-tuple (13 bytes, which is what a CN's size
// on the wire counts). Two flows whose hashes collide count as one.
type FlowID uint32

// Params are RCM's constants. Byte figures are given at RefRate and scale
// with each port's rate, so that they stand for the same time.
type Params struct {
	// QEq is the equilibrium queue of CRD's F_b = Q_off + w_q Q_delta
	// (eq. 1), bytes. 25 KB is a quarter of the paper's 100 KB queues: a
	// queue that holds more is past what a micro-burst explains.
	QEq float64
	// Wq is w_q, the weight of the queue's growth since the last sample in
	// F_b. 2, as QCN's congestion point uses.
	Wq float64
	// W is w in eq. 2, the weight of the downstream neighbour's degree F_br
	// in the degree sent upstream and in the regional degree SAR compares.
	// One half: a port's own queue and its neighbour's count alike.
	W float64
	// Gd is G_d in eq. 4-6; the paper fixes F_bmax G_d = 1/2, so with 6-bit
	// degrees (F_bmax = 63) it is 1/126.
	Gd float64
	// SampleBytes is CRD's sampling interval when F_b is at or below zero:
	// a sample every 10 KB (about ten full frames, 0.8 us at 100 Gb/s).
	// Like QCN it shrinks as F_b grows, to MinSampleBytes at the highest
	// degree (2.5 KB), so that congestion is tracked closely once found.
	SampleBytes    float64
	MinSampleBytes float64
	// CAMDepth is CFR's CAM depth per output port (64 entries), and
	// each packet entering the port's queue is written into it with
	// probability 1/CFRSampleEvery (1: every packet; the draw is random,
	// not every Nth packet, so that flows arriving in strict alternation
	// cannot alias). 64 packets are 5 us at 100 Gb/s with 1 KB frames:
	// long enough that four flows sharing a port evenly are almost never
	// told apart by chance (see CAM), short enough that a root measures
	// a burst within a few microseconds of finding it.
	CAMDepth       int
	CFRSampleEvery int
	// CAMMinHits is the fewest CAM entries of a flow named as a
	// contributor in CNs (4 of 64: a sixteenth of the port), and of a
	// heavy hitter (see CAM).
	CAMMinHits int
	// Window is W in eq. 3, bytes: the period over which RCC shares the
	// port between harmful flows (W_c) and the rest (W_nc). 8 KB, eight
	// full frames, 0.64 us at 100 Gb/s: harmful packets go in runs of at
	// most W_c, so that the others never wait long behind them. A
	// harmful flow still sends one frame per window when W_c falls below
	// a frame. In the sensitivity sweep (docs/rcm.md) it gave the largest
	// FCT gain of 8-64 KB, and it brings Figures 6 and 8 closest to the
	// paper.
	Window float64
	// WorkConserving lets harmful packets past W_c go whenever no other
	// packet waits (on by default): past W_c they rank below the other
	// flows, as in a strict-priority scheduler that parks them in a lower
	// queue, which is what a switch pipeline (and the P4 program) can do. It
	// gives the paper's FCT gain (Fig. 9) and cheap simulation. Off, edge
	// and inner points (ports that CNs reached) hold harmful packets past
	// W_c until the next window even when the link would idle: a rate
	// limit to W_c/W, the literal reading of the paper's RCC. A root's
	// RCC is work-conserving either way: its own link is the bottleneck.
	WorkConserving bool
	// MinShare keeps W_c at least this share of W (1/16), so that repeated
	// cuts slow harmful flows without stopping them.
	MinShare float64
	// CNInterval is the least time between two CNs sent out of one port
	// (2 us): the notification rate of the paper's hop-by-hop loop.
	CNInterval int64
	// CNHold is how long a remote congestion flag, and the harmful flows a
	// CN named, last without a new CN (20 us). A CN with degree 0 clears
	// the flag at once but leaves the named flows harmful until they
	// expire, so that what an edge held back does not hit the root again
	// all at once.
	CNHold int64
	// RegionCNs CNs received within RegionWindow (two within 20 us) put a
	// switch in a congestion region, as its own output congestion does;
	// the paper says "several".
	RegionCNs    int
	RegionWindow int64
	// The mechanisms, each on by default; turning one off is an ablation
	// that measures what it contributes, the others running as usual.
	//
	// CRD: an output port whose queue is congested declares itself a
	// root. Off, no port ever does; since CNs are sent only for ports in
	// RCC and only a root starts RCC where no CN came, nothing else
	// starts either and RCM changes no packet's fate.
	CRD bool
	// CFR: a root holds back only the heavy hitters among the flows its
	// CAM names (see CAM). Off, it holds back every contributor: the
	// paper's reading of the CAM, which keeps CFR's sampling and the CNs
	// (they name every contributor either way) and leaves out only the
	// precision the heavy-hitter test adds.
	CFR bool
	// Hold: RCC holds harmful packets back. Off, detection, CFR, the
	// window's cuts and the CNs all run but no packet is held.
	Hold bool
	// Limit: RCC's window limits what harmful flows send to W_c of each
	// window W. Off, held packets still leave the output queue that
	// detection and ECN see, but go out in arrival order with the rest,
	// as if W_c were W: the window never limits them.
	Limit bool
	// CN: congested input queues send CNs upstream. Off, none is sent,
	// neither naming flows nor clearing: no port becomes an edge.
	CN bool
	// SAR turns on switch-level adaptive routing. SARExisting lets it move
	// flows already under way, not only new ones; moving a flow mid-way can
	// reorder its packets, which go-back-N receivers answer with NACKs, so
	// it is off by default and new flows (first packet) are detoured only.
	SAR         bool
	SARExisting bool
	// PinIdle ends a flow's detour after it has sent nothing for this long
	// (100 us).
	PinIdle int64
	// RefRate is the port rate the byte figures are given for.
	RefRate float64
}

const us = int64(1e6) // picoseconds

// FbMax is the largest quantised degree (6 bits, as QCN's feedback).
const FbMax = 63

// Defaults returns the parameters documented on Params, every mechanism
// on.
func Defaults() Params {
	return Params{
		QEq: 25e3, Wq: 2, W: 0.5, Gd: 1.0 / (2 * FbMax),
		SampleBytes: 10e3, MinSampleBytes: 2.5e3,
		CAMDepth: 64, CFRSampleEvery: 1, CAMMinHits: 4,
		Window: 8e3, MinShare: 1.0 / 16, WorkConserving: true,
		CNInterval: 2 * us, CNHold: 20 * us,
		RegionCNs: 2, RegionWindow: 20 * us,
		CRD: true, CFR: true, Hold: true, Limit: true, CN: true, SAR: true, PinIdle: 100 * us,
		RefRate: 100e9,
	}
}

// MaxCAMDepth bounds CAMDepth: CFR's heavy-hitter count is quadratic in
// the depth, and a hardware CAM is small (the P4 program's is to hold 8).
const MaxCAMDepth = 256

// ParamError names the parameter Validate rejects by its scenario key.
type ParamError struct {
	Field string // "cam_depth"
	Msg   string
}

func (e *ParamError) Error() string { return "rcm " + e.Field + ": " + e.Msg }

// Validate checks the parameters, naming the first bad field. Every check
// is written so that NaN fails it.
func (p *Params) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &ParamError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case !(p.QEq > 0):
		return bad("qeq", "must be positive, got %g", p.QEq)
	case !(p.Wq >= 0):
		return bad("wq", "must not be negative, got %g", p.Wq)
	case !(p.W >= 0 && p.W <= 1):
		return bad("w", "must be in [0, 1], got %g", p.W)
	case !(p.Gd > 0 && p.Gd*FbMax <= 1):
		return bad("gd", "must be positive with gd*63 <= 1, got %g", p.Gd)
	case !(p.SampleBytes > 0 && p.MinSampleBytes > 0 && p.MinSampleBytes <= p.SampleBytes):
		return bad("sample_bytes", "need 0 < min_sample_bytes <= sample_bytes, got %g, %g", p.MinSampleBytes, p.SampleBytes)
	case p.CAMDepth < 1 || p.CAMDepth > MaxCAMDepth:
		return bad("cam_depth", "must be 1..%d, got %d", MaxCAMDepth, p.CAMDepth)
	case p.CFRSampleEvery < 1:
		return bad("cfr_sample_every", "must be at least 1, got %d", p.CFRSampleEvery)
	case p.CAMMinHits < 1 || p.CAMMinHits > p.CAMDepth:
		return bad("cam_min_hits", "must be 1..cam_depth, got %d", p.CAMMinHits)
	case !(p.Window > 0):
		return bad("window", "must be positive, got %g", p.Window)
	case !(p.MinShare > 0 && p.MinShare <= 1):
		return bad("min_share", "must be in (0, 1], got %g", p.MinShare)
	case p.CNInterval <= 0:
		return bad("cn_interval", "must be positive, got %d ps", p.CNInterval)
	case p.CNHold <= 0:
		return bad("cn_hold", "must be positive, got %d ps", p.CNHold)
	case p.RegionWindow <= 0:
		return bad("region_window", "must be positive, got %d ps", p.RegionWindow)
	case p.PinIdle <= 0:
		return bad("pin_idle", "must be positive, got %d ps", p.PinIdle)
	case p.RegionCNs < 1:
		return bad("region_cns", "must be at least 1, got %d", p.RegionCNs)
	case !(p.RefRate > 0):
		return bad("ref_rate", "must be positive, got %g", p.RefRate)
	}
	return nil
}
