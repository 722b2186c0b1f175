package p4rt

import (
	"math/big"
	"math/bits"

	"google.golang.org/grpc/codes"
)

// P4Runtime carries integers as big-endian byte strings. A server takes a
// string of any length whose value fits the field's width and answers
// with the shortest one (spec 8.4, "Bytestrings"), so that what a client
// writes in canonical form reads back the same.

// fit checks that b holds an unsigned value of at most width bits and
// returns its canonical form: no leading zero bytes, one byte for zero.
// The form shares b's bytes: a request's bytes, which the server
// owns once gRPC has decoded them, are kept as they are, not copied.
func fit(b []byte, width int, what string) ([]byte, error) {
	return fitWhat(b, width, func() string { return what })
}

// fitWhat is fit with the name for an error built only for one.
func fitWhat(b []byte, width int, what func() string) ([]byte, error) {
	if len(b) == 0 {
		return nil, errorf(codes.OutOfRange, "%s: an empty byte string", what())
	}
	i := 0
	for i < len(b)-1 && b[i] == 0 {
		i++
	}
	c := b[i:len(b):len(b)]
	if n := (len(c)-1)*8 + bits.Len8(c[0]); n > width {
		return nil, errorf(codes.OutOfRange, "%s: the value takes %d bits, the field has %d", what(), n, width)
	}
	return c, nil
}

// canonical is v as the shortest byte string.
func canonical(v uint64) []byte {
	n := max(1, (bits.Len64(v)+7)/8)
	b := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}

// toUint is a canonical string of at most 8 bytes as a number.
func toUint(b []byte) uint64 {
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

// padded is b right-aligned in n bytes.
func padded(b []byte, n int) []byte {
	out := make([]byte, n)
	copy(out[n-len(b):], b)
	return out
}

// trimmed is a right-aligned byte string in canonical form.
func trimmed(b []byte) []byte {
	i := 0
	for i < len(b)-1 && b[i] == 0 {
		i++
	}
	return append([]byte(nil), b[i:]...)
}

// appendWords appends a value of width bits to ws as the target's
// 64-bit words, most significant first, the first taking what is left
// over 64.
func appendWords(ws []uint64, b []byte, width int) []uint64 {
	if width <= 64 {
		return append(ws, toUint(b))
	}
	n := new(big.Int).SetBytes(b)
	widths := wordWidths(width)
	k := len(ws)
	ws = append(ws, make([]uint64, len(widths))...)
	for i := len(widths) - 1; i >= 0; i-- {
		ws[k+i] = new(big.Int).And(n, new(big.Int).SetUint64(^uint64(0)>>(64-widths[i]))).Uint64()
		n.Rsh(n, uint(widths[i]))
	}
	return ws
}

// joinWords is the canonical string of a value the target holds in
// 64-bit words of these widths, most significant first.
func joinWords(ws []uint64, widths []int) []byte {
	if len(ws) == 1 {
		return canonical(ws[0])
	}
	n := new(big.Int)
	for i, w := range ws {
		n.Lsh(n, uint(widths[i]))
		n.Or(n, new(big.Int).SetUint64(w))
	}
	if n.Sign() == 0 {
		return []byte{0}
	}
	return n.Bytes()
}

// wordWidths are the widths of the words of a width-bit value.
func wordWidths(width int) []int {
	var ws []int
	for rest := width; rest > 0; {
		w := rest - (rest-1)/64*64
		ws = append(ws, w)
		rest -= w
	}
	return ws
}
