package p4switch

import (
	"runtime"
	"sync"
)

// gcFloorBytes is the heap a switch process holds in reserve so that Go's
// collector runs no more often than once per that many bytes allocated
// on top of what GOGC allows. A switch's live heap is small (about 10 MB
// with a program's tables filled), and with GOGC=100 alone the collector
// ran again each time about that much more was allocated: a controller's
// batches of 1,000 table entries, decoded into protobuf messages that
// are garbage once applied, set off a collection every few requests,
// each marking the whole live heap, which came to a fifth of the
// switch's CPU under a stream of batched writes. The reserve is never
// written, so it takes no resident memory of its own; what it costs is
// the garbage it lets build up between collections, at most
// gcFloorBytes more than GOGC alone would. Tables grown to hundreds of
// MB make it small beside them, and the collector paces by GOGC as in
// any Go program.
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
