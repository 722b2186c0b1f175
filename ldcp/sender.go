package ldcp

import "math"

// Never is the send time of a sender that only an ACK or a timeout can
// unblock.
const Never = math.MaxInt64

// Stage is where a window sender is in its flow's life.
type Stage uint8

const (
	// FastStart is the zero-RTT bandwidth acquisition of section 2.3: the
	// window is IW and the first IW packets go out not ECN-capable.
	FastStart Stage = iota + 1
	// Stable is the congestion-avoidance stage of section 2.2 (PAWA).
	Stable
)

func (s Stage) String() string {
	switch s {
	case FastStart:
		return "fast-start"
	case Stable:
		return "stable"
	}
	return "invalid"
}

// Packet is what the sender decided about one data packet it sends.
type Packet struct {
	// LSN is the byte sequence number of the packet's first payload byte.
	LSN int64
	// ECT says the packet goes out ECN-capable (ECT(0)); otherwise its ECN
	// field is Not-ECT and a WRED queue at K or more drops it (eq. 3).
	ECT bool
	// AckReq asks the receiver to acknowledge the packet at once (the BTH
	// AckReq bit): set on the last fast-start packet, on a packet marked
	// last, and whenever the window holds fewer than AckEvery packets, so
	// that a delayed-ACK receiver never waits for packets that cannot come.
	AckReq bool
	// FirstRTT marks one of fast start's first IW packets (the last of
	// them included, although it is ECN-capable).
	FirstRTT bool
	// Retransmit says the bytes were sent before (go-back-N).
	Retransmit bool
}

// Ack is one acknowledgement, as the Receiver makes it and the Sender
// takes it. How it is carried (BTH PSN and syndrome, or the draft's
// customised header) is the caller's business.
type Ack struct {
	// LSN is cumulative: every byte below it has arrived in order.
	LSN int64
	// Packets is how many in-order data packets the ACK acknowledges for
	// the first time: n of eq. (2), 1 for a per-packet ACK, 0 for the
	// repeat ACK of a duplicate.
	Packets int
	// ECE echoes a CE mark on the packet the ACK was sent for.
	ECE bool
	// NAK says data at LSN is missing: the sender goes back to it.
	NAK bool
}

// Sender is the window-based LDCP sender of one flow (section 2 and
// section 3.1 of the draft). It owns the flow's LSN space: the caller asks
// CanSend or NextSendTime, then tells OnSend the packet it sends, which
// returns the packet's LSN and marks. The zero Sender is not usable; make
// one with NewSender.
type Sender struct {
	p   *Params
	w   windows
	mss float64
	rtt float64 // base RTT, ps, of the sub-packet timer

	cw    float64 // congestion window, packets
	stage Stage

	una, nxt, high int64 // oldest unacknowledged, next to send, highest sent (LSN bytes)
	lastSend       int64
	sent           bool

	// Fast start: first-RTT packets sent, the LSN after the last of them
	// (-1 until it is sent), and packets acknowledged so far.
	fsSent  int
	fsEnd   int64
	fsAcked int

	// Counters for reports.
	Acks        int64 // ACKs and NAKs taken
	ECEs        int64 // of them with ECE
	NAKs        int64 // NAKs that sent the flow back (go-back-N)
	Timeouts    int64
	Retransmits int64 // packets sent again
}

// NewSender returns the sender of a flow on the given path, in fast start
// with a window of IW, or in the stable stage with a window of one packet
// when IW is 0. p must outlive the sender.
func NewSender(p *Params, path Path) (Sender, error) {
	if err := p.Validate(); err != nil {
		return Sender{}, err
	}
	if err := path.Validate(); err != nil {
		return Sender{}, err
	}
	s := Sender{p: p, w: newWindows(p, &path), mss: float64(path.MSS), rtt: float64(path.RTT)}
	s.start()
	return s, nil
}

// start enters fast start at the current LSN, or the stable stage with
// one packet without fast start.
func (s *Sender) start() {
	s.fsSent, s.fsEnd, s.fsAcked = 0, -1, 0
	if s.w.iw == 0 {
		s.stage, s.cw = Stable, 1
		return
	}
	s.stage, s.cw = FastStart, float64(s.w.iw)
}

// Restart begins a new fast start, as for a new flow, and reports whether
// it did: only with nothing in flight and fast start configured. The
// draft starts fast only at a flow's beginning; an agent may call this
// for a queue pair that has been idle for long.
func (s *Sender) Restart() bool {
	if s.nxt != s.una || s.w.iw == 0 {
		return false
	}
	s.start()
	return true
}

// Window is cw, packets.
func (s *Sender) Window() float64 { return s.cw }

// Stage is the sender's stage.
func (s *Sender) Stage() Stage { return s.stage }

// IW is the initial window, packets: IW BDPs of the path, rounded up.
func (s *Sender) IW() int { return s.w.iw }

// Una is the LSN of the oldest unacknowledged byte.
func (s *Sender) Una() int64 { return s.una }

// Next is the LSN of the next byte to send.
func (s *Sender) Next() int64 { return s.nxt }

// InFlight is the bytes sent and not yet acknowledged.
func (s *Sender) InFlight() int64 { return s.nxt - s.una }

// subPacket reports whether the window is below one packet: at most one
// packet in flight, sent by the RTT/cw timer.
func (s *Sender) subPacket() bool { return s.cw < 1 }

// tick is the sub-packet timer's period, RTT/cw.
func (s *Sender) tick() int64 { return int64(s.rtt / s.cw) }

// fits reports whether size more bytes fit in the window.
func (s *Sender) fits(size int) bool {
	return float64(s.nxt-s.una+int64(size)) <= s.cw*s.mss
}

// CanSend reports whether a packet of size payload bytes may go at now.
// With cw >= 1 the bytes in flight, the packet's included, must fit in
// cw*MSS; with cw < 1 nothing may be in flight and RTT/cw must have
// passed since the last packet.
func (s *Sender) CanSend(now int64, size int) bool {
	if s.subPacket() {
		return s.nxt == s.una && (!s.sent || now-s.lastSend >= s.tick())
	}
	return s.fits(size)
}

// NextSendTime is the earliest time from now at which a packet of size
// bytes may go if no ACK arrives first: now if it may go at once, the
// sub-packet timer's expiry, or Never when it waits for an ACK.
func (s *Sender) NextSendTime(now int64, size int) int64 {
	if s.CanSend(now, size) {
		return now
	}
	if s.subPacket() && s.nxt == s.una {
		return s.lastSend + s.tick()
	}
	return Never
}

// OnSend records a packet of size payload bytes sent at now, from LSN
// Next(), and returns its LSN and marks. last says no data follows it for
// now (the end of a message): it ends fast start if fast start has not
// reached IW packets, and asks for an ACK. OnSend does not check the
// window; the caller asks CanSend first.
func (s *Sender) OnSend(now int64, size int, last bool) Packet {
	pk := Packet{LSN: s.nxt, ECT: true, Retransmit: s.nxt < s.high}
	if pk.Retransmit {
		s.Retransmits++
	}
	s.nxt += int64(size)
	s.high = max(s.high, s.nxt)
	s.lastSend, s.sent = now, true
	if s.stage == FastStart && s.fsEnd < 0 && !pk.Retransmit {
		// A first-RTT packet: not ECN-capable, so that WRED drops it
		// rather than queue it, except the last one, which must get
		// through for the receiver to see any loss before it.
		s.fsSent++
		pk.FirstRTT = true
		pk.ECT = false
		if s.fsSent == s.w.iw || last {
			s.fsEnd = s.nxt
			pk.ECT, pk.AckReq = true, true
		}
	}
	if last || s.cw < float64(s.p.AckEvery) {
		pk.AckReq = true
	}
	return pk
}

// OnAck takes an ACK or NAK arriving at now. In the stable stage the
// window follows eq. (1) or (2), or the sub-packet rule below one packet,
// for the a.Packets packets it acknowledges. In fast start it counts the
// packets acknowledged; a NAK moves the flow to the stable stage with that
// count as its window, and the ACK that covers the last first-RTT packet
// moves it there with a window of IW. A NAK sends the flow back to its LSN.
func (s *Sender) OnAck(now int64, a Ack) {
	s.Acks++
	if a.ECE {
		s.ECEs++
	}
	if a.LSN > s.una {
		s.una = a.LSN
		// The receiver may hold more than was sent since a go-back.
		s.nxt = max(s.nxt, s.una)
		s.high = max(s.high, s.una)
	}
	n := max(a.Packets, 0)
	if s.stage == FastStart {
		s.fsAcked += n
		switch {
		case a.NAK:
			// Loss in fast start: the packets that got through in order
			// are the estimate of the window.
			s.stage, s.cw = Stable, min(s.w.max, float64(max(1, s.fsAcked)))
		case s.fsEnd >= 0 && s.una >= s.fsEnd:
			// The whole IW arrived: the stable stage starts at IW. Of the
			// packets this ACK covers, only those past the first-RTT ones
			// and the last first-RTT one could carry a mark.
			s.stage, s.cw = Stable, float64(s.w.iw)
			k := s.fsAcked - s.fsSent
			if a.ECE {
				k = max(k, 1)
			}
			if k > 0 {
				s.update(k, a.ECE)
			}
		}
	} else if n > 0 {
		s.update(n, a.ECE)
	}
	if a.NAK && a.LSN >= s.una && a.LSN < s.nxt {
		s.nxt = a.LSN
		s.NAKs++
	}
}

// update applies n packets' worth of PAWA.
func (s *Sender) update(n int, ece bool) {
	if ece {
		s.cw = s.p.shrink(s.cw, n)
	} else {
		s.cw = min(s.w.max, s.p.grow(s.cw, n))
	}
}

// OnTimeout takes the expiry of the caller's retransmission timer at now:
// the flow goes back to its oldest unacknowledged byte. In fast start it
// moves to the stable stage with the packets acknowledged so far as its
// window, as for a NAK; in the stable stage the window drops to one
// packet if it was larger (the draft has no timeout rule: this follows
// TCP's loss window).
func (s *Sender) OnTimeout(now int64) {
	s.Timeouts++
	if s.stage == FastStart {
		s.stage, s.cw = Stable, min(s.w.max, float64(max(1, s.fsAcked)))
	} else {
		s.cw = min(s.cw, 1)
	}
	s.nxt = s.una
}
