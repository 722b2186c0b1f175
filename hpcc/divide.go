package hpcc

import "math/bits"

// divisor divides non-negative integers by a constant d of at least 2
// without the processor's divide instruction: encoding a hop takes two
// divisions by the telemetry's units on every ACK, and a multiply and
// shifts cost a fraction of a 64-bit divide. The quotient is exact
// (Granlund and Montgomery's round-up method), so results stay bit for
// bit those of n/d.
type divisor struct {
	d     int64
	magic uint64
	shift uint8
}

func newDivisor(d int64) divisor {
	if d < 2 {
		panic("hpcc: divisor below 2")
	}
	l := uint(bits.Len64(uint64(d - 1))) // ceil(log2 d), at least 1
	// magic = floor(2^64 (2^l - d) / d) + 1, which fits in 64 bits.
	q, _ := bits.Div64(uint64(1)<<l-uint64(d), 0, uint64(d))
	return divisor{d: d, magic: q + 1, shift: uint8(l - 1)}
}

// div is n / d for n >= 0 (the telemetry's times and byte counts).
func (v divisor) div(n int64) int64 {
	u := uint64(n)
	t, _ := bits.Mul64(u, v.magic)
	return int64((t + (u-t)>>1) >> v.shift)
}
