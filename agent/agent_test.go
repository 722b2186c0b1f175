//go:build linux

package agent

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/afpacket"
	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/flow"
	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/roce"
)

// The tests run two agents, hosts 0 and 1, in two network namespaces.
// Between them, in the root namespace, a forwarder copies frames from one
// veth to the other and lets a test drop or mark them: the network the
// agents must cope with, not a stand-in for them.

const testRate = 20e6 // b/s: 1062-byte frames (1086 on the wire) every 434 us

// rigRTO is the agents' retransmission timeout unless a test sets its
// own. A sender times out when no ACK has moved its window for an RTO,
// and on a busy two-core machine the test process has gone unscheduled
// long enough for a 150 KB flow (65 ms of pacing) to time out at an RTO
// of 200 ms with all its ACKs sent and none read: an RTO near that makes
// timeouts that no loss caused. At 1 s it is fifteen times the longest
// flow any test sends without a loss; tests whose flows lose nothing, or
// recover by a NAK, never wait for it.
const rigRTO = time.Second

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

func newRig(t *testing.T, cc *dcqcn.Params, flows []flow.Flow, alt alter) *rig {
	t.Helper()
	return newRigWith(t, func(c *Config) { c.DCQCN = cc }, flows, alt)
}

// newRigWith is newRig with each agent's Config changed by set.
func newRigWith(t *testing.T, set func(*Config), flows []flow.Flow, alt alter) *rig {
	t.Helper()
	return newRigRewrite(t, set, flows, func(from int, f []byte) []byte {
		if alt == nil || alt(from, f) {
			return f
		}
		return nil
	})
}

// rewrite sees each frame the forwarder passes, going from host `from`,
// and returns the frame to pass on (f, changed or not, or a frame of its
// own, which may be longer), or nil to drop it.
type rewrite func(from int, f []byte) []byte

// newRigRewrite is newRigWith with a forwarder that may rewrite frames.
func newRigRewrite(t *testing.T, set func(*Config), flows []flow.Flow, rw rewrite) *rig {
	t.Helper()
	labtest.Require(t)
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
			LineRate: testRate, DSCP: 26, RTO: rigRTO, Epoch: epoch,
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
			// After the cleanup's cancel, closing the ports may fail a send
			// under way: the run is over then.
			if err := r.agents[i].Run(ctx); err != nil && ctx.Err() == nil {
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
					if g := rw(i, f); g != nil {
						out = append(out, g)
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
	flows := []flow.Flow{
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

// seqRecorder returns an alter that records the PSN of every data frame
// host 0 sends, copies included, in the order the forwarder passes them,
// and drops the first copy of the packets in drop.
func seqRecorder(mu *sync.Mutex, seq *[]uint32, drop ...uint32) alter {
	dropped := map[uint32]bool{}
	return func(from int, f []byte) bool {
		op, n, ok := psn(f)
		if from != 0 || !ok || op == roce.OpAck || op == roce.OpCNP {
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		*seq = append(*seq, n)
		if slices.Contains(drop, n) && !dropped[n] {
			dropped[n] = true
			return false
		}
		return true
	}
}

// TestGoBackN drops the first copy of packet 20 of 60, in the middle of
// the flow: the receiver NAKs the gap once, and the sender goes back to
// packet 20 at the NAK and sends everything from there again, in order.
// No packet after it is lost, so nothing else can recover it before the
// RTO (1 s, fifteen times the flow's 26 ms): a sender that ignored the NAK
// would finish the flow's first pass and then time out.
func TestGoBackN(t *testing.T) {
	const lost, packets = 20, 60
	var mu sync.Mutex
	var seq []uint32
	r := newRig(t, nil, []flow.Flow{{ID: 7, Src: 0, Dst: 1, Size: packets * 1000}}, seqRecorder(&mu, &seq, lost))
	res := r.wait(t, 1, 10*time.Second)[7]
	s0, s1 := r.agents[0].Stats(), r.agents[1].Stats()
	if s1.NAKsSent != 1 || s0.Timeouts != 0 {
		t.Errorf("NAKs %d, timeouts %d; want one NAK and no timeout", s1.NAKsSent, s0.Timeouts)
	}
	mu.Lock()
	defer mu.Unlock()
	// The first pass runs from 0 to the packet k the sender had reached
	// when the NAK came, then the second from the lost packet to the end.
	again := -1 // where the lost packet's second copy is in seq
	if first := slices.Index(seq, lost); first >= 0 {
		if i := slices.Index(seq[first+1:], lost); i >= 0 {
			again = first + 1 + i
		}
	}
	if again < 0 {
		t.Fatalf("packet %d not sent twice: %v", lost, seq)
	}
	k := uint32(again - 1)
	want := append(count(0, k), count(lost, packets-1)...)
	if !slices.Equal(seq, want) {
		t.Errorf("frames sent %v\nwant %v (back to %d at the NAK, after packet %d)", seq, want, lost, k)
	}
	if res.Retransmits != int64(k-lost+1) || res.Retransmits != s0.Retransmits {
		t.Errorf("retransmits: flow %d, host %d; want %d (packets %d to %d)", res.Retransmits, s0.Retransmits, k-lost+1, lost, k)
	}
}

// count is the PSNs from a to b.
func count(a, b uint32) []uint32 {
	var out []uint32
	for n := a; n <= b; n++ {
		out = append(out, n)
	}
	return out
}

// TestTailLossTimesOut drops the first copy of the flow's last packet:
// no later packet shows the receiver a gap, so no NAK comes, and only the
// RTO recovers it. The timer counts from the last progress, the ACK of
// the packet before, which cannot come before that packet's pacing time:
// the FCT is at least 59 packets' pacing plus the RTO.
func TestTailLossTimesOut(t *testing.T) {
	const rto, packets = 200 * time.Millisecond, 60
	var mu sync.Mutex
	var seq []uint32
	r := newRigWith(t, func(c *Config) { c.RTO = rto }, []flow.Flow{{ID: 7, Src: 0, Dst: 1, Size: packets * 1000}},
		seqRecorder(&mu, &seq, packets-1))
	res := r.wait(t, 1, 10*time.Second)[7]
	s0, s1 := r.agents[0].Stats(), r.agents[1].Stats()
	// A stall of the machine as long as the RTO may add a timeout, never
	// a NAK: a sender that goes back resends in order.
	if s1.NAKsSent != 0 || s0.Timeouts < 1 {
		t.Errorf("NAKs %d, timeouts %d; want no NAK and a timeout", s1.NAKsSent, s0.Timeouts)
	}
	if least := leastFCT((packets-1)*1000) + rto; res.FCT() < least {
		t.Errorf("FCT %v: the tail loss must cost an RTO after 59 packets' pacing, %v", res.FCT(), least)
	}
	mu.Lock()
	defer mu.Unlock()
	// Go-back-N from the first packet not acknowledged: the last one,
	// unless a stall delayed the ACKs before it too.
	if len(seq) <= packets || !slices.Equal(seq[:packets], count(0, packets-1)) ||
		!slices.Equal(seq[packets:], count(seq[packets], packets-1)) {
		t.Errorf("frames sent %v: want 0 to %d, then again from the oldest unacknowledged to %d", seq, packets-1, packets-1)
	}
	if res.Retransmits != int64(len(seq)-packets) || res.Retransmits != s0.Retransmits {
		t.Errorf("retransmits: flow %d, host %d; the forwarder saw %d", res.Retransmits, s0.Retransmits, len(seq)-packets)
	}
}

// markCE sets ECN CE on frame f, fixing the IPv4 checksum as a marking
// switch does.
func markCE(f []byte) {
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
}

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(time.Millisecond)
	}
}

// markWindows returns an alter that marks CE on host 0's data frames
// passing in the given windows, each [from, to) in units of n after the
// first frame it marks, which is the first data frame after start; it
// records the time each marked frame and each of host 1's CNPs passed.
// A window no frame passed in (a sender the machine stalled) marks the
// first frame after it; to < 0 marks the first frame from from on, and
// no other.
func markWindows(start time.Time, n time.Duration, windows [][2]float64, mu *sync.Mutex, marks, cnps *[]time.Time) alter {
	var t0 time.Time
	done := make([]bool, len(windows))
	return func(from int, f []byte) bool {
		op, _, ok := psn(f)
		if !ok {
			return true
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if from == 1 {
			if op == roce.OpCNP {
				*cnps = append(*cnps, now)
			}
			return true
		}
		if op == roce.OpAck || op == roce.OpCNP || now.Before(start) {
			return true
		}
		if t0.IsZero() {
			t0 = now
		}
		at := float64(now.Sub(t0)) / float64(n)
		for i, w := range windows {
			if at >= w[0] && (at < w[1] || !done[i]) {
				done[i] = true
				markCE(f)
				*marks = append(*marks, now)
				break
			}
		}
		return true
	}
}

// npCount replays the NP algorithm (dcqcn.NP, its timer at each wake)
// on marked packets arriving at the given times: the CNPs it sends.
func npCount(marks []time.Time, n time.Duration) int {
	var np dcqcn.NP
	sent, wake := 0, int64(0)
	ps := func(t time.Time) int64 { return t.Sub(marks[0]).Nanoseconds() * 1000 }
	for _, m := range marks {
		now := ps(m)
		if wake > 0 && wake <= now {
			if np.OnTimer(wake, n.Nanoseconds()*1000) {
				sent++
			}
			wake = 0
		}
		now2, w := np.OnMarked(now, n.Nanoseconds()*1000)
		if now2 {
			sent++
		}
		if w > 0 {
			wake = w
		}
	}
	if wake > 0 && np.OnTimer(wake, n.Nanoseconds()*1000) {
		sent++
	}
	return sent
}

// cnpRig runs a flow of size bytes from host 0 to host 1 whose data the
// forwarder marks in windows (see markWindows) of the CNP interval n, and
// returns the marked frames' and CNPs' times once the flow is done, with
// the flow's result.
func cnpRig(t *testing.T, n time.Duration, size int64, windows [][2]float64) (marks, cnps []time.Time, res Result, r *rig) {
	t.Helper()
	cc, err := Scale(dcqcn.Mellanox(), testRate)
	if err != nil {
		t.Fatal(err)
	}
	cc.CNPInterval = n.Nanoseconds() * 1000
	var mu sync.Mutex
	// Mark from 5 ms in, when the flow is sending at its pace.
	alt := markWindows(time.Now().Add(5*time.Millisecond), n, windows, &mu, &marks, &cnps)
	r = newRig(t, &cc, []flow.Flow{{ID: 1, Src: 0, Dst: 1, Size: size}}, alt)
	res = r.wait(t, 1, 20*time.Second)[1]
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(marks), slices.Clone(cnps), res, r
}

// TestNPPacesCNPs: the receiver's notification point sends exactly the
// CNPs the NP algorithm gives for the marks it receives, each of which
// reaches the sender and is counted on the flow. The forwarder marks
// every data frame in two stretches of the CNP interval N (40 ms) and
// one frame after them: in [0, 0.3N) (a CNP at once, one at the
// interval's end), in [1.3N, 1.7N) (one at the end of the interval
// that started at N) and at 3.5N (at once): four CNPs, two of them by
// the end-of-interval timer. The marks sit at least 0.3N from where an
// interval ends, so a receiver that sees them a little later than the
// forwarder counts the same; a late timer moves which mark sends a CNP,
// not how many go.
func TestNPPacesCNPs(t *testing.T) {
	const n = 40 * time.Millisecond
	// 400 KB: 174 ms at line rate, longer with the cuts: still sending at 3.5N.
	marks, cnps, res, r := cnpRig(t, n, 400_000, [][2]float64{{0, 0.3}, {1.3, 1.7}, {3.5, -1}})
	s0, s1 := r.agents[0].Stats(), r.agents[1].Stats()
	want := npCount(marks, n)
	if want != 4 {
		var at []string
		for _, m := range marks {
			at = append(at, fmt.Sprintf("%.2f", float64(m.Sub(marks[0]))/float64(n)))
		}
		t.Errorf("the NP algorithm gives %d CNPs for the %d marks sent, at %v N; want 4 (FCT %v)", want, len(marks), at, res.FCT())
	}
	if s1.Marked != int64(len(marks)) || s0.Retransmits != 0 {
		t.Errorf("%d packets arrived marked, %d sent again; want the %d marked and none", s1.Marked, s0.Retransmits, len(marks))
	}
	if s1.CNPsSent != int64(want) || len(cnps) != want {
		t.Errorf("host 1 sent %d CNPs, %d passed the forwarder, for %d marks; the NP algorithm gives %d", s1.CNPsSent, len(cnps), len(marks), want)
	}
	if s0.CNPsReceived != s1.CNPsSent || res.CNPs != int(s1.CNPsSent) {
		t.Errorf("CNPs: %d sent, %d received, %d on the flow", s1.CNPsSent, s0.CNPsReceived, res.CNPs)
	}
	t.Logf("FCT %v; %d marks, %d CNPs, %d cuts", res.FCT(), len(marks), s1.CNPsSent, res.RateCuts)
}

// TestNPTimerEndsInterval: marks in the first 0.3 of a CNP interval N
// alone. The first sends a CNP at once; the others can only be answered
// by the timer at the interval's end, which sends one CNP, N after the
// first at the earliest; nothing more follows.
func TestNPTimerEndsInterval(t *testing.T) {
	const n = 40 * time.Millisecond
	marks, cnps, res, r := cnpRig(t, n, 200_000, [][2]float64{{0, 0.3}})
	s1 := r.agents[1].Stats()
	if len(marks) < 2 {
		t.Fatalf("%d marks; want several in the first 0.3 of an interval", len(marks))
	}
	if s1.CNPsSent != 2 || len(cnps) != 2 {
		t.Fatalf("host 1 sent %d CNPs (%d passed the forwarder) for %d marks within %v; want one at once and one at the interval's end",
			s1.CNPsSent, len(cnps), len(marks), 3*n/10)
	}
	if d := cnps[1].Sub(marks[0]); d < n {
		t.Errorf("the second CNP passed %v after the first mark; want the interval's end, %v", d, n)
	}
	t.Logf("FCT %v; %d marks; CNPs %v and %v after the first mark", res.FCT(), len(marks), cnps[0].Sub(marks[0]), cnps[1].Sub(marks[0]))
}

// cnpFrame is a CNP for host 0's queue pair qp, as host 1 would send it.
func cnpFrame(t *testing.T, qp uint32) []byte {
	t.Helper()
	p := roce.Packet{DstMAC: mac6(gateway), SrcMAC: mac6(gateway), SrcIP: ip4(addrs[1]), DstIP: ip4(addrs[0]),
		DSCP: 48, SrcPort: 49152, Opcode: roce.OpCNP, DestQP: qp}
	f, err := roce.Build(make([]byte, p.Len()), &p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// pacedLast is when a flow's last packet may leave at the earliest (ps),
// the flow starting at start with its reaction point in state rp: each
// packet waits for the one before to go at the rate rp gives at the time
// (fill's pacing, anchored at the start whatever the sender's lateness),
// and rp counts its bytes towards its byte counter.
func pacedLast(rp dcqcn.RP, start, size int64) int64 {
	t, last := start, start
	for off := int64(0); off < size; off += 1000 {
		n := frameLen(int(min(1000, size-off)))
		last = t
		rate := min(rp.Rate(t), testRate)
		rp.OnSent(t, n)
		t += wireTime(n, rate)
	}
	return last
}

// TestCNPsCutTheRate: two CNPs reach a sender before its flow starts. The
// reaction point (Mellanox's, scaled to testRate) cuts the rate once, at
// its first decrease check, to (1 - alpha/2) of the line rate, about
// half, and then recovers with its byte counter (32 KB per step); its
// timer (1.5 s) does not fire while the flow runs. The flow must be paced
// at those rates: its FCT is at least the time its own reaction point,
// replayed from its state at the start, takes to let the last packet go.
// Load only delays a sender, and fill anchors the pacing at the flow's
// start, so the bound holds on a busy machine; if the sender were late
// past the timer, the FCT would be longer than 0.5 s anyway.
func TestCNPsCutTheRate(t *testing.T) {
	cc, err := Scale(dcqcn.Mellanox(), testRate)
	if err != nil {
		t.Fatal(err)
	}
	// The flow starts 1 s in, so that the CNPs, sent now, arrive before it
	// even when the machine leaves the test unscheduled for a while.
	const start, size = time.Second, 100_000
	r := newRig(t, &cc, []flow.Flow{{ID: 1, Src: 0, Dst: 1, Size: size, Start: start.Nanoseconds() * 1000}}, nil)
	cnp := cnpFrame(t, 1)
	if err := r.ports[0].Send(cnp, cnp); err != nil {
		t.Fatal(err)
	}
	a := r.agents[0]
	waitFor(t, start, "two CNPs reach the sender", func() bool { return a.Stats().CNPsReceived == 2 })
	a.mu.Lock()
	f := a.byQP[1]
	rp, sent, from := f.rp, f.high, f.start
	a.mu.Unlock()
	if sent != 0 {
		t.Fatalf("the flow had sent %d packets when its CNPs arrived", sent)
	}
	least := time.Duration((pacedLast(rp, from, size) - from) / 1000)
	res := r.wait(t, 1, 10*time.Second)[1]
	if res.CNPs != 2 || res.RateCuts != 1 || a.Stats().Retransmits != 0 {
		t.Errorf("flow: %d CNPs, %d cuts, %d retransmits; want 2, 1 and 0", res.CNPs, res.RateCuts, a.Stats().Retransmits)
	}
	if res.FCT() < least {
		t.Errorf("FCT %v: the cut rate allows no less than %v (at line rate %v)", res.FCT(), least, leastFCT(size))
	}
	t.Logf("FCT %v; the cut rate's pacing %v, line rate's %v", res.FCT(), least, leastFCT(size))
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

// junk is a frame no agent takes (an experimental EtherType): the agent
// counts it as ignored, which tells a test the frames before it were read.
func junk() []byte {
	f := make([]byte, 60)
	copy(f, []byte{2, 1, 0, 9, 0, 1, 2, 1, 0, 9, 0, 1, 0x88, 0xb5})
	return f
}

// TestPauseHoldsItsPriority: a PAUSE for another priority changes
// nothing; one for the data's (DSCP 26: priority 3) stops it until the
// RESUME. The test reads the sender's own counters, not the frames on the
// wire, which a loaded machine may deliver late: a frame the sender built
// is counted at once.
func TestPauseHoldsItsPriority(t *testing.T) {
	// 2 MB: 0.87 s at testRate, long enough to still be sending when the
	// PAUSE comes after any stall of the test.
	r := newRig(t, nil, []flow.Flow{{ID: 1, Src: 0, Dst: 1, Size: 2_000_000}}, nil)
	a := r.agents[0]
	sent := func() int64 { return a.Stats().DataSent }
	waitFor(t, 10*time.Second, "10 packets sent", func() bool { return sent() >= 10 })
	// 65535 quanta at testRate hold for 1.68 s.
	hold := time.Duration(65535 * 512 / testRate * float64(time.Second))

	// Priority 4 only, then a frame the agent ignores: once it is counted,
	// the PAUSE was read, and it must have changed nothing.
	ignored := a.Stats().Ignored
	if err := r.ports[0].Send(pause(1<<4, 0xffff), junk()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the agent reads the frames", func() bool { return a.Stats().Ignored > ignored })
	if s := a.Stats(); s.Pauses != 0 || s.Resumes != 0 {
		t.Fatalf("a PAUSE of priority 4 counted as %d PAUSEs and %d RESUMEs of priority 3", s.Pauses, s.Resumes)
	}
	n := sent()
	// Half the hold: a sender held by the PAUSE would still be held.
	waitFor(t, hold/2, "data sent after a PAUSE of priority 4", func() bool { return sent() >= n+10 })

	if err := r.ports[0].Send(pause(1<<3, 0xffff)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the PAUSE of priority 3 read", func() bool { return a.Stats().Pauses == 1 })
	held := time.Now()
	n = sent()
	if a.Pending() != 1 {
		t.Fatal("the flow ended before the PAUSE")
	}
	time.Sleep(200 * time.Millisecond)
	m := sent()
	if d := time.Since(held); d >= hold {
		t.Fatalf("slept %v, past the PAUSE's %v: cannot tell", d, hold)
	}
	if m != n {
		t.Fatalf("%d frames sent during the PAUSE", m-n)
	}
	if err := r.ports[0].Send(pause(1<<3, 0)); err != nil {
		t.Fatal(err)
	}
	res := r.wait(t, 1, 10*time.Second)[1]
	s := a.Stats()
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
		flow flow.Flow
	}{
		"no rate":         {func(c *Config) { c.LineRate = 0 }, flow.Flow{ID: 1, Dst: 1, Size: 1}},
		"IPv6":            {func(c *Config) { c.IP = net.ParseIP("::1") }, flow.Flow{ID: 1, Dst: 1, Size: 1}},
		"DSCP 64":         {func(c *Config) { c.DSCP = 64 }, flow.Flow{ID: 1, Dst: 1, Size: 1}},
		"unknown host":    {func(*Config) {}, flow.Flow{ID: 1, Dst: 9, Size: 1}},
		"empty flow":      {func(*Config) {}, flow.Flow{ID: 1, Dst: 1}},
		"ID past 24 bits": {func(*Config) {}, flow.Flow{ID: 1 << 24, Dst: 1, Size: 1}},
		"DCQCN and LDCP": {func(c *Config) {
			d, l := dcqcn.Mellanox(), ldcp.Draft()
			c.DCQCN, c.LDCP, c.BaseRTT = &d, &l, func(int) time.Duration { return time.Millisecond }
		}, flow.Flow{ID: 1, Dst: 1, Size: 1}},
		"LDCP without a base RTT": {func(c *Config) { l := ldcp.Draft(); c.LDCP = &l }, flow.Flow{ID: 1, Dst: 1, Size: 1}},
		"LDCP, base RTT 0": {func(c *Config) {
			l := ldcp.Draft()
			c.LDCP, c.BaseRTT = &l, func(int) time.Duration { return 0 }
		}, flow.Flow{ID: 1, Dst: 1, Size: 1}},
	} {
		cfg := good
		c.cfg(&cfg)
		if _, err := New(cfg, nil, []flow.Flow{c.flow}); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
