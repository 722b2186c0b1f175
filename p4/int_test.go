package p4_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/roce"
)

// intRateKbps is the rate the tests' INT ports report.
const intRateKbps = 160

// intPort gives port its INT entry (int_config).
func (r *rig) intPort(port int) {
	r.t.Helper()
	r.insert(p4.TableINTConfig, []controlplane.Match{{Field: "standard_metadata.egress_port", Value: u(port, 9)}},
		p4.ActionSetINT, "rate_kbps", u(intRateKbps, 32))
}

// roceFrame is a frameBytes-long RoCEv2 data frame from host src to dst
// as the agents write it, asking for INT with stack s when s is not nil
// (DSCP 27), else not asking (DSCP 26).
func roceFrame(t *testing.T, src, dst int, psn uint32, s *roce.INT) []byte {
	t.Helper()
	p := roce.Packet{DSCP: 26, ECN: roce.ECT0, SrcPort: 4000, Opcode: roce.OpSendMiddle, DestQP: 7, PSN: psn,
		Payload: frameBytes - roce.Overhead}
	copy(p.DstMAC[:], switchMAC(src))
	copy(p.SrcMAC[:], hostMAC(src))
	copy(p.SrcIP[:], hostIP(src))
	copy(p.DstIP[:], hostIP(dst))
	if s != nil {
		p.DSCP |= roce.INTDSCP
		p.HasINT, p.INT = true, *s
		p.Payload -= s.Len()
	}
	f, err := roce.Build(make([]byte, frameBytes), &p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// recvRoCE collects the RoCEv2 frames host n gets, parsed, until want have
// come or nothing has for quiet; frames that do not parse are collected
// with err set.
func (r *rig) recvRoCE(n, want int, quiet time.Duration) []rocePacket {
	r.t.Helper()
	var out []rocePacket
	for len(out) < want {
		b, err := r.hosts[n].Recv(quiet)
		if errors.Is(err, netlab.ErrTimeout) {
			break
		}
		r.must(err)
		var p rocePacket
		p.raw = append([]byte(nil), b...)
		if p.err = roce.Parse(p.raw, &p.Packet); errors.Is(p.err, roce.ErrNotRoCE) {
			continue
		}
		out = append(out, p)
	}
	return out
}

type rocePacket struct {
	roce.Packet
	raw []byte
	err error
}

// TestINTPushesEgressQueue: host C's frames and two of host A's that ask
// for INT go through port B, paced at 20 packets a second, in one burst
// after a lone frame (C 4, A, C 4, A, C 8, each 1,000 bytes): every frame
// has come in before the second leaves. Each of A's leaves with one
// record pushed: the bytes queued behind it at port B when it left
// (13 frames for the first, 8 for the second), what port B had sent
// before it on the wire (5 frames of 1,000 bytes plus 24 for the first),
// the rate the controller gave, and a time in nanoseconds: the second
// left five departures, 250 ms, after the first. The first frame's
// ingress account (its port A's, one frame) and the queue it found when
// it came in (4 frames ahead of it) differ from all of that: a record
// with either instead of the egress queue fails, and so does a frame
// without one.
func TestINTPushesEgressQueue(t *testing.T) {
	r := newRig(t)
	r.intPort(hostB)
	r.must(r.sw.SetQueueRate(hostB, 20))
	c := flow{src: hostIP(hostC), dst: hostIP(hostB), sport: 3000, dport: 4791}
	cframe := func(seq int) []byte {
		f := c.frame(0, seq)
		copy(f[0:6], switchMAC(hostC))
		copy(f[6:12], hostMAC(hostC))
		return f
	}
	ask := &roce.INT{Remaining: roce.MaxINTHops}
	r.send(hostC, cframe(100)) // the lone frame: the port's first departure
	time.Sleep(20 * time.Millisecond)
	group := func(n int, seqs ...int) {
		for _, s := range seqs {
			r.send(n, cframe(s))
		}
		time.Sleep(2 * time.Millisecond)
	}
	group(hostC, 1, 2, 3, 4)
	r.send(hostA, roceFrame(t, hostA, hostB, 1, ask))
	time.Sleep(2 * time.Millisecond)
	group(hostC, 5, 6, 7, 8)
	r.send(hostA, roceFrame(t, hostA, hostB, 2, ask))
	time.Sleep(2 * time.Millisecond)
	group(hostC, 9, 10, 11, 12, 13, 14, 15, 16)

	got := r.recvRoCE(hostB, 19, quiet)
	var recs []roce.INTHop
	for _, g := range got {
		if g.err != nil {
			t.Errorf("a frame at B: %v", g.err)
			continue
		}
		if g.SrcIP != [4]byte(hostIP(hostA)) {
			continue
		}
		if !g.HasINT || g.INT.N != 1 || g.INT.Remaining != roce.MaxINTHops-1 || g.INT.Exceeded {
			t.Fatalf("A's packet %d left with stack %+v; want one record, four remaining", g.PSN, g.INT)
		}
		if len(g.raw) != frameBytes+roce.INTHopLen || g.Payload != frameBytes-roce.Overhead-roce.INTShimLen {
			t.Errorf("A's packet %d: %d bytes, payload %d; want the record added, %d bytes", g.PSN, len(g.raw), g.Payload, frameBytes+roce.INTHopLen)
		}
		recs = append(recs, g.INT.Hops[0])
	}
	if len(got) != 19 || len(recs) != 2 {
		t.Fatalf("B got %d frames, %d of them A's; want 19 and 2", len(got), len(recs))
	}
	const wire = frameBytes + 24
	for i, want := range []roce.INTHop{
		{QLen: 12*frameBytes + frameBytes, TxBytes: 5 * wire, RateKbps: intRateKbps},
		{QLen: 8 * frameBytes, TxBytes: 5*wire + wire + roce.INTHopLen + 4*wire, RateKbps: intRateKbps},
	} {
		got := recs[i]
		if got.QLen != want.QLen || got.TxBytes != want.TxBytes || got.RateKbps != want.RateKbps {
			t.Errorf("A's packet %d: queue %d, bytes sent before %d, rate %d kb/s; want %d (the egress queue behind it), %d, %d",
				i+1, got.QLen, got.TxBytes, got.RateKbps, want.QLen, want.TxBytes, want.RateKbps)
		}
	}
	if gap := time.Duration(recs[1].TimeNs - recs[0].TimeNs); gap < 200*time.Millisecond || gap > 300*time.Millisecond {
		t.Errorf("the records' times are %v apart; want about 250ms (five departures at 20 packets/s), in nanoseconds", gap)
	}
	if n := r.counter(p4.CounterINTHops, hostB); n != 2 {
		t.Errorf("int_hops[B] = %d, want 2", n)
	}
}

// TestINTMalformedAndUntouched: a stack of version 2, one of six hops and
// one the frame ends inside are dropped at ingress and counted, none
// reaching B; a full stack leaves as it came, flagged exceeded; a frame
// that does not ask passes untouched whatever follows its BTH; so does
// one that asks through a port without int_config (C's).
func TestINTMalformedAndUntouched(t *testing.T) {
	r := newRig(t)
	r.intPort(hostB)
	ask := &roce.INT{Remaining: roce.MaxINTHops}
	full := &roce.INT{N: roce.MaxINTHops}
	for i := range full.Hops {
		full.Hops[i] = roce.INTHop{TimeNs: uint32(i), TxBytes: 1, QLen: 2, RateKbps: 3}
	}
	at := roce.EthLen + roce.IPv4Len + roce.UDPLen + roce.BTHLen
	v2 := roceFrame(t, hostA, hostB, 1, ask)
	v2[at] = 2 << 4
	six := roceFrame(t, hostA, hostB, 2, full)
	six[at+1] = roce.MaxINTHops + 1
	cut := roceFrame(t, hostA, hostB, 3, full)[:at+roce.INTShimLen+roce.INTHopLen]
	notAsking := roceFrame(t, hostA, hostB, 4, nil)
	copy(notAsking[at:], roceFrame(t, hostA, hostB, 4, full)[at:at+roce.MaxINTLen])
	r.send(hostA, v2, six, cut)
	if n := r.waitCounter(p4.CounterINTMalformed, hostA, 3); n != 3 {
		t.Errorf("int_malformed[A] = %d, want 3", n)
	}
	r.send(hostA, roceFrame(t, hostA, hostB, 5, full), notAsking)
	r.send(hostA, roceFrame(t, hostA, hostC, 6, ask))
	got := r.recvRoCE(hostB, 3, quiet)
	if len(got) != 2 {
		t.Fatalf("B got %d frames; want the full stack and the one that does not ask, none of the malformed", len(got))
	}
	if g := got[0]; g.err != nil || g.PSN != 5 || !g.INT.Exceeded || g.INT.N != roce.MaxINTHops || g.INT.Hops != full.Hops {
		t.Errorf("the full stack left as %+v (%v); want it as it came, flagged exceeded", g.INT, g.err)
	}
	if g := got[1]; g.PSN != 4 || !bytes.Equal(g.raw[at:], notAsking[at:]) || len(g.raw) != len(notAsking) {
		t.Errorf("the frame that does not ask changed after its BTH")
	}
	if n := r.counter(p4.CounterINTExceeded, hostB); n != 1 {
		t.Errorf("int_exceeded[B] = %d, want 1", n)
	}
	toC := r.recvRoCE(hostC, 1, quiet)
	if len(toC) != 1 || toC[0].err != nil || !toC[0].HasINT || toC[0].INT.N != 0 || toC[0].INT.Remaining != roce.MaxINTHops {
		t.Errorf("through port C, without int_config: %+v; want the empty stack as it was sent", toC)
	}
}
