package hpcc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDivisorIsDivision holds the multiply-and-shift quotient to Go's
// division for the telemetry's units and for divisors and dividends over
// the whole non-negative range, edges included.
func TestDivisorIsDivision(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ds := []int64{2, 3, 4, 5, 7, 80, 128, 320, 512, 1000, 80 << 16, 128 << 16, math.MaxInt64 - 1, math.MaxInt64}
	for range 200 {
		ds = append(ds, r.Int64N(1<<20)+2, r.Int64()|2, r.Int64N(math.MaxInt64-1)+2)
	}
	for _, d := range ds {
		v := newDivisor(d)
		ns := []int64{0, 1, d - 1, d, d + 1, 2*d - 1, math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - d}
		for range 2000 {
			ns = append(ns, r.Int64N(math.MaxInt64), r.Int64N(1<<40))
		}
		for _, n := range ns {
			if n < 0 {
				continue // 2d-1 wraps for the largest divisors
			}
			if got, want := v.div(n), n/d; got != want {
				t.Fatalf("%d / %d: got %d, want %d", n, d, got, want)
			}
		}
	}
}
