package dataplane

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

const rate100G = 100e9

// lossyConfig is n ports at 100 Gb/s with no PFC and no marking.
func lossyConfig(n int) Config {
	return Config{Name: "sw", Buffer: 10e6, Ports: ports(n, PortConfig{Rate: rate100G}), Seed: 1}
}

func TestNewValidates(t *testing.T) {
	good := PortConfig{Rate: rate100G, XOFF: 50e3, Headroom: 20e3}
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" for valid
	}{
		{"lossy", Config{Name: "s", Buffer: 1e6, Ports: ports(4, PortConfig{Rate: 1e9})}, ""},
		{"lossless static", Config{Name: "s", Buffer: 1e6, Lossless: 1 << 3, PauseQuanta: 0xffff, Ports: ports(4, good)}, ""},
		{"lossless dynamic", Config{Name: "s", Buffer: 1e6, Lossless: 1 << 3, PauseQuanta: 0xffff,
			Ports: ports(4, PortConfig{Rate: rate100G, Beta: 2, Headroom: 20e3})}, ""},
		{"no ports", Config{Name: "s", Buffer: 1}, ""},
		{"zero buffer", Config{Name: "s1", Ports: ports(2, good)}, "switch s1: buffer must be positive"},
		{"negative buffer", Config{Name: "s1", Buffer: -1, Ports: ports(2, good)}, "buffer must be positive"},
		{"zero rate", Config{Name: "s2", Buffer: 1e6, Ports: []PortConfig{good, {XOFF: 1}}}, "switch s2 port 1: rate must be positive"},
		{"kmax below kmin", Config{Name: "s", Buffer: 1e6, Ports: []PortConfig{{Rate: 1e9, Marking: Marking{KMin: 10, KMax: 5}}}},
			"port 0: ECN kmax 5 below kmin 10"},
		{"pfc without threshold", Config{Name: "s", Buffer: 1e6, Lossless: 1, PauseQuanta: 0xffff, Ports: []PortConfig{good, {Rate: 1e9}}},
			"port 1: PFC needs a static XOFF or a dynamic beta"},
		{"headroom fills buffer", Config{Name: "s", Buffer: 160e3, Lossless: 1<<3 | 1<<4, PauseQuanta: 0xffff, Ports: ports(4, good)},
			"PFC headroom of 160 KB (4 ports x 2 lossless priorities) leaves nothing of the 160 KB buffer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.cfg, mapFIB{}, newFakeEnv(t))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if s.NumPorts() != len(tc.cfg.Ports) {
					t.Errorf("NumPorts = %d, want %d", s.NumPorts(), len(tc.cfg.Ports))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: error %v, want one containing %q", err, tc.want)
			}
			if s != nil {
				t.Errorf("New returned a switch with its error")
			}
		})
	}
}

// TestNewPFCNeedsPauseQuanta: a PFC switch whose PAUSE frames carry zero
// quanta sends RESUME frames where it means PAUSE, so lossless traffic is
// never held back; New checks the configuration and should refuse it.
func TestNewPFCNeedsPauseQuanta(t *testing.T) {
	cfg := Config{Name: "s", Buffer: 1e6, Lossless: 1 << 3,
		Ports: ports(2, PortConfig{Rate: rate100G, XOFF: 10e3, Headroom: 10e3})}
	if _, err := New(cfg, mapFIB{}, newFakeEnv(t)); err == nil {
		t.Fatal("New accepted a lossless priority with PauseQuanta 0")
	}
}

func TestForwardQueuedAndCutThrough(t *testing.T) {
	for _, idle := range []bool{false, true} {
		t.Run(fmt.Sprintf("idle=%v", idle), func(t *testing.T) {
			env := newFakeEnv(t)
			env.idle[2] = idle
			s := mustNew(t, lossyConfig(3), mapFIB{7: {2}}, env)
			p := dataPkt(1, 7, 0, 1000, ECT0)
			s.Receive(100, 0, p)
			if p.InPort != 0 {
				t.Errorf("InPort = %d, want 0", p.InPort)
			}
			if idle {
				if len(env.sent) != 1 || env.sent[0].port != 2 || env.sent[0].p != p || env.sent[0].try {
					t.Fatalf("cut-through: sent %+v, want p on port 2 through Send", env.sent)
				}
				if len(env.kicks) != 0 || s.QueueBytes(2, 0) != 0 || s.SharedUsed() != 0 {
					t.Errorf("cut-through left kicks %v, queue %g, shared %g", env.kicks, s.QueueBytes(2, 0), s.SharedUsed())
				}
				if got := s.Dequeue(100, 2); got != nil {
					t.Errorf("Dequeue after cut-through = %+v", got)
				}
			} else {
				if len(env.sent) != 0 || len(env.kicks) != 1 || env.kicks[0] != 2 {
					t.Fatalf("queued: sent %v kicks %v, want a kick of port 2", env.sent, env.kicks)
				}
				if s.QueueBytes(2, 0) != 1000 || s.SharedUsed() != 1000 {
					t.Errorf("queue %g shared %g, want 1000 1000", s.QueueBytes(2, 0), s.SharedUsed())
				}
				if s.Next(2, 100) != 100 {
					t.Errorf("Next = %d, want 100", s.Next(2, 100))
				}
				if got := s.Dequeue(100, 2); got != p {
					t.Fatalf("Dequeue = %+v, want the packet", got)
				}
				if s.Dequeue(100, 2) != nil || s.Next(2, 100) != 0 {
					t.Errorf("port not empty after one dequeue")
				}
			}
			st := s.Stats(2, 100)
			if st.TxPackets != 1 || st.TxBytes != 1000 || st.MaxQueueBytes[0] != 1000 {
				t.Errorf("stats %+v", st)
			}
			if s.QueueBytes(2, 0) != 0 || s.SharedUsed() != 0 {
				t.Errorf("after departure: queue %g shared %g", s.QueueBytes(2, 0), s.SharedUsed())
			}
			if len(env.freed) != 0 {
				t.Errorf("the switch freed a forwarded packet")
			}
		})
	}
}

func TestNoRoute(t *testing.T) {
	env := newFakeEnv(t)
	s := mustNew(t, lossyConfig(2), mapFIB{1: {1}}, env)
	p := dataPkt(1, 5, 0, 1000, ECT0)
	s.Receive(0, 0, p)
	if len(env.freed) != 1 || env.freed[0] != p {
		t.Fatalf("unroutable packet not freed: %v", env.freed)
	}
	if got := s.Stats(0, 0).Drops[DropNoRoute]; got != 1 {
		t.Errorf("ingress no-route drops = %d, want 1", got)
	}
	ack := &Packet{Kind: Ack, Dst: 9, Size: AckFrame}
	s.Receive(0, 1, ack)
	if got := s.Stats(1, 0).Drops[DropNoRoute]; got != 1 {
		t.Errorf("control packets: no-route drops = %d, want 1", got)
	}
	if s.SharedUsed() != 0 || len(env.kicks) != 0 {
		t.Errorf("a drop left shared %g, kicks %v", s.SharedUsed(), env.kicks)
	}
}

// ecmpPort forwards one packet of hash h through a switch with the given
// next hops and returns the port it went to.
func ecmpPort(t *testing.T, s *Switch, env *fakeEnv, h uint32) int {
	t.Helper()
	env.kicks = env.kicks[:0]
	p := &Packet{Kind: Data, Dst: 1, Size: 100, Hash: h, ECN: ECT0}
	s.Receive(0, 0, p)
	if len(env.kicks) != 1 {
		t.Fatalf("kicks %v", env.kicks)
	}
	out := env.kicks[0]
	if s.Dequeue(0, out) != p {
		t.Fatalf("packet not on port %d", out)
	}
	return out
}

func TestECMPStablePerHash(t *testing.T) {
	env := newFakeEnv(t)
	s := mustNew(t, lossyConfig(5), mapFIB{1: {1, 2, 3, 4}}, env)
	for f := range 50 {
		h := FlowHash(int32(f), 1, 1000, 4791)
		first := ecmpPort(t, s, env, h)
		for range 20 {
			if got := ecmpPort(t, s, env, h); got != first {
				t.Fatalf("hash %#x went to port %d, then %d", h, first, got)
			}
		}
	}
}

// TestECMPSpread: flows spread evenly over the equal-cost ports (chi-square
// at 4 degrees of freedom well below its 0.1% point, 18.5), and switches
// with different seeds choose independently.
func TestECMPSpread(t *testing.T) {
	hops := []int32{1, 2, 3, 4, 5}
	const flows = 5000
	choice := map[uint64][]int{}
	for _, seed := range []uint64{1, 2} {
		env := newFakeEnv(t)
		cfg := lossyConfig(6)
		cfg.Seed = seed
		s := mustNew(t, cfg, mapFIB{1: hops}, env)
		count := map[int]int{}
		for f := range flows {
			out := ecmpPort(t, s, env, FlowHash(int32(f), 1, uint16(f), 4791))
			count[out]++
			choice[seed] = append(choice[seed], out)
		}
		exp := float64(flows) / float64(len(hops))
		chi := 0.0
		for _, h := range hops {
			d := float64(count[int(h)]) - exp
			chi += d * d / exp
		}
		if len(count) != len(hops) || chi > 18.5 {
			t.Errorf("seed %d: counts %v, chi-square %.1f", seed, count, chi)
		}
	}
	same := 0
	for i := range choice[1] {
		if choice[1][i] == choice[2][i] {
			same++
		}
	}
	// Independent choices agree for about 1/5 of the flows.
	if frac := float64(same) / flows; frac > 0.25 {
		t.Errorf("seeds 1 and 2 choose the same port for %.0f%% of flows", 100*frac)
	}
}

func TestControlPacketsFirst(t *testing.T) {
	env := newFakeEnv(t)
	cfg := lossyConfig(2)
	s := mustNew(t, cfg, mapFIB{1: {1}}, env)
	var data []*Packet
	for i := range 3 {
		p := dataPkt(int32(i), 1, 3, 1000, ECT0)
		data = append(data, p)
		s.Receive(0, 0, p)
	}
	ctrl := []*Packet{
		{Kind: Ack, Dst: 1, Prio: 3, Size: AckFrame},
		{Kind: CNP, Dst: 1, Prio: 3, Size: CNPFrame},
		{Kind: Nack, Dst: 1, Prio: 0, Size: AckFrame},
	}
	for _, p := range ctrl {
		s.Receive(1, 0, p)
	}
	if s.QueueBytes(1, 3) != 3000 || s.SharedUsed() != 3000 {
		t.Errorf("control packets counted in the buffer: queue %g shared %g", s.QueueBytes(1, 3), s.SharedUsed())
	}
	// A PAUSE for the data priority does not hold control packets.
	s.Receive(2, 1, &Packet{Kind: Pause, Prio: 3, PauseQuanta: 100})
	got := drain(s, 2, 1)
	if len(got) != 3 {
		t.Fatalf("dequeued %d packets under PAUSE, want the 3 control packets", len(got))
	}
	for i, p := range got {
		if p != ctrl[i] {
			t.Errorf("dequeue %d = %v, want %v", i, p.Kind, ctrl[i].Kind)
		}
	}
	got = drain(s, s.PausedUntil(1, 3), 1)
	for i, p := range got {
		if p != data[i] {
			t.Errorf("data dequeue %d = flow %d", i, p.Flow)
		}
	}
	st := s.Stats(1, 10*us)
	if st.CtrlPackets != 3 || st.TxPackets != 3 {
		t.Errorf("CtrlPackets %d TxPackets %d, want 3 3", st.CtrlPackets, st.TxPackets)
	}
}

// TestControlCutThrough: a control packet goes straight out through TrySend
// when its port is idle with nothing queued, and is queued behind other
// control packets or held data otherwise.
func TestControlCutThrough(t *testing.T) {
	env := newFakeEnv(t)
	env.idle[1] = true
	s := mustNew(t, lossyConfig(2), mapFIB{1: {1}}, env)
	ack := &Packet{Kind: Ack, Dst: 1, Size: AckFrame}
	s.Receive(0, 0, ack)
	if len(env.sent) != 1 || !env.sent[0].try || env.sent[0].p != ack {
		t.Fatalf("idle port: sent %+v, want the ACK through TrySend", env.sent)
	}
	if s.Stats(1, 0).CtrlPackets != 1 {
		t.Errorf("CtrlPackets = %d, want 1", s.Stats(1, 0).CtrlPackets)
	}
	// Data held by PAUSE on an idle port: a CNP does not cut through while
	// data waits, but it goes first at the next dequeue.
	s.Receive(1, 1, &Packet{Kind: Pause, Prio: 0, PauseQuanta: 1000})
	d := dataPkt(1, 1, 0, 1000, ECT0)
	s.Receive(2, 0, d)
	cnp := &Packet{Kind: CNP, Dst: 1, Size: CNPFrame}
	s.Receive(3, 0, cnp)
	if len(env.sent) != 1 {
		t.Fatalf("sent %+v while data waits, want only the first ACK", env.sent[1:])
	}
	if got := s.Dequeue(4, 1); got != cnp {
		t.Fatalf("Dequeue = %+v, want the CNP", got)
	}
	if s.Dequeue(4, 1) != nil {
		t.Fatal("paused data dequeued")
	}
}

// TestMarkingAtDequeue: ECN marking looks at the queue a packet leaves
// behind. A step at K = 2500 B with four 1000 B packets queued marks only
// the first: it leaves 3000 B behind, the second 2000 B.
func TestMarkingAtDequeue(t *testing.T) {
	env := newFakeEnv(t)
	cfg := lossyConfig(2)
	cfg.Ports[1].Marking = Marking{KMin: 2500, KMax: 2500, PMax: 1}
	s := mustNew(t, cfg, mapFIB{1: {1}}, env)
	for i := range 4 {
		s.Receive(0, 0, dataPkt(int32(i), 1, 0, 1000, ECT0))
	}
	var marks []bool
	for _, p := range drain(s, 0, 1) {
		marks = append(marks, p.ECN == CE)
	}
	if fmt.Sprint(marks) != "[true false false false]" {
		t.Errorf("marks %v, want [true false false false]", marks)
	}
	if s.Stats(1, 0).Marked != 1 {
		t.Errorf("Marked = %d, want 1", s.Stats(1, 0).Marked)
	}
}

// markFraction holds the queue port 1 leaves behind at depth bytes (a
// multiple of 1000): it preloads depth bytes, then receives and dequeues
// one 1000 B packet of codepoint ecn at a time, n times. It returns the
// fraction that left CE-marked, the port's Marked counter and the marks.
func markFraction(t *testing.T, m Marking, seed uint64, depth, n int, ecn uint8) (float64, int64, []bool) {
	t.Helper()
	env := newFakeEnv(t)
	cfg := lossyConfig(2)
	cfg.Buffer = 100e6
	cfg.Seed = seed
	cfg.Ports[1].Marking = m
	s := mustNew(t, cfg, mapFIB{1: {1}}, env)
	for i := range depth / 1000 {
		s.Receive(0, 0, dataPkt(int32(i), 1, 0, 1000, ecn))
	}
	marked := 0
	seq := make([]bool, 0, n)
	for i := range n {
		s.Receive(int64(i), 0, dataPkt(int32(i), 1, 0, 1000, ecn))
		p := s.Dequeue(int64(i), 1)
		if s.QueueBytes(1, 0) != float64(depth) {
			t.Fatalf("queue %g, want %d", s.QueueBytes(1, 0), depth)
		}
		switch p.ECN {
		case CE:
			marked++
		case ecn:
		default:
			t.Fatalf("codepoint %d became %d", ecn, p.ECN)
		}
		seq = append(seq, p.ECN == CE)
	}
	return float64(marked) / float64(n), s.Stats(1, 0).Marked, seq
}

// TestREDMarking: nothing at or below KMin, everything from KMax on, and a
// fraction PMax (q - KMin) / (KMax - KMin) in between, within 4.5 standard
// deviations of n = 20000 draws.
func TestREDMarking(t *testing.T) {
	m := Marking{KMin: 10_000, KMax: 50_000, PMax: 0.2}
	const n = 20_000
	for _, depth := range []int{0, 5000, 10_000, 11_000, 20_000, 30_000, 49_000, 50_000, 51_000, 200_000} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			var want float64
			switch {
			case float64(depth) <= m.KMin:
				want = 0
			case float64(depth) >= m.KMax:
				want = 1
			default:
				want = m.PMax * (float64(depth) - m.KMin) / (m.KMax - m.KMin)
			}
			got, counter, _ := markFraction(t, m, 1, depth, n, ECT0)
			tol := 4.5 * math.Sqrt(want*(1-want)/n)
			if math.Abs(got-want) > tol {
				t.Errorf("marked fraction %.4f, want %.4f +- %.4f", got, want, tol)
			}
			if want == 0 || want == 1 {
				if got != want {
					t.Errorf("marked fraction %v, want exactly %v", got, want)
				}
			}
			if counter != int64(math.Round(got*n)) {
				t.Errorf("Marked counter %d, want %v", counter, got*n)
			}
		})
	}
}

func TestREDCodepoints(t *testing.T) {
	m := Marking{KMin: 1000, KMax: 2000, PMax: 0.5}
	for _, tc := range []struct {
		name string
		ecn  uint8
		want float64
	}{
		{"not-ect", NotECT, 0},
		{"ect0", ECT0, 1},
		{"ect1", ECT1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newFakeEnv(t)
			cfg := lossyConfig(2)
			cfg.Ports[1].Marking = m
			s := mustNew(t, cfg, mapFIB{1: {1}}, env)
			for i := range 100 {
				s.Receive(0, 0, dataPkt(int32(i), 1, 0, 1000, tc.ecn))
			}
			marked := 0
			ps := drain(s, 0, 1)
			for i, p := range ps[:97] { // these leave more than KMax behind
				switch {
				case p.ECN == CE:
					marked++
				case tc.ecn != NotECT:
					t.Errorf("packet %d left %d B behind unmarked", i, 99_000-1000*i)
				case p.ECN != NotECT:
					t.Errorf("non-ECT packet %d changed to %d", i, p.ECN)
				}
			}
			if got := float64(marked) / 97; got != tc.want {
				t.Errorf("marked %v, want %v", got, tc.want)
			}
			if st := s.Stats(1, 0); st.Marked < int64(marked) || (tc.ecn == NotECT && st.Marked != 0) {
				t.Errorf("Marked counter %d for %d marks", st.Marked, marked)
			}
		})
	}
}

func TestREDEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name  string
		m     Marking
		depth int
		want  float64
	}{
		{"pmax 0 in the ramp", Marking{KMin: 1000, KMax: 9000, PMax: 0}, 5000, 0},
		{"pmax 0 above kmax", Marking{KMin: 1000, KMax: 9000, PMax: 0}, 10_000, 1},
		{"step at k", Marking{KMin: 5000, KMax: 5000, PMax: 0.5}, 5000, 0},
		{"step above k", Marking{KMin: 5000, KMax: 5000, PMax: 0.5}, 6000, 1},
		{"pmax 1 at kmax", Marking{KMin: 1000, KMax: 9000, PMax: 1}, 9000, 1},
		{"zero curve marks any queue", Marking{}, 1000, 1},
		{"zero curve, empty queue", Marking{}, 0, 0},
		{"disabled with +Inf", Marking{KMin: math.Inf(1), KMax: math.Inf(1)}, 500_000, 0},
		{"non-ECT above kmax", Marking{KMin: 1000, KMax: 2000, PMax: 1}, 10_000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ecn := ECT0
			if strings.HasPrefix(tc.name, "non-ECT") {
				ecn = NotECT
			}
			got, counter, _ := markFraction(t, tc.m, 3, tc.depth, 2000, ecn)
			if counter != int64(got*2000) {
				t.Errorf("Marked counter %d for %v of 2000", counter, got)
			}
			if got != tc.want {
				t.Errorf("marked %v, want %v", got, tc.want)
			}
		})
	}
}

// TestREDSeeded: the random draws come from the configured seed: the same
// seed marks the same packets, another seed other ones.
func TestREDSeeded(t *testing.T) {
	m := Marking{KMin: 0, KMax: 100_000, PMax: 1}
	_, _, a := markFraction(t, m, 7, 50_000, 500, ECT0)
	_, _, b := markFraction(t, m, 7, 50_000, 500, ECT0)
	_, _, c := markFraction(t, m, 8, 50_000, 500, ECT0)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("the same seed marked different packets")
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Error("seeds 7 and 8 marked the same packets")
	}
}

func TestWRED(t *testing.T) {
	env := newFakeEnv(t)
	cfg := lossyConfig(2)
	cfg.Ports[1].Marking = Marking{KMin: 100e3, KMax: 200e3, WREDK: 2000}
	s := mustNew(t, cfg, mapFIB{1: {1}}, env)
	// Below WREDK non-ECT packets get in.
	for i := range 2 {
		s.Receive(0, 0, dataPkt(int32(i), 1, 0, 1000, NotECT))
	}
	if s.QueueBytes(1, 0) != 2000 || len(env.freed) != 0 {
		t.Fatalf("queue %g, %d dropped; want 2000 B, none", s.QueueBytes(1, 0), len(env.freed))
	}
	// At it and above they are dropped (eq. 3: q >= K); ECN-capable ones
	// are not.
	nect := dataPkt(10, 1, 0, 1000, NotECT)
	s.Receive(1, 0, nect)
	for _, ecn := range []uint8{ECT0, ECT1, CE} {
		s.Receive(1, 0, dataPkt(11, 1, 0, 1000, ecn))
	}
	if len(env.freed) != 1 || env.freed[0] != nect {
		t.Fatalf("freed %v, want the non-ECT packet", env.freed)
	}
	if got := s.Stats(1, 1).Drops[DropWRED]; got != 1 {
		t.Errorf("egress WRED drops = %d, want 1", got)
	}
	if got := s.Stats(0, 1).Drops[DropWRED]; got != 0 {
		t.Errorf("ingress WRED drops = %d, want 0 (counted at egress)", got)
	}
	if s.QueueBytes(1, 0) != 5000 || s.SharedUsed() != 5000 {
		t.Errorf("queue %g shared %g, want 5000", s.QueueBytes(1, 0), s.SharedUsed())
	}
	// WREDK 0 disables it.
	cfg.Ports[1].Marking.WREDK = 0
	env = newFakeEnv(t)
	s = mustNew(t, cfg, mapFIB{1: {1}}, env)
	for i := range 50 {
		s.Receive(0, 0, dataPkt(int32(i), 1, 0, 1000, NotECT))
	}
	if len(env.freed) != 0 {
		t.Errorf("WREDK 0 dropped %d packets", len(env.freed))
	}
}

func TestLossyQueueLimit(t *testing.T) {
	env := newFakeEnv(t)
	cfg := lossyConfig(3)
	cfg.QueueLimit = 3000
	cfg.Lossless = 1 << 3
	cfg.PauseQuanta = 0xffff
	for i := range cfg.Ports {
		cfg.Ports[i].XOFF = 1e6
		cfg.Ports[i].Headroom = 10e3
	}
	s := mustNew(t, cfg, mapFIB{1: {1}, 2: {2}}, env)
	var fourth *Packet
	for i := range 4 {
		p := dataPkt(int32(i), 1, 0, 1000, ECT0)
		fourth = p
		s.Receive(0, 0, p)
	}
	if s.QueueBytes(1, 0) != 3000 || len(env.freed) != 1 || env.freed[0] != fourth {
		t.Fatalf("queue %g freed %v, want 3000 B and the fourth packet dropped", s.QueueBytes(1, 0), env.freed)
	}
	if got := s.Stats(1, 0).Drops[DropQueueLimit]; got != 1 {
		t.Errorf("egress queue-limit drops = %d, want 1", got)
	}
	// Another lossy queue has its own limit; the lossless one has none.
	for i := range 3 {
		s.Receive(0, 0, dataPkt(int32(i), 1, 1, 1000, ECT0))
	}
	for i := range 10 {
		s.Receive(0, 0, dataPkt(int32(i), 1, 3, 1000, ECT0))
	}
	if len(env.freed) != 1 {
		t.Errorf("%d drops, want 1", len(env.freed))
	}
	// Room again after a departure (round robin starts at priority 0).
	if p := s.Dequeue(0, 1); p.Prio != 0 {
		t.Fatalf("dequeued priority %d, want 0", p.Prio)
	}
	for _, q := range []uint8{0, 1} {
		s.Receive(1, 0, dataPkt(20, 1, q, 1000, ECT0))
	}
	if len(env.freed) != 2 {
		t.Errorf("after one departure: %d drops, want 2", len(env.freed))
	}
}

func TestLossyBufferFull(t *testing.T) {
	env := newFakeEnv(t)
	cfg := lossyConfig(3)
	cfg.Buffer = 5000
	s := mustNew(t, cfg, mapFIB{1: {1}, 2: {2}}, env)
	for i := range 3 {
		s.Receive(0, 0, dataPkt(int32(i), 1, 0, 1000, ECT0))
	}
	for i := range 3 {
		s.Receive(0, 2, dataPkt(int32(i), 1, 1, 1000, ECT0))
	}
	if s.SharedUsed() != 5000 || len(env.freed) != 1 {
		t.Fatalf("shared %g, %d drops; want 5000 and 1", s.SharedUsed(), len(env.freed))
	}
	if got := s.Stats(2, 0).Drops[DropBufferFull]; got != 1 {
		t.Errorf("buffer-full drops at the ingress = %d, want 1", got)
	}
	drain(s, 0, 1)
	if s.SharedUsed() != 0 {
		t.Errorf("shared %g after draining", s.SharedUsed())
	}
}

func TestRoundRobin(t *testing.T) {
	for _, tc := range []struct {
		name  string
		prios []uint8
		want  string
	}{
		{"two", []uint8{1, 2}, "1 2 1 2 1 2"},
		{"three", []uint8{5, 0, 3}, "0 3 5 0 3 5 0 3 5"},
		{"one", []uint8{4}, "4 4 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newFakeEnv(t)
			s := mustNew(t, lossyConfig(2), mapFIB{1: {1}}, env)
			for _, q := range tc.prios {
				for i := range 3 {
					s.Receive(0, 0, dataPkt(int32(i), 1, q, 1000, ECT0))
				}
			}
			var got []string
			for _, p := range drain(s, 0, 1) {
				got = append(got, fmt.Sprint(p.Prio))
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("order %v, want %s", got, tc.want)
			}
		})
	}
	// Under PAUSE only the other priority flows, and the paused one
	// resumes its turn afterwards.
	env := newFakeEnv(t)
	s := mustNew(t, lossyConfig(2), mapFIB{1: {1}}, env)
	for i := range 3 {
		s.Receive(0, 0, dataPkt(int32(i), 1, 1, 1000, ECT0))
		s.Receive(0, 0, dataPkt(int32(i), 1, 2, 1000, ECT0))
	}
	s.Receive(0, 1, &Packet{Kind: Pause, Prio: 1, PauseQuanta: 10})
	var got []uint8
	for _, p := range drain(s, 1, 1) {
		got = append(got, p.Prio)
	}
	s.Receive(2, 1, &Packet{Kind: Pause, Prio: 1})
	for _, p := range drain(s, 2, 1) {
		got = append(got, p.Prio)
	}
	if fmt.Sprint(got) != "[2 2 2 1 1 1]" {
		t.Errorf("order %v, want [2 2 2 1 1 1]", got)
	}
}

func TestRoute(t *testing.T) {
	env := newFakeEnv(t)
	s := mustNew(t, lossyConfig(6), mapFIB{1: {1, 2, 3, 4}, 2: {5}, 3: {}}, env)
	for f := range 200 {
		p := &Packet{Kind: Data, Dst: 1, Size: 100, Hash: FlowHash(int32(f), 1, 7, 4791)}
		r := s.Route(p)
		if got := ecmpPort(t, s, env, p.Hash); got != r {
			t.Fatalf("Route = %d, Receive used port %d", r, got)
		}
	}
	for _, tc := range []struct {
		dst  int32
		want int
	}{{2, 5}, {3, -1}, {9, -1}} {
		for _, h := range []uint32{0, 1, 0xdeadbeef} {
			if got := s.Route(&Packet{Dst: tc.dst, Hash: h}); got != tc.want {
				t.Errorf("Route(dst %d, hash %#x) = %d, want %d", tc.dst, h, got, tc.want)
			}
		}
	}
}

func TestLossless(t *testing.T) {
	cfg := pfcConfig(2)
	cfg.Lossless = 1<<3 | 1<<6
	s := mustNew(t, cfg, mapFIB{}, newFakeEnv(t))
	for q := range NumPrio {
		if got := s.Lossless(q); got != (q == 3 || q == 6) {
			t.Errorf("Lossless(%d) = %v", q, got)
		}
	}
}
