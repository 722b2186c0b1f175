//go:build linux

package emulate

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/scenario"
)

// TestMain removes the p4switch the tests built.
func TestMain(m *testing.M) { p4switchbin.Main(m) }

// build is a scenario given as YAML, with its flows.
func build(t *testing.T, yaml string) sim.Config {
	t.Helper()
	s, err := scenario.Parse([]byte(yaml), "test.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// run emulates cfg on the target the environment chooses.
func run(t *testing.T, cfg sim.Config, o Options) *Outcome {
	t.Helper()
	if err := netlab.Available(); err != nil {
		t.Skip(err)
	}
	o.Target, o.Binary = p4switchbin.Choose(t)
	o.Log = func(s string) { t.Log(s) }
	if os.Getenv("P4RCM_EMULATE_LOGS") != "" {
		o.LogDir = os.Getenv("P4RCM_EMULATE_LOGS")
	}
	out, err := Run(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A 4:1 incast with PFC and no end-to-end congestion control: the
// receiver's port is four times oversubscribed, the switch pauses the
// senders, and nothing is lost.
func TestIncastPauses(t *testing.T) {
	cfg := build(t, `
name: incast-4
topology: {kind: star, hosts: 5, host_rate: 100G, delay: 1us}
workload: {kind: incast, senders: [0, 1, 2, 3], receiver: 4, size: 150KB}
scheme: pfc
switch: {buffer: 200KB, pfc_xoff: 40KB}
`)
	out := run(t, cfg, Options{})
	res := out.Results
	if res.Completed != 4 {
		t.Fatalf("%d of 4 flows completed", res.Completed)
	}
	var pausesSent int64
	for _, p := range res.Ports {
		pausesSent += p.PausesSent
		if p.Drops != 0 {
			t.Errorf("switch port %d dropped %d", p.Port, p.Drops)
		}
	}
	var sent, received, retx int64
	for _, s := range out.Agents {
		sent += s.DataSent
		received += s.DataReceived
		retx += s.Retransmits
	}
	if pausesSent == 0 || res.HostPauses == 0 {
		t.Errorf("PAUSEs: %d sent by the switch, %d received by hosts", pausesSent, res.HostPauses)
	}
	if retx != 0 || sent != received || sent != 4*150 {
		t.Errorf("data packets: %d sent, %d received, %d sent again; want 600, none lost", sent, received, retx)
	}
	for _, f := range res.Flows {
		t.Logf("flow %d: FCT %v (ideal %v), slowdown %.2f", f.ID, time.Duration(f.FCT/1000), time.Duration(f.Ideal/1000), f.Slowdown)
	}
	t.Logf("K %.0f, rate %.1f Mb/s, wall %v; PAUSEs sent %d, received by hosts %d", out.K, out.Rate/1e6, out.Wall, pausesSent, res.HostPauses)
}

// A scenario the machine cannot emulate is refused before anything is
// made.
func TestCheckRefuses(t *testing.T) {
	for _, c := range []struct{ topology, want string }{
		{"{kind: leafspine, leaves: 12, spines: 12, hosts_per_leaf: 1, oversubscription: 1}", "24 switches; one machine emulates at most 20"},
		{"{kind: star, hosts: 20, host_rate: 100G}", "20 hosts; one machine emulates at most 16"},
	} {
		cfg := build(t, "name: big\ntopology: "+c.topology+"\nworkload: {kind: incast, senders: [0, 1], receiver: 2, size: 1KB}\n")
		if err := Check(&cfg, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.topology, err, c.want)
		}
	}
	small := build(t, `
name: small
topology: {kind: star, hosts: 3, host_rate: 100G}
workload: {kind: incast, senders: [0, 1], receiver: 2, size: 1KB}
`)
	if err := Check(&small, Options{Rate: 10e9}); err == nil || !strings.Contains(err.Error(), "Mb/s") {
		t.Errorf("10 Gb/s: %v", err)
	}
}
