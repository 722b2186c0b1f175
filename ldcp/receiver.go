package ldcp

// Receiver is the data receiver of one flow (section 2.2): it delivers
// data in LSN order, drops what arrives past a gap (go-back-N), and
// answers with ACKs that carry the LSN delivered so far, the number of
// packets they acknowledge, and the CE echo. With AckEvery m = 1 every
// packet gets its own ACK; with m > 1 one ACK covers up to m unmarked
// packets. A CE-marked packet is acknowledged at once, alone: the packets
// waiting before it get an ACK without ECE first, so that the sender
// learns exactly which packets were marked. The zero Receiver is not
// usable; make one with NewReceiver.
type Receiver struct {
	m        int
	expected int64 // next LSN expected: every byte below it delivered
	pending  int   // in-order packets not yet acknowledged
	nakAt    int64 // LSN of the last NAK
	nakSent  bool  // a NAK went out for nakAt and nothing arrived in order since

	// Counters for reports.
	Acks       int64 // ACKs and NAKs sent
	NAKs       int64
	OutOfOrder int64 // packets dropped past a gap
	Duplicates int64 // packets below the expected LSN
}

// NewReceiver returns the receiver of a flow whose first byte has LSN 0.
func NewReceiver(p *Params) Receiver {
	return Receiver{m: max(1, p.AckEvery)}
}

// Expected is the next LSN expected; every byte below it was delivered.
func (r *Receiver) Expected() int64 { return r.expected }

// Pending is the in-order packets delivered but not yet acknowledged.
func (r *Receiver) Pending() int { return r.pending }

// OnData takes a data packet of size payload bytes at LSN lsn arriving at
// now, CE-marked or not, with the sender's AckReq bit. It returns the
// ACKs to send now, in order: acks[:n], n from 0 to 2.
//
//   - In order and not marked: delivered; an ACK when m packets wait or
//     the packet asks for one.
//   - In order and CE-marked: delivered; an ACK for the packets waiting
//     before it, if any, then an ACK with ECE for it alone.
//   - Past a gap: dropped; a NAK for the expected LSN (covering the
//     packets waiting), once per gap. Its CE mark is not echoed: the
//     packet is sent again and is judged then.
//   - Below the expected LSN (a duplicate after a go-back): an ACK that
//     tells the sender where the receiver stands.
func (r *Receiver) OnData(now, lsn int64, size int, ce, ackReq bool) (acks [2]Ack, n int) {
	switch {
	case lsn == r.expected:
		r.expected += int64(size)
		r.nakSent = false
		if ce {
			if r.pending > 0 {
				acks[0] = Ack{LSN: lsn, Packets: r.pending}
				n = 1
			}
			acks[n] = Ack{LSN: r.expected, Packets: 1, ECE: true}
			n++
			r.pending = 0
			break
		}
		r.pending++
		if r.pending >= r.m || ackReq {
			acks[0] = r.flush()
			n = 1
		}
	case lsn > r.expected:
		r.OutOfOrder++
		if r.nakSent && r.nakAt == r.expected {
			return acks, 0
		}
		r.nakSent, r.nakAt = true, r.expected
		acks[0] = r.flush()
		acks[0].NAK = true
		r.NAKs++
		n = 1
	default:
		r.Duplicates++
		acks[0] = r.flush()
		n = 1
	}
	r.Acks += int64(n)
	return acks, n
}

// Flush returns an ACK for the packets waiting, if any: for a caller that
// bounds the delay of delayed ACKs with its own timer.
func (r *Receiver) Flush(now int64) (Ack, bool) {
	if r.pending == 0 {
		return Ack{}, false
	}
	r.Acks++
	return r.flush(), true
}

func (r *Receiver) flush() Ack {
	a := Ack{LSN: r.expected, Packets: r.pending}
	r.pending = 0
	return a
}
