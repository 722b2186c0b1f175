package dataplane

import (
	"testing"
)

// Times are picoseconds.
const (
	ns = int64(1000)
	us = int64(1_000_000)
)

// timerReq is a timer the switch asked for.
type timerReq struct {
	at int64
	id uint64
}

// sentPkt is a packet the switch handed straight to a port.
type sentPkt struct {
	port int
	p    *Packet
	try  bool // through TrySend (control) rather than Send (data)
}

// fakeEnv records what the switch asks of its driver. Idle reports the
// ports listed in idle; the switch's time is whatever the test passes.
type fakeEnv struct {
	t      testing.TB
	idle   map[int]bool
	kicks  []int
	timers []timerReq
	sent   []sentPkt
	freed  []*Packet
	made   int
}

func newFakeEnv(t testing.TB) *fakeEnv { return &fakeEnv{t: t, idle: map[int]bool{}} }

func (e *fakeEnv) Kick(port int)             { e.kicks = append(e.kicks, port) }
func (e *fakeEnv) Idle(port int) bool        { return e.idle[port] }
func (e *fakeEnv) Timer(at int64, id uint64) { e.timers = append(e.timers, timerReq{at, id}) }
func (e *fakeEnv) Free(p *Packet)            { e.freed = append(e.freed, p) }

func (e *fakeEnv) NewPacket() *Packet {
	e.made++
	// Hand out dirty packets: the switch must fill every field it uses.
	return &Packet{Kind: Data, Prio: 7, ECN: CE, Size: 9999, Flow: 42, Seq: 77, Payload: 5}
}

func (e *fakeEnv) Send(port int, p *Packet) {
	if !e.idle[port] {
		e.t.Errorf("Send on port %d, which is not idle", port)
	}
	e.sent = append(e.sent, sentPkt{port: port, p: p})
}

func (e *fakeEnv) TrySend(port int, p *Packet) bool {
	if !e.idle[port] {
		return false
	}
	e.sent = append(e.sent, sentPkt{port: port, p: p, try: true})
	return true
}

// mapFIB routes by destination.
type mapFIB map[int][]int32

func (f mapFIB) NextHops(dst int) []int32 { return f[dst] }

// port config helpers
func ports(n int, pc PortConfig) []PortConfig {
	ps := make([]PortConfig, n)
	for i := range ps {
		ps[i] = pc
	}
	return ps
}

func mustNew(t testing.TB, cfg Config, fib FIB, env Env) *Switch {
	t.Helper()
	s, err := New(cfg, fib, env)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// dataPkt is a data packet of a flow to dst.
func dataPkt(flow int32, dst int32, prio uint8, size int32, ecn uint8) *Packet {
	return &Packet{Kind: Data, Prio: prio, ECN: ecn, Flow: flow, Dst: dst, Size: size,
		Payload: size - RoCEHeaders - EthOverhead, Hash: uint32(flow) * 2654435761}
}

// drain dequeues port at now until nothing may go.
func drain(s *Switch, now int64, port int) []*Packet {
	var out []*Packet
	for p := s.Dequeue(now, port); p != nil; p = s.Dequeue(now, port) {
		out = append(out, p)
	}
	return out
}

// exactPause is quanta * 512 bit times at rate, in picoseconds, in
// integer arithmetic; rate must be a whole number of Gb/s dividing
// quanta * 512000.
func exactPause(t testing.TB, quanta uint16, rate float64) int64 {
	t.Helper()
	gbps := int64(rate / 1e9)
	if float64(gbps)*1e9 != rate || int64(quanta)*512_000%gbps != 0 {
		t.Fatalf("pause time of %d quanta at %g b/s is not a whole number of ps", quanta, rate)
	}
	return int64(quanta) * 512_000 / gbps
}
