package rcm

// CAM is CFR's content-addressable memory on one output queue (paper
// section 3.3): the 5-tuples of packets sampled periodically as they leave,
// written cyclically. Flows that send more are sampled more, so the CAM
// holds the flows that load the port.
//
// The paper counts every flow in the CAM as harmful. With a few dozen
// entries that names nearly every flow through a busy port (a flow with an
// eighth of the port is in a 16-entry CAM 88% of the time), and RCC then
// has nothing to tell apart. Harmful here are the port's heavy hitters: a
// flow with at least MinHits entries and more than half as many as the
// flow with the most. In Monte Carlo trials of a 16-entry CAM, a flow with
// half a port next to four with an eighth each is harmful every time and
// each of the four 12% of the time; of four equal flows, each is harmful
// 65% of the time (which is why CN receivers keep the flows named by the
// CNs of the last CNHold, see Recent).
type CAM struct {
	ids     []FlowID
	n       int // entries written, up to len(ids)
	pos     int // next entry to write
	every   uint32
	rng     uint32 // xorshift state
	minHits int
}

// NewCAM makes an empty CAM; seed (any value) seeds its sampling.
func NewCAM(p *Params, seed uint32) CAM {
	return CAM{ids: make([]FlowID, p.CAMDepth), every: uint32(p.CFRSampleEvery), rng: seed | 1, minHits: p.CAMMinHits}
}

// Due reports whether a packet leaving the queue is to be sampled with
// Add: each is, with probability 1/CFRSampleEvery. (Split in two so that
// the caller builds the 5-tuple of sampled packets only.) The draw is
// random, not every Nth packet: flows that reach the port from two inputs
// in strict alternation would otherwise alias, one of them never sampled.
func (c *CAM) Due() bool {
	c.rng ^= c.rng << 13
	c.rng ^= c.rng >> 17
	c.rng ^= c.rng << 5
	return c.rng%c.every == 0
}

// Add writes a sampled flow into the CAM, over its oldest entry.
func (c *CAM) Add(id FlowID) {
	c.ids[c.pos] = id
	c.pos = (c.pos + 1) % len(c.ids)
	c.n = min(c.n+1, len(c.ids))
}

// Reset empties the CAM, to measure afresh.
func (c *CAM) Reset() { c.n, c.pos = 0, 0 }

// Hits counts the entries holding id.
func (c *CAM) Hits(id FlowID) int {
	h := 0
	for i := 0; i < c.n; i++ {
		if c.ids[i] == id {
			h++
		}
	}
	return h
}

// Heavy appends to dst (which it first empties) the CAM's harmful flows,
// in the order of their first entry, and returns it with the fraction of
// the entries they hold: their share of the packets that left lately.
func (c *CAM) Heavy(dst []FlowID) ([]FlowID, float64) {
	dst = dst[:0]
	var hits [64]int // per entry: the hits of its flow, counted once per flow
	most := 0
	for i := 0; i < c.n; i++ {
		if first(c.ids[:i], c.ids[i]) {
			hits[i] = c.Hits(c.ids[i])
			most = max(most, hits[i])
		}
	}
	held := 0
	for i := 0; i < c.n; i++ {
		if h := hits[i]; h >= c.minHits && 2*h > most {
			dst = append(dst, c.ids[i])
			held += h
		}
	}
	if c.n == 0 {
		return dst, 0
	}
	return dst, float64(held) / float64(c.n)
}

// Share is the fraction of the CAM's entries that belong to the flows in
// set (0 when the CAM is empty).
func (c *CAM) Share(set []FlowID) float64 {
	if c.n == 0 {
		return 0
	}
	hits := 0
	for i := 0; i < c.n; i++ {
		if Contains(set, c.ids[i]) {
			hits++
		}
	}
	return float64(hits) / float64(c.n)
}

// first reports whether id is not among ids.
func first(ids []FlowID, id FlowID) bool { return !Contains(ids, id) }

// Contains reports whether id is in ids.
func Contains(ids []FlowID, id FlowID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Recent is a small set of flows that each stay in it for a while after
// they were last added: the harmful flows the CNs from downstream named
// lately. A CN names the root's heavy hitters at one instant; several CNs
// in a row together name each flow that keeps loading the root.
type Recent struct {
	ids   []FlowID
	until []int64
	cap   int
}

// NewRecent makes an empty set of at most n flows.
func NewRecent(n int) Recent { return Recent{cap: n} }

// Add puts ids in the set until the given time. When the set is full, a
// new flow replaces the one that expires first.
func (r *Recent) Add(ids []FlowID, until int64) {
	for _, id := range ids {
		i := 0
		for i < len(r.ids) && r.ids[i] != id {
			i++
		}
		switch {
		case i < len(r.ids):
		case len(r.ids) < r.cap:
			r.ids = append(r.ids, id)
			r.until = append(r.until, 0)
		default:
			i = 0
			for j := range r.until {
				if r.until[j] < r.until[i] {
					i = j
				}
			}
			r.ids[i] = id
		}
		r.until[i] = until
	}
}

// Contains reports whether id is in the set at now.
func (r *Recent) Contains(now int64, id FlowID) bool {
	for i, x := range r.ids {
		if x == id {
			return now <= r.until[i]
		}
	}
	return false
}

// Live appends to dst (which it first empties) the flows in the set at now.
func (r *Recent) Live(now int64, dst []FlowID) []FlowID {
	dst = dst[:0]
	for i, x := range r.ids {
		if now <= r.until[i] {
			dst = append(dst, x)
		}
	}
	return dst
}

// Clear empties the set.
func (r *Recent) Clear() { r.ids, r.until = r.ids[:0], r.until[:0] }
