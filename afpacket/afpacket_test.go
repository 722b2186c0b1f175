//go:build linux

package afpacket

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/netlab"
)

func lab(t *testing.T) (*netlab.Socket, *Port) {
	t.Helper()
	if err := netlab.Available(); err != nil {
		t.Skipf("no network namespaces here: %v", err)
	}
	l, err := netlab.New("afp")
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
	s, err := h.Socket("eth0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Open(link.SwitchIf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return s, p
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
func TestBatchesBothWays(t *testing.T) {
	host, port := lab(t)
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

func TestCloseEndsRecv(t *testing.T) {
	_, port := lab(t)
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
