package rcm

// CAM is CFR's content-addressable memory on one output queue (paper
// section 3.3): the 5-tuples of packets sampled as they pass, written
// cyclically. Flows that send more are sampled more, so the CAM holds the
// flows that load the port.
//
// The paper counts every flow in the CAM as harmful, at the root and in
// its CNs. Two readings are used instead, for two purposes (figures from
// Monte Carlo trials of the default 64-entry CAM, MinHits 4):
//
//   - Contributors (Flows): flows with at least MinHits entries, the
//     flows that load a congested port now. A root names them in its
//     CNs, as the paper's root names its CAM's flows, and the points
//     upstream slow them down. Of four flows sharing a port evenly each
//     is named every time; a flow with 1/20 of the port 40% of the time.
//   - Heavy hitters (Heavy): flows with at least MinHits entries and more
//     than twice the entries of an average other flow: the flows taking
//     more than their share. A root holds back these only, since slowing
//     some of several equal flows into its own bottleneck would only be
//     unfair, and the paper's Figure 6 has its root single out the burst
//     among the incast flows. A flow with half a port next to four with
//     an eighth each is one 99.5% of the time and each of the four almost
//     never; of four equal flows each is one 0.5% of the time.
//
// docs/rcm.md ("What CFR contributes") measures what each reading gives
// against the paper's.
type CAM struct {
	ids     []FlowID
	n       int // entries written, up to len(ids)
	pos     int // next entry to write
	every   uint32
	rng     uint32 // xorshift state
	written uint64
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
	if c.every == 1 {
		return true // the draw would always say yes; it feeds nothing else
	}
	c.rng ^= c.rng << 13
	c.rng ^= c.rng >> 17
	c.rng ^= c.rng << 5
	return c.rng%c.every == 0
}

// Add writes a sampled flow into the CAM, over its oldest entry.
func (c *CAM) Add(id FlowID) {
	c.written++
	c.ids[c.pos] = id
	if c.pos++; c.pos == len(c.ids) {
		c.pos = 0
	}
	c.n = min(c.n+1, len(c.ids))
}

// Entries are the CAM's entries, in no particular order; the slice is
// the CAM's own.
func (c *CAM) Entries() []FlowID { return c.ids[:c.n] }

// Written counts the entries ever written.
func (c *CAM) Written() uint64 { return c.written }

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

// Flows appends to dst (which it first empties) the CAM's contributors,
// in the order of their first entry.
func (c *CAM) Flows(dst []FlowID) []FlowID {
	dst = dst[:0]
	for i := 0; i < c.n; i++ {
		if id := c.ids[i]; first(c.ids[:i], id) && c.Hits(id) >= c.minHits {
			dst = append(dst, id)
		}
	}
	return dst
}

// Heavy appends to dst (which it first empties) the CAM's heavy hitters,
// in the order of their first entry.
func (c *CAM) Heavy(dst []FlowID) []FlowID {
	dst = dst[:0]
	var hits [MaxCAMDepth]int // per entry: its flow's hits, on the flow's first entry only
	flows := 0
	for i := 0; i < c.n; i++ {
		if first(c.ids[:i], c.ids[i]) {
			hits[i] = c.Hits(c.ids[i])
			flows++
		}
	}
	if flows < 2 {
		return dst // a lone flow has no one to take a share from
	}
	for i := 0; i < c.n; i++ {
		// h > 2 (n-h)/(flows-1): twice the mean of the others.
		if h := hits[i]; h >= c.minHits && h*(flows-1) > 2*(c.n-h) {
			dst = append(dst, c.ids[i])
		}
	}
	return dst
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

// Any reports whether some flow is in the set at now.
func (r *Recent) Any(now int64) bool {
	for _, u := range r.until {
		if now <= u {
			return true
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
