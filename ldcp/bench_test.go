package ldcp_test

import (
	"testing"

	"github.com/p4rcm/p4rcm/ldcp"
)

// steadyStep is one packet's worth of a steady flow: a send, the
// receiver's ACKs for it, the sender taking them, one in five marked.
func steadyStep(s *ldcp.Sender, r *ldcp.Receiver, now int64, i int) {
	if !s.CanSend(now, mss) {
		_ = s.NextSendTime(now, mss)
	}
	pk := s.OnSend(now, mss, false)
	acks, n := r.OnData(now, pk.LSN, mss, i%5 == 0, pk.AckReq)
	for _, a := range acks[:n] {
		s.OnAck(now, a)
	}
}

// TestNoAllocation: the per-packet paths of the sender, the receiver and
// the rate sender allocate nothing, per-packet and delayed ACKs alike.
func TestNoAllocation(t *testing.T) {
	for _, name := range ldcp.PresetNames() {
		p, _ := ldcp.Preset(name)
		s := newSender(t, &p, path100G)
		rv := ldcp.NewReceiver(&p)
		i := 0
		if a := testing.AllocsPerRun(1000, func() {
			i++
			steadyStep(s, &rv, int64(i)*80*ns, i)
		}); a != 0 {
			t.Errorf("%s: %g allocations per packet", name, a)
		}
		rs, _ := ldcp.NewRateSender(&p, path100G)
		if a := testing.AllocsPerRun(1000, func() {
			i++
			now := int64(i) * us
			if rs.ProbeDue(now) {
				rs.OnProbeSent(now)
			}
			rs.OnProbeResponse(now+8*us, now)
			rs.OnCNP(now)
			_ = rs.Rate()
		}); a != 0 {
			t.Errorf("%s: rate sender: %g allocations per event", name, a)
		}
	}
}

// BenchmarkSteady is the per-packet cost of a flow: send, receive, ACK.
func BenchmarkSteady(b *testing.B) {
	for _, name := range ldcp.PresetNames() {
		b.Run(name, func(b *testing.B) {
			p, _ := ldcp.Preset(name)
			s := newSender(b, &p, path100G)
			rv := ldcp.NewReceiver(&p)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				i++
				steadyStep(s, &rv, int64(i)*80*ns, i)
			}
		})
	}
}

// BenchmarkOnAck is the sender's per-ACK window update alone.
func BenchmarkOnAck(b *testing.B) {
	p := ldcp.Draft()
	s := newSender(b, &p, path100G)
	ldcp.SetWindow(s, 50)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		pk := s.OnSend(int64(i), mss, false)
		s.OnAck(int64(i), ldcp.Ack{LSN: pk.LSN + mss, Packets: 1, ECE: i%7 == 0})
	}
}
