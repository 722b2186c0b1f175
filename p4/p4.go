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

// DeviceConfig is BMv2's device configuration for P4Runtime's
// SetForwardingPipelineConfig: the compiled JSON.
func DeviceConfig() []byte { return bmv2JSON }

// Names in the P4Info, as the controller uses them.
const (
	// Forwarding (ingress).
	TableIPv4LPM       = "RcmIngress.ipv4_lpm"
	TableECMPMember    = "RcmIngress.ecmp_member"
	ActionSetNexthop   = "RcmIngress.set_nexthop"
	ActionSetECMPGroup = "RcmIngress.set_ecmp_group"
	ActionDrop         = "RcmIngress.drop"
	CounterRxFrames    = "RcmIngress.rx_frames"
	CounterNoRoute     = "RcmIngress.no_route"
	RegisterQueueBytes = "queue_bytes"
	// RED/ECN and WRED (egress).
	TableREDConfig   = "RcmEgress.red_config"
	ActionSetRED     = "RcmEgress.set_red"
	CounterECNMarks  = "RcmEgress.ecn_marks"
	CounterWREDDrops = "RcmEgress.wred_drops"
)
