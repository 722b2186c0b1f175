package controlplane

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// A message that finds its channel full is dropped and counted, not queued.
func TestOfferCountsDrops(t *testing.T) {
	ch := make(chan *p4v1.DigestList, 1)
	var dropped atomic.Uint64
	first, second := &p4v1.DigestList{ListId: 1}, &p4v1.DigestList{ListId: 2}
	if !offer(ch, first, &dropped) || offer(ch, second, &dropped) {
		t.Error("offer queued the second list in a channel of one, or not the first")
	}
	if got := <-ch; got != first {
		t.Errorf("queued %v, want the first list", got)
	}
	if dropped.Load() != 1 {
		t.Errorf("dropped = %d, want 1", dropped.Load())
	}
}

// testdata/digest.p4 on BMv2 with port 1 on a veth pair: a frame sent
// into the pair's other end comes back as a digest (source MAC, port 1)
// and is counted; acknowledged, the digest comes again for the next
// frame; the digest channel closes with Close.
// It needs p4c-bm2-ss and the right to create interfaces (root).
func TestDigests(t *testing.T) {
	for _, bin := range []string{"p4c-bm2-ss", "ip"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("skipping: %s is not on the PATH", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("skipping: creating a veth pair needs root")
	}
	info, deviceConfig := compileP4(t, "testdata/digest.p4")
	ifc, peer := vethPair(t)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := startSwitch(ctx, t, map[int]string{1: ifc}, info, deviceConfig)

	if err := s.EnableDigest(ctx, "nosuch_t", 0, 0, 0); err == nil {
		t.Error("a digest not in the P4Info was enabled")
	}
	if err := s.EnableDigest(ctx, "seen_t", -time.Second, 0, 0); err == nil {
		t.Error("a negative timeout was accepted")
	}
	// Twice: the second call modifies the configuration the first made,
	// under which BMv2 would hold digests until it had 1024 of them.
	if err := s.EnableDigest(ctx, "seen_t", 0, 0, time.Second); err != nil {
		t.Fatal(err)
	}
	// Unacknowledged, a digest would keep its repeats back for ackTimeout.
	const ackTimeout = 10 * time.Second
	if err := s.EnableDigest(ctx, "seen_t", 0, 1, ackTimeout); err != nil {
		t.Fatal(err)
	}

	src := net.HardwareAddr{0x02, 0, 0, 0, 0x0d, 0x01}
	frame := make([]byte, 60)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(frame[6:], src)
	frame[12], frame[13] = 0x88, 0xb5 // local experimental EtherType
	send := time.NewTicker(200 * time.Millisecond)
	defer send.Stop()
	// Two digests of the frame, the second sooner than ackTimeout after
	// the first: the session acknowledged the first.
	var got []*p4v1.DigestList
	var first time.Time
	for len(got) < 2 {
		sendFrame(t, peer, frame)
		select {
		case d, ok := <-s.Digests():
			if !ok {
				t.Fatalf("the digest channel closed: %v", s.Err())
			}
			// Frames the kernel sends on the new interfaces have other sources.
			if m := d.GetData(); len(m) > 0 && bytes.Equal(m[0].GetStruct().GetMembers()[0].GetBitstring(), src) {
				if got = append(got, d); len(got) == 1 {
					first = time.Now()
				}
			}
		case <-send.C:
		case <-ctx.Done():
			t.Fatalf("%d digests of the frame, want 2", len(got))
		}
	}
	if wait := time.Since(first); wait > ackTimeout/2 {
		t.Errorf("the frame's second digest came %v after the first: the first was not acknowledged", wait)
	}
	if got[0].ListId == got[1].ListId {
		t.Errorf("two lists with ID %d", got[0].ListId)
	}
	if name := s.DigestName(got[0].DigestId); name != "seen_t" {
		t.Errorf("the digest's ID %d is named %q", got[0].DigestId, name)
	}
	if port := got[0].Data[0].GetStruct().GetMembers()[1].GetBitstring(); !bytes.Equal(bytes.TrimLeft(port, "\x00"), []byte{1}) {
		t.Errorf("digest port %x, want 1", port)
	}

	packets, nbytes, err := s.Counter(ctx, "SeenIngress.rx", 1)
	if err != nil {
		t.Fatal(err)
	}
	if packets < 1 || nbytes < int64(len(frame)) {
		t.Errorf("SeenIngress.rx[1] = %d packets, %d bytes; want at least 1 of %d bytes", packets, nbytes, len(frame))
	}
	if s.Dropped() != 0 {
		t.Errorf("%d digest lists dropped", s.Dropped())
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range s.Digests() { // ends only if Close closed the channel
	}
	if err := s.Err(); err != nil {
		t.Errorf("after Close, Err = %v", err)
	}
}

// compileP4 compiles a v1model program with p4c-bm2-ss: its P4Info and
// BMv2 JSON.
func compileP4(t *testing.T, src string) (*p4configv1.P4Info, []byte) {
	t.Helper()
	dir := t.TempDir()
	p4info, js := filepath.Join(dir, "p4info.txtpb"), filepath.Join(dir, "prog.json")
	out, err := exec.Command("p4c-bm2-ss", "--p4runtime-files", p4info, "-o", js, src).CombinedOutput()
	if err != nil {
		t.Fatalf("p4c-bm2-ss %s: %v: %s", src, err, out)
	}
	p, err := ReadPipeline(p4info, js, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p.Info, p.DeviceConfig
}

// vethPair creates a veth pair, both ends up, named after this process,
// and deletes it when the test ends; the test is skipped if it cannot be
// created.
func vethPair(t *testing.T) (string, string) {
	t.Helper()
	a, b := fmt.Sprintf("cpt%da", os.Getpid()), fmt.Sprintf("cpt%db", os.Getpid())
	if out, err := exec.Command("ip", "link", "add", a, "type", "veth", "peer", "name", b).CombinedOutput(); err != nil {
		t.Skipf("skipping: ip link add %s: %v: %s", a, err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "link", "del", a).CombinedOutput(); err != nil {
			t.Errorf("ip link del %s: %v: %s", a, err, out)
		}
	})
	for _, ifc := range []string{a, b} {
		// No IPv6 on them, for fewer frames from the kernel (best effort).
		_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+ifc+"/disable_ipv6", []byte("1"), 0o644)
		if out, err := exec.Command("ip", "link", "set", ifc, "up").CombinedOutput(); err != nil {
			t.Fatalf("ip link set %s up: %v: %s", ifc, err, out)
		}
	}
	return a, b
}

// sendFrame sends one Ethernet frame out of ifc with a raw socket.
func sendFrame(t *testing.T, ifc string, frame []byte) {
	t.Helper()
	i, err := net.InterfaceByName(ifc)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW, 0) // protocol 0: send only
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	to := &syscall.SockaddrLinklayer{Ifindex: i.Index, Halen: 6}
	copy(to.Addr[:], frame[:6])
	if err := syscall.Sendto(fd, frame, 0, to); err != nil {
		t.Fatalf("send on %s: %v", ifc, err)
	}
}
