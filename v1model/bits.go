package v1model

import "encoding/json"

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// getBits reads w bits (w <= 64) starting bitOff bits into b, most
// significant bit first, as on the wire.
func getBits(b []byte, bitOff, w int) uint64 {
	if bitOff&7 == 0 && w&7 == 0 {
		var v uint64
		for _, c := range b[bitOff>>3 : (bitOff+w)>>3] {
			v = v<<8 | uint64(c)
		}
		return v
	}
	var v uint64
	for i := 0; i < w; i++ {
		p := bitOff + i
		v = v<<1 | uint64(b[p>>3]>>(7-uint(p&7))&1)
	}
	return v
}

// putBits writes the low w bits of v at bitOff, most significant first.
func putBits(b []byte, bitOff, w int, v uint64) {
	if bitOff&7 == 0 && w&7 == 0 {
		end := (bitOff + w) >> 3
		for i := end - 1; i >= bitOff>>3; i-- {
			b[i] = byte(v)
			v >>= 8
		}
		return
	}
	for i := w - 1; i >= 0; i-- {
		p := bitOff + i
		mask := byte(1) << (7 - uint(p&7))
		if v&1 != 0 {
			b[p>>3] |= mask
		} else {
			b[p>>3] &^= mask
		}
		v >>= 1
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
