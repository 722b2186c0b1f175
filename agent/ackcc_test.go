//go:build linux

package agent

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/dctcp"
	"github.com/p4rcm/p4rcm/flow"
	"github.com/p4rcm/p4rcm/hpcc"
	"github.com/p4rcm/p4rcm/roce"
	"github.com/p4rcm/p4rcm/timely"
)

// hpccT is the base RTT the HPCC tests give their senders, and hpccW
// their BDP at testRate.
const (
	hpccT = time.Millisecond
	hpccW = testRate * 1e-3 / 8
)

// hpccRig runs the tests' two agents under HPCC (the ns-3 simulator's
// settings, scaled to testRate) behind a forwarder that rewrites frames.
func hpccRig(t *testing.T, flows []flow.Flow, rw rewrite) *rig {
	t.Helper()
	p, err := ScaleHPCC(hpcc.NS3(), testRate)
	if err != nil {
		t.Fatal(err)
	}
	return newRigRewrite(t, func(c *Config) {
		c.HPCC = &p
		c.BaseRTT = func(int) time.Duration { return hpccT }
		c.BDP = func(int) float64 { return hpccW }
	}, flows, rw)
}

// hop is a synthetic switch port for the forwarder to write records
// from: a link of testRate that has been busy util of the time since the
// forwarder's start, with queue bytes queued.
type hop struct {
	util  float64
	queue uint32
}

// stamp returns a rewrite that pushes a record for each of hops (in path
// order) onto every data frame host 0 sends, as switches on its path
// would: the first hop's record is pushed first, so that it ends last in
// the stack.
func stamp(t *testing.T, hops []hop) rewrite {
	start := time.Now()
	return func(from int, f []byte) []byte {
		var p roce.Packet
		if from != 0 || roce.Parse(f, &p) != nil || !p.HasINT {
			return f
		}
		ns := time.Since(start).Nanoseconds()
		for _, h := range hops {
			copy(p.INT.Hops[1:], p.INT.Hops[:roce.MaxINTHops-1])
			p.INT.Hops[0] = roce.INTHop{TimeNs: uint32(ns), TxBytes: uint32(float64(ns) * 1e-9 * h.util * testRate / 8),
				QLen: h.queue, RateKbps: testRate / 1000}
			p.INT.N++
			p.INT.Remaining--
		}
		out, err := roce.Build(make([]byte, p.Len()), &p)
		if err != nil {
			t.Error(err)
			return f
		}
		return out
	}
}

// hpccRate is flow id's HPCC rate on host 0 now, b/s.
func (r *rig) hpccRate(id int) float64 {
	a := r.agents[0]
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byQP[uint32(id)].ack.hp.Rate()
}

// TestHPCCFollowsTheMostUtilisedHop: the forwarder writes the records of
// three hops into every data packet, and only the middle one is loaded:
// its link fully busy and 50 KB queued, twenty times the BDP W, where
// the others carry a tenth of their rate and no queue. HPCC's utilisation
// is the most utilised hop's, about 21, so the sender cuts its rate to a
// small share of the line rate; with the middle hop left out, nothing
// calls for a cut and the flow keeps its line rate. A sender that read
// only the first hop of the path, or only the last, would keep it too.
func TestHPCCFollowsTheMostUtilisedHop(t *testing.T) {
	idle, loaded := hop{util: 0.1}, hop{util: 1, queue: 50_000}
	flows := []flow.Flow{{ID: 1, Src: 0, Dst: 1, Size: 12_000}}
	for _, c := range []struct {
		name string
		hops []hop
		cut  bool
	}{
		{"middle hop loaded", []hop{idle, loaded, idle}, true},
		{"idle hops only", []hop{idle, idle}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := hpccRig(t, flows, stamp(t, c.hops))
			res := r.wait(t, 1, 20*time.Second)[1]
			rate := r.hpccRate(1)
			t.Logf("rate %.3g b/s (%.1f%% of the line), %d cuts", rate, 100*rate/testRate, res.RateCuts)
			switch {
			case c.cut && rate > 0.2*testRate:
				t.Errorf("rate %.3g b/s with a hop twenty BDPs deep on the path; want under a fifth of %g", rate, testRate)
			case !c.cut && rate < 0.9*testRate:
				// Its utilisation starts at 1, above eta: the first
				// updates may cut a little before idle hops bring it
				// back.
				t.Errorf("rate %.3g b/s on idle hops; want the line rate, %g", rate, testRate)
			}
			if s := r.agents[0].Stats(); s.NoINT != 0 || s.INTMalformed != 0 {
				t.Errorf("sender: %d ACKs without INT, %d malformed", s.NoINT, s.INTMalformed)
			}
		})
	}
}

// TestHPCCReadsThePathInOrder: records come last switch first, and each
// hop's 32-bit time and byte count move its last record on across the
// wrap: the sender sees the first switch's record first and counters
// that only grow.
func TestHPCCReadsThePathInOrder(t *testing.T) {
	var af ackFlow
	stack := func(ns, tx uint32) *roce.INT {
		s := &roce.INT{N: 2}
		s.Hops[0] = roce.INTHop{TimeNs: ns + 7, TxBytes: tx + 7, QLen: 2, RateKbps: 2} // the second switch
		s.Hops[1] = roce.INTHop{TimeNs: ns, TxBytes: tx, QLen: 1, RateKbps: 1_000_000} // the first
		return s
	}
	first := af.path(stack(math.MaxUint32-100, math.MaxUint32-1000))
	if first[0].QLen != 1 || first[0].Rate != 1e9 || first[1].QLen != 2 || first[1].Rate != 2000 {
		t.Fatalf("path %+v: want the first switch's record (queue 1, 1 Gb/s) first", first)
	}
	t0, b0 := first[0].Time, first[0].TxBytes
	next := af.path(stack(400, 500))[0] // 501 ns and 1501 bytes later, across the wrap
	if dt, db := next.Time-t0, next.TxBytes-b0; dt != 501_000 || db != 1501 {
		t.Errorf("across the wrap: time +%d ps, bytes +%d; want +501000 and +1501", dt, db)
	}
	// An older record moves the hop back rather than a whole wrap ahead.
	if back := af.path(stack(300, 500))[0]; back.Time != next.Time-100_000 {
		t.Errorf("a record 100 ns older: time %d, after %d; want 100 ns before", back.Time, next.Time)
	}
}

// TestTIMELYMeasuresItsRTT: the forwarder holds each ACK 2 ms, so every
// RTT the sender takes from its own send times is at least that; above
// T_high (1 ms here) TIMELY cuts the rate.
func TestTIMELYMeasuresItsRTT(t *testing.T) {
	p, err := ScaleTIMELY(timely.NS3(), testRate)
	if err != nil {
		t.Fatal(err)
	}
	p.TLow, p.THigh = 500e6, 1e9 // ps: 0.5 ms and 1 ms
	const hold = 2 * time.Millisecond
	r := newRigRewrite(t, func(c *Config) { c.TIMELY = &p }, []flow.Flow{{ID: 1, Src: 0, Dst: 1, Size: 20_000}},
		func(from int, f []byte) []byte {
			if op, _, ok := psn(f); ok && from == 1 && op == roce.OpAck {
				time.Sleep(hold)
			}
			return f
		})
	res := r.wait(t, 1, 20*time.Second)[1]
	a := r.agents[0]
	a.mu.Lock()
	af := a.byQP[1].ack
	rtt, rate := time.Duration(af.rtt/1000), af.tm.Rate()
	a.mu.Unlock()
	t.Logf("last RTT %v, rate %.3g b/s, %d cuts", rtt, rate, res.RateCuts)
	if rtt < hold || rtt > time.Second {
		t.Errorf("last RTT %v; want at least the %v the forwarder holds each ACK", rtt, hold)
	}
	if res.RateCuts == 0 || rate >= testRate {
		t.Errorf("%d cuts, rate %.3g b/s, with every RTT above T_high; want cuts", res.RateCuts, rate)
	}
}

// TestTIMELYSkipsPacketsSentAgain: a packet sent again gives no RTT (its
// ACK may answer either copy, Karn's rule); one sent once gives its own.
func TestTIMELYSkipsPacketsSentAgain(t *testing.T) {
	a := &Agent{scheme: schemeTIMELY}
	f := &sendFlow{packets: 10, ack: &ackFlow{}}
	a.ackSent(f, 3, 1000, 5e9, false)
	a.ackSent(f, 4, 1000, 6e9, false)
	a.ackSent(f, 3, 1000, 7e9, true)
	for i, want := range map[uint64]int64{3: -1, 4: 6e9} {
		if e := f.ack.sent[i&uint64(len(f.ack.sent)-1)]; e.i != i || e.at != want {
			t.Errorf("packet %d: %+v; want sent at %d", i, e, want)
		}
	}
	if len(f.ack.sent) != 16 {
		t.Errorf("a ring of %d for 10 packets; want 16", len(f.ack.sent))
	}
}

// TestDCTCPEchoesCE: the forwarder marks packets 5 to 14 of a 30-packet
// flow CE; the receiver echoes each mark in the BECN bit of its ACK, and
// no other ACK carries one; the sender counts ten echoes and cuts its
// rate.
func TestDCTCPEchoesCE(t *testing.T) {
	p, err := ScaleDCTCP(dctcp.NS3(), testRate)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	echoed := map[uint32]bool{}
	r := newRigRewrite(t, func(c *Config) { c.DCTCP = &p }, []flow.Flow{{ID: 1, Src: 0, Dst: 1, Size: 30_000}},
		func(from int, f []byte) []byte {
			var q roce.Packet
			if roce.Parse(f, &q) != nil {
				return f
			}
			switch {
			case from == 0 && q.Opcode != roce.OpAck && q.PSN >= 5 && q.PSN < 15:
				markCE(f)
			case from == 1 && q.Opcode == roce.OpAck && q.Syndrome == roce.SyndromeAck:
				mu.Lock()
				echoed[q.PSN] = echoed[q.PSN] || q.BECN
				mu.Unlock()
			}
			return f
		})
	res := r.wait(t, 1, 20*time.Second)[1]
	mu.Lock()
	defer mu.Unlock()
	for psn := range uint32(30) {
		if want := psn >= 5 && psn < 15; echoed[psn] != want {
			t.Errorf("ACK of packet %d: BECN %v, want %v", psn, echoed[psn], want)
		}
	}
	if res.CNPs != 10 || res.RateCuts == 0 || res.Retransmits != 0 {
		t.Errorf("flow: %d echoes, %d cuts, %d retransmits; want 10, at least 1, 0", res.CNPs, res.RateCuts, res.Retransmits)
	}
}

// TestWindowBoundsInFlight: with the ns-3 NIC's window of three packets'
// bytes and every ACK from packet 5 on dropped, the sender stops with
// three packets in flight past the last acknowledged one, until its RTO
// (1 s): the forwarder sees packets 0 to 7, once each.
func TestWindowBoundsInFlight(t *testing.T) {
	var mu sync.Mutex
	seen := map[uint32]int{}
	r := newRigWith(t, func(c *Config) {
		c.Window, c.VariableWindow, c.BDP = true, true, func(int) float64 { return 3000 }
	}, []flow.Flow{{ID: 1, Src: 0, Dst: 1, Size: 20_000}}, func(from int, f []byte) bool {
		op, n, ok := psn(f)
		switch {
		case !ok:
		case from == 0 && op != roce.OpAck:
			mu.Lock()
			seen[n]++
			mu.Unlock()
		case from == 1 && op == roce.OpAck && n >= 5:
			return false
		}
		return true
	})
	time.Sleep(500 * time.Millisecond)
	r.cancel()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 8 {
		t.Errorf("packets seen %v; want 0 to 7 (five acknowledged, three in flight)", seen)
	}
	for n, k := range seen {
		if n > 7 || k != 1 {
			t.Errorf("packet %d seen %d times", n, k)
		}
	}
}

// TestMalformedINTDropped: a data packet whose stack the forwarder gives
// another version, and an ACK whose echo it gives six hops, are dropped
// and counted by the agent that gets them, which goes on: go-back-N
// sends the packet again, a later ACK acknowledges what the lost one
// did, and the flow completes.
func TestMalformedINTDropped(t *testing.T) {
	at := roce.EthLen + roce.IPv4Len + roce.UDPLen + roce.BTHLen
	var once [2]sync.Once
	r := hpccRig(t, []flow.Flow{{ID: 1, Src: 0, Dst: 1, Size: 20_000}}, func(from int, f []byte) []byte {
		op, n, ok := psn(f)
		switch {
		case !ok:
		case from == 0 && op != roce.OpAck && n == 5:
			once[0].Do(func() { f[at] = 2 << 4 })
		case from == 1 && op == roce.OpAck && n == 10:
			once[1].Do(func() { f[at+roce.AETHLen+1] = roce.MaxINTHops + 1 })
		}
		return f
	})
	res := r.wait(t, 1, 20*time.Second)[1]
	s0, s1 := r.agents[0].Stats(), r.agents[1].Stats()
	if s1.INTMalformed != 1 || s0.INTMalformed != 1 {
		t.Errorf("malformed INT: receiver counted %d, sender %d; want 1 each", s1.INTMalformed, s0.INTMalformed)
	}
	if res.Retransmits == 0 || res.Delivered != 20_000 {
		t.Errorf("flow: %d retransmits, %d bytes delivered; want the lost packet sent again and all 20000", res.Retransmits, res.Delivered)
	}
}

func TestScaleAckSchemes(t *testing.T) {
	const rate, k = 100e6, 1000.0
	h, err := ScaleHPCC(hpcc.NS3(), rate)
	if err != nil {
		t.Fatal(err)
	}
	ph := hpcc.NS3()
	if h.RAI != ph.RAI/k || h.MinRate != ph.MinRate/k || h.RefRate != rate || h.AI(rate) != ph.AI(100e9)/k ||
		h.Eta != ph.Eta || h.INTMulti != ph.INTMulti {
		t.Errorf("HPCC: %+v", h)
	}
	tm, err := ScaleTIMELY(timely.NS3(), rate)
	if err != nil {
		t.Fatal(err)
	}
	pt := timely.NS3()
	if tm.TLow != pt.TLow*k || tm.THigh != pt.THigh*k || tm.MinRTT != pt.MinRTT*k ||
		tm.RAI != pt.RAI/k || tm.RHAI != pt.RHAI/k || tm.MinRate != pt.MinRate/k || tm.Alpha != pt.Alpha || tm.Beta != pt.Beta {
		t.Errorf("TIMELY: %+v", tm)
	}
	d, err := ScaleDCTCP(dctcp.NS3(), rate)
	if err != nil {
		t.Fatal(err)
	}
	pd := dctcp.NS3()
	if d.RAI != pd.RAI/k || d.MinRate != pd.MinRate/k || d.RefRate != rate || d.KMin != pd.KMin || d.KMax != pd.KMax || d.G != pd.G {
		t.Errorf("DCTCP: %+v", d)
	}
	if _, err := ScaleHPCC(ph, 0); err == nil {
		t.Error("HPCC scaled to 0 b/s")
	}
}

func TestNewRefusesAckCC(t *testing.T) {
	good := Config{Host: 0, MAC: []byte{2, 0, 0, 0, 0, 1}, IP: addrs[0], Gateway: gateway, Addr: addr, LineRate: testRate}
	h, d := hpcc.NS3(), dctcp.NS3()
	rtt := func(int) time.Duration { return time.Millisecond }
	bdp := func(int) float64 { return 3000 }
	for name, set := range map[string]func(*Config){
		"HPCC and DCTCP":         func(c *Config) { c.HPCC, c.DCTCP, c.BaseRTT, c.BDP = &h, &d, rtt, bdp },
		"HPCC without a BDP":     func(c *Config) { c.HPCC, c.BaseRTT = &h, rtt },
		"HPCC without a T":       func(c *Config) { c.HPCC, c.BDP = &h, bdp },
		"HPCC, BDP 0":            func(c *Config) { c.HPCC, c.BaseRTT, c.BDP = &h, rtt, func(int) float64 { return 0 } },
		"a window without a BDP": func(c *Config) { c.Window = true },
		"data DSCP asking INT":   func(c *Config) { c.DSCP = 27 },
		"ACK DSCP asking INT":    func(c *Config) { c.ControlDSCP = 49 },
		"DCTCP, g 0": func(c *Config) {
			bad := d
			bad.G = 0
			c.DCTCP = &bad
		},
	} {
		cfg := good
		set(&cfg)
		if _, err := New(cfg, nil, []flow.Flow{{ID: 1, Dst: 1, Size: 1}}); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
