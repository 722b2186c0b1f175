// Package ldcp implements the host side of LDCP, the PFC-free low-delay
// control protocol of the Internet-Draft draft-dai-tsvwg-pfc-free-
// congestion-control-01 (Dai, Fu, Tan, April 2021):
//
//   - Sender: the window-based sender. In the stable stage (section 2.2)
//     it adjusts its window cw on every ACK, per-ACK window adjustment
//     (PAWA): cw + alpha/cw without ECE and cw - beta with ECE, eq. (1),
//     or n times that for an ACK covering n packets, eq. (2). Below one
//     packet it sends one packet every RTT/cw, with cw + gamma without
//     ECE and max(gamma, eta*cw) with ECE. A flow starts with the zero-RTT
//     bandwidth acquisition of sections 2.3 and 3.1: a window of one BDP
//     whose first-RTT packets go out not ECN-capable, so that a switch's
//     WRED drops them rather than queue them past K, the last of them
//     ECN-capable so that it reaches the receiver and reveals any loss;
//     the stable stage takes over on a loss (cw = packets acknowledged
//     before it, go-back-N) or when the whole initial window is
//     acknowledged (cw = IW).
//   - Receiver: in-order delivery by byte sequence number (the draft's
//     LSN), per-packet or delayed ACKs (at most m packets each), CE echoed
//     at once, a NAK for a gap.
//   - RateSender: the rate-based variant of section 3.2, additive increase
//     of alpha per RTT-probe response and a decrease of beta per CNP, the
//     window divided by the RTT as the rate.
//
// # Contract
//
// The state machines are clock-agnostic: every event method takes the
// current time now in picoseconds, and none reads a clock, sleeps or
// starts a goroutine. They allocate nothing after construction. A
// discrete-event simulator and an agent on real sockets drive them alike:
//
//	s, _ := ldcp.NewSender(&params, path)
//	// when the NIC could send for the flow:
//	if s.CanSend(now, size) {
//		pk := s.OnSend(now, size, last) // pk.LSN, pk.ECT, pk.AckReq
//		// send size bytes from pk.LSN, ECN-capable iff pk.ECT
//	} else if t := s.NextSendTime(now, size); t != ldcp.Never {
//		// wake at t (the sub-packet timer)
//	} // else wait for an ACK or the retransmission timer
//
//	r := ldcp.NewReceiver(&params)
//	// on a data packet:
//	acks, n := r.OnData(now, lsn, size, ce, ackReq)
//	for _, a := range acks[:n] { /* send a: LSN, Packets, ECE, NAK */ }
//
//	// back at the sender, on each ACK or NAK:
//	s.OnAck(now, a)
//	// on the caller's retransmission timer, when no ACK advanced Una:
//	s.OnTimeout(now)
//
// The Sender owns the flow's LSN space: Una is the oldest unacknowledged
// byte, Next the next byte to send, which a NAK or a timeout moves back
// (go-back-N); the caller maps LSNs to its data and says, with OnSend's
// last, when no data follows a packet for now. Sizes are payload bytes;
// the window's unit is Path.MSS bytes. The caller owns the retransmission
// timer and the NIC's serialisation; with cw >= 1 the window alone paces
// the flow (ACK clocking), below one packet NextSendTime gives the timer.
//
// A Sender or Receiver serves one flow and one goroutine; Params are
// shared read-only.
package ldcp
