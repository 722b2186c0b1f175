package ldcp_test

import (
	"math/rand/v2"
	"testing"

	"github.com/p4rcm/p4rcm/ldcp"
)

func recv(t *testing.T, r *ldcp.Receiver, lsn int64, ce, ackReq bool) []ldcp.Ack {
	t.Helper()
	acks, n := r.OnData(0, lsn, mss, ce, ackReq)
	return append([]ldcp.Ack(nil), acks[:n]...)
}

func wantAcks(t *testing.T, what string, got []ldcp.Ack, want ...ldcp.Ack) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: ACKs %+v, want %+v", what, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: ACK %d = %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

// TestReceiverPerPacket: with m = 1 every in-order packet gets its own ACK
// with the LSN after it, echoing its CE mark.
func TestReceiverPerPacket(t *testing.T) {
	p := ldcp.Draft()
	rv := ldcp.NewReceiver(&p)
	r := &rv
	for i, ce := range []bool{false, true, true, false} {
		lsn := int64(i) * mss
		wantAcks(t, "packet", recv(t, r, lsn, ce, false), ldcp.Ack{LSN: lsn + mss, Packets: 1, ECE: ce})
	}
	if r.Expected() != 4*mss || r.Acks != 4 {
		t.Errorf("Expected %d Acks %d", r.Expected(), r.Acks)
	}
}

// TestReceiverDelayed: with m = 4, one ACK per four unmarked packets; a
// CE-marked packet is acknowledged at once and alone, after an ACK for
// the packets waiting before it; AckReq acknowledges at once.
func TestReceiverDelayed(t *testing.T) {
	p := ldcp.Draft()
	p.AckEvery = 4
	rv := ldcp.NewReceiver(&p)
	r := &rv
	for i := range 3 {
		wantAcks(t, "one of the first three", recv(t, r, int64(i)*mss, false, false))
	}
	wantAcks(t, "fourth", recv(t, r, 3*mss, false, false), ldcp.Ack{LSN: 4 * mss, Packets: 4})
	recv(t, r, 4*mss, false, false)
	recv(t, r, 5*mss, false, false)
	if r.Pending() != 2 {
		t.Errorf("Pending() = %d, want 2", r.Pending())
	}
	wantAcks(t, "marked after two", recv(t, r, 6*mss, true, false),
		ldcp.Ack{LSN: 6 * mss, Packets: 2}, ldcp.Ack{LSN: 7 * mss, Packets: 1, ECE: true})
	wantAcks(t, "marked alone", recv(t, r, 7*mss, true, false), ldcp.Ack{LSN: 8 * mss, Packets: 1, ECE: true})
	recv(t, r, 8*mss, false, false)
	wantAcks(t, "AckReq", recv(t, r, 9*mss, false, true), ldcp.Ack{LSN: 10 * mss, Packets: 2})
	recv(t, r, 10*mss, false, false)
	if a, ok := r.Flush(0); !ok || a != (ldcp.Ack{LSN: 11 * mss, Packets: 1}) {
		t.Errorf("Flush() = %+v, %v", a, ok)
	}
	if _, ok := r.Flush(0); ok {
		t.Error("Flush with nothing waiting")
	}
}

// TestReceiverDelayedProperty: over a random run, no ACK covers more
// than m packets, every CE-marked packet is acknowledged at once by an
// ACK with ECE covering it alone, no ACK without ECE covers a marked
// packet, and the ACKs account for every packet.
func TestReceiverDelayedProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range []int{1, 2, 3, 8} {
		p := ldcp.Draft()
		p.AckEvery = m
		rv := ldcp.NewReceiver(&p)
		r := &rv
		acked := 0
		for i := range 5000 {
			ce, req := rng.IntN(5) == 0, rng.IntN(17) == 0
			acks, n := r.OnData(0, int64(i)*mss, mss, ce, req)
			for _, a := range acks[:n] {
				if a.Packets < 1 || a.Packets > m || a.NAK {
					t.Fatalf("m %d: ACK %+v", m, a)
				}
				if a.ECE && a.Packets != 1 {
					t.Fatalf("m %d: ECE ACK covers %d packets", m, a.Packets)
				}
				acked += a.Packets
			}
			if ce && (n == 0 || !acks[n-1].ECE || acks[n-1].LSN != int64(i+1)*mss) {
				t.Fatalf("m %d: marked packet %d not acknowledged at once with ECE: %+v", m, i, acks[:n])
			}
			if (ce || req) && r.Pending() != 0 {
				t.Fatalf("m %d: packets wait after a marked or AckReq packet", m)
			}
		}
		if acked+r.Pending() != 5000 {
			t.Errorf("m %d: ACKs cover %d packets and %d wait, want 5000", m, acked, r.Pending())
		}
	}
}

// TestReceiverGap: past a gap the receiver drops data and sends one NAK
// for the expected LSN, carrying the packets waiting; a duplicate gets
// an ACK that says where the receiver stands.
func TestReceiverGap(t *testing.T) {
	p := ldcp.Delayed()
	rv := ldcp.NewReceiver(&p)
	r := &rv
	wantAcks(t, "first", recv(t, r, 0, false, false))
	wantAcks(t, "gap", recv(t, r, 2*mss, true, false), ldcp.Ack{LSN: mss, Packets: 1, NAK: true})
	wantAcks(t, "same gap", recv(t, r, 3*mss, false, false))
	if r.Expected() != mss || r.OutOfOrder != 2 || r.NAKs != 1 {
		t.Errorf("Expected %d OutOfOrder %d NAKs %d", r.Expected(), r.OutOfOrder, r.NAKs)
	}
	// The go-back fills the gap; a new gap later gets its own NAK.
	wantAcks(t, "retransmission", recv(t, r, mss, false, false))
	wantAcks(t, "next", recv(t, r, 2*mss, false, false), ldcp.Ack{LSN: 3 * mss, Packets: 2})
	wantAcks(t, "new gap", recv(t, r, 5*mss, false, false), ldcp.Ack{LSN: 3 * mss, NAK: true})
	wantAcks(t, "duplicate", recv(t, r, mss, false, false), ldcp.Ack{LSN: 3 * mss})
	if r.Duplicates != 1 {
		t.Errorf("Duplicates = %d", r.Duplicates)
	}
}

// TestReceiverDrivesSender: the receiver's ACKs, fed to the sender,
// slide its window by LSN whatever m, from a window below m.
func TestReceiverDrivesSender(t *testing.T) {
	for _, m := range []int{1, 2, 5} {
		p := ldcp.Draft()
		p.AckEvery, p.IW = m, 0
		s := newSender(t, &p, path100G)
		ldcp.SetWindow(s, 1) // below m: only AckReq keeps the ACKs coming
		rv := ldcp.NewReceiver(&p)
		r := &rv
		// Each step sends what the window allows; the ACKs come back at
		// the next step, one RTT later.
		var back []ldcp.Ack
		for i := range 1000 {
			now := int64(i) * 8 * us
			for _, a := range back {
				s.OnAck(now, a)
			}
			back = back[:0]
			for s.CanSend(now, mss) {
				pk := s.OnSend(now, mss, false)
				acks, n := r.OnData(now, pk.LSN, mss, false, pk.AckReq)
				back = append(back, acks[:n]...)
			}
			if len(back) == 0 {
				t.Fatalf("m %d step %d: no ACK with window %g and %d bytes in flight", m, i, s.Window(), s.InFlight())
			}
		}
		if s.Window() != 200 || r.Pending() >= m {
			t.Errorf("m %d: window %g with %d packets waiting, want the cap and fewer than m", m, s.Window(), r.Pending())
		}
	}
}
