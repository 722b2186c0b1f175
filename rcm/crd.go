package rcm

import "math"

// Detector is CRD's congestion point on one queue (paper section 3.2):
// it samples the queue every so many bytes that arrive and computes
// F_b = Q_off + w_q Q_delta (eq. 1), where Q_off is the queue beyond the
// equilibrium Q_eq and Q_delta its growth since the last sample. A positive
// F_b means the queue is congested. The sampling interval shrinks as the
// degree grows, like QCN's.
type Detector struct {
	qeq, wq       float64
	fbMax         float64
	sample, least float64
	next          float64 // bytes until the next sample
	last          float64 // queue length at the last sample
	// Fb is the last degree computed; Q its quantised value (0..FbMax,
	// 0 when F_b <= 0).
	Fb float64
	Q  uint8
}

// NewDetector makes a detector for a queue on a port of the given rate.
func NewDetector(p *Params, rate float64) Detector {
	s := rate / p.RefRate
	d := Detector{qeq: p.QEq * s, wq: p.Wq, sample: p.SampleBytes * s, least: p.MinSampleBytes * s}
	// The largest degree: a queue at twice Q_eq that grew by Q_eq since
	// the last sample, as QCN scales its feedback.
	d.fbMax = d.qeq * (1 + 2*d.wq)
	d.next = d.sample
	return d
}

// QEq is the detector's equilibrium queue, bytes.
func (d *Detector) QEq() float64 { return d.qeq }

// Congested reports whether the last sample found congestion.
func (d *Detector) Congested() bool { return d.Fb > 0 }

// Observe counts bytes arriving at the queue, which then holds qlen bytes,
// and takes a sample when the interval is up; it reports whether it did.
func (d *Detector) Observe(bytes, qlen float64) bool {
	d.next -= bytes
	if d.next > 0 {
		return false
	}
	d.Fb = (qlen - d.qeq) + d.wq*(qlen-d.last)
	d.last = qlen
	d.Q = Quantise(d.Fb, d.fbMax)
	// From SampleBytes at no congestion down to MinSampleBytes at FbMax.
	d.next = d.sample - (d.sample-d.least)*float64(d.Q)/FbMax
	return true
}

// Quantise maps a degree onto 0..FbMax, rounding up so that any congestion
// counts.
func Quantise(fb, fbMax float64) uint8 {
	if fb <= 0 {
		return 0
	}
	q := math.Ceil(fb / fbMax * FbMax)
	if q > FbMax {
		return FbMax
	}
	return uint8(q)
}

// Combine is eq. 2: the degree a port reports upstream, or compares for
// SAR, from its own and its downstream neighbour's.
func Combine(local, remote uint8, w float64) uint8 {
	return uint8(math.Round((1-w)*float64(local) + w*float64(remote)))
}
