// Package flow describes a flow: one message between two hosts, with its
// size, start time and traffic class. The simulator's workloads make
// flows and the host agents send them; this package holds only the
// description, so that neither depends on the other.
package flow

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
