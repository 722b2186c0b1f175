package rcm

// Pins is SAR's table of detoured flows (paper section 3.4): once SAR sends
// a flow to another equal-cost port, the flow's later packets must follow,
// or they would arrive out of order. It is a fixed-size table indexed by
// the flow's hash; a collision replaces the older entry (a flow then goes
// back to its ECMP port, which costs at most one reordering), so it never
// grows and a lookup is one probe.
type Pins struct {
	slots []pin
	used  []uint64 // a bit per slot in use: most lookups stop at it
	idle  int64
	n     int
}

type pin struct {
	hash uint32
	port int16
	used bool
	last int64
}

// NewPins makes a table of 2^bits entries; pins expire after idle.
func NewPins(bits uint, idle int64) Pins {
	return Pins{slots: make([]pin, 1<<bits), used: make([]uint64, max(1, (1<<bits)/64)), idle: idle}
}

// Len is the number of live pins (some may have expired unnoticed).
func (t *Pins) Len() int { return t.n }

// Lookup returns the pinned port of a flow, refreshing it, or -1.
func (t *Pins) Lookup(now int64, hash uint32) int {
	i := hash & uint32(len(t.slots)-1)
	if t.used[i/64]&(1<<(i%64)) == 0 {
		return -1
	}
	s := &t.slots[i]
	if s.hash != hash {
		return -1
	}
	if now-s.last > t.idle {
		s.used = false
		t.used[i/64] &^= 1 << (i % 64)
		t.n--
		return -1
	}
	s.last = now
	return int(s.port)
}

// Pin sends a flow's packets to port from now on.
func (t *Pins) Pin(now int64, hash uint32, port int) {
	i := hash & uint32(len(t.slots)-1)
	s := &t.slots[i]
	if !s.used {
		t.n++
		t.used[i/64] |= 1 << (i % 64)
	}
	*s = pin{hash: hash, port: int16(port), used: true, last: now}
}
