//go:build linux

package afpacket

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// cpuTime is the process's user and system time so far: the kernel's
// work for a frame (the veth, the peer's receive) is mostly done in the
// context of the thread that sends it, so it counts here too.
func cpuTime(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSend: 64-byte frames sent in batches of Batch into a veth
// whose far end drops them (they are not for its address), as fast as
// the port sends them: by sendmmsg on Mmsg's socket, which the runtime's
// poller watches (mmsg), and on Ring's sending socket, which it does not
// (sendmmsg), and from a send ring there (send-ring); cpu-ns/frame is
// the process's CPU time per frame.
func BenchmarkSend(b *testing.B) {
	for _, c := range []struct {
		name string
		opt  Option
	}{{"mmsg", WithIO(Mmsg)}, {"sendmmsg", WithIO(Ring)}, {"send-ring", ringSendRing}} {
		b.Run(c.name, func(b *testing.B) {
			_, port := labMTU(b, 0, c.opt)
			batch := frames64()
			cpu0 := cpuTime(b)
			b.ResetTimer()
			for sent := 0; sent < b.N; sent += Batch {
				if err := port.Send(batch[:min(Batch, b.N-sent)]...); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/frame")
		})
	}
}

// BenchmarkRecv: 64-byte frames sent in batches of Batch from the far
// end of the veth (a port on Mmsg, the same for every IO) and received
// by a port on each IO, a batch at a time, as the switch rig offers
// them; cpu-ns/frame is the process's CPU time per frame, the sender's
// included.
func BenchmarkRecv(b *testing.B) {
	for _, m := range ios {
		b.Run(m.String(), func(b *testing.B) {
			_, port, h := labHost(b, 0, WithIO(m))
			var sender *Port
			if err := h.Do(func() (err error) { sender, err = Open("eth0", WithIO(Mmsg)); return err }); err != nil {
				b.Fatal(err)
			}
			defer sender.Close()
			batch := frames64()
			cpu0 := cpuTime(b)
			b.ResetTimer()
			for sent := 0; sent < b.N; sent += Batch {
				if err := sender.Send(batch...); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < Batch; {
					fs, err := port.Recv()
					if err != nil {
						b.Fatal(err)
					}
					for _, f := range fs {
						if ours(f) {
							got++
						}
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N/Batch*Batch+Batch), "cpu-ns/frame")
		})
	}
}

// frames64 is a batch of Batch 64-byte frames, each numbered.
func frames64() [][]byte {
	batch := make([][]byte, Batch)
	for i := range batch {
		batch[i] = frame(64, byte(i), false)
	}
	return batch
}
