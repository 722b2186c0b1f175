// Package sim is p4rcm's packet-level datacenter simulator: hosts with
// RoCEv2 NICs running DCQCN, HPCC, TIMELY, DCTCP, LDCP (window or
// rate-based) or no congestion control, switches running
// the dataplane switch model (shared buffer, PFC, RED/ECN, ECMP), and
// full-duplex links with serialisation and propagation delay, driven by the
// discrete-event engine of sim/event in integer picoseconds.
//
// A run is deterministic: the same Config (topology, flows, parameters and
// seed) gives the same Results, byte for byte once written.
package sim

import (
	"errors"
	"fmt"

	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/dctcp"
	"github.com/p4rcm/p4rcm/hpcc"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/rcm"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
	"github.com/p4rcm/p4rcm/timely"
)

// Config is everything one run needs, resolved: no presets, no files.
type Config struct {
	Seed     uint64
	Topology *topo.Topology
	Flows    []workload.Flow

	// Host NICs.

	// MTU is the payload of a full data packet, bytes.
	MTU int
	// AckInterval is how many data packets the receiver takes per ACK; the
	// last packet of a flow is always acknowledged.
	AckInterval int
	// CC is the end-to-end congestion control: "dcqcn", "hpcc" (rate from
	// the in-band telemetry switches add to data packets), "timely" (rate
	// from RTT gradients), "dctcp" (DCTCP's rate-based RDMA variant),
	// "ldcp" (the draft's window sender, per-packet ACKs and fast start),
	// "ldcp-rate" (its rate-based variant: RTT probes and a cut per CNP)
	// or "none".
	CC     string
	DCQCN  dcqcn.Params
	HPCC   hpcc.Params
	TIMELY timely.Params
	DCTCP  dctcp.Params
	// Window bounds each flow's bytes in flight, as the ns-3 RDMA
	// simulator's NIC can (HPCC and DCTCP run with it there).
	Window Window
	// AckInData has switches queue ACKs and NACKs with their priority's
	// data, under PFC and behind the data, as the ns-3 simulator's switches
	// do whatever its ACK_HIGH_PRIO says; otherwise they take the
	// strict-priority control queue, as CNPs and PFC frames always do.
	AckInData bool
	// AckObeysPFC has the NICs hold their ACKs and NACKs while PFC pauses
	// the priority, as the ns-3 simulator's NICs do without ACK_HIGH_PRIO
	// (its HPCC and DCTCP runs). Either way they go ahead of data.
	AckObeysPFC bool
	// LDCP are the LDCP hosts' parameters; with CC ldcp or ldcp-rate they
	// also give the switches' ECN curve, WRED K and buf_max unless ECN,
	// WREDK or BufMax override them.
	LDCP ldcp.Params
	// RTO is the retransmission timeout of go-back-N, needed only when
	// packets can be lost (PFC off).
	RTO int64
	// Wire sizes the frames on the links and gives the ideal FCT.
	Wire Wire

	// Switches.

	// PFC turns priority flow control on: for LosslessPriorities if given,
	// else for every priority the flows use. The others are lossy (tail
	// drop at QueueLimit or when the buffer is full, go-back-N recovery).
	PFC                bool
	LosslessPriorities []int
	// Buffer is each switch's shared buffer, bytes.
	Buffer float64
	// PFCBeta is the dynamic PFC threshold factor; zero uses PFCXOFF.
	PFCBeta float64
	// PFCBetaScale multiplies beta by (port rate / host rate) on faster
	// ports, capped at 1, as the ns-3 RDMA simulator does.
	PFCBetaScale bool
	// PFCXOFF is the static XOFF threshold per ingress queue, bytes.
	PFCXOFF float64
	// Headroom is t_flight per port and lossless priority, bytes; zero
	// derives it for each port from its rate and cable delay with
	// buffercalc's worst-case model.
	Headroom float64
	// XONOffset is how far below XOFF RESUME is sent, bytes; zero is two
	// full frames, as in the DCQCN paper.
	XONOffset float64
	// PauseQuanta is the pause time of a PAUSE frame (0xffff if zero).
	PauseQuanta uint16
	// QueueLimit caps lossy egress queues, bytes (0: none).
	QueueLimit float64
	// RCM turns on Regional Congestion Mitigation in every switch (nil:
	// off).
	RCM *rcm.Params
	// ECN overrides the marking curve of DCQCN's parameter set when set:
	// thresholds in bytes at ECNRefRate, scaled with each link's rate.
	ECN        *ECNConfig
	WREDK      float64 // WRED threshold for non-ECT packets, bytes at the host rate (0: off, or LDCP's K)
	ECNMarking bool    // mark ECT packets at all (on with DCQCN and LDCP)
	// BufMax drops any packet of a lossy priority arriving at an egress
	// queue of more than BufMax bytes at the host rate, scaled with each
	// port's rate: the draft's buf_max (0: none, or LDCP's with CC ldcp).
	BufMax float64

	// Run control.

	// StopAt ends the run at this time even if flows remain (0: run until
	// every flow completes).
	StopAt int64
	// Threads splits the network into up to this many parts, each run by
	// a thread of its own (0 or 1: the whole network on the calling
	// goroutine). The results do not depend on it. Network.Threads says
	// how many parts the network was split into, which can be fewer.
	Threads int
	// Adapt lets a run of several parts take them all on the calling
	// goroutine, one after the other in each window, while that is the
	// faster on the machine as it is: it tries both ways in turn as it
	// goes (see pacer). The results do not depend on it either.
	Adapt bool

	// Monitoring.

	QueueSampling QueueSampling
	RateSampling  RateSampling
	CCSampling    CCSampling
	// Progress, if set, is called every few thousand events with the
	// simulated time and the number of completed flows.
	Progress func(now int64, done, total int)
	// RCMTrace, if set, is told of every switch's RCM decisions about
	// flows, with the switch's name (dataplane.Config.RCMTrace). Flow IDs
	// are 5-tuple hashes; Network.FlowsWithHash maps them to flows.
	RCMTrace func(sw string, ev *dataplane.RCMEvent)
	// BuildProgress, if set, is called while New builds the network: with
	// stage "routes" after each edge switch's routes (done of total edge
	// switches) and "switches" after each switch (done of total).
	BuildProgress func(stage string, done, total int)
}

// Window is the ns-3 simulator's sending window: a flow with Enabled
// (HAS_WIN) sends while fewer than W bytes of it are unacknowledged, W
// being the bandwidth-delay product of the fabric's longest path
// (GLOBAL_T 1) or with PerPath of the flow's own (GLOBAL_T 0), scaled by
// the flow's rate over its line rate with Variable (VAR_WIN). The same
// choice of path gives HPCC its base RTT T and its W = B T.
type Window struct {
	Enabled  bool
	Variable bool
	PerPath  bool
}

// ECNConfig is a RED/ECN marking curve at a reference link rate.
type ECNConfig struct {
	KMin, KMax float64 // bytes at RefRate
	PMax       float64
	RefRate    float64
}

// QueueSampling records switch egress queue lengths every Interval, for at
// most Max samples (0: off).
type QueueSampling struct {
	Interval int64
	Max      int
	// Ports limits sampling to these switch ports; empty means all data
	// queues that are non-empty at the sample time.
	Ports []topo.PortRef
}

// RateSampling records, every Interval, the bytes each flow delivered to
// its receiver in that interval (0: off). Flows limits it to those flow
// IDs; empty means all.
type RateSampling struct {
	Interval int64
	Flows    []int
}

// CCSampling records, every Interval, the congestion-control state of each
// sender (0: off): DCQCN's rate R_C, target rate R_T and alpha, or LDCP's
// window and the rate it gives. Flows limits it to those
// flow IDs; empty means all. A flow is sampled from its start until it
// completes. Reading the state applies the reaction point's pending
// timers, which it would apply on its next packet anyway, so sampling
// changes no decision, though alpha's slotted decay may then be computed
// in steps rather than as one power and differ in the last bits.
type CCSampling struct {
	Interval int64
	Flows    []int
}

// Validate checks the configuration and names the field at fault.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if c.Topology == nil {
		bad("topology", "missing")
	} else if err := c.Topology.Validate(); err != nil {
		bad("topology", "%v", err)
	}
	if c.MTU <= 0 {
		bad("mtu", "must be positive, got %d", c.MTU)
	}
	if c.AckInterval <= 0 {
		bad("ack_interval", "must be positive, got %d", c.AckInterval)
	}
	if int(c.Wire) >= len(WireNames) {
		bad("wire", "unknown wire %d", c.Wire)
	}
	switch c.CC {
	case "dcqcn":
		if err := c.DCQCN.Validate(); err != nil {
			errs = append(errs, err)
		}
	case "hpcc":
		if err := c.HPCC.Validate(); err != nil {
			errs = append(errs, err)
		}
	case "timely":
		if err := c.TIMELY.Validate(); err != nil {
			errs = append(errs, err)
		}
	case "dctcp":
		if err := c.DCTCP.Validate(); err != nil {
			errs = append(errs, err)
		}
	case "ldcp", "ldcp-rate":
		if err := c.LDCP.Validate(); err != nil {
			errs = append(errs, err)
		}
	case "none":
	default:
		bad("cc", "unknown congestion control %q (dcqcn, hpcc, timely, dctcp, ldcp, ldcp-rate, none)", c.CC)
	}
	if c.RCM != nil {
		if err := c.RCM.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Buffer <= 0 {
		bad("buffer", "must be positive, got %g", c.Buffer)
	}
	for _, q := range c.LosslessPriorities {
		if q < 0 || q > 7 {
			bad("lossless", "priority %d is not 0..7", q)
		}
	}
	if c.PFC && c.PFCBeta <= 0 && c.PFCXOFF <= 0 {
		bad("pfc", "needs a dynamic beta or a static xoff")
	}
	if !(c.Headroom >= 0 && c.XONOffset >= 0 && c.QueueLimit >= 0 && c.WREDK >= 0 && c.BufMax >= 0) {
		bad("switch", "headroom, xon_offset, queue_limit, wred_k and buf_max must not be negative")
	}
	if (!c.PFC || len(c.LosslessPriorities) > 0) && c.RTO <= 0 {
		bad("rto", "must be positive when PFC is off (packets can be lost)")
	}
	if c.StopAt < 0 {
		bad("stop", "must not be negative")
	}
	if c.Threads < 0 {
		bad("threads", "must not be negative, got %d", c.Threads)
	}
	for _, s := range []struct {
		field    string
		interval int64
		flows    []int
	}{{"output.rate_samples", c.RateSampling.Interval, c.RateSampling.Flows},
		{"output.cc_samples", c.CCSampling.Interval, c.CCSampling.Flows}} {
		if s.interval < 0 {
			bad(s.field+".interval", "must not be negative")
		}
		for _, id := range s.flows {
			if id < 0 || id >= len(c.Flows) {
				bad(s.field+".flows", "flow %d does not exist (flows are 0..%d)", id, len(c.Flows)-1)
				break
			}
		}
	}
	if c.Topology != nil {
		n := len(c.Topology.Nodes)
		for i, f := range c.Flows {
			switch {
			case f.Src < 0 || f.Src >= n || c.Topology.Nodes[f.Src].Kind != topo.Host:
				bad("flows", "flow %d: source %d is not a host", i, f.Src)
			case f.Dst < 0 || f.Dst >= n || c.Topology.Nodes[f.Dst].Kind != topo.Host:
				bad("flows", "flow %d: destination %d is not a host", i, f.Dst)
			case f.Src == f.Dst:
				bad("flows", "flow %d: source and destination are both %d", i, f.Src)
			case f.Size <= 0:
				bad("flows", "flow %d: size must be positive, got %d", i, f.Size)
			case f.Start < 0:
				bad("flows", "flow %d: start must not be negative", i)
			case f.Priority < 0 || f.Priority > 7:
				bad("flows", "flow %d: priority must be 0..7, got %d", i, f.Priority)
			}
			if len(errs) > 10 {
				break
			}
		}
	}
	return errors.Join(errs...)
}
