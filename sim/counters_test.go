package sim

import (
	"testing"

	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
)

// TestPFCFramesCountedApart runs a 5:1 incast over a dumbbell with PFC
// alone (four senders on the left, one beside the receiver on the right),
// so that the right switch pauses the left one and its own sender and the
// left switch pauses its senders, and checks that PAUSE and RESUME frames are counted
// apart and add up: every frame a switch port sends reaches the port or
// host NIC at the other end of its link, so what switches send to hosts
// is what hosts receive, kind by kind, and likewise between switches.
func TestPFCFramesCountedApart(t *testing.T) {
	tp, err := topo.Dumbbell(topo.DumbbellOptions{Left: 4, Right: 2, HostRate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	var flows []workload.Flow
	for i := 0; i < 4; i++ {
		flows = append(flows, workload.Flow{Src: i, Dst: 4, Size: 1_000_000, Priority: 3})
	}
	flows = append(flows, workload.Flow{Src: 5, Dst: 4, Size: 1_000_000, Priority: 3})
	cfg := Config{Seed: 1, Topology: tp, Flows: flows, MTU: 1000, AckInterval: 1, CC: "none",
		DCQCN: dcqcn.Mellanox(), PFC: true, Buffer: 1e6, PFCXOFF: 50e3, RTO: ms}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.Run()
	r := n.Results()
	if len(r.Faults) != 0 || r.Completed != len(flows) {
		t.Fatalf("faults %v, %d of %d flows completed", r.Faults, r.Completed, len(flows))
	}
	var toHosts, toSwitches, switchesGot [2]int64 // PAUSE, RESUME
	for _, p := range r.Ports {
		sent := &toSwitches
		if tp.Nodes[p.Peer].Kind == topo.Host {
			sent = &toHosts
		}
		sent[0] += p.PausesSent
		sent[1] += p.Resumes
		switchesGot[0] += p.PausesReceived
		switchesGot[1] += p.ResumesReceived
	}
	t.Logf("to hosts: %d PAUSE, %d RESUME; hosts got %d, %d; between switches: %d PAUSE, %d RESUME; switches got %d, %d",
		toHosts[0], toHosts[1], r.HostPauses, r.HostResumes, toSwitches[0], toSwitches[1], switchesGot[0], switchesGot[1])
	if toHosts[0] == 0 || toHosts[1] == 0 || toSwitches[0] == 0 || toSwitches[1] == 0 {
		t.Fatalf("the incast should make both switches pause and resume their upstream")
	}
	if r.HostPauses != toHosts[0] || r.HostResumes != toHosts[1] {
		t.Errorf("hosts received %d PAUSE and %d RESUME, switches sent them %d and %d", r.HostPauses, r.HostResumes, toHosts[0], toHosts[1])
	}
	if switchesGot != toSwitches {
		t.Errorf("switches received %v (PAUSE, RESUME), other switches sent them %v", switchesGot, toSwitches)
	}
}
