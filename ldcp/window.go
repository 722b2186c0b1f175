package ldcp

import "math"

// grow applies an ACK without ECE that covers n packets. With cw >= 1 it
// is eq. (1), or eq. (2) for n > 1: cw + n*alpha/cw. Below one packet it
// is the sub-packet rule cw + gamma, once per packet covered.
func (p *Params) grow(cw float64, n int) float64 {
	if cw >= 1 {
		return cw + float64(n)*p.Alpha/cw
	}
	return cw + float64(n)*p.Gamma
}

// shrink applies an ACK with ECE that covers n packets. With cw >= 1 it
// is eq. (1), or eq. (2) for n > 1: cw - n*beta, which may take the
// window below one packet but never below gamma. Below one packet it is
// the sub-packet rule max(gamma, eta*cw), once per packet covered.
func (p *Params) shrink(cw float64, n int) float64 {
	if cw >= 1 {
		return max(p.Gamma, cw-float64(n)*p.Beta)
	}
	for range n {
		cw = max(p.Gamma, p.Eta*cw)
	}
	return cw
}

// windows are the packet counts a sender derives from Params and Path.
type windows struct {
	iw  int     // initial window, packets (0: no fast start)
	max float64 // cap on cw, packets
}

func newWindows(p *Params, path *Path) windows {
	bdp := path.BDP()
	w := windows{max: max(1, p.MaxWindow*bdp)}
	if p.IW > 0 {
		w.iw = max(1, int(math.Ceil(p.IW*bdp-1e-9)))
	}
	return w
}
