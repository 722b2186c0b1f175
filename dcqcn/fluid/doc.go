// Package fluid solves the fluid model of DCQCN from section 5.1 of Zhu et
// al., "Congestion Control for Large-Scale RDMA Deployments" (SIGCOMM 2015),
// equations (5)-(11): N greedy flows sharing one bottleneck of capacity C,
// each flow's current rate R_C, target rate R_T and alpha evolving under ECN
// marks fed back with delay tau*. Simulate integrates the multi-flow system
// in time (the paper's Figures 10-12) and FixedPoint solves for its
// equilibrium (equation (10)).
//
// # The model
//
// Rates are in packets per second (packets of Params.PacketSize bytes, so
// that p is a per-packet probability), the queue q and the byte counter B in
// packets, times in seconds. p stands for p(t - tau*) and R_d for
// R_C(t - tau*) unless written otherwise.
//
//	(5)  p(q) = 0                                     q <= Kmin
//	          = (q - Kmin) / (Kmax - Kmin) * Pmax     Kmin < q <= Kmax
//	          = 1                                     q > Kmax
//	(6)  dq/dt = N R_C(t) - C
//	(7)  dalpha/dt = g/tau' * ((1 - (1-p)^(tau' R_d)) - alpha(t))
//	(8)  dR_T/dt = -(R_T(t) - R_C(t))/tau * (1 - (1-p)^(tau R_d))
//	             + R_AI R_d p (1-p)^(F B)      / ((1-p)^(-B) - 1)
//	             + R_AI R_d p (1-p)^(F T R_d)  / ((1-p)^(-T R_d) - 1)
//	(9)  dR_C/dt = -R_C(t) alpha(t)/(2 tau) * (1 - (1-p)^(tau R_d))
//	             + (R_T(t) - R_C(t))/2 * R_d p / ((1-p)^(-B) - 1)
//	             + (R_T(t) - R_C(t))/2 * R_d p / ((1-p)^(-T R_d) - 1)
//	(10) fixed point: R_C = C/N, with (7)-(9) set to zero
//	(11) dq/dt = sum_i R_C,i(t) - C, with (7)-(9) written for each flow i
//
// Reading the terms: 1 - (1-p)^(tau R_d) is the probability that a CNP
// interval tau holds a marked packet, i.e. brings a CNP, which sets
// R_T = R_C and cuts R_C by alpha/2; alpha follows the fraction of alpha
// intervals tau' that hold a mark. R_d p / ((1-p)^(-x) - 1) is the rate at
// which runs of x unmarked packets complete, i.e. how often the byte counter
// (x = B) or the timer (x = T R_d packets) expires; each expiry halves the
// gap R_T - R_C (fast recovery), and those that follow F unmarked periods,
// weighted by (1-p)^(F x), also raise R_T by R_AI (additive increase). The
// hyper-increase phase is not modelled, as in the paper.
//
// # Numerics
//
// As p -> 0 the increase terms are 0/0: R_d p / ((1-p)^(-x) - 1) tends to
// R_d/x (one expiry per x packets), and (1-p)^x rounds to 1 in float64 long
// before p reaches 0. All powers are therefore written with
// L = -log1p(-p) as exp(-x L), 1 - (1-p)^x as -expm1(-x L) and the
// increase terms as (R_d/x) (p/L) (x L / expm1(x L)), which are accurate
// for p = 0, for tiny p, and at p = 1 (where the increase terms vanish).
//
// Simulate uses classical RK4 with a fixed step and keeps q and every R_C,i
// of the last tau* in a ring buffer, interpolating linearly between steps.
// It clamps R_C and R_T to [0, line rate], alpha to [0, 1] and q to q >= 0
// after every step: the equations themselves bound none of them (without
// marks the additive-increase term raises R_T without limit), while a NIC
// never sends above its line rate and a queue cannot go negative. Flows
// start at line rate with R_T = line rate and alpha = 1, as DCQCN flows do;
// a flow that has not started sends nothing and is left out of (11).
//
// # What the model gives with the paper's settings
//
// With PaperParams(40e9) (1500 B packets) the fixed point has p = 0.117%
// and q = 27.7 KB for N = 2 and p = 0.903%, q = 181 KB for N = 10, both
// between Kmin and Kmax as the paper says. For N = 16 it needs p = 1.62%,
// above Pmax = 1%: no queue length marks that often
// (FixedPointResult.Saturated), and the delayed system does not settle.
// From N = 11 flows on, Simulate shows a limit cycle instead: the queue
// swings from empty to 240-260 KB, past Kmax where every packet is marked,
// every 1.4-1.7 ms, and the link averages 38.2-38.8 Gb/s. The
// paper's remark that p stays under 1% for "reasonable settings" thus holds
// in this model up to N = 10 flows at 40 Gb/s; as p at the fixed point
// grows roughly in proportion to the packet size, smaller packets move the
// limit up only a little (1000 B packets still give p = 1.09% at N = 16).
//
// # Units
//
// Params, FixedPointResult and Trace use natural units: rates in bits per
// second, sizes in bytes (1 KB = 1000 B, 1 MB = 10^6 B, as in the rest of
// p4rcm), times as float64 seconds.
package fluid
