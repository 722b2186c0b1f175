package p4_test

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/switchproc"
)

// quiet is how long a receiver waits for one more frame.
const quiet = 300 * time.Millisecond

func flowTo(dst int, sport uint16) flow {
	return flow{src: hostIP(hostA), dst: hostIP(dst), sport: sport, dport: 4791}
}

func frames(f flow, ecn uint8, n int) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, f.frame(ecn, i))
	}
	return out
}

// Routes: next hop's port and MACs, TTL less one, a checksum that holds;
// no route counts and drops; an ECMP group spreads flows over both
// members and keeps each flow on one.
func TestForwarding(t *testing.T) {
	r := newRig(t)
	f := flowTo(hostB, 1000)
	r.send(hostA, f.frame(0, 7))
	got := r.recvData(hostB, 1, quiet)
	if len(got) != 1 {
		t.Fatalf("host B got %d frames, want 1", len(got))
	}
	g := got[0]
	if g.flow.id() != f.id() || g.seq != 7 || g.ttl != 63 {
		t.Errorf("got flow %v seq %d TTL %d, want %v seq 7 TTL 63", g.flow, g.seq, g.ttl, f)
	}
	if !bytes.Equal(g.eth.SrcMAC, switchMAC(hostB)) || !bytes.Equal(g.eth.DstMAC, hostMAC(hostB)) {
		t.Errorf("MACs %v -> %v, want the switch port's and host B's", g.eth.SrcMAC, g.eth.DstMAC)
	}
	sum := g.ip.Checksum
	buf := gopacket.NewSerializeBuffer()
	if err := g.ip.SerializeTo(buf, gopacket.SerializeOptions{ComputeChecksums: true}); err != nil {
		t.Fatal(err)
	}
	if want := binary.BigEndian.Uint16(buf.Bytes()[10:]); sum != want {
		t.Errorf("IPv4 checksum %#04x, want %#04x", sum, want)
	}

	r.send(hostA, flow{src: hostIP(hostA), dst: []byte{10, 9, 9, 9}, sport: 1, dport: 4791}.frame(0, 0))
	if n := r.waitCounter(p4.CounterNoRoute, hostA, 1); n != 1 {
		t.Errorf("no_route[A] = %d, want 1", n)
	}

	// Sixteen flows into the ECMP group, two packets each.
	ports := map[uint16]int{}
	for i := range 16 {
		f := flow{src: hostIP(hostA), dst: []byte{10, 0, 9, 5}, sport: uint16(2000 + i), dport: 4791}
		r.send(hostA, f.frame(0, 0), f.frame(0, 1))
	}
	for _, n := range []int{hostB, hostC} {
		for _, g := range r.recvData(n, 32, quiet) {
			if p, ok := ports[g.flow.sport]; ok && p != n {
				t.Errorf("flow from port %d went to both members", g.flow.sport)
			}
			ports[g.flow.sport] = n
		}
	}
	perPort := map[int]int{}
	for _, n := range ports {
		perPort[n]++
	}
	if len(ports) != 16 || perPort[hostB] == 0 || perPort[hostC] == 0 {
		t.Errorf("ECMP: %d flows arrived, %d on B and %d on C; want all 16 on both", len(ports), perPort[hostB], perPort[hostC])
	}
	if n := r.counter(p4.CounterRxFrames, hostA); n != 34 {
		t.Errorf("rx_frames[A] = %d, want 34", n)
	}
}

// RED/ECN at egress: nothing is marked while the queue stays below Kmin;
// a burst into a slow port is marked CE above Kmax, and only ECN-capable
// packets; WRED drops packets that are not ECN-capable above its
// threshold.
func TestECNMarking(t *testing.T) {
	r := newRig(t)
	const k = 4 * frameBytes
	r.portConfig(p4.TableREDConfig, hostB, p4.ActionSetRED,
		"kmin_bytes", u(k, 32), "kmax_bytes", u(k, 32), "pmax_slope", u(0, 32), "wred_k_bytes", u(0, 32), "buf_max_bytes", u(0, 32))
	r.must(r.sw.SetQueueRate(hostB, 200))

	// Below Kmin: one packet at a time, each gone before the next.
	f := flowTo(hostB, 1000)
	for i := range 5 {
		r.send(hostA, f.frame(2, i))
		time.Sleep(30 * time.Millisecond)
	}
	got := r.recvData(hostB, 5, quiet)
	if len(got) != 5 {
		t.Fatalf("host B got %d of 5 frames", len(got))
	}
	for _, g := range got {
		if g.ecn != 2 {
			t.Errorf("packet %d left a short queue with ECN %d, want 2 (ECT(0))", g.seq, g.ecn)
		}
	}

	// A burst of 20: a packet leaves with the bytes queued behind it, so
	// all but the last few are past Kmax.
	r.send(hostA, frames(f, 2, 20)...)
	got = r.recvData(hostB, 20, quiet)
	if len(got) != 20 {
		t.Fatalf("host B got %d of 20 frames", len(got))
	}
	marked := 0
	for _, g := range got {
		if g.ecn == 3 {
			marked++
		}
	}
	if marked < 10 || got[len(got)-1].ecn != 2 {
		t.Errorf("burst: %d of 20 marked CE, last ECN %d; want at least 10, and the last unmarked", marked, got[len(got)-1].ecn)
	}
	if n := r.counter(p4.CounterECNMarks, hostB); n != int64(marked) {
		t.Errorf("ecn_marks[B] = %d, want the %d marks seen", n, marked)
	}

	// Not ECN-capable: never marked; past WRED's threshold, dropped.
	r.portConfig(p4.TableREDConfig, hostB, p4.ActionSetRED,
		"kmin_bytes", u(k, 32), "kmax_bytes", u(k, 32), "pmax_slope", u(0, 32), "wred_k_bytes", u(k, 32), "buf_max_bytes", u(0, 32))
	r.send(hostA, frames(f, 0, 20)...)
	got = r.recvData(hostB, 20, quiet)
	for _, g := range got {
		if g.ecn != 0 {
			t.Errorf("a packet that is not ECN-capable left with ECN %d", g.ecn)
		}
	}
	drops := r.counter(p4.CounterWREDDrops, hostB)
	if len(got) == 20 || drops != int64(20-len(got)) {
		t.Errorf("WRED: %d of 20 arrived, wred_drops[B] = %d; want drops, all counted", len(got), drops)
	}
}

// buf_max (LDCP's switches): a burst of a priority without PFC into a
// slow port loses what finds more than buf_max bytes queued, ECN-capable
// or not, and each loss is counted; the same burst in the lossless
// priority of the same ingress port loses nothing, since PFC, not
// buf_max, holds it.
func TestBufMax(t *testing.T) {
	r := newRig(t)
	const bufMax = 4 * frameBytes
	// PFC on at A with XOFF past the bursts: priority 3 is lossless there
	// and no PAUSE interferes. No ECN curve (thresholds nothing reaches),
	// no WRED: any loss is buf_max's.
	r.pfcPort(hostA, 100*frameBytes, 99*frameBytes, 0xffff, 5120)
	r.portConfig(p4.TableREDConfig, hostB, p4.ActionSetRED,
		"kmin_bytes", u(1<<32-1, 32), "kmax_bytes", u(1<<32-1, 32), "pmax_slope", u(0, 32),
		"wred_k_bytes", u(0, 32), "buf_max_bytes", u(bufMax, 32))
	r.must(r.sw.SetQueueRate(hostB, 200))

	lossy := flowTo(hostB, 1000) // DSCP 0: priority 0
	r.send(hostA, frames(lossy, 2, 20)...)
	got := r.recvData(hostB, 20, quiet)
	drops := r.counter(p4.CounterBufMaxDrops, hostB)
	if len(got) < bufMax/frameBytes || len(got) == 20 || drops != int64(20-len(got)) {
		t.Errorf("lossy burst: %d of 20 arrived, buf_max_drops[B] = %d; want at least %d through, drops, all counted",
			len(got), drops, bufMax/frameBytes)
	}
	for _, g := range got {
		if g.ecn != 2 {
			t.Errorf("packet %d left with ECN %d: want 2, no curve is set", g.seq, g.ecn)
		}
	}

	lossless := flowTo(hostB, 1001)
	lossless.dscp = rocev2DSCP // priority 3, PFC's at A
	r.send(hostA, frames(lossless, 2, 20)...)
	if got := r.recvData(hostB, 20, quiet); len(got) != 20 {
		t.Errorf("lossless burst: %d of 20 arrived, want all", len(got))
	}
	if n := r.counter(p4.CounterBufMaxDrops, hostB); n != drops {
		t.Errorf("buf_max_drops[B] = %d after the lossless burst, want still %d", n, drops)
	}
	if n := r.counter(p4.CounterWREDDrops, hostB); n != 0 {
		t.Errorf("wred_drops[B] = %d, want 0 (WRED off)", n)
	}
}

// pauseTime is the quanta a PFC frame gives priority prio.
func pauseTime(b []byte, prio int) (classEnable uint8, quanta uint16) {
	return b[17], binary.BigEndian.Uint16(b[18+2*prio:])
}

// pauseFrame is the PFC frame host n sends: prio paused for quanta.
func pauseFrame(n, prio int, quanta uint16) []byte {
	b := make([]byte, 60)
	copy(b, []byte{0x01, 0x80, 0xc2, 0, 0, 1})
	copy(b[6:], hostMAC(n))
	binary.BigEndian.PutUint16(b[12:], 0x8808)
	binary.BigEndian.PutUint16(b[14:], 0x0101)
	b[17] = 1 << prio
	binary.BigEndian.PutUint16(b[18+2*prio:], quanta)
	return b
}

// pfcPriority is the lossless priority; RoCE traffic carries DSCP 26
// (class selector 3) to be in it.
const (
	pfcPriority = 3
	rocev2DSCP  = 26
)

// pfcPort turns PFC on for a port: XOFF and XON in bytes, the quanta a
// PAUSE asks for and how long one lasts.
func (r *rig) pfcPort(port, xoff, xon int, quanta uint16, quantumNs int) {
	r.portConfig(p4.TableIngressPortConfig, port, p4.ActionSetPort,
		"mac", switchMAC(port), "xoff_bytes", u(xoff, 32), "xon_bytes", u(xon, 32),
		"pause_quanta", u(int(quanta), 16), "quantum_ns", u(quantumNs, 32), "pfc_priority", u(pfcPriority, 3),
		"cn_enabled", u(0, 1), "cn_interval_ns", u(0, 32), "cn_ingress_bytes", u(0, 32), "cn_hold_ns", u(0, 32))
}

// PFC emulation: an ingress port past XOFF sends a real PAUSE upstream,
// and quanta 0 once it drains below XON; a PAUSE received holds the
// port's traffic of the paused priority until quanta 0 comes or the
// quanta run out, nothing is lost, and traffic of other priorities
// passes meanwhile (802.1Qbb pauses priorities, not ports).
func TestPFC(t *testing.T) {
	r := newRig(t)
	r.pfcPort(hostA, 3*frameBytes, frameBytes, 0xffff, 5120)
	r.must(r.sw.SetQueueRate(hostB, 200))
	f := flowTo(hostB, 1000)
	f.dscp = rocev2DSCP
	lossy := flowTo(hostB, 1001) // DSCP 0: priority 0, never paused here
	r.send(hostA, frames(f, 2, 10)...)

	pause := r.recvType(hostA, 0x8808, 2*time.Second)
	if pause == nil {
		t.Fatal("no PAUSE from the switch past XOFF")
	}
	if !bytes.Equal(pause[:6], []byte{0x01, 0x80, 0xc2, 0, 0, 1}) || !bytes.Equal(pause[6:12], switchMAC(hostA)) ||
		binary.BigEndian.Uint16(pause[14:]) != 0x0101 {
		t.Errorf("PAUSE frame % x: want to 01:80:c2:00:00:01 from the port's MAC, opcode 0x0101", pause[:16])
	}
	if ce, q := pauseTime(pause, pfcPriority); ce != 1<<pfcPriority || q != 0xffff {
		t.Errorf("PAUSE: class enable %#02x, quanta %#x; want %#02x, 0xffff", ce, q, 1<<pfcPriority)
	}
	xon := r.recvType(hostA, 0x8808, 2*time.Second)
	if xon == nil {
		t.Fatal("no XON (PAUSE with quanta 0) once the port drained")
	}
	if ce, q := pauseTime(xon, pfcPriority); ce != 1<<pfcPriority || q != 0 {
		t.Errorf("XON: class enable %#02x, quanta %d; want %#02x, 0", ce, q, 1<<pfcPriority)
	}
	if got := r.recvData(hostB, 10, quiet); len(got) != 10 {
		t.Errorf("host B got %d of 10 frames", len(got))
	}
	if p, x := r.counter(p4.CounterPausesSent, hostA), r.counter(p4.CounterResumesSent, hostA); p != 1 || x != 1 {
		t.Errorf("pauses_sent[A] = %d, resumes_sent[A] = %d, want 1 and 1 (the XOFF, the XON)", p, x)
	}

	// Host B pauses the switch; its frames wait until B resumes it.
	r.must(r.sw.SetQueueRate(hostB, 2000))
	r.pfcPort(hostB, 0, 0, 0, 10000)
	r.send(hostB, pauseFrame(hostB, pfcPriority, 0xffff)) // 655 ms
	r.waitCounter(p4.CounterPausesReceived, hostB, 1)
	r.send(hostA, frames(f, 2, 5)...)
	r.send(hostA, frames(lossy, 2, 3)...)
	got := r.recvData(hostB, 8, 150*time.Millisecond)
	for _, g := range got {
		if g.flow.sport != lossy.sport {
			t.Fatalf("host B got frame %d of the paused priority while it had it paused", g.seq)
		}
	}
	if len(got) != 3 {
		t.Fatalf("host B got %d of the 3 priority-0 frames sent while it had priority %d paused", len(got), pfcPriority)
	}
	if n := r.counter(p4.CounterHeld, hostB); n < 5 {
		t.Errorf("held[B] = %d, want every frame held at least once", n)
	}
	// A PAUSE for another priority changes nothing.
	other := pauseFrame(hostB, pfcPriority+1, 0)
	r.send(hostB, other)
	if got := r.recvData(hostB, 5, 100*time.Millisecond); len(got) != 0 {
		t.Fatalf("host B got %d frames after resuming a priority that was not paused", len(got))
	}
	// XON, and two more frames right behind it, while the five held
	// ones still go round: all seven leave in the order they came (a
	// RoCE receiver would answer any other with a NAK and go-back-N).
	late := frames(f, 2, 7)[5:]
	r.send(hostB, pauseFrame(hostB, pfcPriority, 0))
	r.send(hostA, late...)
	got = r.recvData(hostB, 7, quiet)
	seqs := []int{}
	for _, g := range got {
		seqs = append(seqs, g.seq)
	}
	if !slices.Equal(seqs, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Fatalf("after XON host B got frames %v, want 0-6 in order", seqs)
	}

	// A pause that runs out: 20000 quanta of 10 us.
	r.send(hostB, pauseFrame(hostB, pfcPriority, 20000))
	r.waitCounter(p4.CounterPausesReceived, hostB, 2)
	// Two PAUSEs came from B and two RESUMEs (one for another priority).
	if p, x := r.counter(p4.CounterPausesReceived, hostB), r.counter(p4.CounterResumesReceived, hostB); p != 2 || x != 2 {
		t.Errorf("pauses_received[B] = %d, resumes_received[B] = %d, want 2 and 2", p, x)
	}
	r.send(hostA, frames(f, 2, 3)...)
	if got := r.recvData(hostB, 3, 50*time.Millisecond); len(got) != 0 {
		t.Fatalf("host B got %d frames in a 200 ms pause", len(got))
	}
	if got := r.recvData(hostB, 3, 2*time.Second); len(got) != 3 {
		t.Errorf("after the pause ran out host B got %d of 3 frames", len(got))
	}
}

// Held packets keep their order across RCC's two queues. CNs on B name
// flow F, whose frames then go to the low queue; a pause from B holds
// four of them and, behind, four of flow G from the high queue; after
// XON all eight leave, each flow in order. Then a
// pause holds four more of G's in the high queue, CNs name G, and two of
// G's sent right behind the XON go to the low queue: they must not pass
// the held ones. With tickets per queue rather than per priority they do
// (frames 4 6 5 ...): nothing was held in the low queue, so they left at
// once.
func TestPFCHoldAcrossRCCQueues(t *testing.T) {
	r := newRig(t)
	r.rcmPort(hostB)
	// B's queues share a link on the Go target, strict priority between
	// them, and held packets go round at a bounded rate, as in the
	// emulations. BMv2 paces each queue on its own (and the loop with
	// them): a frame of the low queue may then be let out before an
	// older one of the high queue, but not before one held longer.
	if r.sw.Config().Target == switchproc.TargetGo {
		r.must(r.sw.SetPortRate(hostB, 16e6))
		r.must(r.sw.SetRecirculationRate(16000))
	} else {
		r.must(r.sw.SetQueueRate(hostB, 2000))
	}
	r.portConfig(p4.TableIngressPortConfig, hostB, p4.ActionSetPort,
		"mac", switchMAC(hostB), "xoff_bytes", u(0, 32), "xon_bytes", u(0, 32),
		"pause_quanta", u(0, 16), "quantum_ns", u(10000, 32), "pfc_priority", u(pfcPriority, 3),
		"cn_enabled", u(0, 1), "cn_interval_ns", u(1e6, 32), "cn_ingress_bytes", u(0, 32), "cn_hold_ns", u(4e9, 32))
	f, g := flowTo(hostB, 1000), flowTo(hostB, 1001)
	f.dscp, g.dscp = rocev2DSCP, rocev2DSCP

	for range 3 {
		r.send(hostB, cnFrame(hostB, 63, f))
	}
	r.waitCounter(p4.CounterCNsReceived, hostB, 3)
	r.send(hostB, pauseFrame(hostB, pfcPriority, 0xffff))
	r.waitCounter(p4.CounterPausesReceived, hostB, 1)
	r.send(hostA, frames(f, 2, 4)...)
	r.send(hostA, frames(g, 2, 4)...)
	if got := r.recvData(hostB, 8, 100*time.Millisecond); len(got) != 0 {
		t.Fatalf("host B got %d frames while it had their priority paused", len(got))
	}
	r.send(hostB, pauseFrame(hostB, pfcPriority, 0))
	got := r.recvData(hostB, 8, quiet)
	if len(got) != 8 {
		t.Fatalf("host B got %d of 8 held frames after XON", len(got))
	}
	inFlowOrder(t, got)

	r.send(hostB, pauseFrame(hostB, pfcPriority, 0xffff))
	r.waitCounter(p4.CounterPausesReceived, hostB, 2)
	r.send(hostA, frames(g, 2, 10)[4:8]...)
	time.Sleep(quiet) // all four held in the high queue before G is named
	for range 3 {
		r.send(hostB, cnFrame(hostB, 63, g))
	}
	r.waitCounter(p4.CounterCNsReceived, hostB, 6)
	r.send(hostB, pauseFrame(hostB, pfcPriority, 0))
	r.send(hostA, frames(g, 2, 10)[8:]...)
	got = r.recvData(hostB, 6, quiet)
	if len(got) != 6 {
		t.Fatalf("host B got %d of 6 frames of G", len(got))
	}
	inFlowOrder(t, got)
}

// rcmPort turns RCM on for an egress port: every packet is a CRD sample,
// Q_eq two frames, a degree unit of 256 bytes, one CAM entry makes a
// flow harmful, W two frames; queues 1 (normal) and 0 (past W_c); RCC
// work-conserving.
func (r *rig) rcmPort(port int) { r.rcmPortLimited(port, 0) }

// rcmPortLimited is rcmPort with RCC a rate limit of W_c every window
// at an edge (0: work-conserving).
func (r *rig) rcmPortLimited(port int, window time.Duration) {
	r.portConfig(p4.TableRCMConfig, port, p4.ActionSetRCM,
		"sample_every", u(1, 16), "qeq_bytes", u(2*frameBytes, 32), "wq_shift", u(1, 8), "fb_shift", u(8, 8),
		"cam_min_hits", u(1, 8), "window_bytes", u(2*frameBytes, 32), "window_ns", u(int(window.Nanoseconds()), 32),
		"high_priority", u(1, 3), "low_priority", u(0, 3))
}

// cnPort configures CNs on an ingress port: sent upstream (at most every
// millisecond) when cnEnabled, and a CN received there holds for 4 s.
func (r *rig) cnPort(port int, cnEnabled bool) { r.cnPortFrom(port, cnEnabled, 0) }

// cnPortFrom is cnPort with CNs sent only while the port's account holds
// more than ingressBytes, and one of degree 0 once it is back to that.
func (r *rig) cnPortFrom(port int, cnEnabled bool, ingressBytes int) {
	on := 0
	if cnEnabled {
		on = 1
	}
	r.portConfig(p4.TableIngressPortConfig, port, p4.ActionSetPort,
		"mac", switchMAC(port), "xoff_bytes", u(0, 32), "xon_bytes", u(0, 32),
		"pause_quanta", u(0, 16), "quantum_ns", u(0, 32), "pfc_priority", u(0, 3),
		"cn_enabled", u(on, 1), "cn_interval_ns", u(1e6, 32), "cn_ingress_bytes", u(ingressBytes, 32), "cn_hold_ns", u(4e9, 32))
}

// RED judges a packet of the high queue by the bytes in the high queue:
// the harmful packets RCC sends to the low queue would otherwise mark
// the flows RCC protects. CNs name one flow at port B (an edge), whose
// burst then fills B's low queue; a lone packet of another flow leaves
// unmarked while the low queue alone holds more than Kmax, and the
// burst's own packets, judged by all the port holds, are marked.
func TestRCCLowQueueMarksNoOther(t *testing.T) {
	r := newRig(t)
	r.rcmPort(hostB)
	r.cnPort(hostB, false)
	const k = 5 * frameBytes
	r.portConfig(p4.TableREDConfig, hostB, p4.ActionSetRED,
		"kmin_bytes", u(k, 32), "kmax_bytes", u(k, 32), "pmax_slope", u(0, 32), "wred_k_bytes", u(0, 32), "buf_max_bytes", u(0, 32))
	r.must(r.sw.SetQueueRate(hostB, 200))
	harmful, other := flowTo(hostB, 1000), flowTo(hostB, 1001)
	for range 3 {
		r.send(hostB, cnFrame(hostB, 63, harmful))
	}
	r.waitCounter(p4.CounterCNsReceived, hostB, 3)
	r.send(hostA, frames(harmful, 2, 12)...)
	r.send(hostA, other.frame(2, 0))
	got := r.recvData(hostB, 13, quiet)
	if len(got) != 13 {
		t.Fatalf("host B got %d of 13 frames", len(got))
	}
	marked := 0
	for _, g := range got {
		switch {
		case g.flow.sport == other.sport && g.ecn != 2:
			t.Errorf("the other flow's packet left with ECN %d, want 2: marked for the low queue's bytes", g.ecn)
		case g.flow.sport == harmful.sport && g.ecn == 3:
			marked++
		}
	}
	if holds := r.counter(p4.CounterWindowHolds, hostB); holds < 6 || marked == 0 {
		t.Errorf("%d of the burst sent to the low queue, %d marked; want at least 6 and some", holds, marked)
	}
}

// A root: a burst into a slow port makes it congested (CRD), its flow
// enters the CAM (reported by digest), a CN naming it with the degree
// goes out of the port the flow came from, and once another flow's
// packet has come in beside it, it is a heavy hitter: it hits the CAM
// and is held past W_c.
func TestRCMRootSendsCN(t *testing.T) {
	r := newRig(t)
	r.rcmPort(hostB)
	r.cnPort(hostA, true)
	r.must(r.sw.SetQueueRate(hostB, 200))
	f, light := flowTo(hostB, 1000), flowTo(hostB, 1001)
	burst := frames(f, 2, 14)
	// Two of the light flow's, so that one at least comes once the port
	// is in RCC, its CAM sampling: BMv2 may find it congested a frame or
	// two later than the Go target does.
	r.send(hostA, burst[:4]...)
	r.send(hostA, light.frame(2, 0))
	r.send(hostA, burst[4:8]...)
	r.send(hostA, light.frame(2, 1))
	r.send(hostA, burst[8:]...)

	cn := r.recvType(hostA, 0x88B5, 2*time.Second)
	if cn == nil {
		t.Fatal("no CN from a congested port")
	}
	if len(cn) < 14+4+13 {
		t.Fatalf("CN of %d bytes: % x", len(cn), cn)
	}
	if !bytes.Equal(cn[:6], hostMAC(hostA)) || !bytes.Equal(cn[6:12], switchMAC(hostA)) {
		t.Errorf("CN from %x to %x; want from port A's MAC to host A's", cn[6:12], cn[:6])
	}
	version, fb, nflows := cn[14]>>4, cn[15], cn[16]
	named := flow{src: cn[18:22], dst: cn[22:26], sport: binary.BigEndian.Uint16(cn[26:]), dport: binary.BigEndian.Uint16(cn[28:])}
	if version != 1 || fb == 0 || fb > 63 || nflows != 1 || named.id() != f.id() || cn[30] != byte(layers.IPProtocolUDP) {
		t.Errorf("CN version %d, F_b %d, %d flows, naming %v; want 1, 1..63, 1, %v", version, fb, nflows, named, f)
	}
	if !r.camDigest(hostB, f.id(), 2*time.Second) {
		t.Error("no CAM digest of port B with the flow")
	}
	if got := r.recvData(hostB, 16, quiet); len(got) != 16 {
		t.Errorf("host B got %d of 16 frames", len(got))
	}
	for name, port := range map[string]int{p4.CounterCNsSent: hostA, p4.CounterCAMHits: hostB, p4.CounterWindowHolds: hostB} {
		if n := r.counter(name, port); n == 0 {
			t.Errorf("%s[%d] = 0", name, port)
		}
	}
}

// Flows that share a root's link evenly are not to blame for one
// another: the root holds none of them back, and names them upstream in
// CNs, where slowing them spares the flows that do not go to the root.
func TestRCMRootHoldsOnlyHeavyHitters(t *testing.T) {
	r := newRig(t)
	r.rcmPort(hostB)
	r.cnPort(hostA, true)
	r.must(r.sw.SetQueueRate(hostB, 200))
	a, b := flowTo(hostB, 1000), flowTo(hostB, 1001)
	burst := interleaved(a, b, 8)
	r.send(hostA, burst...)
	if got := r.recvData(hostB, 16, quiet); len(got) != 16 {
		t.Fatalf("host B got %d of 16 frames", len(got))
	}
	if n := r.counter(p4.CounterWindowHolds, hostB); n != 0 {
		t.Errorf("window_holds[B] = %d, want 0: neither of two even flows is a heavy hitter", n)
	}
	if n := r.counter(p4.CounterCNsSent, hostA); n == 0 {
		t.Error("cns_sent[A] = 0: the congested root named no contributor upstream")
	}
}

// Once the input queue that raised CNs has drained, the next packet in
// sends a CN of degree 0 upstream, once: the neighbour's W_c then
// recovers at once instead of after the CN hold.
func TestRCMRootClearsCN(t *testing.T) {
	r := newRig(t)
	r.rcmPort(hostB)
	r.cnPortFrom(hostA, true, 3*frameBytes)
	r.must(r.sw.SetQueueRate(hostB, 200))
	f := flowTo(hostB, 1000)
	r.send(hostA, frames(f, 2, 10)...)
	if cn := r.recvType(hostA, 0x88B5, 2*time.Second); cn == nil || cn[15] == 0 {
		t.Fatalf("no naming CN from a congested port: % x", cn)
	}
	if got := r.recvData(hostB, 10, quiet); len(got) != 10 {
		t.Fatalf("host B got %d of 10 frames", len(got))
	}
	r.send(hostA, f.frame(2, 10), f.frame(2, 11))
	var fbs []byte
	for {
		cn := r.recvType(hostA, 0x88B5, time.Second)
		if cn == nil {
			break
		}
		fbs = append(fbs, cn[15])
	}
	if len(fbs) == 0 || fbs[len(fbs)-1] != 0 {
		t.Errorf("CN degrees after the queue drained: %v; want the last 0", fbs)
	}
	if n := r.counter(p4.CounterClearCNsSent, hostA); n != 1 {
		t.Errorf("clear_cns_sent[A] = %d, want 1", n)
	}
}

// At an edge the harmful flows are the ones CNs from downstream named,
// not what the port's own CAM sampled: a victim sharing the port, which
// the CAM samples as much as the named flow, is never held. Three CNs of
// the highest degree each cut W_c by half (to a quarter of W, less than
// a frame), so every frame of the named flow goes to the low queue.
func TestRCMEdgeHoldsOnlyNamedFlows(t *testing.T) {
	r := newRig(t)
	r.rcmPort(hostC)
	r.cnPort(hostC, false)
	named, victim := flowTo(hostC, 1000), flowTo(hostC, 1001)
	r.nameFlow(hostC, named)
	burst := interleaved(victim, named, 6)
	r.send(hostA, burst...)
	got := r.recvData(hostC, 12, quiet)
	if len(got) != 12 {
		t.Fatalf("C got %d of 12 frames", len(got))
	}
	if n := r.counter(p4.CounterCAMHits, hostC); n != 6 {
		t.Errorf("cam_hits[C] = %d, want 6: the named flow's frames only", n)
	}
	if n := r.counter(p4.CounterWindowHolds, hostC); n != 6 {
		t.Errorf("window_holds[C] = %d, want 6: every frame of the named flow, none of the victim's", n)
	}
	inFlowOrder(t, got)
}

// RCC as a rate limit (set_rcm's window_ns): at an edge the named flow
// sends W_c a window even though the link would idle. Three CNs of
// degree 63 cut W_c to W/8, a quarter of a frame, so the named flow's
// frames leave one a window (its first at once, on the credit a new
// limit starts with), while the victim's, sent interleaved with them,
// leave at once: the high queue never waits for the held ones, which
// go round with tickets of their own.
func TestRCCRateLimitAtEdge(t *testing.T) {
	r := newRig(t)
	const window = 100 * time.Millisecond
	r.rcmPortLimited(hostC, window)
	r.cnPort(hostC, false)
	named, victim := flowTo(hostC, 1000), flowTo(hostC, 1001)
	r.nameFlow(hostC, named)
	// The credit comes at multiples of the window from the switch's
	// clock's zero (BMv2's is when its process started) until a lull of
	// two windows starts it afresh at the first packet: a burst sent
	// between one and two windows in would find its second window a few
	// milliseconds away (BMv2 in one run of three). Two windows in,
	// the first named frame starts the count.
	time.Sleep(2 * window)
	burst := interleaved(victim, named, 6)
	start := time.Now()
	r.send(hostA, burst...)
	got := r.recvData(hostC, 12, 3*window)
	if len(got) != 12 {
		t.Fatalf("C got %d of 12 frames", len(got))
	}
	inFlowOrder(t, got)
	var namedAt, victimAt []time.Duration
	for _, g := range got {
		if g.flow.id() == named.id() {
			namedAt = append(namedAt, g.at.Sub(start))
		} else {
			victimAt = append(victimAt, g.at.Sub(start))
		}
	}
	t.Logf("named flow's frames at %v, victim's at %v", namedAt, victimAt)
	// Five windows from the first named frame to the last; the test
	// asks for 3.5, room for a switch that wakes late.
	if span := namedAt[len(namedAt)-1] - namedAt[0]; span < 35*window/10 {
		t.Errorf("the named flow's 6 frames left within %v, want one a window of %v", span, window)
	}
	if last := victimAt[len(victimAt)-1]; last >= namedAt[1] {
		t.Errorf("the victim's last frame left at %v, after the named flow's second (%v): it waited for the held ones", last, namedAt[1])
	}
	if n := r.counter(p4.CounterLimitHolds, hostC); n == 0 {
		t.Errorf("limit_holds[C] = 0, want the held frames counted each time round")
	}
}

// A flow that stops being harmful leaves the low queue in order: its
// packets then go to the high queue, but egress holds them until the
// older ones in the low queue have left (flow_in, flow_out). CNs name N;
// its first six frames go low behind a victim's burst, which keeps the
// high queue busy (on the Go target, where the queues share a link, for
// more than HOLD_SKIP_NS); CNs naming other flows then make N no longer
// harmful, and its last four frames go high. Without the hold they leave
// right after the victim, before N's first six.
func TestRCCFlowLeavesLowQueueInOrder(t *testing.T) {
	r := newRig(t)
	r.rcmPort(hostC)
	r.cnPort(hostC, false)
	victimFrames := 150
	r.must(r.sw.SetQueueDepth(hostC, 1000))
	if r.sw.Config().Target == switchproc.TargetGo {
		r.must(r.sw.SetPortRate(hostC, 1e6)) // 125 frames a second
		r.must(r.sw.SetRecirculationRate(2000))
	} else {
		r.must(r.sw.SetQueueRate(hostC, 125))
		victimFrames = 20 // BMv2 paces each queue on its own: no starvation to test, and it loses frames of long runs
	}
	named, victim := flowTo(hostC, 1000), flowTo(hostC, 1001)
	for range 3 {
		r.send(hostC, cnFrame(hostC, 63, named))
	}
	r.waitCounter(p4.CounterCNsReceived, hostC, 3)
	r.send(hostA, frames(victim, 2, victimFrames)...)
	time.Sleep(5 * time.Millisecond) // BMv2 loses frames of long runs
	r.send(hostA, frames(named, 2, 10)[:6]...)
	if n := r.waitCounter(p4.CounterWindowHolds, hostC, 6); n != 6 {
		t.Fatalf("window_holds[C] = %d, want the named flow's 6 frames in the low queue", n)
	}
	for i := range 8 {
		r.send(hostC, cnFrame(hostC, 63, flowTo(hostC, uint16(2000+i))))
	}
	r.waitCounter(p4.CounterCNsReceived, hostC, 11)
	r.send(hostA, frames(named, 2, 10)[6:]...)
	got := r.recvData(hostC, victimFrames+10, 2*time.Second)
	if len(got) != victimFrames+10 {
		t.Fatalf("C got %d of %d frames", len(got), victimFrames+10)
	}
	if n := r.counter(p4.CounterWindowHolds, hostC); n != 6 {
		t.Errorf("window_holds[C] = %d, want 6: the named flow's last four frames, no longer harmful, go high", n)
	}
	inFlowOrder(t, got)
}

// nameFlow makes port an edge whose harmful flow is f: three CNs of the
// highest degree name it, which cut W_c to W/8.
func (r *rig) nameFlow(port int, f flow) {
	r.t.Helper()
	for range 3 {
		r.send(port, cnFrame(port, 63, f))
	}
	if n := r.waitCounter(p4.CounterCNsReceived, port, 3); n != 3 {
		r.t.Fatalf("cns_received[%d] = %d, want 3", port, n)
	}
}

// interleaved is frames 0 to n-1 of a and b, alternating.
func interleaved(a, b flow, n int) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, a.frame(2, i), b.frame(2, i))
	}
	return out
}

// inFlowOrder fails the test where a flow's frame does not follow the one
// it received just before from that flow.
func inFlowOrder(t *testing.T, got []received) {
	t.Helper()
	last := map[uint32]int{}
	for _, g := range got {
		if s, ok := last[g.flow.id()]; ok && g.seq != s+1 {
			t.Errorf("flow from port %d: frame %d after %d", g.flow.sport, g.seq, s)
		}
		last[g.flow.id()] = g.seq
	}
}

// An edge's own degree leaves out what it holds back: the named flow's
// frames fill port C's low queue far past Q_eq, yet the CNs C's region
// sends upstream carry the degree from downstream halved (eq. 2 with an
// uncongested port of its own), not that of a congested root: a port
// holding back the root's flows is not a root itself.
func TestRCMEdgeDegreeLeavesOutHeld(t *testing.T) {
	r := newRig(t)
	r.rcmPort(hostC)
	r.cnPort(hostC, false)
	r.cnPort(hostA, true)
	r.must(r.sw.SetQueueRate(hostC, 200))
	named := flowTo(hostC, 1000)
	for range 3 {
		r.send(hostC, cnFrame(hostC, 63, named))
	}
	r.waitCounter(p4.CounterCNsReceived, hostC, 3)
	r.send(hostA, frames(named, 2, 10)...)
	if got := r.recvData(hostC, 10, quiet); len(got) != 10 {
		t.Fatalf("C got %d of 10 frames", len(got))
	}
	if n := r.counter(p4.CounterWindowHolds, hostC); n != 10 {
		t.Errorf("window_holds[C] = %d, want all 10 frames in the low queue", n)
	}
	n := 0
	for {
		cn := r.recvType(hostA, 0x88B5, 100*time.Millisecond)
		if cn == nil {
			break
		}
		if n++; cn[15] != 31 {
			t.Errorf("CN upstream with degree %d: want 31, (0 + 63) / 2 (the old program: 33 and more)", cn[15])
		}
	}
	if n == 0 {
		t.Error("no CN upstream from the edge")
	}
}

// cnFrame is a CN host n sends: degree fb, naming flows.
func cnFrame(n int, fb uint8, flows ...flow) []byte {
	b := append([]byte{}, switchMAC(n)...)
	b = append(b, hostMAC(n)...)
	b = binary.BigEndian.AppendUint16(b, 0x88B5)
	b = append(b, 1<<4, fb, byte(len(flows)), 0)
	for _, f := range flows {
		b = append(b, f.src...)
		b = append(b, f.dst...)
		b = binary.BigEndian.AppendUint16(b, f.sport)
		b = binary.BigEndian.AppendUint16(b, f.dport)
		b = append(b, byte(layers.IPProtocolUDP))
	}
	for len(b) < 60 {
		b = append(b, 0)
	}
	return b
}

// An edge: a CN from downstream on port C puts C's region in RCC and its
// flows in C's CAM. The named flow keeps its port (harmful flows are
// never detoured), hits the CAM and is held past W_c; new flows that
// hash to C take B, the member with the lower degree, and stay there.
func TestRCMEdgeTakesCNAndDetours(t *testing.T) {
	r := newRig(t)

	// Which flows hash to C, before SAR knows the group and before RCM
	// runs on C (the probe's own burst would congest it).
	toC := []flow{}
	for i := range 32 {
		f := flow{src: hostIP(hostA), dst: []byte{10, 0, 9, 5}, sport: uint16(3000 + i), dport: 4791}
		r.send(hostA, f.frame(2, 0))
	}
	for _, g := range r.recvData(hostC, 32, quiet) {
		toC = append(toC, g.flow)
	}
	if _, err := r.hosts[hostB].Drain(); err != nil {
		t.Fatal(err)
	}
	if len(toC) < 2 {
		t.Fatalf("only %d of 32 flows hash to C", len(toC))
	}
	harmful, others := toC[0], toC[1:]
	r.rcmPort(hostC)
	r.cnPort(hostC, false)

	r.send(hostC, cnFrame(hostC, 40, harmful))
	if n := r.waitCounter(p4.CounterCNsReceived, hostC, 1); n != 1 {
		t.Fatalf("cns_received[C] = %d, want 1", n)
	}
	if !r.camDigest(hostC, harmful.id(), 2*time.Second) {
		t.Error("no CAM digest of port C with the CN's flow")
	}
	r.insert(p4.TableSARGroup, []controlplane.Match{{Field: "meta.ecmp_base", Value: u(ecmpBase, 16)}},
		p4.ActionSetSARMembers, "members", u(2, 8), "p0", u(hostB, 9), "p1", u(hostC, 9),
		"p2", u(0, 9), "p3", u(0, 9), "pin_idle_ns", u(1e9, 32))

	r.send(hostA, frames(harmful, 2, 4)...)
	for _, f := range others {
		r.send(hostA, f.frame(2, 1), f.frame(2, 2))
	}
	got := r.recvData(hostC, 4+2*len(others), quiet)
	if len(got) != 4 {
		t.Errorf("C got %d frames, want the harmful flow's 4 only (it is never detoured, the others are)", len(got))
	}
	for _, g := range got {
		if g.flow.id() != harmful.id() {
			t.Errorf("flow from port %d was not detoured", g.flow.sport)
		}
	}
	onB := map[uint16]int{}
	for _, g := range r.recvData(hostB, 2*len(others), quiet) {
		onB[g.flow.sport]++
	}
	for _, f := range others {
		if onB[f.sport] != 2 {
			t.Errorf("flow from port %d: %d of 2 frames detoured to B", f.sport, onB[f.sport])
		}
	}
	if n := r.counter(p4.CounterDetours, hostA); n != int64(len(others)) {
		t.Errorf("detours[A] = %d, want %d (one per new flow)", n, len(others))
	}
	if n := r.counter(p4.CounterCAMHits, hostC); n != 4 {
		t.Errorf("cam_hits[C] = %d, want 4", n)
	}
	if n := r.counter(p4.CounterWindowHolds, hostC); n == 0 {
		t.Error("window_holds[C] = 0: the harmful flow was never held past W_c")
	}
}
