package p4switch

import (
	"runtime"
	"sync"
)

// gcFloorBytes is the heap a switch process holds in reserve so that Go's
// collector runs no more often than once per that many bytes allocated
// beyond its live data. A switch's live heap is small (tens of MB, most
// of it the program, the tables' state and gopacket's tables), and with
// GOGC=100 the collector ran every time that much was allocated again:
// a controller's batch of 1,000 table entries, decoded into protobuf
// messages that are garbage a moment later, set off a collection every
// few requests, each marking the whole live heap, which was a fifth of
// the switch's CPU under a stream of batched writes and as much again in
// latency. The reserve is never written, so it takes no resident memory
// of its own; what it costs is the garbage it lets accumulate between
// collections, at most gcFloorBytes more than GOGC alone would. Tables
// grown to hundreds of MB outgrow it, and the collector paces by GOGC
// as in any Go program.
const gcFloorBytes = 32 << 20

var (
	gcFloorOnce sync.Once
	// gcFloor is the reserve: pointer-free, so the collector marks it
	// and never scans it.
	gcFloor []byte
)

// raiseGCFloor allocates the reserve, once per process (a process may run
// many switches, and tests run the command many times in one).
func raiseGCFloor() {
	gcFloorOnce.Do(func() {
		gcFloor = make([]byte, gcFloorBytes)
		runtime.KeepAlive(gcFloor)
	})
}
