// Package p4 holds the compiled switch program, rcm.p4 for BMv2's
// v1model: its P4Info and BMv2 JSON (built by `make -C p4` and
// committed, so that nothing here needs p4c), and the names of the
// tables, actions and counters the Go code programs and reads.
package p4

import (
	_ "embed"
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/prototext"
)

//go:embed build/rcm.p4info.txtpb
var p4infoText []byte

//go:embed build/rcm.json
var bmv2JSON []byte

// P4Info is the program's P4Info. Fields newer than the P4Runtime Go
// module this project pins (p4c 1.2.5.16 writes a table's
// initial_default_action) are skipped.
func P4Info() (*p4configv1.P4Info, error) {
	info := &p4configv1.P4Info{}
	if err := (prototext.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(p4infoText, info); err != nil {
		return nil, fmt.Errorf("p4/build/rcm.p4info.txtpb: %w", err)
	}
	return info, nil
}

// P4InfoText is the P4Info as p4c wrote it, p4/build/rcm.p4info.txtpb:
// the bytes a cookie of the build is made from. (Text marshalled from
// P4Info is not: protobuf's text output varies from one binary to the
// next by design.)
func P4InfoText() []byte { return p4infoText }

// DeviceConfig is BMv2's device configuration for P4Runtime's
// SetForwardingPipelineConfig: the compiled JSON.
func DeviceConfig() []byte { return bmv2JSON }

// Names in the P4Info, as the controller uses them.
const (
	// Forwarding and SAR (ingress).
	TableIPv4LPM        = "RcmIngress.ipv4_lpm"
	TableECMPMember     = "RcmIngress.ecmp_member"
	TableSARGroup       = "RcmIngress.sar_group"
	ActionSetNexthop    = "RcmIngress.set_nexthop"
	ActionSetECMPGroup  = "RcmIngress.set_ecmp_group"
	ActionSetSARMembers = "RcmIngress.set_sar_members"
	ActionDrop          = "RcmIngress.drop"
	CounterRxFrames     = "RcmIngress.rx_frames"
	CounterNoRoute      = "RcmIngress.no_route"
	CounterDetours      = "RcmIngress.detours"
	// PFC and CNs, per ingress port.
	TableIngressPortConfig = "RcmIngress.ingress_port_config"
	ActionSetPort          = "RcmIngress.set_port"
	// PAUSE frames (XOFF: a time above 0 for a class named) and RESUME
	// frames (XON: every class named gets 0) are counted apart.
	CounterPausesSent      = "RcmEgress.pauses_sent"
	CounterResumesSent     = "RcmEgress.resumes_sent"
	CounterPausesReceived  = "RcmIngress.pauses_received"
	CounterResumesReceived = "RcmIngress.resumes_received"
	CounterCNsSent         = "RcmIngress.cns_sent"
	CounterCNsReceived     = "RcmIngress.cns_received"
	// CounterClearCNsSent counts the CNs of degree 0 a port sent once
	// its account fell back to cn_ingress_bytes (CounterCNsSent counts
	// the naming ones).
	CounterClearCNsSent = "RcmIngress.clear_cns_sent"
	CounterHeld         = "RcmEgress.held"
	// RCM, per egress port.
	TableRCMConfig     = "RcmIngress.rcm_config"
	ActionSetRCM       = "RcmIngress.set_rcm"
	CounterCAMHits     = "RcmIngress.cam_hits"
	CounterWindowHolds = "RcmIngress.window_holds"
	// CounterLimitHolds counts the times RCC's rate limit (set_rcm's
	// window_ns) sent a packet round the recirculation port.
	CounterLimitHolds = "RcmEgress.limit_holds"
	DigestCAM         = "cam_digest_t"
	// DigestNamed carries the flows CNs named on a port, after each
	// naming CN: the same fields as DigestCAM.
	DigestNamed = "named_digest_t"
	// RED/ECN and WRED (egress).
	TableREDConfig   = "RcmEgress.red_config"
	ActionSetRED     = "RcmEgress.set_red"
	CounterECNMarks  = "RcmEgress.ecn_marks"
	CounterWREDDrops = "RcmEgress.wred_drops"
	// CounterBufMaxDrops counts packets of priorities without PFC
	// dropped past the port's buf_max (LDCP's switches).
	CounterBufMaxDrops = "RcmEgress.buf_max_drops"
	// INT for HPCC (egress): the ports that count their bytes and push a
	// hop record, with their rates; hop records pushed, packets whose
	// stack had no room (flagged exceeded), and packets with a stack no
	// switch can account for, dropped (ingress).
	TableINTConfig      = "RcmEgress.int_config"
	ActionSetINT        = "RcmEgress.set_int"
	CounterINTHops      = "RcmEgress.int_hops"
	CounterINTExceeded  = "RcmEgress.int_exceeded"
	CounterINTMalformed = "RcmIngress.int_malformed"
	// Registers (state only: BMv2 cannot read them over P4Runtime).
	RegisterQueueBytes = "queue_bytes"
	RegisterINTTxBytes = "int_tx_bytes"
)

// Ports is the size of every per-port counter and register: BMv2's port
// numbers, with the CPU port (255) among them.
const Ports = 512

// CAMDepth is the entries of each port's CAM, and of the CAM digest.
const CAMDepth = 8

// CloneSession is the clone session through which the program sends
// PAUSE frames and CNs out of port p: the controller must create it,
// sending to p (controlplane.Session.SetCloneSession).
func CloneSession(port uint32) uint32 { return port + 1 }
