package dcqcn_test

import (
	"testing"

	"github.com/p4rcm/p4rcm/dcqcn"
)

// BenchmarkRPRate is the per-packet query of a sender: one Rate call per
// packet, time advancing by one 1 KB packet time at 100 Gb/s (80 ns).
func BenchmarkRPRate(b *testing.B) {
	const pkt = 80 * ns
	for _, bc := range []struct {
		name     string
		p        dcqcn.Params
		cnpEvery int64 // 0: never
	}{
		{"unlimited", dcqcn.HPCC(), 0},
		{"paper-recovering", dcqcn.Paper(), 0},
		{"paper-congested", dcqcn.Paper(), 50 * us},
		{"hpcc-congested", dcqcn.HPCC(), 4 * us},
		{"mellanox-congested", dcqcn.Mellanox(), 4 * us},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := bc.p
			rp := dcqcn.NewRP(&p, 100e9)
			if bc.cnpEvery == 0 && bc.name != "unlimited" {
				rp.OnCNP(0) // one cut: the timers then run for ever
			}
			now, nextCNP := int64(0), bc.cnpEvery
			var sink float64
			b.ReportAllocs()
			for b.Loop() {
				now += pkt
				if bc.cnpEvery != 0 && now >= nextCNP {
					rp.OnCNP(now)
					nextCNP += bc.cnpEvery
				}
				sink += rp.Rate(now)
			}
			if sink <= 0 {
				b.Fatal("no rate")
			}
		})
	}
}

// BenchmarkRPOnSent is the per-packet byte accounting that follows Rate.
func BenchmarkRPOnSent(b *testing.B) {
	p := dcqcn.Mellanox()
	rp := dcqcn.NewRP(&p, 100e9)
	rp.OnCNP(0)
	now := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		now += 80 * ns
		rp.OnSent(now, 1000)
	}
}
