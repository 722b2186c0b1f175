package fluid

import (
	"fmt"
	"math"
)

// Params are the constants of the fluid model (Table 2 of the paper) in
// natural units: rates in bits per second, sizes in bytes (1 KB = 1000 B,
// 1 MB = 10^6 B, as elsewhere in p4rcm), times in seconds as float64. The
// solver converts them to packets of PacketSize bytes, the unit in which the
// marking probability is a per-packet probability.
type Params struct {
	// LineRate is the NIC rate in bits/s: a flow starts at it, and the
	// solver keeps R_C and R_T within [0, LineRate].
	LineRate float64
	// Capacity is C, the bottleneck link's rate in bits/s.
	Capacity float64
	// PacketSize is the MTU-sized packet in bytes that rates, queue and
	// byte counter are counted in.
	PacketSize float64

	// Kmin, Kmax (bytes) and Pmax are the RED/ECN marking curve of
	// equation (5). Kmin == Kmax gives DCTCP-like cut-off marking.
	Kmin, Kmax float64
	Pmax       float64

	// G is the alpha gain g of equation (7).
	G float64
	// RAI is the additive-increase step R_AI in bits/s.
	RAI float64
	// ByteCounter is B, the bytes sent between byte-counter rate
	// increases.
	ByteCounter float64
	// Timer is T, the rate-increase timer, in seconds.
	Timer float64
	// F is the number of fast-recovery steps before additive increase.
	F int

	// Tau is tau, the NP's CNP generation interval, in seconds.
	Tau float64
	// TauPrime is tau', the alpha update interval (K in section 3), in
	// seconds.
	TauPrime float64
	// TauStar is tau*, the control-loop delay (feedback delay), in seconds.
	// Zero is allowed and removes the delay.
	TauStar float64
}

// PaperParams returns the paper's settings (section 5.2) with the line rate
// and the bottleneck capacity both set to lineRate (bits/s): Kmin 5 KB,
// Kmax 200 KB, Pmax 1%, g = 1/256, R_AI 40 Mb/s, B 10 MB, T 55 us, F 5,
// tau 50 us, tau' 55 us, tau* 50 us and 1500 B packets (the MTU the paper
// assumes in section 3.3). The paper's own runs use lineRate = 40e9.
func PaperParams(lineRate float64) Params {
	return Params{
		LineRate:    lineRate,
		Capacity:    lineRate,
		PacketSize:  1500,
		Kmin:        5e3,
		Kmax:        200e3,
		Pmax:        0.01,
		G:           1.0 / 256,
		RAI:         40e6,
		ByteCounter: 10e6,
		Timer:       55e-6,
		F:           5,
		Tau:         50e-6,
		TauPrime:    55e-6,
		TauStar:     50e-6,
	}
}

// Validate reports the first setting that makes the model meaningless.
func (p Params) Validate() error {
	positive := []struct {
		name string
		v    float64
	}{
		{"LineRate", p.LineRate}, {"Capacity", p.Capacity}, {"PacketSize", p.PacketSize},
		{"Pmax", p.Pmax}, {"G", p.G}, {"RAI", p.RAI}, {"ByteCounter", p.ByteCounter},
		{"Timer", p.Timer}, {"Tau", p.Tau}, {"TauPrime", p.TauPrime},
	}
	for _, f := range positive {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("fluid: %s = %g, want a finite value > 0", f.name, f.v)
		}
	}
	nonNegative := []struct {
		name string
		v    float64
	}{{"Kmin", p.Kmin}, {"Kmax", p.Kmax}, {"TauStar", p.TauStar}}
	for _, f := range nonNegative {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("fluid: %s = %g, want a finite value >= 0", f.name, f.v)
		}
	}
	switch {
	case p.Kmax < p.Kmin:
		return fmt.Errorf("fluid: Kmax = %g B is below Kmin = %g B", p.Kmax, p.Kmin)
	case p.Pmax > 1:
		return fmt.Errorf("fluid: Pmax = %g is not a probability", p.Pmax)
	case p.G > 1:
		return fmt.Errorf("fluid: G = %g, want 0 < g <= 1", p.G)
	case p.F < 0:
		return fmt.Errorf("fluid: F = %d, want >= 0", p.F)
	case p.ByteCounter < p.PacketSize:
		// B below one packet makes the byte counter fire more than once
		// per packet, which the per-packet model cannot describe.
		return fmt.Errorf("fluid: ByteCounter = %g B is smaller than one packet (%g B)", p.ByteCounter, p.PacketSize)
	}
	return nil
}

// model holds Params in the solver's units: packets, packets per second and
// seconds.
type model struct {
	line, c, rai float64 // packets/s
	kmin, kmax   float64 // packets
	pmax         float64
	g            float64
	b            float64 // packets
	t            float64 // s
	f            float64
	tau, tauP    float64 // s
	tauStar      float64 // s
	pkt          float64 // bytes per packet
}

func newModel(p Params) model {
	bitsPerPkt := 8 * p.PacketSize
	return model{
		line:    p.LineRate / bitsPerPkt,
		c:       p.Capacity / bitsPerPkt,
		rai:     p.RAI / bitsPerPkt,
		kmin:    p.Kmin / p.PacketSize,
		kmax:    p.Kmax / p.PacketSize,
		pmax:    p.Pmax,
		g:       p.G,
		b:       p.ByteCounter / p.PacketSize,
		t:       p.Timer,
		f:       float64(p.F),
		tau:     p.Tau,
		tauP:    p.TauPrime,
		tauStar: p.TauStar,
		pkt:     p.PacketSize,
	}
}

// toBits converts a rate in packets/s back to bits/s.
func (m *model) toBits(r float64) float64 { return r * 8 * m.pkt }
