//go:build linux

package afpacket

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"golang.org/x/sys/unix"

	"github.com/p4rcm/p4rcm/netlab"
)

// testSrc is the source address of the tests' frames: what the port
// receives from elsewhere is not theirs.
var testSrc = []byte{2, 0, 0, 0, 0, 1}

func ours(f []byte) bool { return len(f) >= 12 && bytes.Equal(f[6:12], testSrc) }

// sized is a frame of n bytes whose payload says n, so that a frame cut,
// padded or swapped with another does not compare equal.
func sized(n int) []byte {
	f := frame(n, 0, false)
	for i := 14; i+2 <= n; i += 2 {
		binary.BigEndian.PutUint16(f[i:], uint16(n+i))
	}
	return f
}

// window is the next frames of fs to send before waiting for them: as
// many as the receiving socket's default buffer surely holds (about
// 200 KiB, each frame costing more than its bytes), at most Batch.
func window(fs [][]byte) int {
	n, bytes := 0, 0
	for n < len(fs) && n < Batch && bytes+len(fs[n]) <= 64<<10 {
		bytes += len(fs[n])
		n++
	}
	return max(n, 1)
}

// recvN receives frames of ours on port until it has n, or 5 s pass.
func recvN(t *testing.T, port *Port, n int) [][]byte {
	t.Helper()
	var got [][]byte
	done := make(chan error, 1)
	go func() {
		for len(got) < n {
			fs, err := port.Recv()
			if err != nil {
				done <- err
				return
			}
			for _, f := range fs {
				if ours(f) {
					got = append(got, append([]byte(nil), f...))
				}
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		port.Close() // ends the Recv
		<-done
		t.Fatalf("received %d frames of %d within 5 s", len(got), n)
	}
	return got
}

// through sends frames from the host to the port and back, a window at a
// time, and fails at the first frame that does not arrive as sent, in
// order.
func through(t *testing.T, host *netlab.Socket, port *Port, frames [][]byte) {
	t.Helper()
	for rest := frames; len(rest) > 0; {
		w := rest[:window(rest)]
		rest = rest[len(w):]
		for _, f := range w {
			if err := host.Send(f); err != nil {
				t.Fatalf("host sends %d bytes: %v", len(f), err)
			}
		}
		for i, f := range recvN(t, port, len(w)) {
			if !bytes.Equal(f, w[i]) {
				t.Fatalf("port received %d bytes where %d were sent:\n got %x\nwant %x", len(f), len(w[i]), head(f), head(w[i]))
			}
		}
		sendWithin(t, port, w)
		for _, want := range w {
			f, err := host.RecvMatching(5*time.Second, ours)
			if err != nil {
				t.Fatalf("host waits for %d bytes: %v", len(want), err)
			}
			if !bytes.Equal(f, want) {
				t.Fatalf("host received %d bytes where %d were sent:\n got %x\nwant %x", len(f), len(want), head(f), head(want))
			}
		}
	}
}

// sendWithin sends frames on port, failing if that takes 5 s (Close
// ends a Send stuck waiting for the kernel).
func sendWithin(t *testing.T, port *Port, frames [][]byte) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- port.Send(frames...) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		port.Close()
		t.Fatalf("sending %d frames took more than 5 s: %v", len(frames), <-done)
	}
}

// head is the start of a frame, enough to tell which it is.
func head(f []byte) []byte { return f[:min(len(f), 32)] }

// TestEverySize: frames of every length from 60 to 9,216 bytes arrive
// whole and in order, each way. Some 42 MB go through a 2 MiB ring, so
// every block is handed back and filled again many times over.
func TestEverySize(t *testing.T) {
	eachIO(t, func(t *testing.T, io Option) {
		host, port := labMTU(t, 9216, io)
		var frames [][]byte
		for n := 60; n <= 9216; n++ {
			frames = append(frames, sized(n))
		}
		through(t, host, port, frames)
	})
}

// TestRingReused: a receive ring of 16 slots (Ring; every fifth frame
// longer than a slot, read whole from the socket) or of four 16 KiB
// blocks (RingV3) takes 2 MB, 6 frames at a time (the last Recv's
// frames still hold their slots or block meanwhile); and a send ring
// (withSendRing)
// of 14 slots sends 60 frames in one call. Slots or blocks never handed
// back stop the first; a send slot reused before the kernel is done
// with it garbles the second.
func TestRingReused(t *testing.T) {
	for _, c := range []struct {
		io    IO
		sizes ringSizes
	}{
		{Ring, ringSizes{rxSlots: 16, txSlots: 8}},
		{RingV3, ringSizes{rxBlock: 16 << 10, rxBlocks: 4, txSlots: 8}},
	} {
		t.Run(c.io.String(), func(t *testing.T) {
			host, port := labMTU(t, 9216, WithIO(c.io), withSendRing(), withRingSizes(c.sizes))
			if port.rx.slots+port.rx.blocks != c.sizes.rxSlots+c.sizes.rxBlocks || port.tx.slots != 14 {
				t.Fatalf("ring of %d slots, %d blocks and %d send slots, want %v and 14", port.rx.slots, port.rx.blocks, port.tx.slots, c.sizes)
			}
			var frames [][]byte
			for i := range 1400 {
				n := 1000
				if i%5 == 0 {
					n = 3000
				}
				frames = append(frames, frame(n, byte(i), i%2 == 0))
			}
			for rest := frames; len(rest) > 0; {
				w := rest[:min(len(rest), 6)]
				rest = rest[len(w):]
				for _, f := range w {
					if err := host.Send(f); err != nil {
						t.Fatal(err)
					}
				}
				for i, f := range recvN(t, port, len(w)) {
					if !bytes.Equal(f, w[i]) {
						t.Fatalf("frame %d of a window: got %d bytes %x, want %d bytes %x", i, len(f), head(f), len(w[i]), head(w[i]))
					}
				}
			}
			out := make([][]byte, 60)
			for i := range out {
				out[i] = frame(200, byte(i), false)
			}
			sendWithin(t, port, out)
			for i, want := range out {
				f, err := host.RecvMatching(5*time.Second, ours)
				if err != nil {
					t.Fatalf("frame %d of 60: %v", i, err)
				}
				if !bytes.Equal(f, want) {
					t.Fatalf("frame %d of 60: got %x, want %x", i, head(f), head(want))
				}
			}
		})
	}
}

// tagged is a UDP frame of n bytes with an 802.1Q (or, with sTag, an
// 802.1ad) tag of priority pcp and VLAN vid, built by gopacket.
func tagged(t *testing.T, n int, sTag bool, pcp uint8, vid uint16) []byte {
	tpid := layers.EthernetTypeDot1Q
	if sTag {
		tpid = layers.EthernetTypeQinQ
	}
	eth := &layers.Ethernet{SrcMAC: testSrc, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: tpid}
	tag := &layers.Dot1Q{Priority: pcp, VLANIdentifier: vid, Type: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	udp := &layers.UDP{SrcPort: 5000, DstPort: 5001}
	udp.SetNetworkLayerForChecksum(ip)
	payload := bytes.Repeat([]byte{byte(vid)}, n-14-4-20-8)
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, tag, ip, udp, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestVLANTagKept: 802.1Q and 802.1ad tags, which the kernel takes off
// received frames, are back in the frames Recv returns, with their
// TPID, priority and VLAN, at the smallest, a middling and the largest
// size; and they go out again as they came.
func TestVLANTagKept(t *testing.T) {
	eachIO(t, func(t *testing.T, io Option) {
		host, port := labMTU(t, 9216, io)
		var frames [][]byte
		for i, n := range []int{64, 1500, MaxFrame} {
			frames = append(frames, tagged(t, n, false, uint8(i+5), uint16(100+i)), tagged(t, n, true, uint8(i), uint16(4000+i)))
		}
		for _, f := range frames {
			if err := host.Send(f); err != nil {
				t.Fatal(err)
			}
		}
		for i, f := range recvN(t, port, len(frames)) {
			want := gopacket.NewPacket(frames[i], layers.LayerTypeEthernet, gopacket.Default)
			got := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
			wt, _ := want.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q)
			gt, ok := got.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q)
			if !ok {
				t.Fatalf("frame %d (%d bytes) lost its tag: %x", i, len(frames[i]), head(f))
			}
			if ge, we := got.Layer(layers.LayerTypeEthernet).(*layers.Ethernet), want.Layer(layers.LayerTypeEthernet).(*layers.Ethernet); ge.EthernetType != we.EthernetType ||
				gt.Priority != wt.Priority || gt.VLANIdentifier != wt.VLANIdentifier {
				t.Fatalf("frame %d: TPID %#04x priority %d VLAN %d, want %#04x %d %d", i, uint16(ge.EthernetType), gt.Priority, gt.VLANIdentifier, uint16(we.EthernetType), wt.Priority, wt.VLANIdentifier)
			}
			if !bytes.Equal(f, frames[i]) {
				t.Fatalf("frame %d (%d bytes): got %d bytes %x", i, len(frames[i]), len(f), head(f))
			}
		}
		if err := port.Send(frames...); err != nil {
			t.Fatal(err)
		}
		for i, want := range frames {
			f, err := host.RecvMatching(5*time.Second, ours)
			if err != nil || !bytes.Equal(f, want) {
				t.Fatalf("frame %d back at the host: %v, %x, want %x", i, err, head(f), head(want))
			}
		}
	})
}

// TestRingRefusedFallsBack: where the kernel refuses the ring (here a
// block that is not a whole number of pages), Auto opens the port on
// recvmmsg and sendmmsg, which then carry frames, and says why; Ring and
// RingV3 fail instead.
func TestRingRefusedFallsBack(t *testing.T) {
	refused := withRingSizes(ringSizes{rxBlock: 4096 + 512})
	host, port := lab(t, refused)
	if port.IO() != Mmsg || port.RingRefused() == nil {
		t.Fatalf("ring refused: IO %v, RingRefused %v; want mmsg and the kernel's refusal", port.IO(), port.RingRefused())
	}
	if !errors.Is(port.RingRefused(), unix.EINVAL) {
		t.Errorf("RingRefused: %v, want EINVAL's", port.RingRefused())
	}
	through(t, host, port, [][]byte{sized(64), sized(1000)})

	_, ring := lab(t)
	if ring.IO() != Ring || ring.RingRefused() != nil {
		t.Errorf("by default: IO %v, RingRefused %v; want ring", ring.IO(), ring.RingRefused())
	}
	_, link := oneLink(t, "afpr")
	for _, m := range []IO{Ring, RingV3} {
		if p, err := Open(link.SwitchIf, WithIO(m), refused); err == nil {
			p.Close()
			t.Errorf("WithIO(%v) where the ring is refused: no error", m)
		}
	}
}

func TestParseIO(t *testing.T) {
	for _, m := range []IO{Auto, Ring, RingV3, Mmsg} {
		if got, err := ParseIO(m.String()); err != nil || got != m {
			t.Errorf("ParseIO(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseIO("xdp"); err == nil {
		t.Error(`ParseIO("xdp"): no error`)
	}
	if s := fmt.Sprint(IO(7)); s != "IO(7)" {
		t.Errorf("IO(7) prints %q", s)
	}
}
