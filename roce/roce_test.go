package roce

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

func sample(op uint8) Packet {
	return Packet{
		DstMAC: [6]byte{2, 1, 0, 5, 0, 1}, SrcMAC: [6]byte{2, 0, 10, 0, 0, 1},
		SrcIP: [4]byte{10, 0, 0, 1}, DstIP: [4]byte{10, 0, 0, 2},
		DSCP: 26, ECN: ECT0, SrcPort: 49152, Opcode: op, DestQP: 0xabcdef,
		AckReq: true, PSN: 0x123456, Syndrome: SyndromeSeqNAK, MSN: 7, Payload: 1000,
	}
}

// TestBuildDecodesAsUDP checks the frames against gopacket's decoders: a
// valid IPv4 header (its checksum recomputed by gopacket must match ours),
// UDP to 4791 with the right lengths, and the BTH where RoCEv2 puts it.
func TestBuildDecodesAsUDP(t *testing.T) {
	for _, op := range []uint8{OpSendOnly, OpAck, OpCNP} {
		p := sample(op)
		buf := make([]byte, 2048)
		f, err := Build(buf, &p)
		if err != nil {
			t.Fatal(err)
		}
		if len(f) != p.Len() {
			t.Fatalf("opcode %#x: frame of %d bytes, Len says %d", op, len(f), p.Len())
		}
		pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
		if el := pkt.ErrorLayer(); el != nil {
			t.Fatalf("opcode %#x: gopacket: %v", op, el.Error())
		}
		ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if ip == nil || udp == nil {
			t.Fatalf("opcode %#x: no IPv4/UDP: %v", op, pkt)
		}
		if ip.TOS != 26<<2|ECT0 || ip.TTL != 64 || int(ip.Length) != len(f)-EthLen {
			t.Errorf("opcode %#x: IPv4 ToS %#x TTL %d length %d", op, ip.TOS, ip.TTL, ip.Length)
		}
		want := ip.Checksum
		sb := gopacket.NewSerializeBuffer()
		if err := ip.SerializeTo(sb, gopacket.SerializeOptions{ComputeChecksums: true}); err != nil {
			t.Fatal(err)
		}
		if got := binary.BigEndian.Uint16(sb.Bytes()[10:]); got != want {
			t.Errorf("opcode %#x: IPv4 checksum %#x, gopacket computes %#x", op, want, got)
		}
		if udp.DstPort != UDPPort || udp.SrcPort != 49152 || int(udp.Length) != len(f)-EthLen-IPv4Len {
			t.Errorf("opcode %#x: UDP %d->%d length %d", op, udp.SrcPort, udp.DstPort, udp.Length)
		}
		bth := udp.Payload
		if bth[0] != op || binary.BigEndian.Uint32(bth[4:])&0xffffff != 0xabcdef || bth[8]&0x80 == 0 ||
			binary.BigEndian.Uint32(bth[8:])&0xffffff != 0x123456 {
			t.Errorf("opcode %#x: BTH % x", op, bth[:BTHLen])
		}
	}
}

func TestParseRoundTrip(t *testing.T) {
	for _, op := range []uint8{OpSendFirst, OpSendMiddle, OpSendLast, OpSendOnly, OpAck, OpCNP} {
		p := sample(op)
		f, err := Build(make([]byte, 2048), &p)
		if err != nil {
			t.Fatal(err)
		}
		var got Packet
		if err := Parse(f, &got); err != nil {
			t.Fatalf("opcode %#x: %v", op, err)
		}
		want := p
		want.TTL = 64
		switch op {
		case OpAck:
			want.Payload = 0
		case OpCNP:
			want.Payload, want.Syndrome, want.MSN = 0, 0, 0
		default:
			want.Syndrome, want.MSN = 0, 0
		}
		if got != want {
			t.Errorf("opcode %#x:\n got %+v\nwant %+v", op, got, want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	p := sample(OpSendOnly)
	good, _ := Build(make([]byte, 2048), &p)
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name    string
		frame   []byte
		notRoCE bool
	}{
		{"ARP", mutate(func(b []byte) []byte { b[12], b[13] = 0x08, 0x06; return b }), true},
		{"TCP", mutate(func(b []byte) []byte { b[EthLen+9] = 6; return b }), true},
		{"another UDP port", mutate(func(b []byte) []byte { b[EthLen+IPv4Len+3] = 53; return b }), true},
		{"cut in the IPv4 header", good[:EthLen+10], true},
		{"total length past the frame", mutate(func(b []byte) []byte { binary.BigEndian.PutUint16(b[EthLen+2:], 3000); return b }), false},
		{"no room for the BTH", mutate(func(b []byte) []byte {
			binary.BigEndian.PutUint16(b[EthLen+2:], IPv4Len+UDPLen+4)
			return b
		}), false},
	}
	for _, c := range cases {
		var got Packet
		err := Parse(c.frame, &got)
		if err == nil {
			t.Errorf("%s: parsed", c.name)
			continue
		}
		if errors.Is(err, ErrNotRoCE) != c.notRoCE {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// An ACK must carry its AETH.
	a := sample(OpAck)
	ack, _ := Build(make([]byte, 2048), &a)
	binary.BigEndian.PutUint16(ack[EthLen+2:], uint16(IPv4Len+UDPLen+BTHLen+ICRCLen))
	var got Packet
	if err := Parse(ack, &got); err == nil || errors.Is(err, ErrNotRoCE) {
		t.Errorf("ACK without AETH: %v", err)
	}
}

func TestBuildRefuses(t *testing.T) {
	p := sample(OpSendOnly)
	if _, err := Build(make([]byte, 100), &p); err == nil {
		t.Error("a 1062-byte frame built in 100 bytes")
	}
	p.PSN = 1 << 24
	if _, err := Build(make([]byte, 2048), &p); err == nil {
		t.Error("a 25-bit PSN built")
	}
}

// TestBECN: the CE echo of LDCP's ACKs is the BTH's BECN bit, bit 6 of
// its fifth byte, beside the destination QP and touching nothing else;
// FECN (bit 7) stays clear, and a frame without it parses without it.
func TestBECN(t *testing.T) {
	p := sample(OpAck)
	plain, err := Build(make([]byte, 2048), &p)
	if err != nil {
		t.Fatal(err)
	}
	plain = bytes.Clone(plain)
	p.BECN = true
	marked, err := Build(make([]byte, 2048), &p)
	if err != nil {
		t.Fatal(err)
	}
	const at = EthLen + IPv4Len + UDPLen + 4
	for i := range marked {
		want := plain[i]
		if i == at {
			want |= 0x40
		}
		if marked[i] != want {
			t.Errorf("byte %d: %#02x, want %#02x (only the BTH's byte 4 gains 0x40)", i, marked[i], want)
		}
	}
	pkt := gopacket.NewPacket(marked, layers.LayerTypeEthernet, gopacket.Default)
	udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
	if udp == nil || udp.Payload[4] != 0x40 || binary.BigEndian.Uint32(udp.Payload[4:])&0xffffff != p.DestQP {
		t.Fatalf("gopacket's UDP payload: BTH % x; want byte 4 0x40 (B set, F clear) and the QP after it", udp.Payload[:BTHLen])
	}
	var got Packet
	if err := Parse(marked, &got); err != nil || !got.BECN || got.DestQP != p.DestQP || got.Syndrome != p.Syndrome {
		t.Errorf("parsed %+v, %v; want BECN with QP %#x and syndrome %#x", got, err, p.DestQP, p.Syndrome)
	}
	if err := Parse(plain, &got); err != nil || got.BECN {
		t.Errorf("a frame without BECN parsed with it: %+v, %v", got, err)
	}
}

// TestParsePause reads a PFC frame as rcm.p4 writes it (p4/include/headers.p4).
func TestParsePause(t *testing.T) {
	f := make([]byte, 60)
	copy(f, []byte{0x01, 0x80, 0xc2, 0, 0, 1, 2, 1, 0, 1, 0, 1, 0x88, 0x08, 0x01, 0x01, 0, 1 << 3})
	binary.BigEndian.PutUint16(f[18+2*3:], 0xffff)
	p, ok := ParsePause(f)
	if !ok || p.Enable != 1<<3 || p.Quanta[3] != 0xffff || p.Quanta[0] != 0 {
		t.Fatalf("%+v %v", p, ok)
	}
	f[15] = 0x02 // another MAC control opcode
	if _, ok := ParsePause(f); ok {
		t.Error("opcode 0x0102 read as PFC")
	}
	d := sample(OpSendOnly)
	data, _ := Build(make([]byte, 2048), &d)
	if _, ok := ParsePause(data); ok {
		t.Error("a data frame read as PFC")
	}
}

func TestBuildParseDoNotAllocate(t *testing.T) {
	p := sample(OpAck)
	p.BECN = true
	buf := make([]byte, 2048)
	var got Packet
	n := testing.AllocsPerRun(100, func() {
		f, _ := Build(buf, &p)
		_ = Parse(f, &got)
	})
	if n != 0 {
		t.Errorf("%v allocations per frame", n)
	}
}

// FuzzParse: any bytes give a packet or an error, never a panic, and a
// parsed packet's fields are in range.
func FuzzParse(f *testing.F) {
	for _, op := range []uint8{OpSendOnly, OpAck, OpCNP} {
		p := sample(op)
		b, _ := Build(make([]byte, 2048), &p)
		f.Add(b)
		p.BECN = true
		b, _ = Build(make([]byte, 2048), &p)
		f.Add(b)
	}
	// Data packets with INT stacks and an ACK echoing one.
	for _, n := range []int{0, 2, MaxINTHops} {
		p := intSample(n)
		b, _ := Build(make([]byte, 2048), &p)
		f.Add(b)
		a := sample(OpAck)
		a.HasINT, a.INT = true, p.INT
		b, _ = Build(make([]byte, 2048), &a)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Packet
		if Parse(b, &p) != nil {
			return
		}
		if p.PSN >= 1<<24 || p.DestQP >= 1<<24 || p.Payload < 0 || p.Payload > len(b) {
			t.Fatalf("%+v from % x", p, b)
		}
		// What Parse read, Build writes back and Parse reads the same:
		// the BECN bit, the QP beside it and the AETH survive the trip.
		if p.DSCP < 64 && p.Payload <= 9000 {
			again, err := Build(make([]byte, p.Len()), &p)
			if err != nil {
				t.Fatalf("%+v parsed but does not build: %v", p, err)
			}
			want := p
			if want.TTL == 0 {
				want.TTL = 64 // Build's default
			}
			var q Packet
			if err := Parse(again, &q); err != nil || q != want {
				t.Fatalf("round trip: %+v, %v; want %+v", q, err, want)
			}
		}
		ParsePause(b)
	})
}
