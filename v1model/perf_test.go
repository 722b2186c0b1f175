package v1model

import (
	"testing"
)

// rcmSwitch loads rcm.p4 with a route to 10.0.0.2 on port 2 and the
// port features of a switch port configured (PFC, RED, RCM).
func rcmSwitch(tb testing.TB) *Switch { return rcmSwitchWith(tb, Config{}) }

// rcmSwitchWith is rcmSwitch compiled with cfg.
func rcmSwitchWith(tb testing.TB, cfg Config) *Switch {
	return loadWithEntries(tb, "../p4/build/rcm.json", cfg, `{"table_entries": [
	 {"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.0.2", 32]},
	  "action_name": "RcmIngress.set_nexthop", "action_params": {"port": 2, "src_mac": "02:00:00:00:01:02", "dst_mac": "02:00:00:00:00:02"}},
	 {"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.1.0", 24]},
	  "action_name": "RcmIngress.set_nexthop", "action_params": {"port": 3, "src_mac": "02:00:00:00:01:03", "dst_mac": "02:00:00:00:00:03"}}
	]}`)
}

// loadWithEntries loads a program and installs the runtime entries
// given as JSON.
func loadWithEntries(tb testing.TB, program string, cfg Config, entries string) *Switch {
	tb.Helper()
	sw, err := Load(program, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	rt, err := ParseRuntime([]byte(entries))
	if err != nil {
		tb.Fatal(err)
	}
	if err := sw.Install(rt); err != nil {
		tb.Fatal(err)
	}
	return sw
}

func TestProcessDoesNotAllocate(t *testing.T) {
	sw := rcmSwitch(t)
	frame := udpFrame(t, 1, 2, 4791, 1000)
	n := 0
	emit := func(int, []byte) { n++ }
	allocs := testing.AllocsPerRun(200, func() {
		if err := sw.Process(1, frame, emit); err != nil {
			t.Fatal(err)
		}
	})
	if n == 0 {
		t.Fatal("nothing forwarded")
	}
	if allocs != 0 {
		t.Errorf("%.1f allocations per packet, want 0", allocs)
	}
}

// BenchmarkProcessRCM is the pipeline alone: rcm.p4, one 64-byte and one
// 1500-byte UDP frame per iteration kind, no I/O.
func BenchmarkProcessRCM(b *testing.B) {
	for _, size := range []int{64, 1500} {
		b.Run(sizeName(size), func(b *testing.B) {
			sw := rcmSwitch(b)
			frame := udpFrame(b, 1, 2, 4791, size-42)
			emit := func(int, []byte) {}
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if err := sw.Process(1, frame, emit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func sizeName(n int) string {
	if n == 64 {
		return "64B"
	}
	return "1500B"
}

// FuzzProcess feeds rcm.p4 arbitrary frames: truncated headers, wrong
// lengths, CNs with more flows than the stack holds. The parser's error
// path must take them all, without a panic, and the frame that leaves is
// never longer than the program could make it.
func FuzzProcess(f *testing.F) {
	f.Add(udpFrame(f, 1, 2, 4791, 20))
	f.Add(udpFrame(f, 1, 2, 4791, 0)[:30])
	f.Add([]byte{2, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 1, 0x88, 0xb5, 0x10, 5, 9, 0})
	f.Add([]byte{1, 0x80, 0xc2, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0x88, 0x08, 1, 1, 0, 1, 0xff})
	sw := rcmSwitch(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		if len(frame) > 9216 {
			return
		}
		if err := sw.Process(1, frame, func(port int, out []byte) {
			if len(out) > len(frame)+headroom {
				t.Errorf("sent %d bytes on port %d from a %d-byte frame", len(out), port, len(frame))
			}
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// l3Switch loads the plain router (p4/testdata/l3.p4) with the same
// route to 10.0.0.2 on port 2.
func l3Switch(tb testing.TB) *Switch {
	return loadWithEntries(tb, "../p4/testdata/build/l3.json", Config{}, `{"table_entries": [
	 {"table": "L3Ingress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.0.2", 32]},
	  "action_name": "L3Ingress.set_nexthop", "action_params": {"port": 2, "src_mac": "02:00:00:00:01:02", "dst_mac": "02:00:00:00:00:02"}}
	]}`)
}

// BenchmarkReceiveBatchRCM is the live path without I/O: rcm.p4, 32
// 64-byte frames a batch through ingress, the queues and egress, sent
// inline as p4switch's ports send them; ns/op is per batch.
func BenchmarkReceiveBatchRCM(b *testing.B) { benchmarkReceiveBatch(b, rcmSwitch(b)) }

// BenchmarkReceiveBatchRCMInterpreted is BenchmarkReceiveBatchRCM with
// the controls interpreted instead of run as the code generated for
// them (gen.go): the baseline of what the generated code saves.
func BenchmarkReceiveBatchRCMInterpreted(b *testing.B) {
	benchmarkReceiveBatch(b, rcmSwitchWith(b, Config{Interpret: true}))
}

// BenchmarkReceiveBatchL3 is the same with the plain router: what the
// switch costs a packet besides rcm.p4's own work.
func BenchmarkReceiveBatchL3(b *testing.B) { benchmarkReceiveBatch(b, l3Switch(b)) }

func benchmarkReceiveBatch(b *testing.B, sw *Switch) {
	frame := udpFrame(b, 1, 2, 4791, 64-42)
	frames := make([][]byte, 32)
	for i := range frames {
		frames[i] = frame
	}
	n := 0
	emit := func(int, []byte) { n++ }
	b.ReportAllocs()
	for b.Loop() {
		if err := sw.ReceiveBatch(1, frames, emit); err != nil {
			b.Fatal(err)
		}
	}
	if n != b.N*len(frames) {
		b.Fatalf("%d frames sent of %d", n, b.N*len(frames))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/frame")
}
