// Package workload makes the flows a simulation runs: flow-size
// distributions (CDF files, built-in or the user's), Poisson arrivals at a
// load, incast, hot spot, and explicit flow files in the ns-3 RDMA
// simulator's format.
package workload

// Flow is one message from Src to Dst, both host node IDs.
type Flow struct {
	ID       int
	Src, Dst int
	Size     int64 // bytes of payload
	Start    int64 // picoseconds from the start of the simulation
	Priority int   // traffic class (PFC priority), 0..7
	// DstPort is the destination UDP port; 0 lets the simulator choose.
	DstPort int
	// Class labels the flow for reports: "background", "hot", "incast",
	// "burst", "victim", ...; empty for plain flows.
	Class string
}
