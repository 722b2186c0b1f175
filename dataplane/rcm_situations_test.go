package dataplane

import (
	"math"
	"testing"

	"github.com/p4rcm/p4rcm/rcm"
)

// Focused tests of the situations RCM's mechanisms exist for, each seen
// failing with its mechanism broken (docs/rcm.md lists the breakages):
// the paper-figure studies notice these only over minutes of runs.

// RCC at a root recovers only once the congestion is gone, and the
// packets it holds are congestion too: a root whose output queue, held
// packets left out, is below Q_eq (F_b <= 0) while the queue with them is
// above it, keeps W_c where its cuts put it and holds its heavy hitter
// on. Once the held backlog has gone too, W_c recovers and RCC quits.
func TestRCCRootRecoversOnlyWithHeldDrained(t *testing.T) {
	s, env, evs := heavyRoot(t)
	p := s.rcm.p
	rp := &s.rcm.ports[2]
	q := &s.ports[2].queue[3]
	// More of a, all held, then the packets not held go: what is left
	// is a's held backlog alone, far above Q_eq.
	for i := range 40 {
		s.Receive(3*us+int64(i)*10*ns, 0, dataPkt(1, 9, 3, 1000, ECT0))
	}
	for q.bytes > rp.held[3].bytes && s.Dequeue(4*us, 2) != nil {
	}
	wc := rp.win.Wc
	if q.bytes != rp.held[3].bytes || q.bytes < 2*p.QEq || !rp.win.Active {
		t.Fatalf("set-up: queue %.0f bytes, %.0f of them held, RCC active %v; want only held packets, at least %.0f", q.bytes, rp.held[3].bytes, rp.win.Active, 2*p.QEq)
	}
	// 20 us, ten CN intervals, in which a keeps arriving and the link
	// sends one held packet for each: the output detector sees an empty
	// queue (F_b < 0) at every sample, the queue with the held packets
	// stays where it was.
	for i := range 200 {
		now := 5*us + int64(i)*100*ns
		s.Receive(now, 0, dataPkt(1, 9, 3, 1000, ECT0))
		s.Dequeue(now, 2)
	}
	if !rp.win.Active || rp.win.Wc != wc || rp.held[3].bytes < p.QEq {
		t.Fatalf("with %.0f bytes held (Q_eq %.0f) RCC active %v, W_c %.0f; want it active with W_c kept at %.0f and a held",
			rp.held[3].bytes, p.QEq, rp.win.Active, rp.win.Wc, wc)
	}
	if rp.out.Fb > 0 {
		t.Fatalf("set-up: the output detector's last sample found F_b = %g > 0; want the queue without held packets below Q_eq", rp.out.Fb)
	}
	if ks := events(*evs, 2); hasKind(ks, RCMExit) {
		t.Errorf("RCC quit while %.0f bytes were held: %v", rp.held[3].bytes, ks)
	}
	// The backlog goes; with the queue empty RCC steps W_c back and quits.
	drain(s, 25*us, 2)
	trickle(s, env, 2, 26*us, 300*ns, 200)
	if rp.win.Active || !hasKind(events(*evs, 2), RCMExit) {
		t.Errorf("RCC active %v (W_c %.0f) after the held backlog drained; want it to have quit", rp.win.Active, rp.win.Wc)
	}
}

// heldPackets counts port 2's held packets of flow.
func heldPackets(s *Switch, flow int32) int {
	n := 0
	h := &s.rcm.ports[2].held[3]
	id := flowID(dataPkt(flow, 9, 3, 1000, ECT0))
	for i := range h.len() {
		if h.at(i).flow == id {
			n++
		}
	}
	return n
}

// RCC releases held packets early, flow by flow: at an edge holding
// packets of flows 1 and 2, both named by a CN, CNs go on naming flow 1
// alone, and once flow 2's naming expires (CNHold) its packets go back
// into the queue, in order, while flow 1's stay held. RCC is still on.
func TestRCCReleasesOnlyFlowsNoLongerHarmful(t *testing.T) {
	s, env := edgeSwitch(t, true)
	hold := s.rcm.p.CNHold
	cnOn(s, 0, 2, 1, 2)
	env.idle[2] = false
	seq := map[int32]int64{}
	for i := range 30 {
		f := int32(1 + i%3) // 1 and 2 harmful, 3 not
		p := dataPkt(f, 9, 3, 1000, ECT0)
		p.Seq = seq[f]
		seq[f]++
		s.Receive(1*us+int64(i)*10*ns, i%2, p)
	}
	if h1, h2, h3 := heldPackets(s, 1), heldPackets(s, 2), heldPackets(s, 3); h1 != 10 || h2 != 10 || h3 != 0 {
		t.Fatalf("set-up: held %d, %d, %d packets of flows 1, 2, 3; want 10, 10, 0", h1, h2, h3)
	}
	cnOn(s, hold/2, 2, 1)
	cnOn(s, hold+2*us, 2, 1) // flow 2's naming expired at hold
	rp := &s.rcm.ports[2]
	if !rp.win.Active {
		t.Fatal("RCC quit at the edge")
	}
	if h1, h2 := heldPackets(s, 1), heldPackets(s, 2); h1 != 10 || h2 != 0 {
		t.Errorf("after flow 2 stopped being harmful the edge holds %d packets of flow 1 and %d of flow 2; want flow 1's 10 and none of flow 2's", h1, h2)
	}
	if rp.heldFlows.has(flowID(dataPkt(2, 9, 3, 1000, ECT0))) {
		t.Error("flow 2 still counts as held")
	}
	out := drain(s, hold+3*us, 2)
	checkOrder(t, out)
	if len(out) != 30 {
		t.Errorf("%d of 30 packets left", len(out))
	}
}

// SAR moves flows, and only a flow's data is its own to move: in a
// congestion region, an ACK, a NAK or a CNP whose hash is that of a new
// flow not yet seen keeps its ECMP port, pins nothing and counts as no
// detour, where the new flow's first data packet is detoured.
func TestSARLeavesControlPacketsOnTheirPath(t *testing.T) {
	s, env := sarSwitch(t, []int32{1, 2})
	harmful := flowVia(t, s, 1)
	fresh := flowVia(t, s, 1, harmful)
	cnOn(s, 0, 1, harmful)
	cnOn(s, 1*us, 1, harmful) // a region, port 1 the congested way
	for _, k := range []Kind{Ack, Nack, CNP} {
		env.kicks = env.kicks[:0]
		p := dataPkt(fresh, 9, 3, 1000, ECT0)
		p.Kind, p.Size, p.Payload = k, AckFrame+EthOverhead, 0
		s.Receive(2*us, 0, p)
		if len(env.kicks) != 1 || env.kicks[0] != 1 {
			t.Errorf("a %v in the region went to ports %v; want its ECMP port 1", k, env.kicks)
		}
	}
	if d := s.RCMStats().Detours; d != 0 || s.rcm.pins.Len() != 0 {
		t.Errorf("control packets made %d detours and %d pins; want none", d, s.rcm.pins.Len())
	}
	if got := sendOut(t, s, env, 3*us, fresh, 0); got != 2 {
		t.Errorf("the new flow's first data packet went to port %d; want it detoured to port 2", got)
	}
}

// SAR compares the regional degree of eq. 2, in which a port's own queue
// counts: a switch whose port 1 is congested (its output queue past
// Q_eq, no CN anywhere) is in a region of its own making, and a new flow
// whose ECMP port is port 1 goes to the idle port 2.
func TestSARDegreeCountsLocalQueue(t *testing.T) {
	s, env := sarSwitchWith(t, []int32{1, 2}, rcm.Defaults())
	busy := flowVia(t, s, 1)
	fresh := flowVia(t, s, 1, busy)
	env.idle[1] = false
	for i := range 40 { // a flow under way: SAR leaves it where it is
		p := dataPkt(busy, 9, 3, 1000, ECT0)
		p.Seq = int64(1 + i)
		s.Receive(int64(i)*10*ns, 0, p)
	}
	if !s.rcm.ports[1].localOut || s.rcm.ports[1].remote || s.RCMStats().CNsReceived != 0 {
		t.Fatalf("set-up: port 1 congested %v, remote %v, %d CNs; want port 1 congested by its own queue alone",
			s.rcm.ports[1].localOut, s.rcm.ports[1].remote, s.RCMStats().CNsReceived)
	}
	if got := sendOut(t, s, env, 1*us, fresh, 0); got != 2 {
		t.Errorf("a new flow went to port %d with port 1's queue at %.0f bytes (degree %d) and port 2's empty; want port 2",
			got, s.QueueBytes(1, 3), s.rcm.ports[1].out.Q)
	}
}

// A CN carries eq. 2's degree, (1 - w) F_b + w F_br: an inner point (its
// port 2 an edge, told by a CN of the highest degree that flow x loads
// the root downstream) whose input from the switch upstream congests in
// its turn sends that switch a CN combining its own input queue's degree
// with the one from downstream, w = 1/2 by default: neither its own
// degree nor the downstream one passed on alone.
func TestCNDegreeCombinesLocalAndDownstream(t *testing.T) {
	p := rcm.Defaults()
	p.SAR = false
	cfg := lossyConfig(3)
	cfg.Ports[0].PeerIsSwitch, cfg.Ports[2].PeerIsSwitch = true, true
	cfg.RCM, cfg.CNs = &p, &CNStore{}
	type sent struct{ fb, local, remote uint8 }
	var cns []sent
	var s *Switch
	cfg.RCMTrace = func(ev *RCMEvent) {
		if ev.Kind == RCMCN && ev.Port == 0 {
			cns = append(cns, sent{ev.Fb, s.rcm.ports[0].in.Q, s.rcm.ports[2].fbr})
		}
	}
	env := newFakeEnv(t)
	s = mustNew(t, cfg, mapFIB{9: {2}}, env)
	cnOn(s, 0, 2, cnX) // F_br = 63
	env.idle[2] = false
	for i := range 100 {
		s.Receive(100*ns+int64(i)*10*ns, 0, dataPkt(cnX, 9, 3, 1000, ECT0))
	}
	if len(cns) == 0 {
		t.Fatalf("no CN up port 0 (stats %+v)", s.RCMStats())
	}
	c := cns[0]
	want := uint8(math.Round(0.5*float64(c.local) + 0.5*float64(c.remote)))
	if c.local == c.remote || c.fb != want {
		t.Errorf("the first CN up carried degree %d with the input queue's own degree %d and the downstream one %d; want eq. 2's %d, different from both",
			c.fb, c.local, c.remote, want)
	}
}
