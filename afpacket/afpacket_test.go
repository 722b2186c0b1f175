//go:build linux

package afpacket

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/netlab"
)

// ios are the ways of moving frames every test of a port runs with.
var ios = []IO{Ring, RingV3, Mmsg}

// eachIO runs test as a subtest per IO, with the option forcing it, and
// on Ring with a send ring.
func eachIO(t *testing.T, test func(t *testing.T, io Option)) {
	for _, m := range ios {
		t.Run(m.String(), func(t *testing.T) { test(t, WithIO(m)) })
	}
	t.Run("ring-send-ring", func(t *testing.T) { test(t, ringSendRing) })
}

// ringSendRing is Ring sending from a ring as well.
func ringSendRing(o *options) {
	WithIO(Ring)(o)
	withSendRing()(o)
}

func lab(t *testing.T, opts ...Option) (*netlab.Socket, *Port) {
	t.Helper()
	return labMTU(t, 0, opts...)
}

// labMTU is a port on one end of a veth and a host's socket on the
// other, the veth's MTU raised to mtu on both ends where it is not 0.
func labMTU(t testing.TB, mtu int, opts ...Option) (*netlab.Socket, *Port) {
	s, p, _ := labHost(t, mtu, opts...)
	return s, p
}

// oneLink builds a lab named name with one host linked to the root
// namespace on its eth0, removed when t ends.
func oneLink(t testing.TB, name string) (*netlab.Host, *netlab.Link) {
	t.Helper()
	labtest.Require(t)
	l, err := netlab.New(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h, err := l.Host("h1")
	if err != nil {
		t.Fatal(err)
	}
	link, err := l.Link(h, "eth0", nil)
	if err != nil {
		t.Fatal(err)
	}
	return h, link
}

// labHost is labMTU with the host, for a test to open more there.
func labHost(t testing.TB, mtu int, opts ...Option) (*netlab.Socket, *Port, *netlab.Host) {
	t.Helper()
	h, link := oneLink(t, "afp")
	if mtu != 0 {
		setMTU := func(name string) error {
			lk, err := netlink.LinkByName(name)
			if err == nil {
				err = netlink.LinkSetMTU(lk, mtu)
			}
			return err
		}
		if err := setMTU(link.SwitchIf); err != nil {
			t.Fatal(err)
		}
		if err := h.Do(func() error { return setMTU("eth0") }); err != nil {
			t.Fatal(err)
		}
	}
	s, err := h.Socket("eth0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Open(link.SwitchIf, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return s, p, h
}

func frame(n int, seq byte, vlan bool) []byte {
	f := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}
	if vlan {
		f = append(f, 0x81, 0x00, 0x20, 0x07) // priority 1, VLAN 7
	}
	f = append(f, 0x88, 0xb6)
	for len(f) < n {
		f = append(f, seq)
	}
	return f
}

// TestBatchesBothWays sends 200 frames each way: every one arrives, in
// order, byte for byte, a VLAN tag included.
func TestBatchesBothWays(t *testing.T) { eachIO(t, testBatchesBothWays) }

func testBatchesBothWays(t *testing.T, io Option) {
	host, port := lab(t, io)
	var sent [][]byte
	for i := range 200 {
		f := frame(64+i, byte(i), i%3 == 0)
		sent = append(sent, f)
		if err := host.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	var got [][]byte
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < len(sent) && time.Now().Before(deadline) {
		fs, err := port.Recv()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			got = append(got, append([]byte(nil), f...))
		}
	}
	if len(got) != len(sent) {
		t.Fatalf("received %d frames of %d", len(got), len(sent))
	}
	for i := range sent {
		if !bytes.Equal(got[i], sent[i]) {
			t.Fatalf("frame %d:\n got %x\nwant %x", i, got[i], sent[i])
		}
	}
	if err := port.Send(sent...); err != nil {
		t.Fatal(err)
	}
	for i := range sent {
		f, err := host.Recv(2 * time.Second)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(f, sent[i]) {
			t.Fatalf("frame %d back:\n got %x\nwant %x", i, f, sent[i])
		}
	}
}

func TestCloseEndsRecv(t *testing.T) { eachIO(t, testCloseEndsRecv) }

func testCloseEndsRecv(t *testing.T, io Option) {
	_, port := lab(t, io)
	done := make(chan error)
	go func() {
		_, err := port.Recv()
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	port.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Recv after Close: %v, want ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Recv still blocked after Close")
	}
}

func TestOpenUnknownInterface(t *testing.T) {
	if _, err := Open("no-such-if0"); err == nil {
		t.Fatal("no error")
	}
}

// A frame longer than MaxFrame (the veths' MTU raised so that it
// crosses them) is dropped and counted, never returned cut; the frames
// around it arrive whole.
func TestLongFrameDropped(t *testing.T) { eachIO(t, testLongFrameDropped) }

func testLongFrameDropped(t *testing.T, io Option) {
	host, port := labMTU(t, 9600, io)
	// The longest untagged frame a port takes is MaxFrame-4: the other
	// 4 bytes are where a VLAN tag goes back in.
	longest := MaxFrame - 4
	for _, f := range [][]byte{frame(100, 1, false), frame(9300, 0xaa, false), frame(longest, 2, false), frame(100, 3, false)} {
		if err := host.Send(f); err != nil {
			t.Fatalf("send %d bytes: %v", len(f), err)
		}
	}
	var got []int
	done := make(chan struct{})
	go func() {
		defer close(done)
		for len(got) < 3 {
			fs, err := port.Recv()
			if err != nil {
				return
			}
			for _, f := range fs {
				got = append(got, len(f))
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		port.Close() // ends the Recv
		<-done
	}
	if len(got) != 3 || got[0] != 100 || got[1] != longest || got[2] != 100 {
		t.Errorf("received frames of %v bytes, want [100 %d 100] (the 9300-byte one dropped)", got, longest)
	}
	if n := port.Truncated(); n != 1 {
		t.Errorf("Truncated() = %d, want 1", n)
	}
}
