package v1model

import (
	"bytes"
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

// TestBitWriterMatchesPutBits packs random runs of values of random
// widths both ways: the word-at-a-time writer and putBits into cleared
// bytes must agree byte for byte, padding included, over whatever the
// buffer held before.
func TestBitWriterMatchesPutBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := 1 + rng.IntN(12)
		widths := make([]int, n)
		vals := make([]uint64, n)
		bits := 0
		for i := range widths {
			widths[i] = 1 + rng.IntN(64)
			vals[i] = rng.Uint64() // bits above the width must be ignored
			bits += widths[i]
		}
		want := make([]byte, (bits+7)/8)
		off := 0
		for i, w := range widths {
			putBits(want, off, w, vals[i])
			off += w
		}
		got := make([]byte, len(want))
		for i := range got {
			got[i] = 0xa5 // stale contents the writer must overwrite
		}
		bw := bitWriter{b: got}
		for i, w := range widths {
			bw.put(vals[i], w)
		}
		bw.flush()
		if !bytes.Equal(got, want) {
			t.Fatalf("widths %v values %x: got %x, want %x", widths, vals, got, want)
		}
		if bw.i != len(want) {
			t.Fatalf("widths %v: wrote %d bytes, want %d", widths, bw.i, len(want))
		}
	}
}

// TestLoadBitsMatchesGetBits reads fields at every bit offset and width
// that loadBits takes with both readers.
func TestLoadBitsMatchesGetBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 24)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	for off := 0; off < 64; off++ {
		for w := 1; w <= 64 && off&7+w <= 64; w++ {
			if got, want := loadBits(b, off>>3, off&7, w), getBits(b, off, w); got != want {
				t.Fatalf("offset %d width %d: got %x, want %x", off, w, got, want)
			}
		}
	}
}

// TestCodecMatchesGetBitsAndPackFields: a header type's codec reads
// what getBits reads field by field (signed fields sign-extended) and
// writes the header's bytes as packFields does, for random header types
// (byte-aligned fields, fields of a few bits, 64-bit ones), and leaves
// no codec where a run of fields crosses 64 bits without a byte
// boundary.
func TestCodecMatchesGetBitsAndPackFields(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	made := 0
	for range 5000 {
		ht := &headerType{}
		for n := 1 + rng.IntN(14); n > 0 || ht.bits%8 != 0; n-- {
			w := []int{1, 2, 3, 4, 6, 8, 13, 16, 24, 32, 48, 64, 1 + rng.IntN(64)}[rng.IntN(13)]
			if n <= 0 {
				w = 8 - ht.bits%8
			}
			ht.fields = append(ht.fields, fieldInfo{width: w, signed: rng.IntN(6) == 0, offset: ht.bits})
			ht.bits += w
		}
		cd := newCodec(ht)
		if cd == nil {
			continue
		}
		made++
		n := ht.bytes()
		b := make([]byte, n+8)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		got := make([]uint64, len(ht.fields))
		cd.extract(b, got)
		vals := make([]uint64, len(ht.fields))
		for i, f := range ht.fields {
			want := getBits(b, f.offset, f.width)
			if f.signed {
				want = wrap(int64(want), f.width, true)
			}
			if got[i] != want {
				t.Fatalf("fields %v: field %d extracted %x, want %x", ht.fields, i, got[i], want)
			}
			vals[i] = rng.Uint64() // bits above the width must be ignored
		}
		want := make([]byte, n)
		packFields(want, ht.fields, vals)
		out := make([]byte, cd.span)
		for i := range out {
			out[i] = 0xa5
		}
		cd.pack(out, vals)
		if !bytes.Equal(out[:n], want) {
			t.Fatalf("fields %v values %x: packed %x, want %x", ht.fields, vals, out[:n], want)
		}
	}
	if made < 1000 {
		t.Fatalf("%d codecs of 5000 header types", made)
	}
}

// TestPutBytesMatchesPutBits: putBytes is putBits of whole bytes at
// offset 0, for every length a key field takes.
func TestPutBytesMatchesPutBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 1000 {
		for n := 1; n <= 8; n++ {
			v := rng.Uint64()
			want, got := make([]byte, n), make([]byte, n)
			putBits(want, 0, n*8, v)
			putBytes(got, v)
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bytes of %#x: %x, want %x", n, v, got, want)
			}
		}
	}
}
