package v1model

import (
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// udpFrame builds an IPv4/UDP frame from host 10.0.0.src to 10.0.0.dst.
func udpFrame(t testing.TB, src, dst byte, dport uint16, payload int) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, src}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 1, 1}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IPv4(10, 0, 0, src), DstIP: net.IPv4(10, 0, 0, dst)}
	udp := &layers.UDP{SrcPort: 5000, DstPort: layers.UDPPort(dport)}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, udp, gopacket.Payload(make([]byte, payload))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type sent struct {
	port  int
	frame []byte
}

func collect(out *[]sent) Emit {
	return func(port int, frame []byte) {
		*out = append(*out, sent{port, append([]byte(nil), frame...)})
	}
}

func TestRCMForwards(t *testing.T) {
	sw, err := Load("../p4/build/rcm.json", Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.AddEntry("RcmIngress.ipv4_lpm", Entry{
		Match:  []Match{{Value: 0x0a000002, PrefixLen: 32}},
		Action: "RcmIngress.set_nexthop",
		Params: []uint64{2, 0x020000000102, 0x020000000002},
	}); err != nil {
		t.Fatal(err)
	}
	in := udpFrame(t, 1, 2, 4791, 100)
	var out []sent
	if err := sw.Process(1, in, collect(&out)); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].port != 2 {
		t.Fatalf("sent %d frames (%v), want one on port 2", len(out), out)
	}
	pkt := gopacket.NewPacket(out[0].frame, layers.LayerTypeEthernet, gopacket.Default)
	eth := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	if eth.DstMAC.String() != "02:00:00:00:00:02" || eth.SrcMAC.String() != "02:00:00:00:01:02" {
		t.Errorf("MACs %v -> %v", eth.SrcMAC, eth.DstMAC)
	}
	if ip.TTL != 63 {
		t.Errorf("TTL %d, want 63", ip.TTL)
	}
	// The checksum the deparser wrote must verify.
	check := append([]byte(nil), out[0].frame[14:34]...)
	if csum16(check) != 0 {
		t.Errorf("IPv4 checksum %#04x does not verify", ip.Checksum)
	}
	if len(out[0].frame) != len(in) {
		t.Errorf("length %d, want %d", len(out[0].frame), len(in))
	}
	pk, by, err := sw.Counter("RcmIngress.rx_frames", 1)
	if err != nil || pk != 1 || by != uint64(len(in)) {
		t.Errorf("rx_frames[1] = %d packets %d bytes (%v), want 1, %d", pk, by, err, len(in))
	}
	// No route: dropped and counted.
	out = nil
	if err := sw.Process(1, udpFrame(t, 1, 9, 4791, 100), collect(&out)); err != nil {
		t.Fatal(err)
	}
	if len(out) != 0 {
		t.Errorf("a frame without a route was sent: %v", out)
	}
	if pk, _, _ := sw.Counter("RcmIngress.no_route", 1); pk != 1 {
		t.Errorf("no_route[1] = %d, want 1", pk)
	}
}

// A parameter that does not fit its width is refused by name, whichever
// of the action's parameters it is, and the table is left as it was.
func TestAddEntryParamTooWide(t *testing.T) {
	sw, err := Load("../p4/build/rcm.json", Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		params []uint64
		name   string
	}{
		{[]uint64{1 << 9, 0, 0}, "port"},
		{[]uint64{2, 1 << 48, 0}, "src_mac"},
		{[]uint64{2, 0, 1 << 48}, "dst_mac"},
	} {
		err := sw.AddEntry("RcmIngress.ipv4_lpm", Entry{Match: []Match{{Value: 0x0a000002, PrefixLen: 32}},
			Action: "RcmIngress.set_nexthop", Params: c.params})
		if err == nil || !strings.Contains(err.Error(), "parameter "+c.name+":") {
			t.Errorf("params %v: %v, want parameter %s refused", c.params, err, c.name)
		}
	}
	if err := sw.AddEntry("RcmIngress.ipv4_lpm", Entry{Match: []Match{{Value: 0x0a000002, PrefixLen: 32}},
		Action: "RcmIngress.set_nexthop", Params: []uint64{511, 1<<48 - 1, 1<<48 - 1}}); err != nil {
		t.Errorf("every parameter at its widest: %v", err)
	}
}

// MODIFY changes the action data packets see, and the entry it left
// keeps forwarding by it after the entry built for the change is gone.
func TestModifyEntryForwards(t *testing.T) {
	sw, err := Load("../p4/build/rcm.json", Config{})
	if err != nil {
		t.Fatal(err)
	}
	e := Entry{Match: []Match{{Value: 0x0a000002, PrefixLen: 32}}, Action: "RcmIngress.set_nexthop",
		Params: []uint64{2, 0x020000000102, 0x020000000002}}
	if err := sw.AddEntry("RcmIngress.ipv4_lpm", e); err != nil {
		t.Fatal(err)
	}
	for _, port := range []uint64{3, 5} {
		e.Params = []uint64{port, 0x020000000102, 0x020000000002}
		if err := sw.ModifyEntry("RcmIngress.ipv4_lpm", e); err != nil {
			t.Fatal(err)
		}
		e.Params[0] = 7 // the caller's slice is its own
		runtime.GC()
		var out []sent
		if err := sw.Process(1, udpFrame(t, 1, 2, 4791, 100), collect(&out)); err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 || out[0].port != int(port) {
			t.Fatalf("after MODIFY to port %d: sent %d frames (%v)", port, len(out), out)
		}
	}
}

// DeleteEntryRef removes the entry its insert returned, and only that
// one: a stale reference (the entry deleted, or deleted and a new one
// inserted with the same key) is refused and leaves the table as it is.
func TestDeleteEntryRef(t *testing.T) {
	sw, err := Load("../p4/build/rcm.json", Config{})
	if err != nil {
		t.Fatal(err)
	}
	const table = "RcmIngress.ipv4_lpm"
	e := Entry{Match: []Match{{Value: 0x0a000002, PrefixLen: 32}}, Action: "RcmIngress.set_nexthop",
		Params: []uint64{2, 0x020000000102, 0x020000000002}}
	forwards := func() bool {
		var out []sent
		if err := sw.Process(1, udpFrame(t, 1, 2, 4791, 100), collect(&out)); err != nil {
			t.Fatal(err)
		}
		return len(out) == 1
	}
	ref, err := sw.InsertEntry(table, e)
	if err != nil {
		t.Fatal(err)
	}
	if !forwards() {
		t.Fatal("the inserted entry does not forward")
	}
	if err := sw.DeleteEntryRef(ref); err != nil {
		t.Fatal(err)
	}
	if forwards() {
		t.Fatal("the deleted entry still forwards")
	}
	if err := sw.DeleteEntryRef(ref); err == nil {
		t.Fatal("a second delete by the same reference succeeded")
	}
	if _, err := sw.InsertEntry(table, e); err != nil {
		t.Fatal(err)
	}
	if err := sw.DeleteEntryRef(ref); err == nil {
		t.Fatal("a stale reference deleted the entry that took its key")
	}
	if !forwards() {
		t.Fatal("the new entry stopped forwarding after a stale delete")
	}
	if err := sw.DeleteEntryRef(EntryRef{}); err == nil {
		t.Fatal("the zero reference deleted something")
	}
	if es, _ := sw.Entries(table); len(es) != 1 {
		t.Fatalf("%d entries, want 1", len(es))
	}
}
