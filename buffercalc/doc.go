// Package buffercalc sizes the buffer thresholds of a shared-buffer switch
// carrying lossless RoCEv2 traffic, after section 4 ("Buffer settings") of
// the DCQCN paper (Zhu et al., "Congestion Control for Large-Scale RDMA
// Deployments", SIGCOMM 2015). The simulator and the controller call it to
// derive each port's PFC and ECN thresholds; p4ctl buffer prints it.
//
// # Quantities
//
// For a switch with B bytes of shared buffer, n ports and p lossless
// priorities per port (the paper takes all 8):
//
//	t_flight  PFC headroom per port per priority (Link.Headroom)
//	t_PFC <= (B - p n t_flight) / (p n)                static XOFF (Buffer.Static)
//	XON    = t_PFC - 2 MTU                             RESUME
//	t_ECN  <  t_PFC / n                                static ECN bound
//	t_PFC  = beta (B - p n t_flight - s) / p           dynamic XOFF, s bytes in use
//	t_ECN  <  beta (B - p n t_flight) / (p n (beta+1)) dynamic ECN bound
//
// The ECN bounds keep marking ahead of PAUSE in the worst case: one ingress
// queue feeds all n egress queues, so it holds n t_ECN when they all reach
// t_ECN, and t_PFC must exceed that. A bound under one MTU is infeasible:
// no marking threshold below a packet's size can work.
//
// # Conventions
//
// Sizes are bytes, SI prefixes decimal (KB = 1000 B) and IEC prefixes binary
// (KiB = 1024 B); rates are bits per second. Bounds print rounded down to
// 0.01 KB so that a threshold set to the printed figure stays under the
// bound, which is how the paper prints them. With B = 12 MB read as
// 12,000,000 B the paper's figures come out exactly: t_PFC <= 24.47 KB and,
// with beta = 8, t_ECN < 21.75 KB.
//
// # Where this differs from the paper's text
//
// The static ECN bound. The paper prints t_ECN <= 0.85 KB; t_PFC / n with its
// own t_PFC = 24.475 KB and n = 32 gives 0.76 KB, and 0.85 KB would need
// t_PFC = 27.2 KB. No consistent reading of the units reproduces both
// figures: 12 MiB with t_flight = 22.4 KiB gives t_PFC = 25.6 KiB and
// t_ECN = 0.80 KiB (0.82 KB); 12 MiB with 22.4 KB gives 26.75 KB and
// 0.836 KB. This package prints what the formula gives,
// 0.76 KB, and flags it infeasible, which is the paper's conclusion either
// way.
//
// The dynamic ECN bound. The paper's text says s <= n t_ECN just before ECN
// triggers, which would give t_ECN < beta (B - 8 n t_flight) / (n (8 + beta)),
// 97.9 KB for beta = 8. Its printed 21.75 KB follows instead from
// s = 8 n t_ECN: all 8 priorities' egress queues of all n ports at t_ECN.
// That is the worst case the formula above encodes, and the one used here.
//
// The headroom. The paper takes t_flight = 22.4 KB "following guidelines"
// (Cisco's PFC white paper) for 40 Gb/s and 1500 B MTU without listing the
// terms. Link.Headroom itemises them after the IEEE 802.1Qbb delay model:
// the frame this port is sending when it decides to pause (MTU + 42 B on the
// wire), the PAUSE frame (84 B on the wire), the cable both ways, the PHY/MAC
// interface delay at both ends (24,576 bit times each at 40 Gb/s), the peer's
// PAUSE response time (IEEE 802.3 annex 31B: 118 quanta of 512 bit times at
// 40 Gb/s) and the frame the peer has begun (MTU + 42 B). These sum to
// 16,864 B plus 50 B per metre of cable at 40 Gb/s (5 ns/m each way). The
// term the paper leaves unstated is the cable length: 22.4 KB corresponds to
// 110.7 m; the default 100 m gives 21.86 KB. The trident2 preset uses the
// paper's 22.4 KB as given, and shows the model beside it.
package buffercalc
