// Package hpcc implements the sender of HPCC, high precision congestion
// control (Li et al., "HPCC: High Precision Congestion Control",
// SIGCOMM 2019), as the ns-3 RDMA simulator of that paper runs it
// (CC_MODE 3): every switch on the path writes its egress port's
// telemetry into each data packet (in-band network telemetry, INT: the
// time the packet left, the bytes the port had sent, the bytes queued
// behind it, the port's line rate), the receiver echoes the stack in its
// ACK, and the sender sets its rate from the most utilised hop:
//
//	u_j = txRate_j / B_j + min(qlen_j, qlen_j') / (B_j T)
//	U   = EWMA over the base RTT T of max_j u_j
//	R   = R_c / (U / eta) + R_AI
//
// once per RTT (a full update, which moves the reference rate R_c) and,
// with FastReact, on every ACK in between from the same R_c without
// moving it. MIThresh additive steps may come between multiplicative ones
// while U stays below eta; MultiRate keeps one R_c and U per hop and sends
// at the least of them.
//
// # Contract
//
// The sender is clock-agnostic: OnAck takes the times carried in the
// telemetry, none of its methods reads a clock, sleeps or starts a
// goroutine, and it allocates nothing after construction. The simulator
// and the host agents drive it alike; the window that HPCC pairs with its
// rate (W = B T scaled by R / B) is the caller's, from Rate and the BDP.
//
// # Telemetry encoding
//
// The ns-3 simulator packs each hop into 8 bytes: the time in whole
// nanoseconds (24 bits), the bytes sent in units of 128 x INT_MULTI bytes
// (20 bits), the queue in units of 80 x INT_MULTI bytes (17 bits). The
// sender reads Hop values through that encoding (Params.INTMulti), so
// that its rate estimates carry the same rounding as the reference's;
// wrap-around of the narrow fields is not modelled, the values being
// differences of 64-bit counters.
package hpcc
