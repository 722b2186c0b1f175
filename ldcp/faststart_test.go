package ldcp_test

import (
	"testing"

	"github.com/p4rcm/p4rcm/ldcp"
)

// TestFastStartMarks: a new flow's window is one BDP (100 packets); its
// first 99 packets go out not ECN-capable and the 100th ECN-capable, with
// AckReq; the window then waits for an ACK, and what goes after is
// ECN-capable.
func TestFastStartMarks(t *testing.T) {
	p := ldcp.Draft()
	s := newSender(t, &p, path100G)
	if s.Stage() != ldcp.FastStart || s.Window() != 100 || s.IW() != 100 {
		t.Fatalf("new sender: stage %v window %g IW %d, want fast-start 100 100", s.Stage(), s.Window(), s.IW())
	}
	pks := sendN(t, s, 0, 100)
	for i, pk := range pks[:99] {
		if pk.ECT || !pk.FirstRTT || pk.LSN != int64(i)*mss {
			t.Fatalf("first-RTT packet %d: %+v, want not ECN-capable", i, pk)
		}
	}
	if last := pks[99]; !last.ECT || !last.FirstRTT || !last.AckReq {
		t.Errorf("last fast-start packet %+v, want ECT, FirstRTT, AckReq", last)
	}
	if s.CanSend(0, mss) {
		t.Fatal("a 101st packet fits an IW of 100")
	}
	s.OnAck(8*us, ack(mss, false))
	if s.Stage() != ldcp.FastStart || s.Window() != 100 {
		t.Errorf("an ACK in fast start changed stage %v or window %g", s.Stage(), s.Window())
	}
	pk := sendN(t, s, 8*us, 1)[0]
	if !pk.ECT || pk.FirstRTT || pk.LSN != 100*mss {
		t.Errorf("packet sent after the first RTT %+v, want ECT from LSN 100000", pk)
	}
}

// TestFastStartShortMessage: a message below one BDP ends fast start with
// its last packet, which goes out ECN-capable.
func TestFastStartShortMessage(t *testing.T) {
	p := ldcp.Draft()
	s := newSender(t, &p, path100G)
	for i := range 10 {
		pk := s.OnSend(0, mss, i == 9)
		if pk.ECT != (i == 9) || !pk.FirstRTT || pk.AckReq != (i == 9) {
			t.Errorf("packet %d of a 10-packet message: %+v", i, pk)
		}
	}
	for i := range 10 {
		s.OnAck(8*us, ack(int64(i+1)*mss, false))
	}
	if s.Stage() != ldcp.Stable || s.Window() != 100 {
		t.Errorf("after the message: stage %v window %g, want stable at IW 100", s.Stage(), s.Window())
	}
	// More data later goes out ECN-capable under PAWA.
	if pk := s.OnSend(20*us, mss, false); !pk.ECT || pk.FirstRTT {
		t.Errorf("stable packet %+v", pk)
	}
}

// TestFastStartFullIW: when every first-RTT packet is acknowledged, the
// stable stage takes over with cw = BDP; the next ACKs follow eq. (1).
// An ECE on the ACK of the last (ECN-capable) fast-start packet counts.
func TestFastStartFullIW(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lastECE bool
		want    float64
	}{
		{"unmarked", false, 100},
		{"last packet marked", true, 99.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ldcp.Draft()
			s := newSender(t, &p, path100G)
			sendN(t, s, 0, 100)
			for i := range 99 {
				s.OnAck(8*us, ack(int64(i+1)*mss, false))
				// Each ACK frees a packet that goes out ECN-capable.
				if pk := sendN(t, s, 8*us, 1)[0]; !pk.ECT || pk.FirstRTT {
					t.Fatalf("second-RTT packet %+v", pk)
				}
			}
			if s.Stage() != ldcp.FastStart {
				t.Fatalf("stage %v with the last first-RTT packet unacknowledged", s.Stage())
			}
			s.OnAck(16*us, ack(100*mss, tc.lastECE))
			if s.Stage() != ldcp.Stable {
				t.Fatalf("stage %v after the whole IW was acknowledged", s.Stage())
			}
			wantWindow(t, s, tc.want)
			s.OnAck(17*us, ack(101*mss, false))
			wantWindow(t, s, tc.want+1/tc.want)
		})
	}
}

// TestFastStartLoss: WRED dropped the 31st first-RTT packet (index 30):
// 30 packets were acknowledged before the loss, so the stable stage
// starts with cw = 30 and goes back to LSN 30000 (go-back-N), sending
// ECN-capable retransmissions.
func TestFastStartLoss(t *testing.T) {
	p := ldcp.Draft()
	s := newSender(t, &p, path100G)
	sendN(t, s, 0, 100)
	for i := range 30 {
		s.OnAck(8*us, ack(int64(i+1)*mss, false))
	}
	sendN(t, s, 8*us, 30)
	// The receiver sees packet 31 next: a NAK for LSN 30000, no new packet.
	s.OnAck(9*us, ldcp.Ack{LSN: 30 * mss, NAK: true})
	if s.Stage() != ldcp.Stable || s.Next() != 30*mss || s.Una() != 30*mss {
		t.Fatalf("after the NAK: stage %v Next %d Una %d", s.Stage(), s.Next(), s.Una())
	}
	wantWindow(t, s, 30)
	pks := sendN(t, s, 9*us, 30)
	for i, pk := range pks {
		if !pk.ECT || pk.FirstRTT || !pk.Retransmit || pk.LSN != int64(30+i)*mss {
			t.Fatalf("go-back-N packet %d: %+v", i, pk)
		}
	}
	if s.CanSend(9*us, mss) {
		t.Error("window of 30 holds a 31st packet")
	}
	// The NAK's own packets count: here the NAK also acknowledged 5.
	s = newSender(t, &p, path100G)
	sendN(t, s, 0, 100)
	s.OnAck(8*us, ldcp.Ack{LSN: 5 * mss, Packets: 5, NAK: true})
	wantWindow(t, s, 5)
}

// TestFastStartLossFirstPacket: with no packet acknowledged before the
// loss the stable stage starts at one packet.
func TestFastStartLossFirstPacket(t *testing.T) {
	p := ldcp.Draft()
	s := newSender(t, &p, path100G)
	sendN(t, s, 0, 100)
	s.OnAck(8*us, ldcp.Ack{LSN: 0, NAK: true})
	if s.Stage() != ldcp.Stable || s.Next() != 0 {
		t.Fatalf("stage %v Next %d", s.Stage(), s.Next())
	}
	wantWindow(t, s, 1)
}

// TestFastStartTimeout: a timeout in fast start is a loss: the packets
// acknowledged so far are the window.
func TestFastStartTimeout(t *testing.T) {
	p := ldcp.Draft()
	s := newSender(t, &p, path100G)
	sendN(t, s, 0, 100)
	for i := range 7 {
		s.OnAck(8*us, ack(int64(i+1)*mss, false))
	}
	s.OnTimeout(500 * us)
	if s.Stage() != ldcp.Stable || s.Next() != 7*mss {
		t.Fatalf("stage %v Next %d", s.Stage(), s.Next())
	}
	wantWindow(t, s, 7)
}

func TestNoFastStart(t *testing.T) {
	p := ldcp.Draft()
	p.IW = 0
	s := newSender(t, &p, path100G)
	if s.Stage() != ldcp.Stable || s.Window() != 1 || s.IW() != 0 {
		t.Fatalf("IW 0: stage %v window %g IW %d, want stable 1 0", s.Stage(), s.Window(), s.IW())
	}
	if pk := sendN(t, s, 0, 1)[0]; !pk.ECT || pk.FirstRTT {
		t.Errorf("first packet without fast start %+v", pk)
	}
	if s.Restart() {
		t.Error("Restart without fast start configured")
	}
}

func TestRestart(t *testing.T) {
	p := ldcp.Draft()
	s := stable(t, &p, 3)
	sendN(t, s, 0, 1)
	if s.Restart() {
		t.Fatal("Restart with a packet in flight")
	}
	s.OnAck(us, ack(mss, false))
	if !s.Restart() || s.Stage() != ldcp.FastStart || s.Window() != 100 {
		t.Fatalf("Restart: stage %v window %g", s.Stage(), s.Window())
	}
	pks := sendN(t, s, 2*us, 100)
	if pks[0].ECT || !pks[0].FirstRTT || pks[0].LSN != mss || !pks[99].ECT {
		t.Errorf("restarted fast start: first %+v last %+v", pks[0], pks[99])
	}
}

func TestStageString(t *testing.T) {
	for s, want := range map[ldcp.Stage]string{ldcp.FastStart: "fast-start", ldcp.Stable: "stable", 0: "invalid"} {
		if s.String() != want {
			t.Errorf("Stage(%d).String() = %q, want %q", s, s.String(), want)
		}
	}
}
