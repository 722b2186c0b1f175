package v1model

import (
	endian "encoding/binary"
	"encoding/json"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// getBits reads w bits (w <= 64) starting bitOff bits into b, most
// significant bit first, as on the wire.
func getBits(b []byte, bitOff, w int) uint64 {
	start, shift := bitOff>>3, bitOff&7
	n := (shift + w + 7) >> 3
	if n > 8 {
		// More than 8 bytes (a wide field not on a byte boundary): in
		// two reads.
		hi := getBits(b, bitOff, w-32)
		return hi<<32 | getBits(b, bitOff+w-32, 32)
	}
	var v uint64
	for _, c := range b[start : start+n] {
		v = v<<8 | uint64(c)
	}
	return v >> uint(n*8-shift-w) & ones(w)
}

// putBits writes the low w bits of v at bitOff, most significant first,
// leaving the bits around them as they are.
func putBits(b []byte, bitOff, w int, v uint64) {
	start, shift := bitOff>>3, bitOff&7
	n := (shift + w + 7) >> 3
	if n > 8 {
		putBits(b, bitOff, w-32, v>>32)
		putBits(b, bitOff+w-32, 32, v)
		return
	}
	if shift == 0 && w&7 == 0 {
		for i := n - 1; i >= 0; i-- {
			b[start+i] = byte(v)
			v >>= 8
		}
		return
	}
	var cur uint64
	for _, c := range b[start : start+n] {
		cur = cur<<8 | uint64(c)
	}
	low := uint(n*8 - shift - w)
	mask := ones(w) << low
	cur = cur&^mask | (v<<low)&mask
	for i := n - 1; i >= 0; i-- {
		b[start+i] = byte(cur)
		cur >>= 8
	}
}

// putBytes writes the low len(b) bytes of v into b, big-endian: putBits
// of a whole number of bytes at offset 0, with one store for the
// commonest lengths.
func putBytes(b []byte, v uint64) {
	switch len(b) {
	case 1:
		b[0] = byte(v)
	case 2:
		endian.BigEndian.PutUint16(b, uint16(v))
	case 4:
		endian.BigEndian.PutUint32(b, uint32(v))
	case 8:
		endian.BigEndian.PutUint64(b, v)
	default:
		for i := len(b) - 1; i >= 0; i-- {
			b[i] = byte(v)
			v >>= 8
		}
	}
}

// wrap truncates v to a field of w bits: modulo 2^w for bit<w>, two's
// complement for int<w>, as BMv2 stores assigned values.
func wrap(v int64, w int, signed bool) uint64 {
	if w >= 64 {
		return uint64(v)
	}
	if signed {
		s := uint(64 - w)
		return uint64(v << s >> s)
	}
	return uint64(v) & (1<<uint(w) - 1)
}

// loadBits is getBits for a field that starts in b's first 8 bytes
// (shift+w <= 64) where b holds 8 bytes from start: one big-endian load
// and two shifts. Packet buffers have headroom past any frame, so the
// parser's extracts take this path; getBits stays for the rest.
func loadBits(b []byte, start, shift, w int) uint64 {
	return endian.BigEndian.Uint64(b[start:start+8]) << uint(shift) >> uint(64-w)
}

// packFields writes a header's fields, laid end to end from bit 0 as a
// header type lays them, into b (at least the header's bytes long),
// most significant bit first. Every byte of the header is written, so b
// need not be cleared first.
func packFields(b []byte, fields []fieldInfo, vals []uint64) {
	w := bitWriter{b: b}
	for j := range fields {
		w.put(vals[j], fields[j].width)
	}
	w.flush()
}

// bitWriter packs values of any width up to 64 bits into bytes, most
// significant bit first, from the start of b: the bits gather in a word
// that is stored 8 bytes at a time when full, without putBits'
// read-modify-write of each value, and every byte up to the last bit is
// written (b need not be cleared).
type bitWriter struct {
	b   []byte
	acc uint64 // the low nb bits are pending; the bits above them are stale and shift out before the word is stored
	nb  int
	i   int
}

// put appends the low width bits of v.
func (w *bitWriter) put(v uint64, width int) {
	v &= ^uint64(0) >> uint(64-width) // ones(width) without its branch: width is 0 to 64
	free := 64 - w.nb
	if width < free {
		w.acc = w.acc<<uint(width) | v
		w.nb += width
		return
	}
	// The word fills: store it, keep v's remaining low bits.
	rest := width - free
	endian.BigEndian.PutUint64(w.b[w.i:], w.acc<<uint(free)|v>>uint(rest))
	w.i += 8
	w.acc, w.nb = v, rest
}

// flush writes the pending bits, the last byte padded with zeros.
func (w *bitWriter) flush() {
	a := w.acc << uint(64-w.nb)
	for ; w.nb > 0; w.nb -= 8 {
		w.b[w.i] = byte(a >> 56)
		a <<= 8
		w.i++
	}
	w.nb = 0
}
