//go:build linux

package agent

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/afpacket"
	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/roce"
	"github.com/p4rcm/p4rcm/sim/workload"
)

// The tests run two agents, hosts 0 and 1, in two network namespaces.
// Between them, in the root namespace, a forwarder copies frames from one
// veth to the other and lets a test drop or mark them: the network the
// agents must cope with, not a stand-in for them.

const testRate = 20e6 // b/s: 1062-byte frames (1086 on the wire) every 434 us

var (
	gateway = net.HardwareAddr{2, 1, 0, 9, 0, 1}
	addrs   = map[int]net.IP{0: net.IPv4(10, 0, 0, 1).To4(), 1: net.IPv4(10, 0, 0, 2).To4()}
)

func addr(h int) (net.IP, bool) { ip, ok := addrs[h]; return ip, ok }

// alter sees each frame the forwarder passes, going from host `from`; it
// may change it, or return false to drop it.
type alter func(from int, f []byte) bool

// rig is two agents and the forwarder.
type rig struct {
	agents  [2]*Agent
	ports   [2]*afpacket.Port // the forwarder's, on the root side
	results chan Result
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newRig(t *testing.T, cc *dcqcn.Params, flows []workload.Flow, alt alter) *rig {
	t.Helper()
	return newRigWith(t, func(c *Config) { c.DCQCN = cc }, flows, alt)
}

// newRigWith is newRig with each agent's Config changed by set.
func newRigWith(t *testing.T, set func(*Config), flows []workload.Flow, alt alter) *rig {
	t.Helper()
	if err := netlab.Available(); err != nil {
		t.Skip(err)
	}
	lab, err := netlab.New("agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lab.Close() })
	r := &rig{results: make(chan Result, len(flows))}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	var hostPorts [2]*afpacket.Port
	var macs [2]net.HardwareAddr
	for i := range 2 {
		h, err := lab.Host([]string{"h0", "h1"}[i])
		if err != nil {
			t.Fatal(err)
		}
		l, err := lab.Link(h, "eth0", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Do(func() error { hostPorts[i], err = afpacket.Open("eth0"); return err }); err != nil {
			t.Fatal(err)
		}
		if r.ports[i], err = afpacket.Open(l.SwitchIf); err != nil {
			t.Fatal(err)
		}
		macs[i] = l.HostMAC
	}
	epoch := time.Now().Add(5 * time.Millisecond)
	for i := range 2 {
		var err error
		cfg := Config{Host: i, MAC: macs[i], IP: addrs[i], Gateway: gateway, Addr: addr,
			LineRate: testRate, DSCP: 26, RTO: 200 * time.Millisecond, Epoch: epoch,
			OnDone: func(res Result) { r.results <- res }}
		set(&cfg)
		if r.agents[i], err = New(cfg, hostPorts[i], flows); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		r.wg.Add(2)
		go func() {
			defer r.wg.Done()
			if err := r.agents[i].Run(ctx); err != nil {
				t.Errorf("host %d: %v", i, err)
			}
		}()
		go func() {
			defer r.wg.Done()
			for {
				fs, err := r.ports[i].Recv()
				if err != nil {
					return
				}
				out := fs[:0]
				for _, f := range fs {
					if alt == nil || alt(i, f) {
						out = append(out, f)
					}
				}
				_ = r.ports[1-i].Send(out...)
			}
		}()
	}
	t.Cleanup(func() {
		cancel()
		for i := range 2 {
			hostPorts[i].Close()
			r.ports[i].Close()
		}
		r.wg.Wait()
	})
	return r
}

// wait collects n results or fails after timeout.
func (r *rig) wait(t *testing.T, n int, timeout time.Duration) map[int]Result {
	t.Helper()
	out := map[int]Result{}
	deadline := time.After(timeout)
	for len(out) < n {
		select {
		case res := <-r.results:
			out[res.ID] = res
		case <-deadline:
			t.Fatalf("%d of %d flows completed in %v; host 0 %+v; host 1 %+v", len(out), n, timeout,
				r.agents[0].Stats(), r.agents[1].Stats())
		}
	}
	return out
}

// serialization is how long size bytes take at testRate.
func serialization(size int64) time.Duration {
	packets := (size + 999) / 1000
	bytes := size + packets*(roce.Overhead+WireExtra)
	return time.Duration(float64(bytes) * 8 / testRate * float64(time.Second))
}

// leastFCT is the least FCT a NIC pacing at testRate allows: every packet
// but the last waits for the one before to be on the wire (the veth
// itself takes no time).
func leastFCT(size int64) time.Duration {
	packets := (size + 999) / 1000
	return serialization(size) * time.Duration(packets-1) / time.Duration(packets)
}

func TestFlowsBothWays(t *testing.T) {
	flows := []workload.Flow{
		{ID: 1, Src: 0, Dst: 1, Size: 150_000},
		{ID: 2, Src: 1, Dst: 0, Size: 40_500},
		{ID: 3, Src: 0, Dst: 1, Size: 999, Start: 30e9}, // 30 ms: one packet
	}
	r := newRig(t, nil, flows, nil)
	got := r.wait(t, 3, 10*time.Second)
	for _, f := range flows {
		res := got[f.ID]
		if res.Src != f.Src || res.Dst != f.Dst || res.Size != f.Size || res.Start != time.Duration(f.Start/1000) {
			t.Errorf("flow %d: result %+v", f.ID, res)
		}
		// A NIC at testRate cannot deliver faster than its rate.
		if res.FCT() < leastFCT(f.Size) {
			t.Errorf("flow %d: FCT %v, less than its pacing at %g b/s allows, %v", f.ID, res.FCT(), testRate, leastFCT(f.Size))
		}
		if res.Retransmits != 0 {
			t.Errorf("flow %d: %d retransmits on a lossless path", f.ID, res.Retransmits)
		}
	}
	s0, s1 := r.agents[0].Stats(), r.agents[1].Stats()
	// 150 + 1 packets one way, 41 the other; an ACK for each.
	if s0.DataSent != 151 || s1.DataReceived != 151 || s1.DataSent != 41 || s0.DataReceived != 41 {
		t.Errorf("data: host 0 sent %d received %d, host 1 sent %d received %d", s0.DataSent, s0.DataReceived, s1.DataSent, s1.DataReceived)
	}
	if s1.AcksSent != 151 || s0.AcksSent != 41 {
		t.Errorf("ACKs: host 0 %d, host 1 %d", s0.AcksSent, s1.AcksSent)
	}
}

// psn reads a RoCEv2 frame's opcode and PSN; ok is false for other
// frames.
func psn(f []byte) (op uint8, n uint32, ok bool) {
	var p roce.Packet
	if roce.Parse(f, &p) != nil {
		return 0, 0, false
	}
	return p.Opcode, p.PSN, true
}

// TestGoBackN drops the first copy of packet 20 (a gap the receiver NAKs)
// and of the last packet (a tail loss only the timeout recovers): the flow
// completes, sending again from each lost packet.
func TestGoBackN(t *testing.T) {
	var mu sync.Mutex
	dropped := map[uint32]bool{}
	r := newRig(t, nil, []workload.Flow{{ID: 7, Src: 0, Dst: 1, Size: 60_000}}, func(from int, f []byte) bool {
		op, n, ok := psn(f)
		if from != 0 || !ok || op == roce.OpAck || op == roce.OpCNP || (n != 20 && n != 59) {
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		if dropped[n] {
			return true
		}
		dropped[n] = true
		return false
	})
	res := r.wait(t, 1, 10*time.Second)[7]
	s0, s1 := r.agents[0].Stats(), r.agents[1].Stats()
	if s1.NAKsSent != 1 || s0.Timeouts != 1 {
		t.Errorf("NAKs %d, timeouts %d; want 1 each", s1.NAKsSent, s0.Timeouts)
	}
	// Go-back-N resends from 20 what was in flight when the NAK came,
	// and the last packet after the timeout.
	if res.Retransmits < 2 || res.Retransmits != s0.Retransmits {
		t.Errorf("retransmits: flow %d, host %d", res.Retransmits, s0.Retransmits)
	}
	if res.FCT() < 200*time.Millisecond {
		t.Errorf("FCT %v: the tail loss must cost an RTO (200 ms)", res.FCT())
	}
}

// markFor returns an alter that sets ECN CE on host 0's data packets for
// d from the first one (a congestion episode that ends, as a queue
// drains), fixing the IPv4 checksum as a marking switch does.
func markFor(d time.Duration) alter {
	var first time.Time
	return func(from int, f []byte) bool {
		op, _, ok := psn(f)
		if from != 0 || !ok || op == roce.OpAck || op == roce.OpCNP {
			return true
		}
		if first.IsZero() {
			first = time.Now()
		}
		if time.Since(first) > d {
			return true
		}
		ip := f[roce.EthLen:]
		ip[1] |= roce.CE
		binary.BigEndian.PutUint16(ip[10:], 0)
		var s uint32
		for i := 0; i < roce.IPv4Len; i += 2 {
			s += uint32(binary.BigEndian.Uint16(ip[i:]))
		}
		for s > 0xffff {
			s = s>>16 + s&0xffff
		}
		binary.BigEndian.PutUint16(ip[10:], ^uint16(s))
		return true
	}
}

// TestCNPsCutTheRate marks the start of a flow: the receiver returns
// CNPs at most one per CNP interval, the sender's rate falls, and the
// flow takes longer than the same flow unmarked.
func TestCNPsCutTheRate(t *testing.T) {
	cc, err := Scale(dcqcn.Mellanox(), testRate)
	if err != nil {
		t.Fatal(err)
	}
	flows := []workload.Flow{{ID: 1, Src: 0, Dst: 1, Size: 100_000}}
	plain := newRig(t, &cc, flows, nil).wait(t, 1, 10*time.Second)[1]
	r := newRig(t, &cc, flows, markFor(30*time.Millisecond))
	marked := r.wait(t, 1, 20*time.Second)[1]
	s0, s1 := r.agents[0].Stats(), r.agents[1].Stats()
	if s1.Marked == 0 || s0.Retransmits != 0 {
		t.Errorf("%d packets arrived marked; %d sent again; sender %+v; receiver %+v", s1.Marked, s0.Retransmits, s0, s1)
	}
	interval := time.Duration(cc.CNPInterval / 1000)
	most := int64(marked.FCT()/interval) + 2
	if s1.CNPsSent < 2 || s1.CNPsSent > most {
		t.Errorf("%d CNPs in %v at most one per %v: want 2 to %d", s1.CNPsSent, marked.FCT(), interval, most)
	}
	if s0.CNPsReceived != s1.CNPsSent || marked.CNPs != int(s1.CNPsSent) {
		t.Errorf("CNPs: %d sent, %d received, %d on the flow", s1.CNPsSent, s0.CNPsReceived, marked.CNPs)
	}
	if marked.RateCuts == 0 || plain.RateCuts != 0 {
		t.Errorf("rate cuts: %d marked, %d plain", marked.RateCuts, plain.RateCuts)
	}
	if marked.FCT() < plain.FCT()*5/4 {
		t.Errorf("FCT marked %v, plain %v: the cuts must slow the flow", marked.FCT(), plain.FCT())
	}
	t.Logf("FCT plain %v (serialization %v), marked %v; %d CNPs, %d cuts", plain.FCT(), serialization(100_000), marked.FCT(), s1.CNPsSent, marked.RateCuts)
}

// pause is an 802.1Qbb frame for the priorities in enable.
func pause(enable uint8, quanta uint16) []byte {
	f := make([]byte, 60)
	copy(f, []byte{0x01, 0x80, 0xc2, 0, 0, 1, 2, 1, 0, 9, 0, 1, 0x88, 0x08, 0x01, 0x01, 0, enable})
	for i := range 8 {
		if enable&(1<<i) != 0 {
			binary.BigEndian.PutUint16(f[18+2*i:], quanta)
		}
	}
	return f
}

// TestPauseHoldsItsPriority: a PAUSE for another priority changes
// nothing; one for the data's (DSCP 26: priority 3) stops it until the
// RESUME.
func TestPauseHoldsItsPriority(t *testing.T) {
	var mu sync.Mutex
	arrived := 0
	r := newRig(t, nil, []workload.Flow{{ID: 1, Src: 0, Dst: 1, Size: 400_000}}, func(from int, f []byte) bool {
		if op, _, ok := psn(f); ok && from == 0 && op != roce.OpAck {
			mu.Lock()
			arrived++
			mu.Unlock()
		}
		return true
	})
	count := func() int { mu.Lock(); defer mu.Unlock(); return arrived }
	for count() < 10 {
		time.Sleep(time.Millisecond)
	}
	// Priority 4 only: the data keeps flowing.
	if err := r.ports[0].Send(pause(1<<4, 0xffff)); err != nil {
		t.Fatal(err)
	}
	n := count()
	time.Sleep(30 * time.Millisecond)
	if count() == n {
		t.Fatal("a PAUSE of priority 4 held priority 3")
	}
	// 65535 quanta at 20 Mb/s hold 1.7 s.
	if err := r.ports[0].Send(pause(1<<3, 0xffff)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // frames already on their way
	n = count()
	time.Sleep(200 * time.Millisecond)
	if m := count(); m != n {
		t.Fatalf("%d frames sent during the PAUSE", m-n)
	}
	if err := r.ports[0].Send(pause(1<<3, 0)); err != nil {
		t.Fatal(err)
	}
	res := r.wait(t, 1, 5*time.Second)[1]
	s := r.agents[0].Stats()
	if s.Pauses != 1 || s.Resumes != 1 || s.Paused < 200*time.Millisecond || s.Paused > res.FCT() {
		t.Errorf("pauses %d, resumes %d, paused %v of an FCT of %v", s.Pauses, s.Resumes, s.Paused, res.FCT())
	}
}

func TestScale(t *testing.T) {
	p := dcqcn.Mellanox()
	s, err := Scale(p, 100e6)
	if err != nil {
		t.Fatal(err)
	}
	const k = 1000
	if s.Timer != p.Timer*k || s.AlphaInterval != p.AlphaInterval*k || s.DecreaseInterval != p.DecreaseInterval*k || s.CNPInterval != p.CNPInterval*k {
		t.Errorf("times: %+v", s)
	}
	rai, rhai := s.Steps(100e6)
	prai, prhai := p.Steps(100e9)
	if rai != prai/k || rhai != prhai/k || s.MinRate != p.MinRate/k || s.RefRate != 100e6 {
		t.Errorf("rates: steps %g %g, min %g, ref %g", rai, rhai, s.MinRate, s.RefRate)
	}
	if s.ByteCounter != p.ByteCounter || s.KMin != p.KMin || s.KMax != p.KMax || s.G != p.G || s.F != p.F {
		t.Errorf("unchanged fields changed: %+v", s)
	}
	// The paper's set scales its steps with the line rate: the same rule.
	pp := dcqcn.Paper()
	ps, err := Scale(pp, 40e6)
	if err != nil {
		t.Fatal(err)
	}
	a, b := ps.Steps(40e6)
	c, d := pp.Steps(40e9)
	if a != c/1000 || b != d/1000 {
		t.Errorf("paper steps %g %g, want %g %g", a, b, c/1000, d/1000)
	}
	if _, err := Scale(p, 0); err == nil {
		t.Error("a rate of 0 scaled")
	}
}

// PSNs are the low 24 bits of a packet count; unwrap gives the count
// back, nearest to a reference, across the wrap.
func TestUnwrap(t *testing.T) {
	for _, c := range []struct {
		ref  uint64
		psn  uint32
		want uint64
	}{
		{0, 0, 0}, {0, 5, 5}, {10, 3, 3}, {10, 10, 10},
		{maxPSN - 2, 1, maxPSN + 1},          // ahead, across the wrap
		{maxPSN + 1, maxPSN - 2, maxPSN - 2}, // behind, across the wrap
		{5*maxPSN + 7, 7, 5*maxPSN + 7},
		{3 * maxPSN, maxPSN/2 - 1, 3*maxPSN + maxPSN/2 - 1},
		{3 * maxPSN, maxPSN / 2, 3*maxPSN - maxPSN/2},
	} {
		if got := unwrap(c.psn, c.ref); got != c.want {
			t.Errorf("unwrap(%d, %d) = %d, want %d", c.psn, c.ref, got, c.want)
		}
		if psn24(c.want) != c.psn {
			t.Errorf("psn24(%d) = %d, want %d", c.want, psn24(c.want), c.psn)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	good := Config{Host: 0, MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, IP: addrs[0], Gateway: gateway,
		Addr: addr, LineRate: testRate}
	for name, c := range map[string]struct {
		cfg  func(*Config)
		flow workload.Flow
	}{
		"no rate":         {func(c *Config) { c.LineRate = 0 }, workload.Flow{ID: 1, Dst: 1, Size: 1}},
		"IPv6":            {func(c *Config) { c.IP = net.ParseIP("::1") }, workload.Flow{ID: 1, Dst: 1, Size: 1}},
		"DSCP 64":         {func(c *Config) { c.DSCP = 64 }, workload.Flow{ID: 1, Dst: 1, Size: 1}},
		"unknown host":    {func(*Config) {}, workload.Flow{ID: 1, Dst: 9, Size: 1}},
		"empty flow":      {func(*Config) {}, workload.Flow{ID: 1, Dst: 1}},
		"ID past 24 bits": {func(*Config) {}, workload.Flow{ID: 1 << 24, Dst: 1, Size: 1}},
		"DCQCN and LDCP": {func(c *Config) {
			d, l := dcqcn.Mellanox(), ldcp.Draft()
			c.DCQCN, c.LDCP, c.BaseRTT = &d, &l, func(int) time.Duration { return time.Millisecond }
		}, workload.Flow{ID: 1, Dst: 1, Size: 1}},
		"LDCP without a base RTT": {func(c *Config) { l := ldcp.Draft(); c.LDCP = &l }, workload.Flow{ID: 1, Dst: 1, Size: 1}},
		"LDCP, base RTT 0": {func(c *Config) {
			l := ldcp.Draft()
			c.LDCP, c.BaseRTT = &l, func(int) time.Duration { return 0 }
		}, workload.Flow{ID: 1, Dst: 1, Size: 1}},
	} {
		cfg := good
		c.cfg(&cfg)
		if _, err := New(cfg, nil, []workload.Flow{c.flow}); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
