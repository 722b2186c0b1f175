package fabric

import (
	"bytes"
	"fmt"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/scenario"
	"github.com/p4rcm/p4rcm/tutorialjson"
)

// config is the default preset's network under scheme, on a fat tree
// of arity k.
// triangle is the fabric of testdata/triangle.json, a tutorials
// topology of three switches.
func triangle(t *testing.T) *Fabric {
	t.Helper()
	tt, err := tutorialjson.LoadTopology("testdata/triangle.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := FromTutorial(tt)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// planFatTree is the plan for the default preset's fabric as a k=4 fat
// tree under scheme.
func planFatTree(t *testing.T, scheme string) (*sim.Config, []Intent) {
	t.Helper()
	cfg := config(t, scheme, 4)
	f, err := FromTopology(cfg.Topology)
	if err != nil {
		t.Fatal(err)
	}
	intents, err := f.Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, intents
}

func config(t testing.TB, scheme string, k int) *sim.Config {
	t.Helper()
	s, err := scenario.LoadPreset("default")
	if err != nil {
		t.Fatal(err)
	}
	for path, v := range map[string]string{"scheme": scheme, "topology.k": fmt.Sprint(k)} {
		if err := s.SetFrom("test", path, v); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := s.BuildNetwork()
	if err != nil {
		t.Fatal(err)
	}
	return &cfg
}

// find is the entry of table whose first match value is key.
func find(t *testing.T, in Intent, table string, key []byte) controlplane.Entry {
	t.Helper()
	for _, e := range in.Entries {
		if e.Table == table && len(e.Match) > 0 && bytes.Equal(e.Match[0].Value, key) {
			return e
		}
	}
	t.Fatalf("switch %s: no %s entry for %x", in.Name, table, key)
	return controlplane.Entry{}
}

func param(e controlplane.Entry, name string) uint64 {
	for _, p := range e.Params {
		if p.Name == name {
			var v uint64
			for _, b := range p.Value {
				v = v<<8 | uint64(b)
			}
			return v
		}
	}
	return math.MaxUint64
}

// A tutorials triangle: addresses and port numbers as the file gives
// them, next-hop MACs of the peer's port, CNs towards switches only, RED
// scaled to each port's rate, PFC from buffercalc, a clone session per
// port.
func TestPlanTriangle(t *testing.T) {
	f := triangle(t)
	cfg := config(t, "rcm", 4)
	cfg.PFCXOFF = 0 // buffercalc's static threshold for each port
	intents, err := f.Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(intents) != 3 || intents[0].Name != "s1" {
		t.Fatalf("intents for %d switches, first %q; want s1, s2, s3", len(intents), intents[0].Name)
	}
	s1, _ := f.Switch("s1")
	s2, _ := f.Switch("s2")
	in := intents[0]
	direct := find(t, in, p4.TableIPv4LPM, net.IPv4(10, 0, 1, 1).To4())
	if direct.Action != p4.ActionSetNexthop || param(direct, "port") != 1 || param(direct, "dst_mac") != 0x080000000111 {
		t.Errorf("s1's route to h1: %+v, want port 1 to h1's MAC", direct)
	}
	via := find(t, in, p4.TableIPv4LPM, net.IPv4(10, 0, 2, 2).To4())
	if param(via, "port") != 2 || !bytes.Equal(via.Params[2].Value, PortMAC(s2, 2)) || !bytes.Equal(via.Params[1].Value, PortMAC(s1, 2)) {
		t.Errorf("s1's route to h2: %+v, want port 2, from s1's port-2 MAC to s2's port-2 MAC", via)
	}
	host := find(t, in, p4.TableIngressPortConfig, u16(1))
	fabricPort := find(t, in, p4.TableIngressPortConfig, u16(2))
	if param(host, "cn_enabled") != 0 || param(fabricPort, "cn_enabled") != 1 {
		t.Errorf("CNs: host port %d, switch port %d; want 0 and 1", param(host, "cn_enabled"), param(fabricPort, "cn_enabled"))
	}
	xoff, xon := param(fabricPort, "xoff_bytes"), param(fabricPort, "xon_bytes")
	frame := uint64(cfg.MTU + dataplane.RoCEHeaders + dataplane.EthOverhead)
	// t_PFC = (B - p n t_flight) / (p n): 3 ports, 1 priority, the
	// headroom of a 10 Gb/s link with 1 us of cable.
	b := buffercalc.Buffer{Size: cfg.Buffer, Ports: 3, Priorities: 1, Headroom: sim.HeadroomFor(10e9, 1e6, cfg.MTU), MTU: float64(frame)}
	if want := uint64(b.Static().XOFF); xoff != want || xoff-xon != 2*frame {
		t.Errorf("PFC on a switch port: XOFF %d, XON %d; want XOFF %d and XON two %d-byte frames below", xoff, xon, want, frame)
	}
	// RED: the simulator's curve at 100 Gb/s, a tenth of it at 10 Gb/s.
	want := cfg.Marking(100e9, 100e9)
	if k := param(find(t, in, p4.TableREDConfig, u16(1)), "kmin_bytes"); k != uint64(want.KMin) || k == 0 {
		t.Errorf("Kmin on a 100 Gb/s port = %d, want the simulator's %v", k, want.KMin)
	}
	if k := param(find(t, in, p4.TableREDConfig, u16(2)), "kmin_bytes"); k != uint64(want.KMin/10) {
		t.Errorf("Kmin on a 10 Gb/s port = %d, want %v", k, want.KMin/10)
	}
	if len(in.Clones) != 3 || in.Clones[1] != (Clone{Session: 3, Port: 2}) {
		t.Errorf("clones %v, want sessions 2, 3, 4 to ports 1, 2, 3", in.Clones)
	}
	rcc := find(t, in, p4.TableRCMConfig, u16(3))
	if param(rcc, "high_priority") != 0 || param(rcc, "low_priority") != 0 {
		t.Errorf("RCM with one queue per port: queues %d and %d, want 0 and 0 (RCC counts only)", param(rcc, "high_priority"), param(rcc, "low_priority"))
	}
	// Switches with priority queues: RCC's held packets go to queue 0,
	// the rest to queue 1.
	f.PriorityQueues = 2
	if intents, err = f.Plan(cfg); err != nil {
		t.Fatal(err)
	}
	rcc = find(t, intents[0], p4.TableRCMConfig, u16(3))
	if param(rcc, "high_priority") != 1 || param(rcc, "low_priority") != 0 {
		t.Errorf("RCM with two queues per port: queues %d and %d, want 1 and 0", param(rcc, "high_priority"), param(rcc, "low_priority"))
	}
	// RCC work-conserving (the model's default): no rate limit. Without
	// it, the limit's window is W's time at the port's rate.
	if w := param(find(t, intents[0], p4.TableRCMConfig, u16(2)), "window_ns"); w != 0 {
		t.Errorf("work-conserving RCC: window_ns %d, want 0", w)
	}
	cfg.RCM.WorkConserving = false
	if intents, err = f.Plan(cfg); err != nil {
		t.Fatal(err)
	}
	rcc = find(t, intents[0], p4.TableRCMConfig, u16(2))
	if w, want := param(rcc, "window_ns"), math.Round(float64(param(rcc, "window_bytes"))*8/10e9*1e9); w == 0 || float64(w) != want {
		t.Errorf("RCC as a rate limit on a 10 Gb/s port: window_ns %d, want %v (window_bytes %d at 10 Gb/s)", w, want, param(rcc, "window_bytes"))
	}
}

// A k=4 fat tree: an edge switch reaches hosts of other pods through an
// ECMP group of its two uplinks, one group for all of them, with a SAR
// group under RCM and none under DCQCN.
func TestPlanFatTree(t *testing.T) {
	for _, scheme := range []string{"rcm", "dcqcn"} {
		_, intents := planFatTree(t, scheme)
		if len(intents) != 20 {
			t.Fatalf("%d intents, want 20 switches", len(intents))
		}
		count := map[string]int{}
		groups := map[string]int{}
		for _, e := range intents[0].Entries {
			count[e.Table]++
			if e.Table == p4.TableIPv4LPM {
				groups[e.Action]++
			}
		}
		if count[p4.TableIPv4LPM] != 16 || groups[p4.ActionSetNexthop] != 2 || groups[p4.ActionSetECMPGroup] != 14 || count[p4.TableECMPMember] != 2 {
			t.Errorf("%s: edge switch %s: %v, routes %v; want 16 routes (2 direct, 14 by one 2-member group)", scheme, intents[0].Name, count, groups)
		}
		wantSAR := map[string]int{"rcm": 1, "dcqcn": 0}[scheme]
		if count[p4.TableSARGroup] != wantSAR || (count[p4.TableRCMConfig] > 0) != (scheme == "rcm") {
			t.Errorf("%s: %d SAR groups and %d rcm_config entries; want %d and RCM only under rcm", scheme, count[p4.TableSARGroup], count[p4.TableRCMConfig], wantSAR)
		}
	}
}

// A host's gateway is the MAC of the switch port it is cabled to: h2 is
// on s2's port 1.
func TestGateway(t *testing.T) {
	f := triangle(t)
	h2, ok := f.Host("h2")
	s2, ok2 := f.Switch("s2")
	if !ok || !ok2 {
		t.Fatal("h2 or s2 missing")
	}
	gw, err := f.Gateway(h2)
	if err != nil || !bytes.Equal(gw, PortMAC(s2, 1)) {
		t.Errorf("gateway of h2: %v, %v; want %v", gw, err, PortMAC(s2, 1))
	}
	if _, err := f.Gateway(s2); err == nil {
		t.Error("a switch has a gateway")
	}
	if _, ok := f.Host("s1"); ok {
		t.Error("s1 named as a host")
	}
}

// Under ldcp (PFC off) every switch port gets the model's dual policy
// and buf_max in its set_red entry, and no set_port entry: with PFC off
// at every ingress port all priorities are lossy, so rcm.p4 drops any
// packet past buf_max as the model's switch does.
func TestPlanLDCP(t *testing.T) {
	cfg, intents := planFatTree(t, "ldcp")
	in := intents[0]
	want := cfg.Marking(100e9, 100e9)
	if want.BufMax == 0 || want.WREDK == 0 {
		t.Fatalf("the ldcp preset's marking %+v has no buf_max or WRED K", want)
	}
	for _, port := range []uint16{1, 3} {
		red := find(t, in, p4.TableREDConfig, u16(port))
		if got := param(red, "buf_max_bytes"); got != uint64(want.BufMax) {
			t.Errorf("%s port %d: buf_max_bytes %d, want the model's %v", in.Name, port, got, want.BufMax)
		}
		if got := param(red, "wred_k_bytes"); got != uint64(want.WREDK) {
			t.Errorf("%s port %d: wred_k_bytes %d, want the model's %v", in.Name, port, got, want.WREDK)
		}
	}
	for _, e := range in.Entries {
		if e.Table == p4.TableIngressPortConfig {
			t.Errorf("%s: a set_port entry under ldcp (PFC off): %+v", in.Name, e)
		}
	}
}

// Under hpcc every switch port pushes INT with its link's rate (a k=4
// fat tree at 100 Gb/s: 100,000,000 kb/s); under the other schemes no
// port does. rcm-hpcc keeps RCM's entries beside INT.
func TestPlanHPCC(t *testing.T) {
	for _, scheme := range []string{"hpcc", "rcm-hpcc", "dcqcn", "dctcp"} {
		cfg, intents := planFatTree(t, scheme)
		for _, in := range intents {
			n := 0
			for _, e := range in.Entries {
				if e.Table != p4.TableINTConfig {
					continue
				}
				n++
				if got := param(e, "rate_kbps"); got != 100_000_000 {
					t.Errorf("%s: %s: INT rate %d kb/s, want 100000000", scheme, in.Name, got)
				}
			}
			want := 0
			if cfg.CC == "hpcc" {
				want = len(cfg.Topology.Adjacency()[in.Node])
			}
			if n != want {
				t.Errorf("%s: %s: %d int_config entries, want %d (one a port under HPCC)", scheme, in.Name, n, want)
			}
		}
	}
}

// LongestTime names the longest time the plan gives the switches, and a
// pin past what rcm.p4 holds (32-bit nanoseconds) is refused, not cut
// to its low 32 bits (a k=4 fat tree: its ECMP groups get SAR's pins).
func TestLongestTime(t *testing.T) {
	cfg := config(t, "rcm", 4)
	f, err := FromTopology(cfg.Topology)
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.RCM
	want := max(time.Duration(r.CNInterval/1000), time.Duration(r.CNHold/1000), time.Duration(r.PinIdle/1000))
	if what, d := LongestTime(cfg); d < want || what == "" {
		t.Errorf("longest %s %v, want at least the CN interval, the CN hold and the pin (%v)", what, d, want)
	}
	r.PinIdle = 5e12 // 5 s in picoseconds
	if what, d := LongestTime(cfg); what != "rcm.pin_idle" || d != 5*time.Second {
		t.Errorf("longest %s %v, want rcm.pin_idle 5s", what, d)
	}
	if _, err := f.Plan(cfg); err == nil || !strings.Contains(err.Error(), "rcm.pin_idle: 5s") {
		t.Errorf("a 5 s pin: %v, want it refused", err)
	}
	cfg.RCM = nil
	if what, d := LongestTime(cfg); d != 0 {
		t.Errorf("without RCM: %s %v, want none", what, d)
	}
}
