package dataplane

import "testing"

// benchEnv is a driver that does nothing, so that the benchmarks time the
// switch alone.
type benchEnv struct{ idle bool }

func (e *benchEnv) Kick(int)                  {}
func (e *benchEnv) Idle(int) bool             { return e.idle }
func (e *benchEnv) Send(int, *Packet)         {}
func (e *benchEnv) TrySend(int, *Packet) bool { return e.idle }
func (e *benchEnv) Timer(int64, uint64)       {}
func (e *benchEnv) NewPacket() *Packet        { return new(Packet) }
func (e *benchEnv) Free(*Packet)              {}

// BenchmarkSwitchForward is the per-packet path of a data packet: Receive
// (and Dequeue when it is queued) at 100 Gb/s line rate, 1 KB packets.
func BenchmarkSwitchForward(b *testing.B) {
	mark := Marking{KMin: 20e3, KMax: 200e3, PMax: 0.2}
	for _, bc := range []struct {
		name     string
		idle     bool
		prio     uint8
		lossless uint8
		backlog  int // packets kept queued
		hops     []int32
	}{
		{"cut-through", true, 0, 0, 0, []int32{1}},
		{"cut-through-lossless", true, 3, 1 << 3, 0, []int32{1}},
		{"queued", false, 0, 0, 0, []int32{1}},
		{"queued-lossless", false, 3, 1 << 3, 0, []int32{1}},
		{"queued-red-ramp", false, 3, 1 << 3, 60, []int32{1}},
		{"queued-ecmp4", false, 3, 1 << 3, 0, []int32{1, 2, 3, 4}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			env := &benchEnv{idle: bc.idle}
			cfg := Config{Name: "bench", Buffer: 32e6, Lossless: bc.lossless, XONOffset: 2000, PauseQuanta: 0xffff, Seed: 1,
				Ports: ports(5, PortConfig{Rate: rate100G, Marking: mark, XOFF: 1e6, Headroom: 100e3})}
			s := mustNew(b, cfg, mapFIB{9: bc.hops}, env)
			// A pool of packets cycling through the switch.
			pool := make([]*Packet, bc.backlog+1)
			for i := range pool {
				pool[i] = dataPkt(int32(i), 9, bc.prio, 1000, ECT0)
				pool[i].Hash = 0x9e3779b9 // one flow: one port under ECMP
			}
			out := s.Route(pool[0])
			for _, p := range pool[:bc.backlog] {
				s.Receive(0, 0, p)
			}
			p := pool[bc.backlog]
			now := int64(0)
			b.ReportAllocs()
			for b.Loop() {
				now += 80 * ns
				p.ECN = ECT0
				s.Receive(now, 0, p)
				if !bc.idle {
					p = s.Dequeue(now, out)
				}
			}
			if p == nil || s.QueueBytes(out, int(bc.prio)) != float64(1000*bc.backlog) {
				b.Fatalf("queue %g, want %d", s.QueueBytes(out, int(bc.prio)), 1000*bc.backlog)
			}
		})
	}
}
