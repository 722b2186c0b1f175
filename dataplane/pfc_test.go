package dataplane

import (
	"fmt"
	"math"
	"testing"
)

const (
	prioLL = 3 // the lossless priority of these tests
	quanta = 0xffff
)

// pfcConfig: ports at 100 Gb/s, priority 3 lossless with a static XOFF of
// 10 KB, 5 KB headroom per port, XON 2 KB below XOFF.
func pfcConfig(n int) Config {
	return Config{
		Name: "pfc", Buffer: 1e6, Lossless: 1 << prioLL, XONOffset: 2000, PauseQuanta: quanta, Seed: 1,
		Ports: ports(n, PortConfig{Rate: rate100G, XOFF: 10_000, Headroom: 5000}),
	}
}

// ctrlOut dequeues the control packets waiting at port.
func ctrlOut(s *Switch, now int64, port int) []*Packet {
	var out []*Packet
	for s.ports[port].ctrl.len() > 0 {
		out = append(out, s.Dequeue(now, port))
	}
	return out
}

// wantPFC checks a PFC frame.
func wantPFC(t *testing.T, f *Packet, prio uint8, q uint16) {
	t.Helper()
	if f.Kind != Pause || f.Prio != prio || f.PauseQuanta != q || f.Size != PauseFrame+EthOverhead ||
		f.Flow != -1 || f.ECN != NotECT || f.Seq != 0 || f.Payload != 0 || f.Next != nil {
		t.Errorf("PFC frame %+v, want prio %d quanta %d", f, prio, q)
	}
}

// TestPFCStaticXOFF walks one ingress queue through a PAUSE episode: one
// PAUSE when its bytes reach XOFF, headroom beyond, a drop only past the
// headroom, RESUME once it has drained to XOFF - XONOffset.
func TestPFCStaticXOFF(t *testing.T) {
	env := newFakeEnv(t)
	s := mustNew(t, pfcConfig(2), mapFIB{1: {1}}, env)
	pauseTime := exactPause(t, quanta, rate100G)
	var pk []*Packet
	for i := range 16 {
		pk = append(pk, dataPkt(int32(i), 1, prioLL, 1000, ECT0))
	}
	for i := range 9 {
		s.Receive(int64(i), 0, pk[i])
	}
	if f := ctrlOut(s, 9, 0); len(f) != 0 || s.Stats(0, 9).PausesSent != 0 {
		t.Fatalf("PFC frames %v below XOFF", f)
	}
	// The tenth packet brings the ingress queue to XOFF.
	s.Receive(10, 0, pk[9])
	if got := s.IngressBytes(0, prioLL); got != 10_000 {
		t.Errorf("ingress %g, want 10000", got)
	}
	f := ctrlOut(s, 10, 0)
	if len(f) != 1 {
		t.Fatalf("%d PFC frames at XOFF, want 1", len(f))
	}
	wantPFC(t, f[0], prioLL, quanta)
	if len(env.timers) != 1 || env.timers[0].at != 10+pauseTime/2 {
		t.Errorf("refresh timers %v, want one at %d", env.timers, 10+pauseTime/2)
	}
	// Five more fill the headroom without another PAUSE; the next is dropped.
	for i := 10; i < 15; i++ {
		s.Receive(int64(i+1), 0, pk[i])
	}
	if got := ctrlOut(s, 20, 0); len(got) != 0 {
		t.Errorf("%d more PFC frames while paused", len(got))
	}
	if s.IngressBytes(0, prioLL) != 15_000 || s.SharedUsed() != 10_000 || len(env.freed) != 0 {
		t.Fatalf("ingress %g shared %g freed %d, want 15000 10000 0",
			s.IngressBytes(0, prioLL), s.SharedUsed(), len(env.freed))
	}
	s.Receive(21, 0, pk[15])
	if len(env.freed) != 1 || env.freed[0] != pk[15] {
		t.Fatalf("freed %v, want the 16th packet", env.freed)
	}
	st := s.Stats(0, 21)
	if st.Drops[DropHeadroomFull] != 1 || st.PausesSent != 1 || st.ResumesSent != 0 {
		t.Errorf("drops %v pauses %d resumes %d", st.Drops, st.PausesSent, st.ResumesSent)
	}
	if st.MaxIngressBytes[prioLL] != 15_000 || st.MaxHeadroomBytes[prioLL] != 5000 {
		t.Errorf("max ingress %g headroom %g, want 15000 5000", st.MaxIngressBytes[prioLL], st.MaxHeadroomBytes[prioLL])
	}
	// Drain: the headroom empties first; RESUME when 8000 B remain.
	for i := range 7 {
		now := int64(100 + i)
		if got := s.Dequeue(now, 1); got != pk[i] {
			t.Fatalf("dequeue %d: wrong packet", i)
		}
		f := ctrlOut(s, now, 0)
		want := 15_000 - 1000*float64(i+1)
		if s.IngressBytes(0, prioLL) != want {
			t.Errorf("after %d departures ingress %g, want %g", i+1, s.IngressBytes(0, prioLL), want)
		}
		if i < 6 {
			if len(f) != 0 {
				t.Errorf("PFC frame after %d departures, ingress %g", i+1, want)
			}
			continue
		}
		if len(f) != 1 {
			t.Fatalf("%d PFC frames at ingress 8000, want a RESUME", len(f))
		}
		wantPFC(t, f[0], prioLL, 0)
	}
	st = s.Stats(0, 200)
	if st.PausesSent != 1 || st.ResumesSent != 1 || st.CtrlPackets != 2 {
		t.Errorf("pauses %d resumes %d ctrl %d, want 1 1 2", st.PausesSent, st.ResumesSent, st.CtrlPackets)
	}
	if env.made != 2 {
		t.Errorf("NewPacket called %d times, want 2", env.made)
	}
	// The rest drains without more frames; all accounts return to zero.
	drain(s, 300, 1)
	if f := ctrlOut(s, 300, 0); len(f) != 0 {
		t.Errorf("%d PFC frames after RESUME", len(f))
	}
	if s.IngressBytes(0, prioLL) != 0 || s.SharedUsed() != 0 {
		t.Errorf("ingress %g shared %g after draining", s.IngressBytes(0, prioLL), s.SharedUsed())
	}
}

// TestPFCPauseAtCrossing: with XOFF between packet boundaries the packet
// that would cross it goes into headroom and triggers the PAUSE.
func TestPFCPauseAtCrossing(t *testing.T) {
	for _, tc := range []struct {
		xoff      float64
		pauseAt   int     // 1-based packet that triggers PAUSE
		sharedMax float64 // shared bytes of the ingress queue when it does
	}{
		{10_000, 10, 10_000},
		{10_500, 11, 10_000},
		{10_999, 11, 10_000},
		{999, 1, 0},
		{1000, 1, 1000},
	} {
		t.Run(fmt.Sprint(tc.xoff), func(t *testing.T) {
			env := newFakeEnv(t)
			cfg := pfcConfig(2)
			for i := range cfg.Ports {
				cfg.Ports[i].XOFF = tc.xoff
			}
			s := mustNew(t, cfg, mapFIB{1: {1}}, env)
			for i := 1; i <= 14; i++ {
				s.Receive(int64(i), 0, dataPkt(int32(i), 1, prioLL, 1000, ECT0))
				paused := s.Stats(0, int64(i)).PausesSent == 1
				if paused != (i >= tc.pauseAt) {
					t.Fatalf("packet %d: paused %v, want PAUSE at packet %d", i, paused, tc.pauseAt)
				}
				if i == tc.pauseAt && s.SharedUsed() != tc.sharedMax {
					t.Errorf("shared %g at PAUSE, want %g", s.SharedUsed(), tc.sharedMax)
				}
			}
		})
	}
}

// TestPFCResumeThreshold: RESUME when the ingress account falls to
// XOFF - XONOffset, or to zero when XONOffset exceeds XOFF.
func TestPFCResumeThreshold(t *testing.T) {
	for _, tc := range []struct {
		xon      float64
		resumeAt float64 // ingress bytes when RESUME goes
	}{
		{2000, 8000},
		{0, 10_000},
		{500, 9000},
		{9000, 1000},
		{10_000, 0},
		{50_000, 0},
	} {
		t.Run(fmt.Sprint(tc.xon), func(t *testing.T) {
			env := newFakeEnv(t)
			cfg := pfcConfig(2)
			cfg.XONOffset = tc.xon
			s := mustNew(t, cfg, mapFIB{1: {1}}, env)
			for i := range 12 { // 10 KB shared, 2 KB headroom
				s.Receive(0, 0, dataPkt(int32(i), 1, prioLL, 1000, ECT0))
			}
			ctrlOut(s, 0, 0)
			for i := 1; i <= 12; i++ {
				s.Dequeue(int64(i), 1)
				resumed := s.Stats(0, int64(i)).ResumesSent == 1
				left := s.IngressBytes(0, prioLL)
				if resumed != (left <= tc.resumeAt) {
					t.Fatalf("ingress %g: resumed %v, want RESUME at %g", left, resumed, tc.resumeAt)
				}
			}
		})
	}
}

// TestPFCRefresh: while the ingress queue stays above XON the switch sends
// a PAUSE again every half pause time; after RESUME the pending refresh
// does nothing, and a new episode's timers are its own.
func TestPFCRefresh(t *testing.T) {
	env := newFakeEnv(t)
	s := mustNew(t, pfcConfig(2), mapFIB{1: {1}}, env)
	half := exactPause(t, quanta, rate100G) / 2
	for i := range 12 {
		s.Receive(0, 0, dataPkt(int32(i), 1, prioLL, 1000, ECT0))
	}
	ctrlOut(s, 0, 0)
	at := int64(0)
	for k := 1; k <= 3; k++ {
		if len(env.timers) != k || env.timers[k-1].at != at+half {
			t.Fatalf("refresh %d: timers %v, want the last at %d", k, env.timers, at+half)
		}
		at += half
		s.OnTimer(at, env.timers[k-1].id)
		f := ctrlOut(s, at, 0)
		if len(f) != 1 {
			t.Fatalf("refresh %d: %d frames", k, len(f))
		}
		wantPFC(t, f[0], prioLL, quanta)
		if s.Stats(0, at).PausesSent != int64(k+1) {
			t.Errorf("PausesSent = %d, want %d", s.Stats(0, at).PausesSent, k+1)
		}
	}
	stale := env.timers[len(env.timers)-1]
	// Drain to XON: RESUME, and the armed refresh finds nothing to do.
	for range 5 {
		s.Dequeue(at+1, 1)
	}
	if f := ctrlOut(s, at+1, 0); len(f) != 1 || f[0].PauseQuanta != 0 {
		t.Fatalf("frames %v, want a RESUME", f)
	}
	n := len(env.timers)
	s.OnTimer(stale.at, stale.id)
	if f := ctrlOut(s, stale.at, 0); len(f) != 0 || len(env.timers) != n {
		t.Fatalf("refresh after RESUME sent %d frames, armed %d timers", len(f), len(env.timers)-n)
	}
	// A new episode: the stale timer of the old one stays dead even while
	// the queue is paused again.
	for i := range 3 {
		s.Receive(stale.at+1, 0, dataPkt(int32(i), 1, prioLL, 1000, ECT0))
	}
	if f := ctrlOut(s, stale.at+1, 0); len(f) != 1 || f[0].PauseQuanta != quanta {
		t.Fatalf("frames %v, want a new PAUSE", f)
	}
	s.OnTimer(stale.at+2, stale.id)
	if f := ctrlOut(s, stale.at+2, 0); len(f) != 0 {
		t.Errorf("an old episode's timer refreshed the new one")
	}
	fresh := env.timers[len(env.timers)-1]
	if fresh.at != stale.at+1+half {
		t.Errorf("new episode's refresh at %d, want %d", fresh.at, stale.at+1+half)
	}
	s.OnTimer(fresh.at, fresh.id)
	if f := ctrlOut(s, fresh.at, 0); len(f) != 1 {
		t.Errorf("the new episode's refresh sent %d frames", len(f))
	}
	// Unknown timer kinds are ignored.
	s.OnTimer(fresh.at, timerID(7, 0, prioLL, 0))
	if f := ctrlOut(s, fresh.at, 0); len(f) != 0 {
		t.Errorf("unknown timer kind sent %d frames", len(f))
	}
}

func TestTimerIDRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		port int
		q    uint8
		gen  uint32
	}{{0, 0, 0}, {4095, 7, 1<<21 - 1}, {17, 3, 12345}, {1, 1, 1 << 21}} {
		id := timerID(timerPauseRefresh, tc.port, tc.q, tc.gen)
		if id >= 1<<40 {
			t.Errorf("id %#x does not fit in 40 bits", id)
		}
		kind, port, q, gen := int(id>>36), int(id>>24)&0xfff, uint8(id>>21)&7, uint32(id)&(1<<21-1)
		if kind != timerPauseRefresh || port != tc.port || q != tc.q || gen != tc.gen&(1<<21-1) {
			t.Errorf("%+v: unpacked kind %d port %d q %d gen %d", tc, kind, port, q, gen)
		}
	}
}

// TestPFCRefreshAcrossPorts: refresh timers address their own port and
// priority; another port's pause state is untouched.
func TestPFCRefreshAcrossPorts(t *testing.T) {
	env := newFakeEnv(t)
	cfg := pfcConfig(4)
	cfg.Lossless |= 1 << 5
	s := mustNew(t, cfg, mapFIB{1: {3}}, env)
	for i := range 11 {
		s.Receive(0, 2, dataPkt(int32(i), 1, 5, 1000, ECT0))
	}
	if len(env.timers) != 1 {
		t.Fatalf("timers %v", env.timers)
	}
	ctrlOut(s, 0, 2)
	s.OnTimer(env.timers[0].at, env.timers[0].id)
	for p := range 4 {
		f := ctrlOut(s, env.timers[0].at, p)
		if p == 2 {
			if len(f) != 1 || f[0].Prio != 5 {
				t.Errorf("port 2: frames %v, want a PAUSE for priority 5", f)
			}
		} else if len(f) != 0 {
			t.Errorf("port %d: %d frames", p, len(f))
		}
	}
}

// TestPFCDynamicXOFF: with beta, XOFF = beta (B - reserved - shared) / L
// shrinks as the shared buffer fills. Port 0 has the dynamic threshold,
// port 1 (static XOFF out of reach) fills the shared buffer first, lossless
// or lossy. 3 ports with 10 KB headroom per lossless priority; PAUSE comes
// when port 0 holds s0 >= beta (free - fill - s0) / L.
func TestPFCDynamicXOFF(t *testing.T) {
	tests := []struct {
		name      string
		beta      float64
		lossless  uint8
		buffer    float64
		fill      int // KB from port 1
		fillPrio  uint8
		wantPause int // 1-based packet of port 0 that triggers PAUSE
	}{
		// free = 130 - 30 = 100 KB: s0 >= 100 - s0 at 50 KB.
		{"empty", 1, 1 << 3, 130e3, 0, 3, 50},
		{"40 KB used", 1, 1 << 3, 130e3, 40, 3, 30},
		{"80 KB used", 1, 1 << 3, 130e3, 80, 3, 10},
		{"lossy fill", 1, 1 << 3, 130e3, 80, 0, 10},
		{"beta 2", 2, 1 << 3, 130e3, 40, 3, 40},
		{"beta 1/2", 0.5, 1 << 3, 130e3, 40, 3, 20},
		// L = 2: reserved 60 KB, free 70 KB: s0 >= (60 - s0) / 2 at 20 KB.
		{"two lossless", 1, 1<<3 | 1<<4, 130e3, 10, 4, 20},
		// Full: XOFF is 0 and the first packet goes to headroom.
		{"full", 1, 1 << 3, 130e3, 100, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newFakeEnv(t)
			cfg := Config{Name: "dyn", Buffer: tc.buffer, Lossless: tc.lossless, XONOffset: 2000, PauseQuanta: quanta,
				Ports: []PortConfig{
					{Rate: rate100G, Beta: tc.beta, Headroom: 10e3},
					{Rate: rate100G, XOFF: 1e9, Headroom: 10e3},
					{Rate: rate100G, XOFF: 1e9, Headroom: 10e3},
				}}
			s := mustNew(t, cfg, mapFIB{1: {2}}, env)
			for i := range tc.fill {
				s.Receive(0, 1, dataPkt(int32(i), 1, tc.fillPrio, 1000, ECT0))
			}
			if s.SharedUsed() != float64(tc.fill)*1000 || s.Stats(1, 0).PausesSent != 0 {
				t.Fatalf("setup: shared %g, port 1 paused %d", s.SharedUsed(), s.Stats(1, 0).PausesSent)
			}
			for i := 1; i <= 60; i++ {
				s.Receive(1, 0, dataPkt(int32(i), 1, 3, 1000, ECT0))
				paused := s.Stats(0, 1).PausesSent == 1
				if paused != (i >= tc.wantPause) {
					t.Fatalf("packet %d: paused %v, want PAUSE at packet %d (ingress %g)",
						i, paused, tc.wantPause, s.IngressBytes(0, 3))
				}
				if paused {
					break
				}
			}
		})
	}
}

// TestPFCDynamicResume: the dynamic XOFF grows as other ports drain, and
// port 0's RESUME follows at its next departure.
func TestPFCDynamicResume(t *testing.T) {
	env := newFakeEnv(t)
	cfg := Config{Name: "dyn", Buffer: 140e3, Lossless: 1 << 3, XONOffset: 2000, PauseQuanta: quanta,
		Ports: []PortConfig{
			{Rate: rate100G, Beta: 1, Headroom: 10e3},
			{Rate: rate100G, XOFF: 1e9, Headroom: 10e3},
			{Rate: rate100G, XOFF: 1e9, Headroom: 10e3},
			{Rate: rate100G, XOFF: 1e9, Headroom: 10e3},
		}}
	// free = 100 KB; port 1 puts 40 KB towards port 3, port 0 then pauses at
	// 30 KB towards port 2.
	s := mustNew(t, cfg, mapFIB{2: {2}, 3: {3}}, env)
	for i := range 40 {
		s.Receive(0, 1, dataPkt(int32(i), 3, 3, 1000, ECT0))
	}
	for i := range 30 {
		s.Receive(1, 0, dataPkt(int32(i), 2, 3, 1000, ECT0))
	}
	if f := ctrlOut(s, 1, 0); len(f) != 1 || f[0].PauseQuanta != quanta {
		t.Fatalf("frames %v, want a PAUSE", f)
	}
	// Port 1's traffic leaves: XOFF rises to 70 KB, but RESUME waits for a
	// departure of port 0's own.
	drain(s, 2, 3)
	if f := ctrlOut(s, 2, 0); len(f) != 0 {
		t.Fatalf("RESUME without a departure of port 0's traffic")
	}
	s.Dequeue(3, 2)
	if f := ctrlOut(s, 3, 0); len(f) != 1 || f[0].PauseQuanta != 0 {
		t.Fatalf("frames %v, want a RESUME (ingress 29 KB, XOFF 71 KB)", f)
	}
}

// TestPFCLosslessNotDroppedWhenSharedFull: lossy traffic fills the shared
// buffer; a lossless packet far below its static XOFF arrives. The spec:
// a lossless packet is dropped only when its headroom is exceeded, so it
// belongs in headroom, and its ingress must PAUSE.
func TestPFCLosslessNotDroppedWhenSharedFull(t *testing.T) {
	env := newFakeEnv(t)
	cfg := pfcConfig(3)
	cfg.Buffer = 45_000 // 15 KB headroom reserved, 30 KB shared
	s := mustNew(t, cfg, mapFIB{1: {2}}, env)
	for i := range 30 { // lossy priority 0 from port 1 fills the shared buffer
		s.Receive(0, 1, dataPkt(int32(i), 1, 0, 1000, ECT0))
	}
	p := dataPkt(100, 1, prioLL, 1000, ECT0)
	s.Receive(1, 0, p)
	if n := s.Stats(0, 1).Drops[DropHeadroomFull]; n != 0 {
		t.Errorf("lossless packet dropped (%d) with its headroom empty", n)
	}
	if s.Stats(0, 1).PausesSent != 1 {
		t.Errorf("no PAUSE for a lossless ingress that cannot get shared buffer")
	}
}

// TestPauseReceived: a PAUSE holds its priority's egress for quanta * 512
// bit times at the port's rate; other priorities and control packets keep
// flowing; Next reports the expiry; RESUME releases it at once.
func TestPauseReceived(t *testing.T) {
	for _, rate := range []float64{10e9, 40e9, 100e9, 400e9} {
		t.Run(fmt.Sprintf("%gG", rate/1e9), func(t *testing.T) {
			env := newFakeEnv(t)
			cfg := lossyConfig(2)
			cfg.Ports[1].Rate = rate
			s := mustNew(t, cfg, mapFIB{1: {1}}, env)
			for i := range 2 {
				s.Receive(0, 0, dataPkt(int32(i), 1, 3, 1000, ECT0))
				s.Receive(0, 0, dataPkt(int32(i), 1, 1, 1000, ECT0))
			}
			t0 := int64(5 * us)
			f := &Packet{Kind: Pause, Prio: 3, PauseQuanta: 1000}
			s.Receive(t0, 1, f)
			if len(env.freed) != 1 || env.freed[0] != f {
				t.Errorf("PAUSE frame not freed")
			}
			until := t0 + exactPause(t, 1000, rate)
			if got := s.PausedUntil(1, 3); got != until {
				t.Fatalf("PausedUntil = %d, want %d", got, until)
			}
			for _, p := range drain(s, t0, 1) {
				if p.Prio != 1 {
					t.Fatalf("priority %d dequeued while paused", p.Prio)
				}
			}
			if got := s.Next(1, t0); got != until {
				t.Errorf("Next = %d, want %d", got, until)
			}
			if s.Dequeue(until-1, 1) != nil {
				t.Errorf("dequeued 1 ps before the pause expires")
			}
			if s.Next(1, until) != until {
				t.Errorf("Next(at expiry) = %d", s.Next(1, until))
			}
			if p := s.Dequeue(until, 1); p == nil || p.Prio != 3 {
				t.Fatalf("nothing dequeued at expiry")
			}
			// Pause again, then RESUME releases at once and kicks the port.
			s.Receive(until, 1, &Packet{Kind: Pause, Prio: 3, PauseQuanta: 1000})
			if s.Dequeue(until+1, 1) != nil {
				t.Fatal("dequeued under a second PAUSE")
			}
			env.kicks = env.kicks[:0]
			s.Receive(until+2, 1, &Packet{Kind: Pause, Prio: 3})
			if len(env.kicks) != 1 || env.kicks[0] != 1 || s.PausedUntil(1, 3) > until+2 {
				t.Errorf("RESUME: kicks %v, paused until %d", env.kicks, s.PausedUntil(1, 3))
			}
			if p := s.Dequeue(until+2, 1); p == nil || p.Prio != 3 {
				t.Fatal("nothing dequeued after RESUME")
			}
			st := s.Stats(1, until+2)
			if st.PausesReceived != 2 || st.ResumesReceived != 1 {
				t.Errorf("PausesReceived %d ResumesReceived %d, want 2 1", st.PausesReceived, st.ResumesReceived)
			}
		})
	}
}

// TestPauseDurationExact: the hold is exactly quanta * 512 bit times. The
// cases here are ones the float computation happens to get right; see
// TestPauseDurationRounding for the others.
func TestPauseDurationExact(t *testing.T) {
	for _, tc := range []struct {
		rate   float64
		quanta uint16
	}{
		{100e9, 0xffff}, {100e9, 1}, {100e9, 1000}, {25e9, 0xffff}, {40e9, 0xffff}, {400e9, 0xffff}, {10e9, 1},
	} {
		env := newFakeEnv(t)
		cfg := lossyConfig(1)
		cfg.Ports[0].Rate = tc.rate
		s := mustNew(t, cfg, mapFIB{}, env)
		s.Receive(0, 0, &Packet{Kind: Pause, PauseQuanta: tc.quanta})
		if got, want := s.PausedUntil(0, 0), exactPause(t, tc.quanta, tc.rate); got != want {
			t.Errorf("%d quanta at %g b/s: paused for %d ps, want %d", tc.quanta, tc.rate, got, want)
		}
	}
}

// TestPauseDurationRounding: quanta * 512 / rate * 1e12 in floating point
// lands just above the exact integer for some quanta, and math.Ceil then
// adds a picosecond: 25 quanta at 100 Gb/s hold for 128001 ps instead of
// 128000. The same formula sizes the switch's own PAUSE refresh.
func TestPauseDurationRounding(t *testing.T) {
	for _, rate := range []float64{1e9, 10e9, 25e9, 100e9} {
		env := newFakeEnv(t)
		cfg := lossyConfig(1)
		cfg.Ports[0].Rate = rate
		s := mustNew(t, cfg, mapFIB{}, env)
		bad, first := 0, uint16(0)
		for q := 1; q <= 0xffff; q++ {
			s.Receive(0, 0, &Packet{Kind: Pause, PauseQuanta: uint16(q)})
			want := int64(math.Ceil(float64(q) * 512e12 / rate))
			if s.PausedUntil(0, 0) != want {
				if bad == 0 {
					first = uint16(q)
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%g b/s: %d of 65535 quanta values off, first %d", rate, bad, first)
		}
	}
}

func TestNext(t *testing.T) {
	env := newFakeEnv(t)
	s := mustNew(t, lossyConfig(2), mapFIB{1: {1}}, env)
	if got := s.Next(1, 100); got != 0 {
		t.Errorf("empty port: Next = %d, want 0", got)
	}
	s.Receive(0, 1, &Packet{Kind: Pause, Prio: 2, PauseQuanta: 1000})
	s.Receive(0, 1, &Packet{Kind: Pause, Prio: 5, PauseQuanta: 500})
	u2, u5 := s.PausedUntil(1, 2), s.PausedUntil(1, 5)
	if u5 >= u2 || u5 <= 100 {
		t.Fatalf("paused until %d and %d", u2, u5)
	}
	if got := s.Next(1, 100); got != 0 {
		t.Errorf("paused but empty: Next = %d, want 0", got)
	}
	s.Receive(1, 0, dataPkt(1, 1, 2, 1000, ECT0))
	if got := s.Next(1, 100); got != u2 {
		t.Errorf("one held queue: Next = %d, want %d", got, u2)
	}
	s.Receive(1, 0, dataPkt(2, 1, 5, 1000, ECT0))
	if got := s.Next(1, 100); got != u5 {
		t.Errorf("two held queues: Next = %d, want the earlier expiry %d", got, u5)
	}
	if got := s.Next(1, u5+1); got != u5+1 {
		t.Errorf("after one expiry: Next = %d, want %d", got, u5+1)
	}
	s.Receive(2, 0, &Packet{Kind: CNP, Dst: 1, Size: CNPFrame})
	if got := s.Next(1, 100); got != 100 {
		t.Errorf("control waiting: Next = %d, want 100", got)
	}
}

// TestPausedTime: Stats accounts the time each priority was held, merging
// overlapping PAUSE frames and cutting at RESUME.
func TestPausedTime(t *testing.T) {
	const q = 1000
	d := int64(5_120_000) // 1000 quanta at 100 Gb/s
	type frame struct {
		at     int64
		quanta uint16
	}
	for _, tc := range []struct {
		name   string
		frames []frame
		at     int64 // Stats time
		want   int64
	}{
		{"one, running", []frame{{0, q}}, d / 4, d / 4},
		{"one, expired", []frame{{0, q}}, 3 * d, d},
		{"refreshed at half", []frame{{0, q}, {d / 2, q}}, 3 * d, 3 * d / 2},
		{"refreshed twice", []frame{{0, q}, {d / 2, q}, {d, q}}, 3 * d, 2 * d},
		{"refreshed, running", []frame{{0, q}, {d / 2, q}}, d, d},
		{"resumed", []frame{{0, q}, {d / 4, 0}}, 3 * d, d / 4},
		{"resumed after expiry", []frame{{0, q}, {2 * d, 0}}, 3 * d, d},
		{"two apart", []frame{{0, q}, {2 * d, q}}, 4 * d, 2 * d},
		{"two apart, second running", []frame{{0, q}, {2 * d, q}}, 2*d + 10, d + 10},
		{"shorter after longer", []frame{{0, q}, {10, 1}}, 3 * d, 10 + d/q},
		{"resume only", []frame{{d, 0}}, 3 * d, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newFakeEnv(t)
			s := mustNew(t, lossyConfig(1), mapFIB{}, env)
			for _, f := range tc.frames {
				s.Receive(f.at, 0, &Packet{Kind: Pause, Prio: 6, PauseQuanta: f.quanta})
			}
			st := s.Stats(0, tc.at)
			if st.PausedTime[6] != tc.want {
				t.Errorf("PausedTime = %d, want %d", st.PausedTime[6], tc.want)
			}
			for p := range NumPrio {
				if p != 6 && st.PausedTime[p] != 0 {
					t.Errorf("priority %d paused for %d", p, st.PausedTime[p])
				}
			}
			if again := s.Stats(0, tc.at); again != st {
				t.Errorf("Stats is not idempotent: %v then %v", st.PausedTime, again.PausedTime)
			}
		})
	}
}
