package agent

import (
	"fmt"

	"github.com/p4rcm/p4rcm/dcqcn"
)

// Scale returns DCQCN settings for a NIC of rate bits per second from
// settings designed for p.RefRate (100 Gb/s for the Mellanox and HPCC
// sets), by one rule: bytes stay, time stretches by k = p.RefRate / rate,
// rates shrink by k. A flow then moves the same bytes per timer period,
// its rate steps are the same fractions of its line rate, and a queue of
// KMin bytes means the same thing to it, so its dynamics, counted in
// packets and in rounds of its timers, are those at the design rate:
//
//   - times ×k: AlphaInterval, DecreaseInterval, Timer, CNPInterval;
//   - rates ÷k: RAI, RHAI, MinRate; RefRate becomes rate;
//   - unchanged: G, InitialAlpha, F, RateOnFirstCNP, ClampTarget,
//     ByteCounter, KMin, KMax, PMax.
//
// What does not scale is the emulated network's own delay (veths and
// switch processes, tens to hundreds of microseconds): at the scaled
// rate it is a shorter round trip, in packets, than the datacenter's.
func Scale(p dcqcn.Params, rate float64) (dcqcn.Params, error) {
	if rate <= 0 || p.RefRate <= 0 {
		return p, fmt.Errorf("scale DCQCN %q from %g b/s to %g b/s: rates must be above 0", p.Name, p.RefRate, rate)
	}
	if p.ScaleWithRate {
		// RAI and RHAI are given at RefRate and follow the line rate: the
		// same as scaling them here.
		p.ScaleWithRate = false
	}
	k := p.RefRate / rate
	stretch := func(t int64) int64 { return int64(float64(t) * k) }
	p.AlphaInterval = stretch(p.AlphaInterval)
	p.DecreaseInterval = stretch(p.DecreaseInterval)
	p.Timer = stretch(p.Timer)
	p.CNPInterval = stretch(p.CNPInterval)
	p.RAI /= k
	p.RHAI /= k
	p.MinRate /= k
	p.RefRate = rate
	if p.Name != "" {
		p.Name = fmt.Sprintf("%s at %g Mb/s", p.Name, rate/1e6)
	}
	return p, p.Validate()
}
