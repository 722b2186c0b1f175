//go:build linux

package emulate

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/fabric"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/scenario"
	"github.com/p4rcm/p4rcm/switchproc"
)

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

// Scale stretches time and shrinks rates by one factor and keeps bytes.
func TestScale(t *testing.T) {
	cfg := build(t, `
name: s
stop: 1ms
topology: {kind: dumbbell, left: 1, right: 1, host_rate: 100G, bottleneck_rate: 50G, delay: 2us}
workload:
  kind: flows
  flows: [{src: 0, dst: 1, size: 1MB, start: 10us}]
scheme: rcm
dcqcn: {preset: mellanox}
switch: {buffer: 2MB, pfc_xoff: 100KB}
`)
	s, k, err := Scale(cfg, 100e6)
	if err != nil {
		t.Fatal(err)
	}
	if k != 1000 {
		t.Fatalf("k = %g, want 1000", k)
	}
	for i, l := range s.Topology.Links {
		o := cfg.Topology.Links[i]
		if l.Rate != o.Rate/1000 || l.Delay != o.Delay*1000 {
			t.Errorf("link %d: %g b/s %d ps from %g b/s %d ps", i, l.Rate, l.Delay, o.Rate, o.Delay)
		}
	}
	if s.Flows[0].Start != cfg.Flows[0].Start*1000 || s.Flows[0].Size != cfg.Flows[0].Size {
		t.Errorf("flow: start %d size %d", s.Flows[0].Start, s.Flows[0].Size)
	}
	if s.StopAt != cfg.StopAt*1000 || s.RTO != cfg.RTO*1000 {
		t.Errorf("stop %d, RTO %d", s.StopAt, s.RTO)
	}
	if s.RCM.CNInterval != cfg.RCM.CNInterval*1000 || s.RCM.RefRate != cfg.RCM.RefRate/1000 || s.RCM.Window != cfg.RCM.Window {
		t.Errorf("RCM: %+v", *s.RCM)
	}
	if s.DCQCN.Timer != cfg.DCQCN.Timer*1000 || s.DCQCN.KMin != cfg.DCQCN.KMin || s.Buffer != cfg.Buffer || s.PFCXOFF != cfg.PFCXOFF {
		t.Errorf("DCQCN timer %d, KMin %g, buffer %g, XOFF %g", s.DCQCN.Timer, s.DCQCN.KMin, s.Buffer, s.PFCXOFF)
	}
	// The marking curve a port gets is the same in bytes.
	m, om := s.Marking(s.Topology.Links[0].Rate, s.Topology.Links[0].Rate), cfg.Marking(cfg.Topology.Links[0].Rate, cfg.Topology.Links[0].Rate)
	if m.KMin != om.KMin || m.KMax != om.KMax {
		t.Errorf("marking %+v, unscaled %+v", m, om)
	}
	if cfg.Topology.Links[0].Rate != 100e9 || cfg.Flows[0].Start != 10e6 {
		t.Error("Scale changed its input")
	}
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
	// RCM's ablations, but SAR's, are the simulator's: rcm.p4 has no switch
	// for them, and a run that ignored one would measure the full RCM.
	const rcmStar = "name: a\ntopology: {kind: star, hosts: 3, host_rate: 100G}\nworkload: {kind: incast, senders: [0, 1], receiver: 2, size: 1KB}\n"
	for _, key := range []string{"crd", "cfr", "hold", "rcc", "limit", "cn"} {
		cfg := build(t, rcmStar+"scheme: rcm\nrcm: {"+key+": false}\n")
		if err := Check(&cfg, Options{}); err == nil || !strings.Contains(err.Error(), "rcm.p4 cannot switch that mechanism off") {
			t.Errorf("rcm.%s=false: %v, want a refusal", key, err)
		}
	}
	for _, scheme := range []string{"rcm", "rcm-rcc"} {
		cfg := build(t, rcmStar+"scheme: "+scheme+"\n")
		if err := Check(&cfg, Options{}); err != nil {
			t.Errorf("scheme %s: %v", scheme, err)
		}
	}
}

// Under ldcp, Scale scales LDCP's settings by the same rule: the port a
// switch gets keeps K, buf_max and the curve in bytes; the senders' base
// RTT stretches by k, so their BDP in packets, and their initial window,
// stay; Check takes ldcp and refuses the rate variant, which the agents
// do not run.
func TestScaleLDCP(t *testing.T) {
	cfg := build(t, `
name: s
topology: {kind: dumbbell, left: 1, right: 1, host_rate: 100G, bottleneck_rate: 50G, delay: 2us}
workload:
  kind: flows
  flows: [{src: 0, dst: 1, size: 1MB}]
scheme: ldcp
`)
	s, k, err := Scale(cfg, 100e6)
	if err != nil {
		t.Fatal(err)
	}
	if s.LDCP.RefRate != cfg.LDCP.RefRate/k || s.LDCP.ProbeTimeout != cfg.LDCP.ProbeTimeout*1000 {
		t.Errorf("LDCP ref rate %g, probe timeout %d, from %g and %d", s.LDCP.RefRate, s.LDCP.ProbeTimeout, cfg.LDCP.RefRate, cfg.LDCP.ProbeTimeout)
	}
	for i := range s.Topology.Links {
		r, or := s.Topology.Links[i].Rate, cfg.Topology.Links[i].Rate
		m, om := s.Marking(r, s.Topology.Links[0].Rate), cfg.Marking(or, cfg.Topology.Links[0].Rate)
		if m.WREDK != om.WREDK || m.BufMax != om.BufMax || m.KMin != om.KMin || m.WREDK == 0 || m.BufMax == 0 {
			t.Errorf("link %d: marking %+v, unscaled %+v", i, m, om)
		}
	}
	rtt, err := baseRTTs(&s)
	if err != nil {
		t.Fatal(err)
	}
	ortt, err := baseRTTs(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rtt(0, 1), ortt(0, 1)*1000; got < want-time.Microsecond || got > want+time.Microsecond {
		t.Errorf("base RTT %v scaled, %v unscaled: want 1000 times", got, ortt(0, 1))
	}
	if err := Check(&s, Options{Rate: 100e6}); err != nil {
		t.Errorf("ldcp refused: %v", err)
	}
	s.CC = "ldcp-rate"
	if err := Check(&s, Options{Rate: 100e6}); err == nil || !strings.Contains(err.Error(), "ldcp-rate") {
		t.Errorf("ldcp-rate: %v", err)
	}
}

// Under hpcc, timely and dctcp Scale scales each scheme's settings by the
// agents' rule, Check takes them, and HPCC's senders get the simulator's
// T and W: on the dumbbell, 2 x 3 links of 2 us and 1,000 bytes at 100,
// 50 and 100 Gb/s, 12.32 us, and that at the 50 Gb/s bottleneck, 77,000
// bytes; scaled, T stretches by k and W stays.
func TestScaleAckSchemes(t *testing.T) {
	const topology = `
name: s
topology: {kind: dumbbell, left: 1, right: 1, host_rate: 100G, bottleneck_rate: 50G, delay: 2us}
workload:
  kind: flows
  flows: [{src: 0, dst: 1, size: 1MB}]
`
	for _, scheme := range []string{"hpcc", "timely", "dctcp"} {
		cfg := build(t, topology+"scheme: "+scheme+"\n")
		s, k, err := Scale(cfg, 100e6)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(&s, Options{Rate: 100e6}); err != nil {
			t.Errorf("%s refused: %v", scheme, err)
		}
		switch scheme {
		case "hpcc":
			if s.HPCC.RefRate != cfg.HPCC.RefRate/k || s.HPCC.MinRate != cfg.HPCC.MinRate/k {
				t.Errorf("HPCC %+v from %+v", s.HPCC, cfg.HPCC)
			}
			rtt, bdp, err := ns3Paths(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rtt(0, 1) != 12320*time.Nanosecond || bdp(0, 1) != 77000 {
				t.Errorf("T %v, W %g bytes; want 12.32us and 77000", rtt(0, 1), bdp(0, 1))
			}
			srtt, sbdp, _ := ns3Paths(&s)
			if got := srtt(0, 1); got < 12320*time.Microsecond-time.Microsecond || got > 12320*time.Microsecond+time.Microsecond || sbdp(0, 1) != 77000 {
				t.Errorf("scaled: T %v, W %g bytes; want 12.32 ms and 77000", got, sbdp(0, 1))
			}
		case "timely":
			if s.TIMELY.THigh != cfg.TIMELY.THigh*1000 || s.TIMELY.RAI != cfg.TIMELY.RAI/k {
				t.Errorf("TIMELY %+v from %+v", s.TIMELY, cfg.TIMELY)
			}
		case "dctcp":
			r, or := s.Topology.Links[0].Rate, cfg.Topology.Links[0].Rate
			if m, om := s.Marking(r, r), cfg.Marking(or, or); m.KMin != om.KMin || m.KMin == 0 || s.DCTCP.RAI != cfg.DCTCP.RAI/k {
				t.Errorf("DCTCP: marking %+v, unscaled %+v; RAI %g from %g", m, om, s.DCTCP.RAI, cfg.DCTCP.RAI)
			}
		}
	}
}

// RateFor keeps the target's default rate for up to two switches and
// shares it out over more.
func TestRateFor(t *testing.T) {
	one := build(t, `
name: one
stop: 1ms
topology: {kind: star, hosts: 2, host_rate: 100G}
workload: {kind: flows, flows: [{src: 0, dst: 1, size: 1MB}]}
`)
	if got, want := RateFor(switchproc.TargetGo, &one), DefaultRate(switchproc.TargetGo, one.MTU); got != want {
		t.Errorf("one switch: %g b/s, want the default %g", got, want)
	}
	six, err := scenario.LoadPreset("rcm-incast-victim")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := six.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := RateFor(switchproc.TargetGo, &cfg), DefaultRate(switchproc.TargetGo, cfg.MTU)/3; math.Abs(got-want) > 1 {
		t.Errorf("six switches: %g b/s, want a third of the default, %g", got, want)
	}
}

// RCM's times must fit rcm.p4's 32-bit nanoseconds once stretched: on
// BMv2 the victim's 100 us SAR pin would take 24.8 s at the shared-out
// default rate, so RCM's default is the lowest rate at which it fits
// (DCQCN's, which programs no such time, stays), and a lower rate given
// is refused, naming the time and the rate to use.
func TestMinRate(t *testing.T) {
	victim := func(scheme string) sim.Config {
		s, err := scenario.LoadPreset("rcm-incast-victim")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetFrom("test", "scheme", scheme); err != nil {
			t.Fatal(err)
		}
		cfg, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	rcmCfg, dcqcnCfg := victim("rcm"), victim("dcqcn")
	shared := DefaultRate(switchproc.TargetBMv2, rcmCfg.MTU) / 3
	least, what, d := MinRate(&rcmCfg)
	if what != "rcm.pin_idle" || d != 100*time.Microsecond || least <= shared {
		t.Fatalf("MinRate: %g b/s for %s %v; want rcm.pin_idle's 100us to set one above BMv2's shared-out default %g", least, what, d, shared)
	}
	if got := RateFor(switchproc.TargetBMv2, &rcmCfg); got != least {
		t.Errorf("RCM on BMv2: %g b/s, want MinRate's %g", got, least)
	}
	scaled, _, err := Scale(rcmCfg, least)
	if err != nil {
		t.Fatal(err)
	}
	if pin := time.Duration(scaled.RCM.PinIdle / 1000); pin > fabric.ProgramTimeMax {
		t.Errorf("at MinRate the pin stretches to %v, past %v", pin, fabric.ProgramTimeMax)
	}
	if got := RateFor(switchproc.TargetBMv2, &dcqcnCfg); math.Abs(got-shared) > 1 {
		t.Errorf("DCQCN on BMv2: %g b/s, want the shared-out default %g", got, shared)
	}
	err = Check(&rcmCfg, Options{Target: switchproc.TargetBMv2, Rate: least / 2})
	if err == nil || !strings.Contains(err.Error(), "rcm.pin_idle") || !strings.Contains(err.Error(), "emulate at") {
		t.Errorf("half MinRate: %v, want refused naming rcm.pin_idle and the rate to use", err)
	}
	if err := Check(&rcmCfg, Options{Target: switchproc.TargetBMv2, Rate: least}); err != nil {
		t.Errorf("at MinRate: %v", err)
	}
}

// The switches share a process by default on the Go target, not on
// BMv2, which cannot; a mode that is neither is refused.
func TestProcesses(t *testing.T) {
	if got := (Options{}).processes(); got != ProcessShared {
		t.Errorf("Go target's default %q", got)
	}
	if got := (Options{Target: switchproc.TargetBMv2}).processes(); got != ProcessEach {
		t.Errorf("BMv2's default %q", got)
	}
	cfg := build(t, `
name: s
topology: {kind: fattree, k: 4, host_rate: 100G}
workload: {kind: flows, flows: [{src: 0, dst: 1, size: 1MB}]}
scheme: dcqcn
`)
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Target: switchproc.TargetBMv2, Processes: ProcessShared}, "only the Go target"},
		{Options{Processes: "some"}, `processes "some": want`},
	} {
		if err := Check(&cfg, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}
