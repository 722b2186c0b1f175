//go:build linux

package netlab_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/netlab"
)

// Timeouts are generous upper bounds for frames that must arrive (on a veth
// they arrive in microseconds) and short waits for frames that must not; no
// test asserts how long anything took.
const (
	arrive  = 5 * time.Second
	silence = 200 * time.Millisecond
)

// newLab builds a lab or skips the test where labs cannot be built, and
// removes the lab when the test ends, failed or not.
func newLab(t *testing.T, name string) *netlab.Lab {
	t.Helper()
	labtest.Require(t)
	lab, err := netlab.New(name)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return lab
}

func mustHost(t *testing.T, lab *netlab.Lab, name string) *netlab.Host {
	t.Helper()
	h, err := lab.Host(name)
	if err != nil {
		t.Fatalf("Host(%s): %v", name, err)
	}
	return h
}

func mustLink(t *testing.T, lab *netlab.Lab, h *netlab.Host, hostIf string) *netlab.Link {
	t.Helper()
	lk, err := lab.Link(h, hostIf, nil)
	if err != nil {
		t.Fatalf("Link(%s, %s): %v", h.Name(), hostIf, err)
	}
	return lk
}

func mustSocket(t *testing.T, open func(string) (*netlab.Socket, error), ifName string) *netlab.Socket {
	t.Helper()
	s, err := open(ifName)
	if err != nil {
		t.Fatalf("socket on %s: %v", ifName, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// udpFrame builds Ethernet/IPv4/UDP carrying payload, optionally 802.1Q
// tagged with vlan (0 = untagged).
func udpFrame(t *testing.T, src, dst net.HardwareAddr, vlan uint16, payload string) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: src, DstMAC: dst, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{
		Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: net.IPv4(10, 0, 0, 1), DstIP: net.IPv4(10, 0, 0, 2),
	}
	udp := &layers.UDP{SrcPort: 4000, DstPort: 5000}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	ls := []gopacket.SerializableLayer{eth, ip, udp, gopacket.Payload(payload)}
	if vlan != 0 {
		eth.EthernetType = layers.EthernetTypeDot1Q
		dot1q := &layers.Dot1Q{VLANIdentifier: vlan, Priority: 5, Type: layers.EthernetTypeIPv4}
		ls = append([]gopacket.SerializableLayer{eth, dot1q}, ls[1:]...)
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// hasPayload matches frames carrying our test payload, so stray frames on
// the link cannot confuse a test.
func hasPayload(payload string) func([]byte) bool {
	return func(frame []byte) bool {
		p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
		app := p.ApplicationLayer()
		return app != nil && string(app.Payload()) == payload
	}
}

// checkUDP parses frame and compares it with what udpFrame built.
func checkUDP(t *testing.T, frame []byte, src, dst net.HardwareAddr, vlan uint16, payload string) {
	t.Helper()
	p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
	if el := p.ErrorLayer(); el != nil {
		t.Fatalf("parse: %v", el.Error())
	}
	eth, _ := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	if eth == nil || !bytes.Equal(eth.SrcMAC, src) || !bytes.Equal(eth.DstMAC, dst) {
		t.Fatalf("Ethernet = %+v, want %v -> %v", eth, src, dst)
	}
	dot1q, _ := p.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q)
	switch {
	case vlan == 0 && dot1q != nil:
		t.Errorf("unexpected VLAN tag %d", dot1q.VLANIdentifier)
	case vlan != 0 && dot1q == nil:
		t.Errorf("VLAN tag %d missing", vlan)
	case vlan != 0 && (dot1q.VLANIdentifier != vlan || dot1q.Priority != 5):
		t.Errorf("VLAN = %d prio %d, want %d prio 5", dot1q.VLANIdentifier, dot1q.Priority, vlan)
	}
	ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	if ip == nil || !ip.SrcIP.Equal(net.IPv4(10, 0, 0, 1)) || !ip.DstIP.Equal(net.IPv4(10, 0, 0, 2)) {
		t.Fatalf("IPv4 = %+v", ip)
	}
	udp, _ := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
	if udp == nil || udp.SrcPort != 4000 || udp.DstPort != 5000 || string(udp.Payload) != payload {
		t.Fatalf("UDP = %+v", udp)
	}
}

func TestFrameFromHostReachesSwitchSide(t *testing.T) {
	t.Parallel()
	lab := newLab(t, "nlt")
	a, b := mustHost(t, lab, "a"), mustHost(t, lab, "b")
	la, lb := mustLink(t, lab, a, "eth0"), mustLink(t, lab, b, "eth0")

	hostA := mustSocket(t, a.Socket, "eth0")
	swA := mustSocket(t, lab.RootSocket, la.SwitchIf)
	swB := mustSocket(t, lab.RootSocket, lb.SwitchIf)

	for _, vlan := range []uint16{0, 42} {
		payload := fmt.Sprintf("host-to-switch vlan %d", vlan)
		dst := net.HardwareAddr{0x02, 0, 0, 0, 0, 0xbb}
		if err := hostA.Send(udpFrame(t, la.HostMAC, dst, vlan, payload)); err != nil {
			t.Fatal(err)
		}
		got, err := swA.RecvMatching(arrive, hasPayload(payload))
		if err != nil {
			t.Fatalf("vlan %d: switch side of a: %v", vlan, err)
		}
		checkUDP(t, got, la.HostMAC, dst, vlan, payload)

		// Nothing bridges the links, so b's port must stay silent.
		if got, err := swB.RecvMatching(silence, hasPayload(payload)); !errors.Is(err, netlab.ErrTimeout) {
			t.Errorf("vlan %d: switch side of b got %x, %v; want timeout", vlan, got, err)
		}
	}
}

func TestFrameFromSwitchSideReachesHost(t *testing.T) {
	t.Parallel()
	lab := newLab(t, "nlt")
	a := mustHost(t, lab, "a")
	mac := net.HardwareAddr{0x02, 0xaa, 0, 0, 0, 1}
	la, err := lab.Link(a, "port1", mac)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(la.HostMAC, mac) {
		t.Fatalf("HostMAC = %v, want %v", la.HostMAC, mac)
	}

	hostA := mustSocket(t, a.Socket, "port1")
	swA := mustSocket(t, lab.RootSocket, la.SwitchIf)

	for _, vlan := range []uint16{0, 7} {
		payload := fmt.Sprintf("switch-to-host vlan %d", vlan)
		if err := swA.Send(udpFrame(t, la.SwitchMAC, la.HostMAC, vlan, payload)); err != nil {
			t.Fatal(err)
		}
		got, err := hostA.RecvMatching(arrive, hasPayload(payload))
		if err != nil {
			t.Fatalf("vlan %d: host a: %v", vlan, err)
		}
		checkUDP(t, got, la.SwitchMAC, la.HostMAC, vlan, payload)
	}
}

// TestOutgoingNotReceived checks that a socket never returns frames sent
// from its own side of the link, neither its own nor another socket's.
func TestOutgoingNotReceived(t *testing.T) {
	t.Parallel()
	lab := newLab(t, "nlt")
	a := mustHost(t, lab, "a")
	la := mustLink(t, lab, a, "eth0")
	sender := mustSocket(t, a.Socket, "eth0")
	watcher := mustSocket(t, a.Socket, "eth0")
	sw := mustSocket(t, lab.RootSocket, la.SwitchIf)

	const payload = "outgoing"
	if err := sender.Send(udpFrame(t, la.HostMAC, la.SwitchMAC, 0, payload)); err != nil {
		t.Fatal(err)
	}
	// Wait for it on the far end first, so the frame has certainly passed
	// the host side before we look there.
	if _, err := sw.RecvMatching(arrive, hasPayload(payload)); err != nil {
		t.Fatalf("switch side: %v", err)
	}
	for name, s := range map[string]*netlab.Socket{"sender": sender, "watcher": watcher} {
		if got, err := s.RecvMatching(silence, hasPayload(payload)); !errors.Is(err, netlab.ErrTimeout) {
			t.Errorf("%s received its own side's frame %x (err %v)", name, got, err)
		}
	}
}

func TestRecvTimeout(t *testing.T) {
	t.Parallel()
	lab := newLab(t, "nlt")
	a := mustHost(t, lab, "a")
	mustLink(t, lab, a, "eth0")
	s := mustSocket(t, a.Socket, "eth0")

	for _, timeout := range []time.Duration{silence, 0} {
		got, err := s.Recv(timeout)
		if !errors.Is(err, netlab.ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Recv(%v) = %x, %v; want a timeout error", timeout, got, err)
		}
	}
}

func TestDrain(t *testing.T) {
	t.Parallel()
	lab := newLab(t, "nlt")
	a := mustHost(t, lab, "a")
	la := mustLink(t, lab, a, "eth0")
	host := mustSocket(t, a.Socket, "eth0")
	// peek sees the same frames as host; it tells us when they are all
	// queued without consuming them from host.
	peek := mustSocket(t, a.Socket, "eth0")
	sw := mustSocket(t, lab.RootSocket, la.SwitchIf)

	// Leave an expired deadline behind; Drain must not be fooled by it.
	if _, err := host.Recv(time.Millisecond); !errors.Is(err, netlab.ErrTimeout) {
		t.Fatalf("Recv on an idle link: %v, want timeout", err)
	}
	const frames = 3
	for i := range frames {
		if err := sw.Send(udpFrame(t, la.SwitchMAC, la.HostMAC, 0, fmt.Sprint("drain ", i))); err != nil {
			t.Fatal(err)
		}
	}
	// A veth delivers in order, so once peek has the last frame, host
	// has all of them queued.
	if _, err := peek.RecvMatching(arrive, hasPayload(fmt.Sprint("drain ", frames-1))); err != nil {
		t.Fatal(err)
	}
	n, err := host.Drain()
	if err != nil || n < frames {
		t.Fatalf("Drain = %d, %v; want >= %d, nil", n, err, frames)
	}
	if got, err := host.Recv(0); !errors.Is(err, netlab.ErrTimeout) {
		t.Errorf("after Drain: Recv = %x, %v; want timeout", got, err)
	}
}

func TestCloseRemovesEverything(t *testing.T) {
	t.Parallel()
	lab := newLab(t, "nlt")
	a, b := mustHost(t, lab, "a"), mustHost(t, lab, "b")
	links := []*netlab.Link{mustLink(t, lab, a, "eth0"), mustLink(t, lab, a, "eth1"), mustLink(t, lab, b, "eth0")}
	s := mustSocket(t, a.Socket, "eth0")
	sw := mustSocket(t, lab.RootSocket, links[0].SwitchIf)

	// Prove the objects exist before checking they are gone.
	for _, h := range []*netlab.Host{a, b} {
		ns, err := netns.GetFromName(h.Netns())
		if err != nil {
			t.Fatalf("namespace %s before Close: %v", h.Netns(), err)
		}
		ns.Close()
	}
	for _, lk := range links {
		if _, err := netlink.LinkByName(lk.SwitchIf); err != nil {
			t.Fatalf("%s before Close: %v", lk.SwitchIf, err)
		}
	}

	// A Recv blocked in another goroutine must return when Close closes
	// the socket under it.
	recvErr := make(chan error, 1)
	go func() {
		_, err := s.Recv(time.Hour)
		recvErr <- err
	}()

	if err := lab.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-recvErr; err == nil || errors.Is(err, netlab.ErrTimeout) {
		t.Errorf("pending Recv after Close returned %v, want a closed error", err)
	}
	for _, h := range []*netlab.Host{a, b} {
		if ns, err := netns.GetFromName(h.Netns()); !errors.Is(err, os.ErrNotExist) {
			ns.Close()
			t.Errorf("namespace %s after Close: %v, want not exist", h.Netns(), err)
		}
	}
	for _, lk := range links {
		var nf netlink.LinkNotFoundError
		if _, err := netlink.LinkByName(lk.SwitchIf); !errors.As(err, &nf) {
			t.Errorf("%s after Close: %v, want not found", lk.SwitchIf, err)
		}
	}
	if err := sw.Send(make([]byte, 60)); err == nil {
		t.Error("Send on a socket of a closed lab succeeded")
	}
	if err := lab.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := lab.Host("c"); !errors.Is(err, netlab.ErrClosed) {
		t.Errorf("Host after Close: %v, want ErrClosed", err)
	}
}

// A trunk joins two switch-side interfaces: a frame sent on one end
// arrives on the other, and Close deletes both.
func TestTrunk(t *testing.T) {
	t.Parallel()
	lab := newLab(t, "nlt")
	a, b, err := lab.Trunk()
	if err != nil {
		t.Fatal(err)
	}
	sa := mustSocket(t, lab.RootSocket, a)
	sb := mustSocket(t, lab.RootSocket, b)
	src, dst := net.HardwareAddr{2, 0, 0, 0, 0, 1}, net.HardwareAddr{2, 0, 0, 0, 0, 2}
	if err := sa.Send(udpFrame(t, src, dst, 0, "trunk")); err != nil {
		t.Fatal(err)
	}
	f, err := sb.RecvMatching(2*time.Second, hasPayload("trunk"))
	if err != nil {
		t.Fatalf("%s -> %s: %v", a, b, err)
	}
	checkUDP(t, f, src, dst, 0, "trunk")
	if err := lab.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{a, b} {
		var nf netlink.LinkNotFoundError
		if _, err := netlink.LinkByName(name); !errors.As(err, &nf) {
			t.Errorf("%s after Close: %v, want not found", name, err)
		}
	}
}

func TestNamesUnique(t *testing.T) {
	t.Parallel()
	// Same lab name, host names and interface names: only the lab's
	// random suffix tells them apart.
	const long = "a-rather-long-lab-name"
	lab1, lab2 := newLab(t, long), newLab(t, long)
	h1, h2 := mustHost(t, lab1, "h"), mustHost(t, lab2, "h")
	l1, l2 := mustLink(t, lab1, h1, "eth0"), mustLink(t, lab2, h2, "eth0")

	if h1.Netns() == h2.Netns() {
		t.Errorf("both labs use namespace %s", h1.Netns())
	}
	if l1.SwitchIf == l2.SwitchIf {
		t.Errorf("both labs use interface %s", l1.SwitchIf)
	}
	if bytes.Equal(l1.HostMAC, l2.HostMAC) {
		t.Errorf("both labs derive MAC %v", l1.HostMAC)
	}
	for _, lk := range []*netlab.Link{l1, l2} {
		if len(lk.SwitchIf) > 15 || !strings.HasPrefix(lk.SwitchIf, long[:4]) {
			t.Errorf("SwitchIf %q: want <= 15 chars starting with the lab name", lk.SwitchIf)
		}
		if !strings.HasPrefix(lk.Host.Netns(), long+"-") {
			t.Errorf("namespace %q does not start with the lab name", lk.Host.Netns())
		}
	}
	// Within one lab, links get distinct names and MACs too.
	l3 := mustLink(t, lab1, h1, "eth1")
	if l3.SwitchIf == l1.SwitchIf || bytes.Equal(l3.HostMAC, l1.HostMAC) {
		t.Errorf("links in one lab share %s / %v", l3.SwitchIf, l3.HostMAC)
	}
	if _, err := lab1.Host("h"); err == nil {
		t.Error("duplicate host name accepted")
	}
	if _, err := lab1.Link(h2, "eth9", nil); err == nil {
		t.Error("Link accepted a host of another lab")
	}
}

func TestRootSocketOnlyOnLabInterfaces(t *testing.T) {
	t.Parallel()
	lab := newLab(t, "nlt")
	a := mustHost(t, lab, "a")
	la := mustLink(t, lab, a, "eth0")
	for _, name := range []string{"lo", "eth0", la.HostIf} {
		if name == la.SwitchIf {
			continue
		}
		if s, err := lab.RootSocket(name); err == nil {
			s.Close()
			t.Errorf("RootSocket(%q) succeeded on an interface the lab does not own", name)
		}
	}
}

func TestInvalidNames(t *testing.T) {
	if _, err := netlab.New(""); err == nil {
		t.Error(`New("") succeeded`)
	}
	if _, err := netlab.New("bad/name"); err == nil {
		t.Error(`New("bad/name") succeeded`)
	}
	lab := newLab(t, "nlt")
	if _, err := lab.Host("../x"); err == nil {
		t.Error(`Host("../x") succeeded`)
	}
	a := mustHost(t, lab, "a")
	if _, err := lab.Link(a, "sixteen-chars-xx", nil); err == nil {
		t.Error("Link accepted a 16-character interface name")
	}
	if _, err := lab.Link(a, "eth0", net.HardwareAddr{1, 2, 3}); err == nil {
		t.Error("Link accepted a 3-byte MAC")
	}
}
