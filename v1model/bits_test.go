package v1model

import (
	"math/rand/v2"
	"testing"
)

// TestBitsAgainstBitByBit: getBits and putBits, at every offset and width,
// agree with a plain bit-by-bit reading and writing, and putBits leaves
// the bits around the field alone.
func TestBitsAgainstBitByBit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for off := 0; off < 16; off++ {
		for w := 1; w <= 64; w++ {
			b := make([]byte, 12)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			want := uint64(0)
			for i := 0; i < w; i++ {
				p := off + i
				want = want<<1 | uint64(b[p>>3]>>(7-uint(p&7))&1)
			}
			if got := getBits(b, off, w); got != want {
				t.Fatalf("getBits(off %d, w %d) = %#x, want %#x", off, w, got, want)
			}
			v := r.Uint64() & ones(w)
			c := append([]byte(nil), b...)
			putBits(c, off, w, v)
			for p := 0; p < len(b)*8; p++ {
				bit := c[p>>3] >> (7 - uint(p&7)) & 1
				wantBit := b[p>>3] >> (7 - uint(p&7)) & 1
				if p >= off && p < off+w {
					wantBit = byte(v >> uint(w-1-(p-off)) & 1)
				}
				if bit != wantBit {
					t.Fatalf("putBits(off %d, w %d, %#x): bit %d is %d, want %d", off, w, v, p, bit, wantBit)
				}
			}
		}
	}
}
