// Package settings turns rcm.p4's per-port settings, given in units
// (bytes, probabilities, durations, link rates), into the table entries
// the program reads them from: set_port (PFC and CNs, per ingress port),
// set_red (RED/ECN and WRED, per egress port), set_rcm (CRD, CFR and RCC,
// per egress port) and set_int (HPCC's in-band telemetry, per egress
// port). It does the arithmetic the program cannot: RED's
// slope, a pause quantum's length, powers of two. The simulator's RCM
// defaults map onto set_rcm through RCMFromModel, so the switch and the
// model start from one set of figures.
package settings

import (
	"fmt"
	"math"
	"math/big"
	"net"
	"time"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/rcm"
)

// Key fields of the three per-port tables.
const (
	portKey = "standard_metadata.ingress_port"
	rcmKey  = "standard_metadata.egress_spec"
	redKey  = "standard_metadata.egress_port"
)

// PFC is a port's PFC and CN settings (set_port).
type PFC struct {
	// MAC is the port's own address, the source of its PAUSEs and CNs.
	MAC net.HardwareAddr
	// XOFF and XON are the port's ingress account thresholds in bytes:
	// past XOFF it pauses its neighbour, at XON it resumes it. XOFF 0
	// turns PFC off on the port.
	XOFF, XON float64
	// PauseQuanta is what a PAUSE asks for (0xffff: until resumed).
	PauseQuanta uint16
	// LinkRate is the port's rate, b/s: a quantum is 512 bit times.
	LinkRate float64
	// Priority is the lossless priority (DSCP class selector, 0-7).
	Priority int
	// CNs says the neighbour is a switch: RCM's CNs go out of the port,
	// at most every CNInterval and only while the port's account exceeds
	// CNIngress bytes; a CN received holds for CNHold.
	CNs        bool
	CNInterval time.Duration
	CNIngress  float64
	CNHold     time.Duration
}

// Params are set_port's parameters; errors name the setting.
func (c PFC) Params() ([]controlplane.Param, error) {
	switch {
	case len(c.MAC) != 6:
		return nil, fmt.Errorf("mac: want a 6-byte MAC address, got %q", c.MAC)
	case c.XOFF < 0 || c.XOFF >= 1<<32:
		return nil, fmt.Errorf("xoff: %v bytes is outside 0 to 4 GB", c.XOFF)
	case c.XOFF > 0 && (c.XON < 0 || c.XON >= c.XOFF):
		return nil, fmt.Errorf("xon: %v bytes must be below xoff (%v bytes)", c.XON, c.XOFF)
	case c.LinkRate <= 0:
		return nil, fmt.Errorf("link rate: %v b/s: want more than 0", c.LinkRate)
	case c.Priority < 0 || c.Priority > 7:
		return nil, fmt.Errorf("priority: %d: want 0 to 7", c.Priority)
	case c.CNIngress < 0 || c.CNIngress >= 1<<32:
		return nil, fmt.Errorf("cn ingress: %v bytes is outside 0 to 4 GB", c.CNIngress)
	}
	quantum := math.Round(512 / c.LinkRate * 1e9)
	interval, err := nanos("cn interval", c.CNInterval)
	if err != nil {
		return nil, err
	}
	hold, err := nanos("cn hold", c.CNHold)
	if err != nil {
		return nil, err
	}
	on := 0
	if c.CNs {
		on = 1
	}
	return []controlplane.Param{
		{Name: "mac", Value: []byte(c.MAC)},
		{Name: "xoff_bytes", Value: u32(c.XOFF)},
		{Name: "xon_bytes", Value: u32(c.XON)},
		{Name: "pause_quanta", Value: uint16Bytes(c.PauseQuanta)},
		{Name: "quantum_ns", Value: u32(max(quantum, 1))},
		{Name: "pfc_priority", Value: []byte{byte(c.Priority)}},
		{Name: "cn_enabled", Value: []byte{byte(on)}},
		{Name: "cn_interval_ns", Value: interval},
		{Name: "cn_ingress_bytes", Value: u32(c.CNIngress)},
		{Name: "cn_hold_ns", Value: hold},
	}, nil
}

// PortEntry is port's set_port entry with params.
func PortEntry(port uint32, params []controlplane.Param) controlplane.Entry {
	return entry(p4.TableIngressPortConfig, portKey, port, p4.ActionSetPort, params)
}

// RED is a port's marking curve: ECN-capable packets are marked with a
// probability rising from 0 at Kmin bytes queued to Pmax at Kmax, and
// all beyond Kmax; packets that are not ECN-capable are dropped from
// WREDK bytes queued on (0: never); any packet of a priority without PFC
// is dropped past BufMax bytes (0: no cap), as LDCP's switches do.
type RED struct {
	Kmin, Kmax float64
	Pmax       float64
	WREDK      float64
	BufMax     float64
}

// Entry is port's set_red entry; errors name the setting.
func (r RED) Entry(port uint32) (controlplane.Entry, error) {
	switch {
	case r.Kmin < 0 || r.Kmin >= 1<<32:
		return controlplane.Entry{}, fmt.Errorf("kmin: %v bytes is outside 0 to 4 GB", r.Kmin)
	case r.Kmax < r.Kmin || r.Kmax >= 1<<32:
		return controlplane.Entry{}, fmt.Errorf("kmax: %v bytes must be at least kmin (%v bytes) and below 4 GB", r.Kmax, r.Kmin)
	case r.Pmax < 0 || r.Pmax > 1:
		return controlplane.Entry{}, fmt.Errorf("pmax: %v: want a probability, 0 to 1", r.Pmax)
	case r.WREDK < 0 || r.WREDK >= 1<<32:
		return controlplane.Entry{}, fmt.Errorf("wred-k: %v bytes is outside 0 to 4 GB", r.WREDK)
	case r.BufMax < 0 || r.BufMax >= 1<<32:
		return controlplane.Entry{}, fmt.Errorf("buf-max: %v bytes is outside 0 to 4 GB", r.BufMax)
	}
	// The program marks when a random 32-bit number is below
	// (q - kmin) * slope: slope = pmax 2^32 / (kmax - kmin).
	slope := 0.0
	if r.Kmax > r.Kmin {
		slope = math.Min(math.Floor(r.Pmax*(1<<32)/(r.Kmax-r.Kmin)), 1<<32-1)
	}
	return entry(p4.TableREDConfig, redKey, port, p4.ActionSetRED, []controlplane.Param{
		{Name: "kmin_bytes", Value: u32(r.Kmin)},
		{Name: "kmax_bytes", Value: u32(r.Kmax)},
		{Name: "pmax_slope", Value: u32(slope)},
		{Name: "wred_k_bytes", Value: u32(r.WREDK)},
		{Name: "buf_max_bytes", Value: u32(r.BufMax)},
	}), nil
}

// RCM is a port's CRD, CFR and RCC settings (set_rcm).
type RCM struct {
	// SampleEvery packets to the port, one is a CRD sample.
	SampleEvery int
	// QEq is CRD's equilibrium queue, bytes; Wq the weight of the
	// queue's growth (rounded to a power of two); FbQuantum the bytes of
	// F_b per degree step (rounded to a power of two).
	QEq       float64
	Wq        float64
	FbQuantum float64
	// CAMMinHits entries of the port's 8-entry CAM make a flow harmful.
	CAMMinHits int
	// Window is W, bytes.
	Window float64
	// WindowTime is W at the port's rate, which makes RCC a rate limit
	// where CNs named the harmful flows (an edge or inner point): they
	// send at most W_c every WindowTime even when the link would idle,
	// the model's RCC with WorkConserving off. 0 leaves RCC
	// work-conserving, the model's default.
	WindowTime time.Duration
	// High and Low are the egress queues of ordinary packets and of
	// harmful packets past W_c (both 0 without priority queues).
	High, Low int
}

// Entry is port's set_rcm entry; errors name the setting.
func (r RCM) Entry(port uint32) (controlplane.Entry, error) {
	switch {
	case r.SampleEvery < 1 || r.SampleEvery > math.MaxUint16:
		return controlplane.Entry{}, fmt.Errorf("sample-every: %d: want 1 to 65535 packets", r.SampleEvery)
	case r.QEq < 0 || r.QEq >= 1<<32:
		return controlplane.Entry{}, fmt.Errorf("qeq: %v bytes is outside 0 to 4 GB", r.QEq)
	case r.Wq < 1 || r.Wq > 1<<16:
		return controlplane.Entry{}, fmt.Errorf("wq: %v: want 1 to 65536", r.Wq)
	case r.FbQuantum < 1 || r.FbQuantum >= 1<<32:
		return controlplane.Entry{}, fmt.Errorf("fb-quantum: %v bytes: want 1 byte to 4 GB", r.FbQuantum)
	case r.CAMMinHits < 1 || r.CAMMinHits > p4.CAMDepth:
		return controlplane.Entry{}, fmt.Errorf("cam-min-hits: %d: want 1 to %d (the CAM's depth)", r.CAMMinHits, p4.CAMDepth)
	case r.Window < 1 || r.Window >= 1<<32:
		return controlplane.Entry{}, fmt.Errorf("window: %v bytes: want 1 byte to 4 GB", r.Window)
	case r.High < 0 || r.High > 7 || r.Low < 0 || r.Low > 7:
		return controlplane.Entry{}, fmt.Errorf("queues: high %d, low %d: want 0 to 7", r.High, r.Low)
	}
	windowNs, err := nanos("window-time", r.WindowTime)
	if err != nil {
		return controlplane.Entry{}, err
	}
	return entry(p4.TableRCMConfig, rcmKey, port, p4.ActionSetRCM, []controlplane.Param{
		{Name: "sample_every", Value: uint16Bytes(uint16(r.SampleEvery))},
		{Name: "qeq_bytes", Value: u32(r.QEq)},
		{Name: "wq_shift", Value: []byte{byte(log2(r.Wq))}},
		{Name: "fb_shift", Value: []byte{byte(log2(r.FbQuantum))}},
		{Name: "cam_min_hits", Value: []byte{byte(r.CAMMinHits)}},
		{Name: "window_bytes", Value: u32(r.Window)},
		{Name: "window_ns", Value: windowNs},
		{Name: "high_priority", Value: []byte{byte(r.High)}},
		{Name: "low_priority", Value: []byte{byte(r.Low)}},
	}), nil
}

// RCMFromModel is the set_rcm the simulator's parameters p come to on a
// port of the given rate with frames of mtu bytes: byte figures scaled
// from p.RefRate, CRD sampling every p.SampleBytes as packets, the
// model's degree quantum Q_eq (1 + 2 w_q) / 63, and the CAM threshold
// as the same share of an 8-entry CAM as of the model's, at least 2 so
// that one sample never makes a flow harmful. Without p.WorkConserving
// RCC is a rate limit with W's time at rate. Priority queues are left
// at 0.
func RCMFromModel(p rcm.Params, rate, mtu float64) RCM {
	scale := rate / p.RefRate
	qeq := p.QEq * scale
	window := max(mtu, p.Window*scale)
	var windowTime time.Duration
	if !p.WorkConserving {
		windowTime = WindowTime(window, rate)
	}
	return RCM{
		SampleEvery: max(1, int(math.Round(p.SampleBytes*scale/mtu))),
		QEq:         qeq,
		Wq:          p.Wq,
		FbQuantum:   max(1, qeq*(1+2*p.Wq)/rcm.FbMax),
		CAMMinHits:  min(p4.CAMDepth, max(2, int(math.Round(float64(p.CAMMinHits*p4.CAMDepth)/float64(p.CAMDepth))))),
		Window:      window,
		WindowTime:  windowTime,
	}
}

// WindowTime is how long window bytes take at rate (b/s), at least 1 ns.
func WindowTime(window, rate float64) time.Duration {
	return max(1, time.Duration(math.Round(window*8/rate*1e9)))
}

// INT is a port's in-band telemetry (set_int): the port counts the bytes
// it sends and pushes a hop record into each data packet that asks,
// carrying Rate, its rate in b/s (kb/s on the wire).
type INT struct {
	Rate float64
}

// Entry is port's set_int entry; errors name the setting.
func (c INT) Entry(port uint32) (controlplane.Entry, error) {
	kbps := math.Round(c.Rate / 1000)
	if !(kbps >= 1 && kbps < 1<<32) {
		return controlplane.Entry{}, fmt.Errorf("int rate: %v b/s: want 1 kb/s to 4.29 Tb/s", c.Rate)
	}
	return entry(p4.TableINTConfig, redKey, port, p4.ActionSetINT, []controlplane.Param{
		{Name: "rate_kbps", Value: u32(kbps)},
	}), nil
}

// INTOff is port's int_config entry to delete: the port then pushes no
// INT.
func INTOff(port uint32) controlplane.Entry {
	return entry(p4.TableINTConfig, redKey, port, p4.ActionSetINT, nil)
}

// RCMEntry is port's set_rcm entry with params.
func RCMEntry(port uint32, params []controlplane.Param) controlplane.Entry {
	return entry(p4.TableRCMConfig, rcmKey, port, p4.ActionSetRCM, params)
}

func entry(table, key string, port uint32, action string, params []controlplane.Param) controlplane.Entry {
	return controlplane.Entry{Table: table, Action: action, Params: params,
		Match: []controlplane.Match{{Field: key, Value: uint16Bytes(uint16(port))}}}
}

// log2 is the power of two nearest x (x >= 1).
func log2(x float64) int { return int(math.Round(math.Log2(x))) }

func u32(x float64) []byte { return big.NewInt(int64(x)).FillBytes(make([]byte, 4)) }

func uint16Bytes(x uint16) []byte { return []byte{byte(x >> 8), byte(x)} }

func nanos(what string, d time.Duration) ([]byte, error) {
	if d < 0 || d.Nanoseconds() >= 1<<32 {
		return nil, fmt.Errorf("%s: %v: want 0 to 4.29 s", what, d)
	}
	return u32(float64(d.Nanoseconds())), nil
}
