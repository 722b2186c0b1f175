package ldcp_test

import (
	"fmt"
	"testing"

	"github.com/p4rcm/p4rcm/ldcp"
)

// ack is a per-packet ACK of the packet ending at lsn.
func ack(lsn int64, ece bool) ldcp.Ack { return ldcp.Ack{LSN: lsn, Packets: 1, ECE: ece} }

// TestEq1 follows eq. (1) by hand: each ACK without ECE adds alpha/cw,
// each with ECE takes beta off.
func TestEq1(t *testing.T) {
	tests := []struct {
		name        string
		alpha, beta float64
		cw          float64
		eces        []bool
		want        []float64
	}{
		{"draft alpha 1 beta 1/2", 1, 0.5, 4,
			[]bool{false, false, true, true, false},
			[]float64{4.25, 4.25 + 1/4.25, 4.25 + 1/4.25 - 0.5, 4.25 + 1/4.25 - 1, 4.25 + 1/4.25 - 1 + 1/(4.25+1/4.25-1)}},
		{"alpha 1/2 beta 1/4", 0.5, 0.25, 2,
			[]bool{false, false, true},
			[]float64{2.25, 2.25 + 0.5/2.25, 2.25 + 0.5/2.25 - 0.25}},
		{"beta 1 at 10", 1, 1, 10,
			[]bool{true, true, false},
			[]float64{9, 8, 8.125}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ldcp.Draft()
			p.Alpha, p.Beta = tc.alpha, tc.beta
			s := stable(t, &p, tc.cw)
			for i, ece := range tc.eces {
				pk := sendN(t, s, int64(i)*us, 1)[0]
				s.OnAck(int64(i)*us+us/2, ack(pk.LSN+mss, ece))
				if got := s.Window(); got != tc.want[i] {
					t.Errorf("after ACK %d (ECE %v): cw = %.17g, want %.17g", i, ece, got, tc.want[i])
				}
			}
			if s.Una() != int64(len(tc.eces))*mss || s.InFlight() != 0 {
				t.Errorf("Una %d InFlight %d after all ACKs", s.Una(), s.InFlight())
			}
		})
	}
}

// TestEq2: an ACK that covers n packets moves the window n times as far,
// with the window before the ACK: cw + n*alpha/cw or cw - n*beta.
func TestEq2(t *testing.T) {
	tests := []struct {
		cw   float64
		n    int
		ece  bool
		want float64
	}{
		{4, 3, false, 4.75},
		{4, 2, true, 3},
		{10, 4, false, 10.4},
		{10, 4, true, 8},
		{8, 1, false, 8.125}, // n = 1 is eq. (1)
		// A cut that would go below gamma stops at gamma.
		{2, 8, true, 1.0 / 16},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("cw%g/n%d/ece%v", tc.cw, tc.n, tc.ece), func(t *testing.T) {
			p := ldcp.Draft()
			s := stable(t, &p, tc.cw)
			s.OnSend(0, tc.n*mss, false)
			s.OnAck(us, ldcp.Ack{LSN: int64(tc.n) * mss, Packets: tc.n, ECE: tc.ece})
			wantWindow(t, s, tc.want)
		})
	}
}

// TestRoundOfAcks: a round of cw unmarked per-packet ACKs adds about alpha
// (eq. 1's additive increase per RTT); a fully marked round takes beta*cw.
func TestRoundOfAcks(t *testing.T) {
	p := ldcp.Draft()
	s := stable(t, &p, 20)
	pks := sendN(t, s, 0, 20)
	for _, pk := range pks {
		s.OnAck(us, ack(pk.LSN+mss, false))
	}
	// sum of 1/cw_i over 20 ACKs from 20: a bit less than 1.
	if w := s.Window(); !(w > 20.95 && w < 21) {
		t.Errorf("after a round of unmarked ACKs cw = %g, want just under 21", w)
	}
	s = stable(t, &p, 20)
	pks = sendN(t, s, 0, 20)
	for _, pk := range pks {
		s.OnAck(us, ack(pk.LSN+mss, true))
	}
	wantWindow(t, s, 10)
}

func TestWindowLimitsInFlight(t *testing.T) {
	p := ldcp.Draft()
	for _, tc := range []struct {
		cw   float64
		fits int // full packets in flight
	}{{1, 1}, {1.99, 1}, {3, 3}, {3.5, 3}, {10.25, 10}} {
		t.Run(fmt.Sprint(tc.cw), func(t *testing.T) {
			s := stable(t, &p, tc.cw)
			sendN(t, s, 0, tc.fits)
			if s.CanSend(0, mss) {
				t.Errorf("cw %g: a packet past %d in flight may go", tc.cw, tc.fits)
			}
			if s.NextSendTime(0, mss) != ldcp.Never {
				t.Errorf("cw %g: NextSendTime = %d, want Never", tc.cw, s.NextSendTime(0, mss))
			}
			// A smaller packet may fill what is left of a fractional window.
			if rest := int(tc.cw*mss) - tc.fits*mss; rest > 0 && !s.CanSend(0, rest) {
				t.Errorf("cw %g: a %d-byte packet does not fit the rest of the window", tc.cw, rest)
			}
		})
	}
}

func TestWindowCap(t *testing.T) {
	p := ldcp.Draft()           // MaxWindow 2 BDPs = 200 packets
	s := stable(t, &p, 199.998) // + 1/199.998 passes 200
	s.OnSend(0, mss, false)
	s.OnAck(us, ack(mss, false))
	wantWindow(t, s, 200)
	s.OnSend(us, mss, false)
	s.OnAck(2*us, ack(2*mss, false))
	wantWindow(t, s, 200)
}

// TestSubPacket walks the window below one packet and back: eq. (1) takes
// 1.25 to 0.75; below one packet each ECE halves it (eta) down to gamma,
// each unmarked ACK adds gamma; at one packet eq. (1) resumes.
func TestSubPacket(t *testing.T) {
	p := ldcp.Draft()
	s := stable(t, &p, 1.25)
	lsn := int64(0)
	step := func(ece bool, want float64) {
		t.Helper()
		now := lsn / mss * 200 * us // past RTT/gamma = 128 us
		if !s.CanSend(now, mss) {
			t.Fatalf("cw %g: cannot send at %d", s.Window(), now)
		}
		pk := s.OnSend(now, mss, false)
		if !pk.ECT || pk.FirstRTT {
			t.Errorf("stable packet ECT %v FirstRTT %v", pk.ECT, pk.FirstRTT)
		}
		lsn += mss
		s.OnAck(now+us, ack(lsn, ece))
		wantWindow(t, s, want)
	}
	step(true, 0.75)
	step(true, 0.375)
	step(true, 0.1875)
	step(true, 0.09375)
	step(true, 1.0/16) // max(gamma, 0.046875)
	step(true, 1.0/16)
	for k := 2; k <= 16; k++ {
		step(false, float64(k)/16)
	}
	step(false, 2) // 1 + alpha/1
	step(true, 1.5)
}

// TestSubPacketPacing: below one packet, one packet is in flight at most,
// and the next goes RTT/cw after the previous one, with the cw of the
// moment.
func TestSubPacketPacing(t *testing.T) {
	p := ldcp.Draft()
	s := stable(t, &p, 0.25) // RTT 8 us: one packet every 32 us
	t0 := 5 * us
	if !s.CanSend(t0, mss) || s.NextSendTime(t0, mss) != t0 {
		t.Fatal("the first sub-packet packet must go at once")
	}
	pk := s.OnSend(t0, mss, false)
	if !pk.AckReq {
		t.Error("a sub-packet packet must ask for an ACK")
	}
	if s.CanSend(t0+40*us, mss) || s.NextSendTime(t0+40*us, mss) != ldcp.Never {
		t.Error("a second packet may go while the first is in flight")
	}
	s.OnAck(t0+9*us, ack(mss, true)) // cw = max(1/16, 1/8) = 1/8: 64 us
	wantWindow(t, s, 0.125)
	if got := s.NextSendTime(t0+9*us, mss); got != t0+64*us {
		t.Errorf("NextSendTime = %d, want t0+64us = %d", got, t0+64*us)
	}
	if s.CanSend(t0+64*us-1, mss) || !s.CanSend(t0+64*us, mss) {
		t.Error("the sub-packet timer does not expire at RTT/cw")
	}
	s.OnSend(t0+64*us, mss, false)
	s.OnAck(t0+73*us, ack(2*mss, false)) // cw = 3/16: 8/(3/16) = 42.666 us
	if got, want := s.NextSendTime(t0+73*us, mss), t0+64*us+42_666_666; got != want {
		t.Errorf("NextSendTime = %d, want %d", got, want)
	}
}

// TestAckReq: a packet asks for an ACK when it is the last of a message,
// and whenever the window holds fewer than m packets (else a delayed-ACK
// receiver could wait for packets the window keeps back).
func TestAckReq(t *testing.T) {
	p := ldcp.Delayed() // m = 2
	s := stable(t, &p, 1.5)
	if pk := s.OnSend(0, mss, false); !pk.AckReq {
		t.Error("cw 1.5 < m 2: AckReq not set")
	}
	s = stable(t, &p, 4)
	if pk := s.OnSend(0, mss, false); pk.AckReq {
		t.Error("cw 4 >= m 2: AckReq set")
	}
	if pk := s.OnSend(0, mss, true); !pk.AckReq {
		t.Error("last packet: AckReq not set")
	}
}

func TestNakGoesBack(t *testing.T) {
	p := ldcp.Draft()
	s := stable(t, &p, 10)
	sendN(t, s, 0, 10)
	// Packets 0-2 arrived, 3 was lost: the NAK carries LSN 3000 and
	// acknowledges the three packets before the gap that no ACK covered.
	s.OnAck(us, ldcp.Ack{LSN: 3 * mss, Packets: 3, NAK: true})
	if s.Una() != 3*mss || s.Next() != 3*mss {
		t.Fatalf("after the NAK Una %d Next %d, want 3000 3000", s.Una(), s.Next())
	}
	wantWindow(t, s, 10.3) // eq. (2): 10 + 3*1/10
	pk := s.OnSend(2*us, mss, false)
	if pk.LSN != 3*mss || !pk.Retransmit || !pk.ECT {
		t.Errorf("retransmission %+v", pk)
	}
	if s.NAKs != 1 || s.Retransmits != 1 {
		t.Errorf("NAKs %d Retransmits %d, want 1 1", s.NAKs, s.Retransmits)
	}
	// A stale NAK (below Una) changes nothing.
	s.OnAck(3*us, ldcp.Ack{LSN: 2 * mss, NAK: true})
	if s.Next() != 4*mss || s.NAKs != 1 {
		t.Errorf("stale NAK moved Next to %d", s.Next())
	}
}

func TestTimeoutStable(t *testing.T) {
	p := ldcp.Draft()
	s := stable(t, &p, 10)
	sendN(t, s, 0, 10)
	s.OnAck(us, ack(mss, false))
	s.OnTimeout(100 * us)
	if s.Next() != mss || s.Timeouts != 1 {
		t.Errorf("Next %d Timeouts %d after a timeout", s.Next(), s.Timeouts)
	}
	wantWindow(t, s, 1)
	// A duplicate ACK from a receiver that holds more moves both ends on.
	s.OnAck(101*us, ldcp.Ack{LSN: 5 * mss})
	if s.Una() != 5*mss || s.Next() != 5*mss {
		t.Errorf("Una %d Next %d, want 5000 5000", s.Una(), s.Next())
	}
	wantWindow(t, s, 1) // an ACK of no new packet moves no window
	// Below one packet a timeout keeps the window.
	s = stable(t, &p, 0.25)
	s.OnSend(0, mss, false)
	s.OnTimeout(100 * us)
	wantWindow(t, s, 0.25)
}
