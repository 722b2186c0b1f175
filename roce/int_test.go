package roce

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// intSample is a data packet that asks for INT, carrying n hop records.
func intSample(n int) Packet {
	p := sample(OpSendMiddle)
	p.DSCP |= INTDSCP
	p.HasINT = true
	p.INT = INT{Remaining: uint8(MaxINTHops - n), N: n}
	for i := range n {
		p.INT.Hops[i] = INTHop{TimeNs: 0xfffffff0 + uint32(i), TxBytes: 1000*uint32(i) + 7, QLen: 3000 + uint32(i), RateKbps: 100_000_000}
	}
	return p
}

// TestINTWireFormat: the stack sits right after the BTH, its shim's
// version, exceeded flag, hop count and remaining where rcm.p4's
// int_shim_t has them, each record four big-endian words (time, bytes
// sent, queue, rate); IPv4 and UDP lengths count it, and gopacket still
// decodes the frame as UDP with a valid IPv4 header.
func TestINTWireFormat(t *testing.T) {
	p := intSample(2)
	p.INT.Exceeded = true
	f, err := Build(make([]byte, 2048), &p)
	if err != nil {
		t.Fatal(err)
	}
	if want := Overhead + p.Payload + INTShimLen + 2*INTHopLen; len(f) != want || p.Len() != want {
		t.Fatalf("frame of %d bytes, Len %d; want %d", len(f), p.Len(), want)
	}
	at := EthLen + IPv4Len + UDPLen + BTHLen
	shim := f[at : at+INTShimLen]
	if !bytes.Equal(shim, []byte{INTVersion<<4 | 0x08, 2, MaxINTHops - 2, 0}) {
		t.Errorf("shim % x; want version 1, exceeded, 2 hops, 3 remaining", shim)
	}
	rec := f[at+INTShimLen+INTHopLen:]
	for i, want := range []uint32{0xfffffff1, 1007, 3001, 100_000_000} {
		if got := binary.BigEndian.Uint32(rec[4*i:]); got != want {
			t.Errorf("second record, word %d: %d, want %d", i, got, want)
		}
	}
	pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
	ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
	if ip == nil || udp == nil || int(ip.Length) != len(f)-EthLen || int(udp.Length) != len(f)-EthLen-IPv4Len || ip.TOS>>2 != 27 {
		t.Fatalf("gopacket: %v", pkt)
	}
	var got Packet
	if err := Parse(f, &got); err != nil {
		t.Fatal(err)
	}
	want := p
	want.TTL, want.Syndrome, want.MSN = 64, 0, 0 // a data packet has no AETH
	if got != want {
		t.Errorf("parsed %+v\nwant   %+v", got, want)
	}
}

// TestINTEcho: an ACK carries a stack after its AETH, and a NAK too;
// neither asks for INT.
func TestINTEcho(t *testing.T) {
	for _, syndrome := range []uint8{SyndromeAck, SyndromeSeqNAK} {
		p := sample(OpAck)
		p.Syndrome = syndrome
		p.HasINT, p.INT = true, intSample(MaxINTHops).INT
		f, err := Build(make([]byte, 2048), &p)
		if err != nil {
			t.Fatal(err)
		}
		if len(f) != EthLen+IPv4Len+UDPLen+BTHLen+AETHLen+MaxINTLen+ICRCLen {
			t.Fatalf("ACK of %d bytes", len(f))
		}
		var got Packet
		if err := Parse(f, &got); err != nil {
			t.Fatal(err)
		}
		want := p
		want.TTL, want.Payload = 64, 0 // an ACK has no payload
		if got != want {
			t.Errorf("parsed %+v\nwant   %+v", got, want)
		}
	}
}

// TestINTMalformed: a stack of another version, of more hops than
// MaxINTHops, one the frame ends inside, an echo that does not fill the
// ACK, and an ACK or CNP whose DSCP asks (a switch reads its AETH or
// padding as a stack) are refused as ErrMalformedINT; a data packet that
// does not ask keeps whatever follows its BTH as payload.
func TestINTMalformed(t *testing.T) {
	p := intSample(1)
	good, err := Build(make([]byte, 2048), &p)
	if err != nil {
		t.Fatal(err)
	}
	good = bytes.Clone(good)
	at := EthLen + IPv4Len + UDPLen + BTHLen
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	shortBy := func(b []byte, n int) []byte {
		binary.BigEndian.PutUint16(b[EthLen+2:], uint16(len(b)-EthLen-n))
		return b[:len(b)-n]
	}
	a := sample(OpAck)
	a.HasINT, a.INT = true, p.INT
	ack, _ := Build(make([]byte, 2048), &a)
	ack = bytes.Clone(ack)
	cnp := sample(OpCNP)
	cnpFrame, _ := Build(make([]byte, 2048), &cnp)
	cnpFrame = bytes.Clone(cnpFrame)
	cases := []struct {
		name  string
		frame []byte
	}{
		{"version 2", mutate(func(b []byte) []byte { b[at] = 2 << 4; return b })},
		{"six hops", mutate(func(b []byte) []byte { b[at+1] = MaxINTHops + 1; return b })},
		{"cut inside the stack", mutate(func(b []byte) []byte {
			b[at+1] = 3 // three records declared, and the frame ends two records in
			return shortBy(b, len(b)-(at+INTShimLen+2*INTHopLen+ICRCLen))
		})},
		{"echo with bytes after it", func() []byte {
			b := append(bytes.Clone(ack[:len(ack)-ICRCLen]), 0, 0, 0, 0, 0, 0, 0, 0)
			binary.BigEndian.PutUint16(b[EthLen+2:], uint16(len(b)-EthLen))
			return b
		}()},
		{"echo cut short", shortBy(bytes.Clone(ack), 8)},
		{"ACK asking for INT", func() []byte {
			b := bytes.Clone(ack)
			b[EthLen+1] |= INTDSCP << 2
			return b
		}()},
		{"CNP asking for INT", func() []byte {
			b := bytes.Clone(cnpFrame)
			b[EthLen+1] |= INTDSCP << 2
			return b
		}()},
	}
	for _, c := range cases {
		var got Packet
		if err := Parse(c.frame, &got); !errors.Is(err, ErrMalformedINT) {
			t.Errorf("%s: %v; want ErrMalformedINT", c.name, err)
		}
	}
	// The same bytes after a BTH whose DSCP does not ask are payload.
	plain := bytes.Clone(good)
	plain[EthLen+1] &^= INTDSCP << 2
	plain[at] = 2 << 4
	var got Packet
	if err := Parse(plain, &got); err != nil || got.HasINT || got.Payload != p.Payload+p.INT.Len() {
		t.Errorf("a data packet that does not ask: %+v, %v; want payload %d and no INT", got, err, p.Payload+p.INT.Len())
	}
}

// TestBuildRefusesINT: a packet carries a stack after its BTH exactly
// when its DSCP asks; ACKs and CNPs never ask; CNPs carry no echo; a
// stack holds at most MaxINTHops.
func TestBuildRefusesINT(t *testing.T) {
	buf := make([]byte, 2048)
	asking := sample(OpSendOnly)
	asking.DSCP |= INTDSCP
	carrying := intSample(1)
	carrying.DSCP &^= INTDSCP
	ack := sample(OpAck)
	ack.DSCP |= INTDSCP
	cnp := sample(OpCNP)
	cnp.HasINT = true
	long := intSample(0)
	long.INT.N = MaxINTHops + 1
	for name, p := range map[string]Packet{"asking without a stack": asking, "a stack without asking": carrying,
		"an ACK asking": ack, "a CNP with an echo": cnp, "six hops": long} {
		if _, err := Build(buf, &p); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}

func TestINTDoesNotAllocate(t *testing.T) {
	p := intSample(MaxINTHops)
	a := sample(OpAck)
	a.HasINT, a.INT = true, p.INT
	buf := make([]byte, 2048)
	var got Packet
	n := testing.AllocsPerRun(100, func() {
		f, _ := Build(buf, &p)
		_ = Parse(f, &got)
		f, _ = Build(buf, &a)
		_ = Parse(f, &got)
	})
	if n != 0 {
		t.Errorf("%v allocations per frame", n)
	}
}
