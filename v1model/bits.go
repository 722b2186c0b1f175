package v1model

import "encoding/json"

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
