// Package workload makes the flows a simulation runs: flow-size
// distributions (CDF files, built-in or the user's), Poisson arrivals at a
// load, incast, hot spot, and explicit flow files in the ns-3 RDMA
// simulator's format.
package workload

import "github.com/p4rcm/p4rcm/flow"

// Flow is one message from Src to Dst, both host node IDs (flow.Flow).
type Flow = flow.Flow
