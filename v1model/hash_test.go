package v1model

import (
	"math/rand/v2"
	"testing"
)

// TestCsum16PartsAgainstPacked: the checksum taken from the fields'
// values is csum16 of the fields packed, for random widths (odd totals
// too), values (all zero, all ones, values wider than their fields,
// negative ones from signed fields) and leaves with masks and offsets.
func TestCsum16PartsAgainstPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 20000; trial++ {
		n := 1 + r.IntN(14)
		p := &packet{f: make([]uint64, n)}
		var parts []calcPart
		bits := 0
		for i := 0; i < n; i++ {
			w := 1 + r.IntN(64)
			if r.IntN(3) == 0 {
				w = []int{1, 4, 8, 13, 16, 32, 48, 64}[r.IntN(8)]
			}
			switch trial % 4 {
			case 0:
				p.f[i] = r.Uint64()
			case 1:
				p.f[i] = r.Uint64() & ones(w)
			case 2:
				p.f[i] = []uint64{0, ^uint64(0), ones(w)}[r.IntN(3)]
			default:
				p.f[i] = 0
			}
			l := leaf{slot: i, mask: ^uint64(0)}
			if r.IntN(4) == 0 {
				l.mask = r.Uint64()
				l.add = int64(r.IntN(5)) - 2
			}
			parts = append(parts, calcPart{leaf: &l, width: w})
			bits += w
		}
		packed := &calculation{algo: algorithms["csum16"], parts: parts, bits: bits}
		p.hash = make([]byte, 128)
		want := packed.compute(p)
		plan := sum16Plan(parts, bits)
		if plan == nil {
			t.Fatal("no plan for leaves")
		}
		if got := uint64(csum16Parts(plan, p)); got != want {
			t.Fatalf("trial %d: %d fields, %d bits: %#04x from the values, %#04x packed", trial, n, bits, got, want)
		}
	}
}
