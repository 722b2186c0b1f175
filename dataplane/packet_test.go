package dataplane

import (
	"fmt"
	"testing"
	"unsafe"
)

func TestKind(t *testing.T) {
	tests := []struct {
		k       Kind
		name    string
		control bool
	}{
		{Data, "data", false},
		{Ack, "ack", true},
		{Nack, "nack", true},
		{CNP, "cnp", true},
		{Pause, "pause", true},
		{CN, "cn", true},
		{Probe, "probe", false},
		{ProbeReply, "probe-reply", false},
		{Kind(99), "kind?", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.k.String(); got != tc.name {
				t.Errorf("String() = %q, want %q", got, tc.name)
			}
			if got := tc.k.Control(); got != tc.control {
				t.Errorf("Control() = %v, want %v", got, tc.control)
			}
		})
	}
}

func TestECT(t *testing.T) {
	for _, tc := range []struct {
		ecn uint8
		ect bool
	}{{NotECT, false}, {ECT1, true}, {ECT0, true}, {CE, true}} {
		p := Packet{ECN: tc.ecn}
		if p.ECT() != tc.ect {
			t.Errorf("ECN %d: ECT() = %v, want %v", tc.ecn, p.ECT(), tc.ect)
		}
	}
}

func TestDropReasonString(t *testing.T) {
	want := map[DropReason]string{
		DropBufferFull: "buffer-full", DropQueueLimit: "queue-limit", DropWRED: "wred", DropNoRoute: "no-route",
		DropHeadroomFull: "headroom-full", DropBufMax: "buf-max",
	}
	if len(want) != int(numDropReasons) {
		t.Fatalf("%d drop reasons, %d names tested", numDropReasons, len(want))
	}
	for r, name := range want {
		if r.String() != name {
			t.Errorf("DropReason(%d).String() = %q, want %q", r, r.String(), name)
		}
	}
}

func TestWireSizes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want int
	}{
		{"RoCEHeaders", RoCEHeaders, 62},
		{"AckFrame", AckFrame, 66},
		{"CNPFrame", CNPFrame, 78},
		{"EthOverhead", EthOverhead, 20},
		{"PauseFrame", PauseFrame, 64},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

// TestFlowHash: the hash is a pure function of the 5-tuple, depends on
// direction and on every field, and spreads similar tuples.
func TestFlowHash(t *testing.T) {
	base := FlowHash(1, 2, 49152, 4791)
	if FlowHash(1, 2, 49152, 4791) != base {
		t.Fatal("FlowHash is not deterministic")
	}
	for _, tc := range []struct {
		name string
		h    uint32
	}{
		{"reverse", FlowHash(2, 1, 4791, 49152)},
		{"src", FlowHash(3, 2, 49152, 4791)},
		{"dst", FlowHash(1, 3, 49152, 4791)},
		{"sport", FlowHash(1, 2, 49153, 4791)},
		{"dport", FlowHash(1, 2, 49152, 4792)},
		{"negative src", FlowHash(-1, 2, 49152, 4791)},
	} {
		if tc.h == base {
			t.Errorf("changing %s leaves the hash unchanged", tc.name)
		}
	}
	// Source ports 0..4095 between two hosts: no collisions expected among
	// 4096 32-bit values (probability ~0.2%), low bits balanced.
	seen := map[uint32]bool{}
	var low [4]int
	for sp := range 4096 {
		h := FlowHash(10, 20, uint16(sp), 4791)
		if seen[h] {
			t.Errorf("collision at source port %d", sp)
		}
		seen[h] = true
		low[h&3]++
	}
	for i, n := range low {
		if n < 900 || n > 1150 {
			t.Errorf("low bits %d in %d of 4096 hashes, want about 1024", i, n)
		}
	}
}

func TestRing(t *testing.T) {
	var r ring
	if r.len() != 0 {
		t.Fatal("new ring not empty")
	}
	pk := make([]*Packet, 100)
	for i := range pk {
		pk[i] = &Packet{Seq: int64(i)}
	}
	// Interleave pushes and pops so that the head wraps round while the
	// ring grows: keep 3..20 packets in it.
	next, want := 0, 0
	for round := 0; round < 6; round++ {
		for r.len() < 3+round*3 && next < len(pk) {
			r.push(pk[next])
			next++
		}
		for r.len() > 2 {
			p := r.pop()
			if p != pk[want] {
				t.Fatalf("pop = packet %d, want %d", p.Seq, want)
			}
			want++
		}
	}
	for next < len(pk) {
		r.push(pk[next])
		next++
	}
	if r.len() != len(pk)-want {
		t.Fatalf("len = %d, want %d", r.len(), len(pk)-want)
	}
	for r.len() > 0 {
		if p := r.pop(); p != pk[want] {
			t.Fatalf("pop = packet %d, want %d", p.Seq, want)
		}
		want++
	}
	for i, p := range r.buf {
		if p != nil {
			t.Errorf("slot %d still holds packet %d after pop", i, p.Seq)
		}
	}
	if n := len(r.buf); n&(n-1) != 0 {
		t.Errorf("capacity %d is not a power of two", n)
	}
}

// TestRingSteadyStateNoAlloc: a ring that has grown does not allocate.
func TestRingSteadyStateNoAlloc(t *testing.T) {
	var r ring
	p := &Packet{}
	for range 10 {
		r.push(p)
	}
	allocs := testing.AllocsPerRun(100, func() {
		for range 10 {
			r.pop()
		}
		for range 10 {
			r.push(p)
		}
	})
	if allocs != 0 {
		t.Errorf("%g allocations per cycle", allocs)
	}
}

// TestFlowHashNoStructuredCollisions: FlowHash packs the 96 bits of
// addresses and ports into 64 by XOR before mixing, so flipping bit k+16
// of the source address and bit k of the source port (or the same for
// destination address and port) gives the same hash: 10.0.0.1:50000 and
// 10.1.0.1:50001 to one destination always take the same ECMP path. Node
// IDs below 65536 (the simulator's) are not affected; IPv4 addresses are.
func TestFlowHashNoStructuredCollisions(t *testing.T) {
	const ip = 0x0a000001 // 10.0.0.1
	for _, tc := range []struct {
		name string
		a, b uint32
	}{
		{"source", FlowHash(ip, 0x0a000101, 50000, 4791), FlowHash(ip^1<<16, 0x0a000101, 50000^1, 4791)},
		{"source high bit", FlowHash(ip, 0x0a000101, 50000, 4791), FlowHash(ip^1<<30, 0x0a000101, 50000^1<<14, 4791)},
		{"destination", FlowHash(ip, 0x0a000101, 50000, 4791), FlowHash(ip, 0x0a000101^4<<16, 50000, 4791^4)},
	} {
		if tc.a == tc.b {
			t.Errorf("%s: hash %#x shared by two different 5-tuples", tc.name, tc.a)
		}
	}
}

// TestPacketFitsACacheLine keeps Packet at 64 bytes: the simulator touches
// one packet per event, and a second cache line would cost every hop.
func TestPacketFitsACacheLine(t *testing.T) {
	if n := unsafe.Sizeof(Packet{}); n != 64 {
		t.Errorf("Packet is %d bytes, want 64", n)
	}
}

// TestINTLayout keeps an INT record three whole cache lines with the
// count, the timestamp and the first hop in the first and two hops in
// each of the others (INT's comment says why).
func TestINTLayout(t *testing.T) {
	var r INT
	if n := unsafe.Sizeof(r); n != 192 {
		t.Errorf("INT is %d bytes, want 192", n)
	}
	for i := range r.Hops {
		at := unsafe.Offsetof(r.Hops) + uintptr(i)*unsafe.Sizeof(r.Hops[0])
		if end := at + unsafe.Sizeof(r.Hops[0]) - 1; at/64 != end/64 || at/64 != uintptr(i+1)/2 {
			t.Errorf("hop %d at bytes %d-%d: want it within line %d", i, at, end, (i+1)/2)
		}
	}
	if line := unsafe.Offsetof(r.SentAt) / 64; line != 0 {
		t.Errorf("SentAt in line %d, want 0", line)
	}
}

// TestPortLayout keeps a port's fields where its comment puts them: what
// every packet reads in the first cache line, what a data packet reads of
// the configuration in the second, one line per queue and ingress account,
// and the port a whole number of lines, so that in a switch's port slice
// (whose size classes are multiples of 64 bytes) every port starts a line.
func TestPortLayout(t *testing.T) {
	var p port
	line := func(name string, off, size uintptr, want uintptr) {
		t.Helper()
		if off/64 != want || (off+size-1)/64 != want {
			t.Errorf("%s at bytes %d-%d: want it within line %d", name, off, off+size-1, want)
		}
	}
	line("nonEmpty", unsafe.Offsetof(p.nonEmpty), 1, 0)
	line("ctrl", unsafe.Offsetof(p.ctrl), unsafe.Sizeof(p.ctrl), 0)
	line("queued", unsafe.Offsetof(p.queued), 8, 0)
	line("wireBytes", unsafe.Offsetof(p.wireBytes), 8, 0)
	line("ctrlPackets", unsafe.Offsetof(p.ctrlPackets), 8, 0)
	line("mark", unsafe.Offsetof(p.mark), unsafe.Sizeof(p.mark), 1)
	line("rate", unsafe.Offsetof(p.rate), 8, 1)
	line("txPackets", unsafe.Offsetof(p.txPackets), 8, 1)
	line("txBytes", unsafe.Offsetof(p.txBytes), 8, 1)
	for q := range NumPrio {
		line(fmt.Sprintf("queue %d", q), unsafe.Offsetof(p.queue)+uintptr(q)*64, unsafe.Sizeof(p.queue[q]), uintptr(2+q))
		line(fmt.Sprintf("ingress %d", q), unsafe.Offsetof(p.in)+uintptr(q)*64, unsafe.Sizeof(p.in[q]), uintptr(2+NumPrio+q))
	}
	if n := unsafe.Sizeof(p); n%64 != 0 {
		t.Errorf("port is %d bytes, not a whole number of lines", n)
	}
}

// TestSwitchLayout keeps what every packet reads of a Switch in its first
// two lines, and the Switch 256 bytes: a size class of Go's allocator
// whose objects start a line.
func TestSwitchLayout(t *testing.T) {
	var s Switch
	if n := unsafe.Sizeof(s); n != 256 {
		t.Errorf("Switch is %d bytes, want 256", n)
	}
	if end := unsafe.Offsetof(s.rcm) + 8; end > 64 {
		t.Errorf("ports, env, fib and rcm end at byte %d, want them in line 0", end)
	}
	for name, off := range map[string]uintptr{
		"shared":         unsafe.Offsetof(s.shared),
		"limit":          unsafe.Offsetof(s.limit),
		"cfg.Buffer":     unsafe.Offsetof(s.cfg) + unsafe.Offsetof(s.cfg.Buffer),
		"cfg.Lossless":   unsafe.Offsetof(s.cfg) + unsafe.Offsetof(s.cfg.Lossless),
		"cfg.AckInData":  unsafe.Offsetof(s.cfg) + unsafe.Offsetof(s.cfg.AckInData),
		"cfg.XONOffset":  unsafe.Offsetof(s.cfg) + unsafe.Offsetof(s.cfg.XONOffset),
		"cfg.Seed":       unsafe.Offsetof(s.cfg) + unsafe.Offsetof(s.cfg.Seed),
		"cfg.INTs":       unsafe.Offsetof(s.cfg) + unsafe.Offsetof(s.cfg.INTs),
		"cfg.QueueLimit": unsafe.Offsetof(s.cfg) + unsafe.Offsetof(s.cfg.QueueLimit),
	} {
		if off/64 != 1 {
			t.Errorf("%s at byte %d: want it in line 1", name, off)
		}
	}
}
