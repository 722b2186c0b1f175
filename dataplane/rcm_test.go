package dataplane

import (
	"testing"

	"github.com/p4rcm/p4rcm/rcm"
)

// edgeSwitch is a switch whose port 2 faces the next switch and has just
// been told by a CN, at time 0 and with the highest degree, that flow 1
// is harmful: an RCM edge. Ports 0 and 1 face hosts. Q_eq is out of
// reach, so no queue of its own turns the switch into a root. The window
// is 32 KB (2.56 us at 100 Gb/s).
func edgeSwitch(t *testing.T, workConserving bool) (*Switch, *fakeEnv) {
	t.Helper()
	p := rcm.Defaults()
	p.QEq, p.SAR, p.WorkConserving, p.Window = 10e6, false, workConserving, 32e3
	cfg := lossyConfig(3)
	cfg.Ports[2].PeerIsSwitch = true
	cfg.RCM, cfg.CNs = &p, &CNStore{}
	env := newFakeEnv(t)
	s := mustNew(t, cfg, mapFIB{9: {2}}, env)
	idx, info := cfg.CNs.Alloc()
	info.Fb, info.N = rcm.FbMax, 1
	info.Flows[0] = flowID(dataPkt(1, 9, 3, 1000, ECT0))
	s.Receive(0, 2, &Packet{Kind: CN, Size: CNFrameSize(1), Flow: -1, Aux: idx})
	return s, env
}

// loadEdge queues, while port 2 is busy, 30 packets of the harmful flow 1
// from port 0 and then 5 of flow 2 from port 1, all of 1000 bytes.
func loadEdge(s *Switch, env *fakeEnv, now int64) {
	env.idle[2] = false
	for i := range 30 {
		p := dataPkt(1, 9, 3, 1000, ECT0)
		p.Seq = int64(i)
		s.Receive(now, 0, p)
	}
	for i := range 5 {
		p := dataPkt(2, 9, 3, 1000, ECT0)
		p.Seq = int64(i)
		s.Receive(now, 1, p)
	}
	env.idle[2] = true
}

// checkOrder fails unless each flow's packets left in sequence.
func checkOrder(t *testing.T, out []*Packet) {
	t.Helper()
	next := map[int32]int64{}
	for _, p := range out {
		if p.Seq != next[p.Flow] {
			t.Fatalf("flow %d: packet %d left when %d was due", p.Flow, p.Seq, next[p.Flow])
		}
		next[p.Flow]++
	}
}

func count(out []*Packet, flow int32) int {
	n := 0
	for _, p := range out {
		if p.Flow == flow {
			n++
		}
	}
	return n
}

// At an edge the harmful flow gets W_c of each window (half of W after a
// CN of the highest degree); the other flow is not held back.
func TestRCMEdgeRateLimits(t *testing.T) {
	s, env := edgeSwitch(t, false)
	loadEdge(s, env, 1*us)
	period := int64(32e3 * 8 / rate100G * 1e12)

	out := drain(s, 1*us, 2)
	checkOrder(t, out)
	if got := count(out, 2); got != 5 {
		t.Errorf("the harmless flow sent %d of its 5 packets at once", got)
	}
	// W_c = W/2 = 16 KB: 16 packets of 1000 bytes, the last one starting
	// below the limit.
	if got := count(out, 1); got != 16 {
		t.Errorf("the harmful flow sent %d packets in its first window, want 16 (W_c = W/2)", got)
	}
	// Rate-limited: the link idles until the next window although
	// harmful packets wait.
	if next := s.Next(2, 1*us); next != period {
		t.Errorf("next send at %d ps, want the next window at %d ps", next, period)
	}
	rest := drain(s, period, 2)
	checkOrder(t, append(out, rest...))
	if got := count(rest, 1); got != 14 {
		t.Errorf("the next window sent %d harmful packets, want the other 14", got)
	}
	if st := s.RCMStats(); st.CNsReceived != 1 || st.Held != 30 {
		t.Errorf("stats %+v: want 1 CN received and 30 packets held", st)
	}
}

// Work-conserving (the default): past W_c the harmful flow ranks below the
// others but uses the link when nothing else waits.
func TestRCMEdgeWorkConserving(t *testing.T) {
	s, env := edgeSwitch(t, true)
	loadEdge(s, env, 1*us)
	out := drain(s, 1*us, 2)
	checkOrder(t, out)
	if len(out) != 35 {
		t.Fatalf("%d of 35 packets left; a work-conserving port sends all it holds", len(out))
	}
	// The harmless packets all go within the harmful flow's W_c.
	last := 0
	for i, p := range out {
		if p.Flow == 2 {
			last = i
		}
	}
	if last >= 16+5 {
		t.Errorf("the last harmless packet left %dth, behind harmful packets past W_c", last+1)
	}
}

// A CN of degree 0 ends the edge's congestion flag at once but keeps the
// named flow harmful until CNHold expires.
func TestRCMClearingCNKeepsNamedFlows(t *testing.T) {
	s, _ := edgeSwitch(t, false)
	cns := s.cfg.CNs
	idx, info := cns.Alloc()
	info.Fb = 0
	s.Receive(1*us, 2, &Packet{Kind: CN, Size: CNFrameSize(0), Flow: -1, Aux: idx})
	rp := &s.rcm.ports[2]
	if rp.remoteValid(1 * us) {
		t.Error("the region flag survived a CN of degree 0")
	}
	id := flowID(dataPkt(1, 9, 3, 1000, ECT0))
	if !rp.currentlyHarmful(2*us, id) {
		t.Error("the named flow stopped being harmful with the clearing CN")
	}
	hold := rcm.Defaults().CNHold
	if rp.currentlyHarmful(hold+1, id) {
		t.Errorf("the named flow is still harmful after CNHold (%d ps)", hold)
	}
}

// sarSwitch has two equal-cost uplinks, ports 1 and 2, toward host 9;
// port 0 faces a host. Q_eq is out of reach: only CNs make a region.
func sarSwitch(t *testing.T, hops []int32) (*Switch, *fakeEnv) {
	t.Helper()
	p := rcm.Defaults()
	p.QEq = 10e6
	return sarSwitchWith(t, hops, p)
}

// sarSwitchWith is sarSwitch with RCM's parameters p.
func sarSwitchWith(t *testing.T, hops []int32, p rcm.Params) (*Switch, *fakeEnv) {
	t.Helper()
	cfg := lossyConfig(3)
	cfg.Ports[1].PeerIsSwitch, cfg.Ports[2].PeerIsSwitch = true, true
	cfg.RCM, cfg.CNs = &p, &CNStore{}
	env := newFakeEnv(t)
	return mustNew(t, cfg, mapFIB{9: hops}, env), env
}

// flowVia is a flow (not in taken) whose ECMP port is port.
func flowVia(t *testing.T, s *Switch, port int, taken ...int32) int32 {
	t.Helper()
next:
	for f := int32(1); f < 1000; f++ {
		for _, x := range taken {
			if f == x {
				continue next
			}
		}
		if s.Route(dataPkt(f, 9, 3, 1000, ECT0)) == port {
			return f
		}
	}
	t.Fatalf("no flow hashes to port %d", port)
	return 0
}

// cnOn delivers a CN of the highest degree naming flows on port.
func cnOn(s *Switch, now int64, port int, flows ...int32) {
	idx, info := s.cfg.CNs.Alloc()
	info.Fb = rcm.FbMax
	for _, f := range flows {
		info.Flows[info.N] = flowID(dataPkt(f, 9, 3, 1000, ECT0))
		info.N++
	}
	s.Receive(now, port, &Packet{Kind: CN, Size: CNFrameSize(int(info.N)), Flow: -1, Aux: idx})
}

// sendOut receives a packet of flow at sequence seq on port 0 and
// returns the port the switch queued it for.
func sendOut(t *testing.T, s *Switch, env *fakeEnv, now int64, flow int32, seq int64) int {
	t.Helper()
	env.kicks = env.kicks[:0]
	p := dataPkt(flow, 9, 3, 1000, ECT0)
	p.Seq = seq
	s.Receive(now, 0, p)
	if len(env.kicks) != 1 {
		t.Fatalf("flow %d: kicks %v, want one port", flow, env.kicks)
	}
	return env.kicks[0]
}

func TestSARDetoursNewFlowsOnly(t *testing.T) {
	s, env := sarSwitch(t, []int32{1, 2})
	harmful := flowVia(t, s, 1)
	fresh := flowVia(t, s, 1, harmful)
	old := flowVia(t, s, 1, harmful, fresh)
	// Two CNs within RegionWindow put the switch in a congestion region,
	// with port 1 the congested way.
	cnOn(s, 0, 1, harmful)
	cnOn(s, 1*us, 1, harmful)

	if got := sendOut(t, s, env, 2*us, fresh, 0); got != 2 {
		t.Errorf("a new flow went to port %d; want the uncongested port 2", got)
	}
	if got := sendOut(t, s, env, 3*us, fresh, 1000); got != 2 {
		t.Errorf("the detoured flow's next packet went to port %d; want it pinned to port 2", got)
	}
	if got := sendOut(t, s, env, 2*us, harmful, 0); got != 1 {
		t.Errorf("a harmful flow was detoured to port %d", got)
	}
	if got := sendOut(t, s, env, 2*us, old, 5000); got != 1 {
		t.Errorf("a flow under way was detoured to port %d (sar_existing is off)", got)
	}
	if d := s.RCMStats().Detours; d != 1 {
		t.Errorf("%d detours counted, want 1", d)
	}
}

func TestSARStaysOutsideARegion(t *testing.T) {
	s, env := sarSwitch(t, []int32{1, 2})
	fresh := flowVia(t, s, 1)
	cnOn(s, 0, 1) // one CN is not a region
	if got := sendOut(t, s, env, 1*us, fresh, 0); got != 1 {
		t.Errorf("outside a region a new flow went to port %d, not its ECMP port 1", got)
	}
	// Without an alternative there is no detour, region or not.
	s, env = sarSwitch(t, []int32{1})
	cnOn(s, 0, 1)
	cnOn(s, 1*us, 1)
	if got := sendOut(t, s, env, 2*us, 7, 0); got != 1 {
		t.Errorf("with one next hop a flow went to port %d", got)
	}
	if d := s.RCMStats().Detours; d != 0 {
		t.Errorf("%d detours without an alternative", d)
	}
}

// A backlog in an input queue whose packets head for a port in RCC sends
// a CN back up that input, naming those of the harmful flows that arrive
// on it, at most once per CNInterval; no CN goes to a host.
func TestRCMInputCongestionSendsCN(t *testing.T) {
	for _, upstreamIsSwitch := range []bool{true, false} {
		p := rcm.Defaults()
		cfg := lossyConfig(3)
		cfg.Ports[0].PeerIsSwitch = upstreamIsSwitch
		cfg.Ports[1].PeerIsSwitch, cfg.Ports[2].PeerIsSwitch = true, true
		cfg.RCM, cfg.CNs = &p, &CNStore{}
		env := newFakeEnv(t)
		s := mustNew(t, cfg, mapFIB{9: {1}}, env)
		const harmful, other = 1, 2
		cnOn(s, 0, 1, harmful, other) // port 1 is an edge for flows 1 and 2
		// Port 1 is busy: flow 1 piles up from port 0, flow 2 from port 2,
		// so a CN up port 0 is to name flow 1 only.
		for i := range 60 {
			now := 1*us + int64(i)*10*ns
			s.Receive(now, 0, dataPkt(harmful, 9, 3, 1000, ECT0))
			s.Receive(now, 2, dataPkt(other, 9, 3, 1000, ECT0))
		}
		var cns []*CNInfo
		for p := s.Dequeue(2*us, 0); p != nil; p = s.Dequeue(2*us, 0) {
			if p.Kind == CN {
				cns = append(cns, s.cfg.CNs.Get(p.Aux))
			}
		}
		if !upstreamIsSwitch {
			if len(cns) != 0 {
				t.Errorf("%d CNs sent to a host", len(cns))
			}
			continue
		}
		// 60 packets in 0.6 us: within one CNInterval (2 us).
		if len(cns) != 1 {
			t.Fatalf("%d CNs up port 0, want 1 within CNInterval", len(cns))
		}
		cn := cns[0]
		id := flowID(dataPkt(harmful, 9, 3, 1000, ECT0))
		if cn.Fb == 0 || cn.N != 1 || cn.Flows[0] != id {
			t.Errorf("CN degree %d flows %v; want a positive degree naming only flow 1 (%d), the one arriving on port 0", cn.Fb, cn.Flows[:cn.N], id)
		}
	}
}
