package rcm

// CAM is CFR's content-addressable memory on one output queue (paper
// section 3.3): the 5-tuples of packets sampled periodically as they leave,
// written cyclically. Flows that send more are sampled more, so the CAM
// holds the flows that load the port.
type CAM struct {
	ids     []FlowID
	n       int // entries written, up to len(ids)
	pos     int // next entry to write
	every   int
	count   int
	minHits int
}

// NewCAM makes an empty CAM.
func NewCAM(p *Params) CAM {
	return CAM{ids: make([]FlowID, p.CAMDepth), every: p.CFRSampleEvery, minHits: p.CAMMinHits}
}

// Observe counts a packet of flow id leaving the queue, sampling every
// CFRSampleEvery-th into the CAM.
func (c *CAM) Observe(id FlowID) {
	c.count++
	if c.count < c.every {
		return
	}
	c.count = 0
	c.ids[c.pos] = id
	c.pos = (c.pos + 1) % len(c.ids)
	c.n = min(c.n+1, len(c.ids))
}

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

// Harmful reports whether id holds enough entries to count as harmful.
func (c *CAM) Harmful(id FlowID) bool { return c.Hits(id) >= c.minHits }

// Flows appends to dst the distinct flows the CAM counts as harmful, in the
// order of their first entry, for a congestion notification.
func (c *CAM) Flows(dst []FlowID) []FlowID {
	for i := 0; i < c.n; i++ {
		id := c.ids[i]
		seen := false
		for _, d := range dst {
			if d == id {
				seen = true
				break
			}
		}
		if !seen && c.Harmful(id) {
			dst = append(dst, id)
		}
	}
	return dst
}
