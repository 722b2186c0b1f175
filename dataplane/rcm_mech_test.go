package dataplane

import (
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/rcm"
)

// Focused tests of RCM's mechanisms, one each, small enough to run in
// milliseconds; docs/rcm.md lists each with the mutation it was seen to
// fail on.

// tracedRoot is a switch whose port 2 faces a host (destination 9) and
// ports 0 and 1 face hosts sending to it, with RCM's parameters as p
// leaves them, and the RCM events it reports.
func tracedRoot(t *testing.T, p rcm.Params) (*Switch, *fakeEnv, *[]RCMEvent) {
	t.Helper()
	cfg := lossyConfig(3)
	cfg.RCM, cfg.CNs = &p, &CNStore{}
	var evs []RCMEvent
	cfg.RCMTrace = func(ev *RCMEvent) {
		e := *ev
		e.Flows = append([]rcm.FlowID(nil), ev.Flows...)
		e.CAM = nil
		evs = append(evs, e)
	}
	env := newFakeEnv(t)
	return mustNew(t, cfg, mapFIB{9: {2}}, env), env, &evs
}

// events are the kinds of evs on port, in order.
func events(evs []RCMEvent, port int) []RCMEventKind {
	var ks []RCMEventKind
	for _, e := range evs {
		if e.Port == port {
			ks = append(ks, e.Kind)
		}
	}
	return ks
}

func hasKind(ks []RCMEventKind, k RCMEventKind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// trickle sends n packets of flow to port 2, one every gap from start,
// on an idle link that sends each at once: the queue stays empty.
func trickle(s *Switch, env *fakeEnv, flow int32, start, gap int64, n int) {
	env.idle[2] = true
	for i := range n {
		p := dataPkt(flow, 9, 3, 1000, ECT0)
		p.Seq = int64(i)
		s.Receive(start+int64(i)*gap, 0, p)
	}
}

// CRD: an output queue that builds up past Q_eq makes its port a root
// (RCC starts there); once the queue is gone, RCC steps W_c back and
// quits. A queue that never builds up makes no root.
func TestCRDDeclaresAndClearsRoot(t *testing.T) {
	p := rcm.Defaults()
	p.SAR = false
	s, env, evs := tracedRoot(t, p)
	// 400 ns of a link that arrivals swamp: 40 packets of 1000 bytes
	// queue up behind a busy port, 40 KB against Q_eq's 25 KB.
	trickle(s, env, 1, 0, 300*ns, 100) // 27 Gb/s sent at once: no queue, no root
	if ks := events(*evs, 2); len(ks) != 0 {
		t.Fatalf("a port with no queue reported %v; want no root", ks)
	}
	env.idle[2] = false
	for i := range 40 {
		p := dataPkt(1, 9, 3, 1000, ECT0)
		s.Receive(40*us+int64(i)*10*ns, i%2, p)
	}
	if ks := events(*evs, 2); len(ks) != 1 || ks[0] != RCMRoot {
		t.Fatalf("after a 40 KB backlog port 2 reported %v; want one root", ks)
	}
	if !s.rcm.ports[2].win.Active {
		t.Error("the root's RCC is not active")
	}
	drain(s, 41*us, 2)
	// The queue is gone: each sample (every 10 KB of arrivals) finds no
	// congestion and moves W_c half way back to W, at most one step per
	// CN interval (2 us); RCC quits once W_c is back.
	trickle(s, env, 1, 42*us, 300*ns, 400)
	if ks := events(*evs, 2); !hasKind(ks, RCMExit) {
		t.Errorf("port 2 reported %v after its queue cleared; want RCC's exit", ks)
	}
	if s.rcm.ports[2].win.Active || s.rcm.localOut != 0 {
		t.Errorf("RCC active %v, congested outputs %d after the queue cleared; want neither", s.rcm.ports[2].win.Active, s.rcm.localOut)
	}

	// With CRD off (rcm.crd=false) the same backlog makes no root.
	p.CRD = false
	s, env, evs = tracedRoot(t, p)
	env.idle[2] = false
	for i := range 40 {
		s.Receive(int64(i)*10*ns, i%2, dataPkt(1, 9, 3, 1000, ECT0))
	}
	if ks := events(*evs, 2); len(ks) != 0 || s.rcm.ports[2].win.Active {
		t.Errorf("with CRD off a 40 KB backlog reported %v (RCC active %v); want nothing", ks, s.rcm.ports[2].win.Active)
	}
}

// sendAll plays port's link from start: it sends whatever Dequeue gives,
// each packet taking its time on the wire, and waits as Next says until
// nothing is left. It returns the packets and when each started.
func sendAll(s *Switch, port int, start int64) ([]*Packet, []int64) {
	var out []*Packet
	var at []int64
	now := start
	for len(out) < 10000 {
		p := s.Dequeue(now, port)
		if p == nil {
			next := s.Next(port, now)
			if next == 0 {
				break
			}
			now = max(next, now+1)
			continue
		}
		out, at = append(out, p), append(at, now)
		now += int64(float64(p.Size) * 8 / rate100G * 1e12)
	}
	return out, at
}

// RCC's window: at an edge whose W_c two CNs of the highest degree have
// cut to a quarter of W, the harmful flow gets a quarter of the link
// while the other flow has packets waiting, under either scheduler,
// although its packets came first. Alone, it is limited to that quarter
// with work_conserving off and takes the whole link with it on.
func TestRCCWindowLimitsHarmfulShare(t *testing.T) {
	for _, wc := range []bool{true, false} {
		s, env := edgeSwitch(t, wc)
		cnOn(s, 100*ns, 2, 1) // W_c = W/4
		env.idle[2] = false
		for i := range 40 {
			p := dataPkt(1, 9, 3, 1000, ECT0)
			p.Seq = int64(i)
			s.Receive(1*us, 0, p)
		}
		for i := range 30 {
			p := dataPkt(2, 9, 3, 1000, ECT0)
			p.Seq = int64(i)
			s.Receive(1*us, 1, p)
		}
		out, at := sendAll(s, 2, 1*us)
		checkOrder(t, out)
		if len(out) != 70 {
			t.Fatalf("work_conserving %v: %d of 70 packets left", wc, len(out))
		}
		last := 0 // the last harmless packet
		for i, p := range out {
			if p.Flow == 2 {
				last = i
			}
		}
		if share := float64(count(out[:last+1], 1)) / float64(last+1); share < 0.2 || share > 0.3 {
			t.Errorf("work_conserving %v: the harmful flow sent %.2f of the packets while the other waited; want W_c/W = 0.25", wc, share)
		}
		// The harmful flow alone: its rate over its remaining packets.
		n := len(out) - last - 1
		if n < 10 {
			t.Fatalf("work_conserving %v: only %d harmful packets left after the other flow", wc, n)
		}
		gbps := float64(n-1) * 8000 / float64(at[len(at)-1]-at[last+1]) * 1e3
		switch {
		case wc && gbps < 95:
			t.Errorf("work-conserving: the harmful flow alone sent at %.1f Gb/s; want the whole link", gbps)
		case !wc && (gbps < 20 || gbps > 32):
			t.Errorf("rate limit: the harmful flow alone sent at %.1f Gb/s; want about W_c/W of 100", gbps)
		}
	}
}

// cnPair is two switches in a row. A (ports 0 and 1 from hosts, port 2
// to B) sends flows x and z to B. B (port 0 from A, port 1 from a host
// that sends flow y, port 2 to host 9, port 3 to host 8) sends x and y to
// host 9 over port 2 and z to host 8 over port 3.
func cnPair(t *testing.T, p rcm.Params) (a, b *Switch, envA, envB *fakeEnv) {
	t.Helper()
	p.SAR = false
	cfgA := lossyConfig(3)
	cfgA.Ports[2].PeerIsSwitch = true
	cns := &CNStore{}
	cfgA.RCM, cfgA.CNs = &p, cns
	cfgB := lossyConfig(4)
	cfgB.Ports[0].PeerIsSwitch = true
	cfgB.RCM, cfgB.CNs = &p, cns
	envA, envB = newFakeEnv(t), newFakeEnv(t)
	a = mustNew(t, cfgA, mapFIB{9: {2}, 8: {2}}, envA)
	b = mustNew(t, cfgB, mapFIB{9: {2}, 8: {3}}, envB)
	return a, b, envA, envB
}

const cnX, cnY, cnZ = 1, 2, 3

// loadRoot sends b 6 us of x and y (3 to 1) into its busy port 2, and z
// through to its idle port 3, and returns the first CN b sent to A.
func loadRoot(b *Switch, envB *fakeEnv, pkt func(flow, dst int32) *Packet) *Packet {
	envB.idle[2], envB.idle[3] = false, true
	for i := range 600 {
		now := int64(i) * 10 * ns
		if i%4 == 3 {
			b.Receive(now, 1, pkt(cnY, 9))
		} else {
			b.Receive(now, 0, pkt(cnX, 9))
		}
		if i%8 == 0 {
			b.Receive(now, 0, pkt(cnZ, 8))
		}
	}
	var cn *Packet
	for p := b.Dequeue(6*us, 0); p != nil; p = b.Dequeue(6*us, 0) {
		if p.Kind == CN && cn == nil {
			cn = p
		}
	}
	return cn
}

// CNs sent and obeyed: B's port 2 becomes a root holding back flow x,
// three quarters of its traffic; the backlog of x in B's input from A
// sends a CN up to A naming x, and neither y (which does not come from
// A) nor z (which does not go to the root). A obeys it: its port toward
// B holds x back and lets z pass. With CNs off (rcm.cn=false) B sends
// none.
func TestCNSentAndObeyed(t *testing.T) {
	a, b, envA, envB := cnPair(t, rcm.Defaults())
	seq := map[int32]int64{}
	pkt := func(flow, dst int32) *Packet {
		p := dataPkt(flow, dst, 3, 1000, ECT0)
		p.Seq = seq[flow]
		seq[flow]++
		return p
	}
	cn := loadRoot(b, envB, pkt)
	if cn == nil {
		t.Fatalf("B sent no CN to A (stats %+v)", b.RCMStats())
	}
	info := b.cfg.CNs.Get(cn.Aux)
	x := flowID(dataPkt(cnX, 9, 3, 1000, ECT0))
	if info.Fb == 0 || info.N != 1 || info.Flows[0] != x {
		t.Fatalf("B's CN: degree %d naming %v; want a degree naming only x (%d)", info.Fb, info.Flows[:info.N], x)
	}
	fb := info.Fb
	a.Receive(6*us, 2, cn)
	// A's port 2 is busy: x and z queue there, x first. A holds x back,
	// not z.
	envA.idle[2] = false
	clear(seq)
	for range 20 {
		a.Receive(7*us, 0, pkt(cnX, 9))
	}
	for range 10 {
		a.Receive(7*us, 1, pkt(cnZ, 8))
	}
	if held := a.RCMStats().Held; held != 20 {
		t.Errorf("A held %d packets; want x's 20, none of z's", held)
	}
	out, _ := sendAll(a, 2, 7*us)
	checkOrder(t, out)
	order := ""
	for _, p := range out {
		order += string("?xyz"[p.Flow])
	}
	// In arrival order z would wait for all 20 of x. Held back to W_c of
	// each window W (8 packets), x lets z's first packet go within W.
	if first := strings.IndexByte(order, 'z'); first > 8 {
		t.Errorf("A sent %s (CN degree %d): z's first packet went %dth; want it within the first window of 8", order, fb, first+1)
	}

	p := rcm.Defaults()
	p.CN = false
	_, b, _, envB = cnPair(t, p)
	clear(seq)
	if cn := loadRoot(b, envB, pkt); cn != nil || b.RCMStats().CNsSent != 0 {
		t.Errorf("with CNs off B sent a CN (stats %+v)", b.RCMStats())
	}
}

// With SAR off (rcm.sar=false) a new flow in a congestion region stays
// on its ECMP port, where TestSARDetoursNewFlowsOnly sees it detoured.
func TestSARSwitchedOff(t *testing.T) {
	s, env := sarSwitch(t, []int32{1, 2})
	s.rcm.p.SAR = false
	harmful := flowVia(t, s, 1)
	fresh := flowVia(t, s, 1, harmful)
	cnOn(s, 0, 1, harmful)
	cnOn(s, 1*us, 1, harmful)
	if got := sendOut(t, s, env, 2*us, fresh, 0); got != 1 {
		t.Errorf("with SAR off a new flow went to port %d; want its ECMP port 1", got)
	}
}

// With hold off (rcm.hold=false, formerly rcm.rcc) the edge of
// TestRCMEdgeWorkConserving holds nothing: its packets leave in arrival
// order, the harmful flow's 30 before the other's 5.
func TestRCCHoldSwitchedOff(t *testing.T) {
	s, env := edgeSwitch(t, true)
	s.rcm.p.Hold = false
	loadEdge(s, env, 1*us)
	out := drain(s, 1*us, 2)
	checkOrder(t, out)
	if len(out) != 35 || count(out[:30], 1) != 30 {
		t.Errorf("%d packets left, %d of the first 30 the harmful flow's; want all 35, its 30 first", len(out), count(out[:min(30, len(out))], 1))
	}
	if h := s.RCMStats().Held; h != 0 {
		t.Errorf("%d packets held with hold off", h)
	}
}

// loadFour sends s 3 us of flows a, b, c and d into its busy port 2, a
// with half the packets and the others a sixth each: the queue passes
// Q_eq within the first 10 KB, and the CAM fills with samples taken
// since long before the first cut (2 us after the root is found). It
// returns the flows the root flagged.
func loadFour(s *Switch, env *fakeEnv, evs *[]RCMEvent) []rcm.FlowID {
	env.idle[2] = false
	for i := range 300 {
		flow := int32(1) // a
		if i%2 == 1 {
			flow = 2 + int32(i/2%3) // b, c, d in turn
		}
		s.Receive(int64(i)*10*ns, i%2, dataPkt(flow, 9, 3, 1000, ECT0))
	}
	var flagged []rcm.FlowID
	for _, e := range *evs {
		if e.Kind == RCMFlag && e.Port == 2 {
			flagged = e.Flows
		}
	}
	return flagged
}

// heavyRoot is tracedRoot, SAR off, loaded by loadFour: a root whose
// heavy hitter, flow a (1), it flagged alone.
func heavyRoot(t *testing.T) (*Switch, *fakeEnv, *[]RCMEvent) {
	t.Helper()
	p := rcm.Defaults()
	p.SAR = false
	s, env, evs := tracedRoot(t, p)
	a := flowID(dataPkt(1, 9, 3, 1000, ECT0))
	if flagged := loadFour(s, env, evs); len(flagged) != 1 || flagged[0] != a {
		t.Fatalf("the root flagged %v; want a (%d) alone", flagged, a)
	}
	return s, env, evs
}

// heldOf sends 5 more packets of each of flows 1 to 4 to port 2 and
// returns how many of each the switch held back.
func heldOf(s *Switch) [5]int64 {
	var n [5]int64
	held := s.RCMStats().Held
	for f := int32(1); f <= 4; f++ {
		for range 5 {
			s.Receive(3*us, 0, dataPkt(f, 9, 3, 1000, ECT0))
		}
		now := s.RCMStats().Held
		n[f], held = now-held, now
	}
	return n
}

// CFR at a root: of flows a, b, c and d loading a congested port, a with
// half the packets and the others a sixth each, the root flags a, the
// heavy hitter, and holds back its packets and none of the others'. With
// CFR's heavy-hitter test off (rcm.cfr=false) it flags and holds all
// four, each a contributor.
func TestCFRRootHoldsHeavyHitterOnly(t *testing.T) {
	s, _, _ := heavyRoot(t)
	if n := heldOf(s); n != [5]int64{0, 5, 0, 0, 0} {
		t.Errorf("of 5 packets each of a, b, c and d the root held %v; want a's alone", n[1:])
	}

	p := rcm.Defaults()
	p.SAR, p.CFR = false, false
	s, env, evs := tracedRoot(t, p)
	if flagged := loadFour(s, env, evs); len(flagged) != 4 {
		t.Fatalf("with the heavy-hitter test off the root flagged %v; want all four", flagged)
	}
	if n := heldOf(s); n != [5]int64{0, 5, 5, 5, 5} {
		t.Errorf("with the heavy-hitter test off the root held %v of 5 packets each of a, b, c and d; want all", n[1:])
	}
}

// CFR in CNs: B's port 2 is a root loaded by x (three fifths, from A),
// w (a fifth, from A) and y (a fifth, from a host), and once by m (from
// A). It holds back x, the heavy hitter, but its CN to A names every
// flow from A that loads the port, x and w: upstream they all block
// flows that do not go to the root. Not y, which does not come from A,
// and not m, too light to count (fewer than cam_min_hits entries).
func TestCFRRootNamesContributors(t *testing.T) {
	_, b, _, envB := cnPair(t, rcm.Defaults())
	const w, m = 4, 5
	envB.idle[2] = false
	for i := range 600 {
		now := int64(i) * 10 * ns
		switch i % 5 {
		case 3:
			b.Receive(now, 0, dataPkt(w, 9, 3, 1000, ECT0))
		case 4:
			b.Receive(now, 1, dataPkt(cnY, 9, 3, 1000, ECT0))
		default:
			b.Receive(now, 0, dataPkt(cnX, 9, 3, 1000, ECT0))
		}
		if i == 400 {
			b.Receive(now, 0, dataPkt(m, 9, 3, 1000, ECT0))
		}
	}
	id := func(f int32) rcm.FlowID { return flowID(dataPkt(f, 9, 3, 1000, ECT0)) }
	if held := b.rcm.ports[2].local; len(held) != 1 || held[0] != id(cnX) {
		t.Errorf("the root holds back %v; want x (%d) alone", held, id(cnX))
	}
	var named []rcm.FlowID
	for p := b.Dequeue(6*us, 0); p != nil; p = b.Dequeue(6*us, 0) {
		if p.Kind == CN {
			info := b.cfg.CNs.Get(p.Aux)
			for _, f := range info.Flows[:info.N] {
				if !rcm.Contains(named, f) {
					named = append(named, f)
				}
			}
		}
	}
	if len(named) != 2 || !rcm.Contains(named, id(cnX)) || !rcm.Contains(named, id(w)) {
		t.Errorf("B's CNs to A named %v; want x (%d) and w (%d), not y (%d) or m (%d)", named, id(cnX), id(w), id(cnY), id(m))
	}
}
