// Package agent is a host's RoCEv2 NIC in software, for emulated fabrics:
// one Agent per host sends its flows as RoCEv2 frames on a raw socket,
// each paced by DCQCN's reaction point (dcqcn.RP) in wall-clock time, and
// receives the flows sent to it, acknowledging them and returning CNPs
// through DCQCN's notification point (dcqcn.NP). Instead of DCQCN it may
// run LDCP's window sender and receiver (ldcp.Sender, ldcp.Receiver), or
// HPCC (from the in-band telemetry its ACKs echo), TIMELY (from the RTTs
// it measures) or DCTCP (from the CE marks its ACKs echo): hpcc.Sender,
// timely.Sender, dctcp.Sender. It honours 802.1Qbb PAUSE for the priority
// its data uses and recovers losses by go-back-N (a NAK at the first gap,
// a timeout otherwise), so it runs with PFC on or off.
//
// The algorithms are the simulator's own state machines; the agent owns
// the clock (time since Config.Epoch, in picoseconds) and the I/O. Scale,
// ScaleLDCP, ScaleHPCC, ScaleTIMELY and ScaleDCTCP give the settings for a
// link slower than the 100 Gb/s they were designed for.
package agent

import (
	"context"
	"fmt"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/dctcp"
	"github.com/p4rcm/p4rcm/flow"
	"github.com/p4rcm/p4rcm/hpcc"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/roce"
	"github.com/p4rcm/p4rcm/timely"
)

// Port is the host's network interface: afpacket.Port is one. Send and
// Recv may be called from different goroutines; Recv returns frames valid
// until its next call.
type Port interface {
	Send(frames ...[]byte) error
	Recv() ([][]byte, error)
}

// Config is one host's NIC.
type Config struct {
	// Host is the host's node ID: the agent sends the flows whose Src it
	// is.
	Host int
	MAC  net.HardwareAddr
	IP   net.IP
	// Gateway is the MAC frames are addressed to: the switch port the host
	// is cabled to.
	Gateway net.HardwareAddr
	// Addr gives a destination host's IPv4 address.
	Addr func(host int) (net.IP, bool)
	// LineRate is the NIC's rate in bits per second (frames on the wire,
	// headers included): the most the agent sends, and the length of a
	// PAUSE quantum (512 bit times).
	LineRate float64
	// MTU is the payload of a full data packet, bytes (1000 if 0).
	MTU int
	// DSCP marks data frames; the switches take DSCP >> 3 as the PFC
	// priority (26: priority 3, RoCE's usual). ACKs, NAKs and CNPs go on
	// ControlDSCP (48 if 0: priority 6), which the data's PAUSEs do not
	// hold. Neither may have bit roce.INTDSCP: under HPCC the agent sets
	// it on its data itself.
	DSCP, ControlDSCP uint8
	// DCQCN, LDCP, HPCC, TIMELY and DCTCP are the congestion controls,
	// at most one of them set; with none every flow goes at line rate
	// (PFC alone).
	//
	// DCQCN paces each flow by DCQCN's reaction point, and the receiver
	// returns CNPs for CE-marked packets.
	//
	// LDCP runs the draft's window sender per flow (ldcp.Sender): a packet
	// goes when the window lets it, at line rate, below one packet by the
	// RTT/cw timer; a flow starts with an initial window of IW BDPs whose
	// first packets go out Not-ECT. Receivers answer per ldcp.Receiver
	// (m = AckEvery of LDCP, not Config.AckEvery), echoing CE in the ACK's
	// BTH BECN bit; no CNPs. Its time settings must be for LineRate
	// (ScaleLDCP).
	//
	// HPCC, TIMELY and DCTCP pace each flow at the rate of its
	// hpcc.Sender, timely.Sender or dctcp.Sender, fed from its ACKs
	// (ackcc.go): HPCC's data asks the switches for INT, which the
	// receivers echo; TIMELY's RTTs are the sender's own measurements;
	// DCTCP's receivers echo CE in the ACK's BECN bit. Their rates must
	// be for LineRate (ScaleHPCC, ScaleTIMELY, ScaleDCTCP).
	DCQCN  *dcqcn.Params
	LDCP   *ldcp.Params
	HPCC   *hpcc.Params
	TIMELY *timely.Params
	DCTCP  *dctcp.Params
	// BaseRTT is the unloaded round trip to a destination host, for LDCP:
	// with LineRate, the path's BDP (so the initial window) and the
	// sub-packet timer's RTT; for HPCC, T. Required with LDCP and HPCC.
	BaseRTT func(dst int) time.Duration
	// BDP is the bytes of a destination's path: HPCC's W, and the
	// window's. Required with HPCC and Window.
	BDP func(dst int) float64
	// AskINT has every data packet ask the switches for INT, whatever the
	// scheme (HPCC's always do): the receivers then measure the queue
	// each packet found at its last switch (Stats.INTQueue).
	AskINT bool
	// Window bounds each flow's bytes in flight by the ns-3 simulator's
	// window (sim.Window), as HPCC and DCTCP run there: the BDP, or with
	// VariableWindow the BDP times the flow's rate over the line rate.
	Window, VariableWindow bool
	// AckEvery is how many in-order packets one ACK covers at most (1 if
	// 0); a flow's last packet and a packet asking for one are always
	// acknowledged at once.
	AckEvery int
	// RTO is how long a sender waits for progress before it goes back to
	// its first unacknowledged packet (10 ms if 0); time paused by PFC
	// does not count.
	RTO time.Duration
	// Epoch is time zero of the flows' Start times.
	Epoch time.Time
	// OnDone, if set, is called with each flow of this host when its last
	// packet is acknowledged (from the receiving goroutine, without locks
	// held).
	OnDone func(Result)
}

// Result is one flow's outcome, as its sender saw it.
//
// Its JSON (p4ctl host's records) has p4ctl's key style, snake_case,
// times in nanoseconds.
type Result struct {
	ID      int   `json:"id"`
	Src     int   `json:"src"`
	Dst     int   `json:"dst"`
	SrcPort int   `json:"src_port"`
	Size    int64 `json:"size_bytes"`
	// Start and Finish are since the Epoch: the flow's scheduled start and
	// the arrival of the ACK of its last packet.
	Start  time.Duration `json:"start_ns"`
	Finish time.Duration `json:"finish_ns"`
	// Delivered is the payload acknowledged, bytes: Size once done.
	Delivered int64 `json:"delivered_bytes"`
	// Retransmits counts data packets sent again (go-back-N).
	Retransmits int64 `json:"retransmits"`
	CNPs        int   `json:"cnps"` // CNPs received
	RateCuts    int   `json:"rate_cuts"`
}

// FCT is the flow completion time.
func (r Result) FCT() time.Duration { return r.Finish - r.Start }

// Stats counts what the agent saw and sent.
type Stats struct {
	DataSent     int64 `json:"data_sent"` // data packets
	DataReceived int64 `json:"data_received"`
	Retransmits  int64 `json:"retransmits"`
	AcksSent     int64 `json:"acks_sent"`
	NAKsSent     int64 `json:"naks_sent"`
	CNPsSent     int64 `json:"cnps_sent"`
	CNPsReceived int64 `json:"cnps_received"`
	// Marked counts data packets received with ECN CE.
	Marked int64 `json:"marked"`
	// Pauses and Resumes count PFC frames for the data's priority (quanta
	// above 0, and 0); Paused is the time the data was held by them.
	Pauses   int64         `json:"pauses"`
	Resumes  int64         `json:"resumes"`
	Paused   time.Duration `json:"paused_ns"`
	Timeouts int64         `json:"timeouts"`
	// Ignored counts frames that were not for this host or not RoCEv2.
	Ignored int64 `json:"ignored"`
	// INTMalformed counts frames dropped for an INT stack no host can
	// read (roce.ErrMalformedINT): data that asked for INT and ACKs that
	// echo it. NoINT counts the ACKs of HPCC's flows that echoed none (no
	// switch on the path pushes INT), INTExceeded those whose stack had
	// no room for a switch's record; HPCC takes neither's telemetry.
	INTMalformed int64 `json:"int_malformed"`
	NoINT        int64 `json:"no_int"`
	INTExceeded  int64 `json:"int_exceeded"`
	// INTQueue is the queue the data packets received with INT found
	// behind them at their last switch's egress port, the one facing
	// this host (the last record pushed).
	INTQueue QueueStats `json:"int_queue"`
	// Behind is how long the send loop woke past its schedule, beyond
	// the 2 ms a sender catches up at once, in all; MaxLate the most it
	// woke late at once. A machine that cannot keep the emulation's
	// time (too loaded for its rate) shows here: the sender then sent
	// below its rate, and its results measure the machine.
	Behind  time.Duration `json:"behind_ns"`
	MaxLate time.Duration `json:"max_late_ns"`
}

// QueueStats summarises queue lengths seen, bytes.
type QueueStats struct {
	Samples int64 `json:"samples"`
	Sum     int64 `json:"sum_bytes"`
	Max     int64 `json:"max_bytes"`
}

// Add counts a queue of q bytes.
func (s *QueueStats) Add(q int64) {
	s.Samples++
	s.Sum += q
	s.Max = max(s.Max, q)
}

// Merge adds what o counted.
func (s *QueueStats) Merge(o QueueStats) {
	s.Samples += o.Samples
	s.Sum += o.Sum
	s.Max = max(s.Max, o.Max)
}

// Mean is the mean queue, bytes (0 without samples).
func (s QueueStats) Mean() float64 {
	if s.Samples == 0 {
		return 0
	}
	return float64(s.Sum) / float64(s.Samples)
}

// Agent is one host's NIC.
type Agent struct {
	cfg    Config
	port   Port
	mtu    int
	prio   int // the data's PFC priority
	scheme scheme

	mu    sync.Mutex
	send  []*sendFlow // by start time, then ID
	byQP  map[uint32]*sendFlow
	recv  map[recvKey]*recvFlow
	stats Stats
	// nicAt is when the NIC may put the next frame on the wire (ps).
	nicAt int64
	// pausedUntil holds the data's priority (ps); pausedFrom is when the
	// current pause began (-1: not paused).
	pausedUntil, pausedFrom int64
	rr                      int // round robin over the flows
	wake                    chan struct{}
}

// Limits of the wire format: 24-bit PSNs (which wrap) and queue pairs.
const (
	maxPSN = 1 << 24
	maxQP  = 1 << 24
)

// New checks cfg and the flows and returns the agent. Only the flows whose
// Src is cfg.Host are sent; the others are ignored.
func New(cfg Config, port Port, flows []flow.Flow) (*Agent, error) {
	if cfg.MTU == 0 {
		cfg.MTU = 1000
	}
	if cfg.ControlDSCP == 0 {
		cfg.ControlDSCP = 48
	}
	if cfg.AckEvery == 0 {
		cfg.AckEvery = 1
	}
	if cfg.RTO == 0 {
		cfg.RTO = 10 * time.Millisecond
	}
	switch {
	case len(cfg.MAC) != 6 || len(cfg.Gateway) != 6:
		return nil, fmt.Errorf("host %d: MAC %q and gateway %q must be 6-byte MACs", cfg.Host, cfg.MAC, cfg.Gateway)
	case cfg.IP.To4() == nil:
		return nil, fmt.Errorf("host %d: IP %q is not IPv4", cfg.Host, cfg.IP)
	case cfg.LineRate <= 0:
		return nil, fmt.Errorf("host %d: line rate %g b/s: want more than 0", cfg.Host, cfg.LineRate)
	case cfg.MTU < 1 || cfg.MTU > 9000:
		return nil, fmt.Errorf("host %d: MTU %d: want 1 to 9000 bytes of payload", cfg.Host, cfg.MTU)
	case cfg.DSCP >= 64 || cfg.ControlDSCP >= 64:
		return nil, fmt.Errorf("host %d: DSCP %d and %d: want 0 to 63", cfg.Host, cfg.DSCP, cfg.ControlDSCP)
	case cfg.DSCP&roce.INTDSCP != 0 || cfg.ControlDSCP&roce.INTDSCP != 0:
		return nil, fmt.Errorf("host %d: DSCP %d and %d: bit %d asks the switches for INT, which the agent sets itself under HPCC; want it clear",
			cfg.Host, cfg.DSCP, cfg.ControlDSCP, roce.INTDSCP)
	case cfg.Addr == nil:
		return nil, fmt.Errorf("host %d: no address book (Config.Addr)", cfg.Host)
	}
	sch, err := schemeOf(&cfg)
	if err != nil {
		return nil, err
	}
	if cfg.DCQCN != nil {
		if err := cfg.DCQCN.Validate(); err != nil {
			return nil, fmt.Errorf("host %d: %w", cfg.Host, err)
		}
	}
	if cfg.LDCP != nil {
		if cfg.BaseRTT == nil {
			return nil, fmt.Errorf("host %d: LDCP without a base RTT (Config.BaseRTT)", cfg.Host)
		}
		if err := cfg.LDCP.Validate(); err != nil {
			return nil, fmt.Errorf("host %d: %w", cfg.Host, err)
		}
	}
	if err := checkAckCC(&cfg); err != nil {
		return nil, fmt.Errorf("host %d: %w", cfg.Host, err)
	}
	a := &Agent{cfg: cfg, port: port, mtu: cfg.MTU, prio: int(cfg.DSCP >> 3), scheme: sch,
		byQP: map[uint32]*sendFlow{}, recv: map[recvKey]*recvFlow{},
		pausedFrom: -1, wake: make(chan struct{}, 1)}
	for _, f := range flows {
		if f.Src != cfg.Host {
			continue
		}
		sf, err := a.newSendFlow(f)
		if err != nil {
			return nil, err
		}
		a.send = append(a.send, sf)
		a.byQP[sf.qp] = sf
	}
	sort.SliceStable(a.send, func(i, j int) bool { return a.send[i].start < a.send[j].start })
	return a, nil
}

// Stats returns the counters so far.
func (a *Agent) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.stats
	if a.pausedFrom >= 0 {
		s.Paused += time.Duration((min(a.now(), a.pausedUntil) - a.pausedFrom) / 1000)
	}
	return s
}

// Pending is the number of this host's flows not yet completed.
func (a *Agent) Pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, f := range a.send {
		if !f.done {
			n++
		}
	}
	return n
}

// Unfinished is the results so far of this host's flows not completed
// (Finish 0), in start order: what they delivered, for goodput when a
// run stops before they end.
func (a *Agent) Unfinished() []Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Result
	for _, f := range a.send {
		if f.done {
			continue
		}
		r := f.res
		r.Delivered = min(int64(f.una)*int64(a.mtu), f.size)
		if a.cfg.DCQCN != nil {
			r.RateCuts = f.rp.Cuts
		}
		out = append(out, r)
	}
	return out
}

// Run sends and receives until ctx ends (a host keeps receiving after its
// own flows are done) and returns nil then, or the port's error. The
// caller closes the port after Run returns.
func (a *Agent) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	received := make(chan error, 1)
	go func() {
		received <- a.receiveLoop()
		cancel()
	}()
	err := a.sendLoop(ctx)
	select {
	case rerr := <-received:
		return rerr
	default:
		return err
	}
}

// now is the time since the Epoch in picoseconds.
func (a *Agent) now() int64 { return time.Since(a.cfg.Epoch).Nanoseconds() * 1000 }

func (a *Agent) kick() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// WireExtra is what a frame costs on a real wire beyond the bytes a
// packet socket sends: the FCS, preamble, start delimiter and inter-frame
// gap. The NIC's rate counts them, as the simulator's links do.
const WireExtra = 4 + 8 + 12

// wireTime is how long a frame of n bytes takes at rate, ps.
func wireTime(n int, rate float64) int64 { return int64(float64(n+WireExtra) * 8 / rate * 1e12) }

// frameLen is a data frame's length for payload n, without INT.
func frameLen(n int) int { return roce.Overhead + n }

// ip4 copies an IPv4 address.
func ip4(ip net.IP) (out [4]byte) {
	copy(out[:], ip.To4())
	return out
}

func mac6(m net.HardwareAddr) (out [6]byte) {
	copy(out[:], m)
	return out
}
