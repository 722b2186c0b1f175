package scenario

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/report"
)

func TestEveryPresetBuilds(t *testing.T) {
	ps := Presets()
	if len(ps) < 2 {
		t.Fatalf("only %d presets", len(ps))
	}
	for _, p := range ps {
		t.Run(p.Name, func(t *testing.T) {
			s, err := LoadPreset(p.Name)
			if err != nil {
				t.Fatal(err)
			}
			if p.Description == "" {
				t.Error("no description")
			}
			cfg, err := s.Build()
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Flows) == 0 || cfg.Topology == nil {
				t.Errorf("empty scenario: %d flows", len(cfg.Flows))
			}
		})
	}
}

func TestBenchPresetReadsTheNS3Files(t *testing.T) {
	s, err := LoadPreset("bench-fat320")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(cfg.Topology.Hosts()); got != 320 {
		t.Errorf("%d hosts, want 320", got)
	}
	if len(cfg.Flows) != 6706 || cfg.Flows[0].Size != 24375 {
		t.Errorf("%d flows, first %+v; want 6706 starting with 24375 B", len(cfg.Flows), cfg.Flows[0])
	}
}

// TestDeterminism runs the same scenario twice and compares every output
// file byte for byte, under DCQCN, both LDCPs (LDCP's fast start has WRED
// drop packets, so go-back-N is covered too), HPCC, TIMELY and DCTCP.
func TestDeterminism(t *testing.T) {
	for _, scheme := range []string{"dcqcn", "ldcp", "ldcp-rate", "hpcc", "timely", "dctcp"} {
		t.Run(scheme, func(t *testing.T) { testDeterminism(t, scheme) })
	}
}

func testDeterminism(t *testing.T, scheme string) {
	var outs [2]map[string][]byte
	for i := range outs {
		s, err := LoadPreset("default")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Set("workload.duration", "1ms"); err != nil {
			t.Fatal(err)
		}
		if err := s.Set("scheme", scheme); err != nil {
			t.Fatal(err)
		}
		cfg, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		cfg.QueueSampling = sim.QueueSampling{Interval: 10_000_000, Max: 5000}
		cfg.CCSampling = sim.CCSampling{Interval: 10_000_000, Flows: []int{0, 1, 2}}
		res, err := sim.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Completed != len(res.Flows) || len(res.Faults) > 0 || scheme == "dcqcn" && len(res.Drops) > 0 || scheme == "ldcp" && res.Retransmits == 0 {
			t.Fatalf("run %d: %d/%d completed, faults %v, drops %v", i, res.Completed, len(res.Flows), res.Faults, res.Drops)
		}
		dir := t.TempDir()
		files, err := report.WriteDir(dir, res, report.DirOptions{})
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = map[string][]byte{}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			outs[i][filepath.Base(f)] = data
		}
	}
	if len(outs[0]) < 5 {
		t.Fatalf("only %d files written", len(outs[0]))
	}
	for name, a := range outs[0] {
		if !bytes.Equal(a, outs[1][name]) {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
	}
}

func TestErrorsNameFileLineAndField(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown key", "topology: {kind: fattree}\nworklaod: {kind: poisson}\n", "bad.yaml:2: unknown field \"worklaod\""},
		{"syntax at the end", "topology: {kind: star\n", "bad.yaml:2: did not find expected ',' or '}' (a { section is not closed"},
		{"syntax on line 2", "name: x\ntopology: {kind: star\nworkload: {kind: poisson}\n", "bad.yaml:2: did not find expected ',' or '}'"},
		{"list not closed", "name: x\ntopology: [star\n", "bad.yaml:2: did not find expected ',' or ']' (a [ list is not closed"},
		{"bad indentation", "name: x\ntopology:\n  kind: fattree\n k: 4\n", "bad.yaml:4: did not find expected key (check the indentation"},
		{"tab", "name: x\ntopology:\n\tkind: fattree\n", "bad.yaml:3: found character that cannot start any token (a tab?"},
		{"bad type", "workload:\n  kind: poisson\n  load: fast\n", "bad.yaml:3: workload.load: \"fast\" is not a number"},
		{"bad size", "name: x\nswitch:\n  buffer: 12XB\n", "bad.yaml:3: switch.buffer: \"12XB\": unknown size unit"},
		{"bad rate", "topology:\n  kind: star\n  hosts: 3\n  host_rate: 40\n", "bad.yaml:4: topology.host_rate"},
		{"bad duration", "workload:\n  kind: poisson\n  duration: 5 parsecs\n", "bad.yaml:3: workload.duration"},
		{"unknown scheme", "scheme: tcp\nworkload: {kind: flows, flows: [{src: 0, dst: 1, size: 1KB}]}\n", "bad.yaml:1: scheme: unknown scheme \"tcp\""},
		{"unknown topology", "topology:\n  kind: torus\nworkload: {kind: flows}\n", "bad.yaml:2: topology.kind: unknown topology \"torus\""},
		{"no workload", "topology: {kind: star, hosts: 3}\n", "workload: the scenario has no workload"},
		{"bad load", "topology: {kind: star, hosts: 3}\nworkload:\n  kind: poisson\n  load: 1.5\n  duration: 1ms\n", "bad.yaml:4: workload.load: 1.5: must be in (0, 1]"},
		{"list for a number", "workload:\n  kind: poisson\n  load: [0.3]\n", "bad.yaml:3: workload.load: want a number, not a list"},
		{"section for a number", "topology:\n  kind: fattree\n  k: {a: 1}\n", "bad.yaml:3: topology.k: want a whole number, not a section"},
		{"k zero", "topology: {kind: fattree, k: 0}\nworkload: {kind: poisson, duration: 1ms}\n", "bad.yaml:1: topology.k: 0: must be an even number >= 2"},
		{"k odd", "topology:\n  kind: fattree\n  k: 5\nworkload: {kind: poisson, duration: 1ms}\n", "bad.yaml:3: topology.k: 5: must be an even number >= 2"},
		{"star of one", "topology:\n  kind: star\n  hosts: 1\nworkload: {kind: poisson, duration: 1ms}\n", "bad.yaml:4: workload: hosts not given: 1 hosts, need at least 2"},
		{"load not given", "workload:\n  kind: poisson\n  duration: 1ms\n", "bad.yaml:1: workload: load not given: must be in (0, 1]"},
		{"group size", "topology: {kind: fattree}\nworkload:\n  kind: poisson\n  load: 0.3\n  duration: 1ms\n  group_size: 5\n", "bad.yaml:6: workload.group_size: 5: 16 hosts are not a multiple of it"},
		{"incast sender is receiver", "topology: {kind: star, hosts: 3}\nworkload:\n  kind: incast\n  senders: [0, 2]\n  receiver: 2\n  size: 1KB\n", "bad.yaml:4: workload.senders.1: host 2 is the Receiver"},
		{"mtu zero", "host: {mtu: 0}\nworkload: {kind: poisson, duration: 1ms}\n", "bad.yaml:1: host.mtu: 0: want the payload of a full packet, 256 to 4096 bytes"},
		{"mtu one", "host:\n  mtu: 1\nworkload: {kind: poisson, duration: 1ms}\n", "bad.yaml:2: host.mtu: 1: want"},
		{"ack interval zero", "host:\n  ack_interval: 0\nworkload: {kind: poisson, duration: 1ms}\n", "bad.yaml:2: host.ack_interval: 0: want 1 or more"},
		{"empty flow list", "topology: {kind: star, hosts: 3}\nworkload:\n  kind: flows\n  flows: []\n", "bad.yaml:4: workload.flows: the list is empty: no flow to simulate"},
		{"no flow generated", "workload:\n  kind: poisson\n  load: 0.3\n  duration: 1ns\n", "bad.yaml:1: workload: the workload generates no flows"},
		{"dcqcn value", "workload: {kind: poisson, load: 0.3, duration: 1ms}\ndcqcn:\n  g: 5\n", "bad.yaml:3: dcqcn.g: must be between 0 and 1, got 5"},
		{"dcqcn kmax below kmin", "workload: {kind: poisson, load: 0.3, duration: 1ms}\ndcqcn:\n  kmin: 500KB\n  kmax: 100KB\n", "bad.yaml:4: dcqcn.kmax: 100000 bytes is below kmin, 500000 bytes"},
		{"pfc beta negative", "workload: {kind: poisson, load: 0.3, duration: 1ms}\nswitch:\n  pfc_beta: -1\n", "bad.yaml:3: switch.pfc_beta: -1: must be positive"},
		{"ecn kmax below kmin", "workload: {kind: poisson, load: 0.3, duration: 1ms}\nswitch:\n  ecn: {kmin: 500KB, kmax: 100KB}\n", "bad.yaml:3: switch.ecn.kmax: 100KB is below kmin 500KB"},
		{"buffer zero", "workload: {kind: poisson, load: 0.3, duration: 1ms}\nswitch:\n  buffer: 0\n", "bad.yaml:3: switch.buffer: 0: want the shared buffer"},
		{"seed zero", "seed: 0\nworkload: {kind: poisson, load: 0.3, duration: 1ms}\n", "bad.yaml:1: seed: 0: seeds start at 1"},
		{"second workload", "topology: {kind: star, hosts: 3}\nworkloads:\n  - {kind: flows, flows: [{src: 0, dst: 1, size: 1KB}]}\n  - kind: poisson\n    load: 0\n    duration: 1ms\n", "bad.yaml:5: workloads.1.load: 0: must be in (0, 1]"},
		{"bad flow host", "topology: {kind: star, hosts: 3}\nworkload:\n  kind: flows\n  flows:\n    - {src: 0, dst: 99, size: 1KB}\n", "bad.yaml:5: workload.flows.0"},
		{"bad value inside a flow-style section", "topology: {kind: star, hosts: 3}\nworkload: {kind: poisson, cdf: websearch, load: fast, duration: 1ms}\n", `bad.yaml:2: workload.load: "fast" is not a number`},
		{"bad dcqcn preset", "topology: {kind: star, hosts: 3}\nworkload: {kind: flows, flows: [{src: 0, dst: 1, size: 1KB}]}\ndcqcn:\n  preset: tcp\n", "bad.yaml:4: dcqcn.preset"},
		{"bad ldcp preset", "scheme: ldcp\nworkload: {kind: flows, flows: [{src: 0, dst: 1, size: 1KB}]}\nldcp:\n  preset: fast\n", "bad.yaml:4: ldcp.preset: unknown LDCP parameter set \"fast\""},
		{"ldcp gamma", "scheme: ldcp\nworkload: {kind: flows, flows: [{src: 0, dst: 1, size: 1KB}]}\nldcp:\n  alpha: 1\n  gamma: 2\n", "bad.yaml:5: ldcp.gamma: must be in (0, 1), got 2"},
		{"ldcp buf_max below k", "workload: {kind: flows, flows: [{src: 0, dst: 1, size: 1KB}]}\nldcp:\n  k: 100KB\n  buf_max: 50KB\n", "bad.yaml:4: ldcp.buf_max: must be finite and at least k and kmax"},
		{"ldcp kmax", "workload: {kind: flows, flows: [{src: 0, dst: 1, size: 1KB}]}\nldcp: {kmin: 30KB}\n", "bad.yaml:2: ldcp.kmax: must be finite and at least kmin"},
		{"ldcp unknown field", "workload: {kind: flows, flows: [{src: 0, dst: 1, size: 1KB}]}\nldcp:\n  bta: 0.5\n", "bad.yaml:3: unknown field \"bta\""},
		{"buf_max negative", "workload: {kind: flows, flows: [{src: 0, dst: 1, size: 1KB}]}\nswitch:\n  buf_max: -1KB\n", "bad.yaml:3: switch.buf_max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(tt.yaml), "bad.yaml", "")
			if err == nil {
				_, err = s.Build()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestSetOverridesAndCreatesSections(t *testing.T) {
	s, err := Parse([]byte("topology: {kind: star, hosts: 3}\nworkload: {kind: flows, flows: [{src: 0, dst: 2, size: 1MB}]}\n"), "x.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"scheme", "pfc"}, {"switch.buffer", "4MB"}, {"dcqcn.preset", "paper"}, {"seed", "42"}} {
		if err := s.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CC != "none" || cfg.Buffer != 4e6 || cfg.DCQCN.Name != "paper" || cfg.Seed != 42 {
		t.Errorf("overrides not applied: cc %s buffer %g dcqcn %s seed %d", cfg.CC, cfg.Buffer, cfg.DCQCN.Name, cfg.Seed)
	}
	if err := s.Set("switch.buffer", "lots"); err == nil || !strings.Contains(err.Error(), "switch.buffer") {
		t.Errorf("bad --set value accepted or badly reported: %v", err)
	}
	if err := s.Set("scheme.x", "1"); err == nil {
		t.Error("--set into a scalar accepted")
	}
}

// An error about an overridden value names the override, not a line of a
// file that never held it.
func TestSetErrorsNameTheOverride(t *testing.T) {
	tests := []struct{ path, value, want string }{
		{"workload.load", "abc", `--set workload.load=abc: workload.load: "abc" is not a number`},
		{"topology.k", "x", `--set topology.k=x: topology.k: "x" is not a whole number`},
		{"rcm.cam_depth", "abc", `--set rcm.cam_depth=abc: rcm.cam_depth: "abc" is not a whole number`},
		{"rcm.foo", "1", `--set rcm.foo=1: unknown field "foo"`},
		// Found only when the scenario is built.
		{"rcm.cam_depth", "1000", `--set rcm.cam_depth=1000: rcm.cam_depth: must be 1..256, got 1000`},
		{"rcm.pin_idle", "0s", `--set rcm.pin_idle=0s: rcm.pin_idle: must be positive`},
	}
	for _, tt := range tests {
		s, err := Parse([]byte("scheme: rcm\ntopology: {kind: fattree, k: 4}\nworkload: {kind: poisson, cdf: websearch, load: 0.5, duration: 1ms}\n"), "x.yaml", "")
		if err != nil {
			t.Fatal(err)
		}
		err = s.Set(tt.path, tt.value)
		if err == nil {
			_, err = s.Build()
		}
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("--set %s=%s: error %v, want %q", tt.path, tt.value, err, tt.want)
		}
	}
}

func TestCloneIsIndependent(t *testing.T) {
	s, err := Parse([]byte("topology: {kind: star, hosts: 3}\nworkload: {kind: flows, flows: [{src: 0, dst: 2, size: 1MB}]}\nscheme: dcqcn\n"), "x.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set("switch.buffer", "4MB"); err != nil {
		t.Fatal(err)
	}
	c, err := s.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set("scheme", "rcm"); err != nil {
		t.Fatal(err)
	}
	a, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	if a.RCM != nil || b.RCM == nil || a.Buffer != 4e6 || b.Buffer != 4e6 {
		t.Errorf("original RCM %v %g, copy RCM %v %g; want only the copy with RCM, both 4 MB", a.RCM != nil, a.Buffer, b.RCM != nil, b.Buffer)
	}
	// The copy still names the override in its messages.
	if err := c.Set("switch.buffer", "x"); err == nil || !strings.HasPrefix(err.Error(), "--set switch.buffer=x") {
		t.Errorf("copy's error %v", err)
	}
}

// Each of RCM's mechanisms is switched off by its own key, the rest
// staying on; rcc is hold's older name; scheme rcm-rcc is rcm with SAR
// off, which rcm.sar cannot contradict.
func TestRCMMechanismSwitches(t *testing.T) {
	build := func(scheme string, sets ...string) (*sim.Config, error) {
		t.Helper()
		s, err := Parse([]byte("scheme: "+scheme+"\ntopology: {kind: fattree, k: 4}\nworkload: {kind: poisson, cdf: websearch, load: 0.5, duration: 100us}\n"), "x.yaml", "")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetAll(sets...); err != nil {
			return nil, err
		}
		cfg, err := s.Build()
		return &cfg, err
	}
	type on struct{ crd, cfr, hold, limit, cn, sar bool }
	get := func(c *sim.Config) on {
		p := c.RCM
		return on{p.CRD, p.CFR, p.Hold, p.Limit, p.CN, p.SAR}
	}
	all := on{true, true, true, true, true, true}
	tests := []struct {
		scheme string
		sets   []string
		want   on
	}{
		{"rcm", nil, all},
		{"rcm", []string{"rcm.crd=false"}, on{false, true, true, true, true, true}},
		{"rcm", []string{"rcm.cfr=false"}, on{true, false, true, true, true, true}},
		{"rcm", []string{"rcm.hold=false"}, on{true, true, false, true, true, true}},
		{"rcm", []string{"rcm.rcc=false"}, on{true, true, false, true, true, true}},
		{"rcm", []string{"rcm.rcc=false", "rcm.hold=false"}, on{true, true, false, true, true, true}},
		{"rcm", []string{"rcm.limit=false"}, on{true, true, true, false, true, true}},
		{"rcm", []string{"rcm.cn=false"}, on{true, true, true, true, false, true}},
		{"rcm", []string{"rcm.sar=false"}, on{true, true, true, true, true, false}},
		{"rcm-rcc", nil, on{true, true, true, true, true, false}},
		{"rcm-rcc", []string{"rcm.sar=false"}, on{true, true, true, true, true, false}},
	}
	for _, tt := range tests {
		cfg, err := build(tt.scheme, tt.sets...)
		if err != nil {
			t.Errorf("%s %v: %v", tt.scheme, tt.sets, err)
			continue
		}
		if got := get(cfg); got != tt.want {
			t.Errorf("%s %v: crd, cfr, hold, limit, cn, sar = %v, want %v", tt.scheme, tt.sets, got, tt.want)
		}
	}
	for _, bad := range []struct {
		scheme string
		sets   []string
		want   string
	}{
		{"rcm-rcc", []string{"rcm.sar=true"}, "rcm.sar: scheme rcm-rcc is rcm without SAR"},
		{"rcm", []string{"rcm.rcc=false", "rcm.hold=true"}, "rcm.rcc: rcc is hold's older name"},
		{"rcm", []string{"rcm.cn=maybe"}, "rcm.cn"},
	} {
		if _, err := build(bad.scheme, bad.sets...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s %v: error %v, want one saying %q", bad.scheme, bad.sets, err, bad.want)
		}
	}
}

// With CRD off no port becomes a root, and so nothing of RCM starts: an
// incast under rcm with rcm.crd=false completes every flow at the same
// picosecond as under dcqcn. With CRD on it does not: host 0's flow has
// half the port and the root holds it back, by as much as a root that
// never idles its port can.
func TestRCMWithoutCRDIsDCQCN(t *testing.T) {
	run := func(scheme string, sets ...string) []int64 {
		t.Helper()
		s, err := Parse([]byte(`topology: {kind: star, hosts: 5, host_rate: 100G, delay: 1us}
workload:
  kind: flows
  flows:
    - {src: 0, dst: 4, size: 500KB}
    - {src: 1, dst: 4, size: 200KB}
    - {src: 1, dst: 4, size: 200KB}
    - {src: 1, dst: 4, size: 200KB}
`), "x.yaml", "")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetAll(append([]string{"scheme=" + scheme}, sets...)...); err != nil {
			t.Fatal(err)
		}
		cfg, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Faults) > 0 || res.Completed != len(res.Flows) {
			t.Fatalf("%s %v: %d of %d flows completed, faults %v", scheme, sets, res.Completed, len(res.Flows), res.Faults)
		}
		var fin []int64
		for _, f := range res.Flows {
			fin = append(fin, f.Finish)
		}
		return fin
	}
	dcqcn := run("dcqcn")
	if off := run("rcm", "rcm.crd=false"); !slices.Equal(off, dcqcn) {
		t.Errorf("finish times with CRD off %v; want DCQCN's %v", off, dcqcn)
	}
	// With CRD on, the port to host 4 is a root and its heavy hitter,
	// host 0's flow, waits while the other three have packets: they
	// finish at least a fifth sooner than under DCQCN (the model: 31%),
	// and it finishes last. The root's scheduler is work-conserving, so
	// the port sends the same bytes without idling and the last flow
	// finishes at DCQCN's last picosecond.
	on := run("rcm")
	last := slices.Max(dcqcn)
	for i, f := range on[1:] {
		if f > dcqcn[i+1]*4/5 {
			t.Errorf("with CRD on host 1's flow %d finished at %d ps against DCQCN's %d; want at least a fifth sooner, the root holding host 0's flow", i+1, f, dcqcn[i+1])
		}
	}
	if on[0] != last || slices.Max(on) != last {
		t.Errorf("with CRD on host 0's flow finished at %d ps, the last at %d; want it last, at DCQCN's last finish %d (a work-conserving root)", on[0], slices.Max(on), last)
	}
}

// TestSetAll applies "path=value" overrides in order and names one
// without a value.
func TestSetAll(t *testing.T) {
	s, err := LoadPreset("default")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAll("workload.load=0.3", "seed=9", "workload.load=0.5"); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Seed != 9 {
		t.Errorf("seed %d, want 9", cfg.Seed)
	}
	if load := s.Workload.Load; load != 0.5 {
		t.Errorf("load %g, want the last override's 0.5", load)
	}
	err = s.SetAll("seed=3", "workload.load")
	if err == nil || !strings.Contains(err.Error(), `"workload.load": want path=value`) {
		t.Errorf("an override without a value: %v", err)
	}
}
