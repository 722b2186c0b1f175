package v1model

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// Fields over 64 bits (IPv6 addresses) live in 64-bit parts. Programs use
// them as names and keys, not for arithmetic: the target takes them in
// assignments, == and !=, table keys, hash inputs and field lists, and
// refuses anything else when the JSON loads.

// wideOperand returns the wide field an operand names, if it is one.
func (c *compiler) wideOperand(v *bmjson.Value) (*wideRef, bool) {
	if v == nil || v.Type != "field" {
		return nil, false
	}
	ref, err := v.Strings()
	if err != nil || len(ref) != 2 {
		return nil, false
	}
	return c.l.wideField(ref[0], ref[1])
}

// wideConstant splits a hexstr into parts of the given widths, most
// significant first.
func wideConstant(v *bmjson.Value, widths []int) ([]uint64, error) {
	if v == nil || v.Type != "hexstr" {
		return nil, fmt.Errorf("want a field of the same width or a constant")
	}
	s, err := v.String()
	if err != nil {
		return nil, err
	}
	n, ok := new(big.Int).SetString(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"), 16)
	if !ok || n.Sign() < 0 {
		return nil, fmt.Errorf("constant %q", s)
	}
	return splitBig(n, widths), nil
}

// splitBig splits a number into parts of the given widths, most
// significant first (n is consumed).
func splitBig(n *big.Int, widths []int) []uint64 {
	parts := make([]uint64, len(widths))
	for i := len(widths) - 1; i >= 0; i-- {
		w := uint(widths[i])
		mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), w), big.NewInt(1))
		parts[i] = new(big.Int).And(n, mask).Uint64()
		n.Rsh(n, w)
	}
	return parts
}

// compileWideAssign copies a wide field, or a constant, into a wide field.
func (c *compiler) compileWideAssign(dst *wideRef, src *bmjson.Value) (prim, error) {
	if s, ok := c.wideOperand(src); ok {
		if s.width != dst.width {
			return nil, fmt.Errorf("assign %d bits to a %d-bit field", s.width, dst.width)
		}
		d, from := dst.slots, s.slots
		return func(p *packet) int {
			for i, slot := range d {
				p.f[slot] = p.f[from[i]]
			}
			return -1
		}, nil
	}
	if src != nil && (src.Type == "runtime_data" || src.Type == "local") && c.act != nil {
		var i int
		if err := jsonUnmarshal(src.Value, &i); err != nil || i < 0 || i >= len(c.act.params) {
			return nil, fmt.Errorf("%s %s: not a parameter of the action", src.Type, src.Value)
		}
		if w := c.act.params[i].Bitwidth; w != dst.width {
			return nil, fmt.Errorf("assign parameter %s of %d bits to a %d-bit field", c.act.params[i].Name, w, dst.width)
		}
		d, word := dst.slots, c.act.word[i]
		return func(p *packet) int {
			for j, slot := range d {
				p.f[slot] = p.adata[word+j]
			}
			return -1
		}, nil
	}
	parts, err := wideConstant(src, dst.widths)
	if err != nil {
		return nil, fmt.Errorf("%d-bit field: %w", dst.width, err)
	}
	d := dst.slots
	return func(p *packet) int {
		for i, slot := range d {
			p.f[slot] = parts[i]
		}
		return -1
	}, nil
}

// compileWideCompare compiles == or != with a wide field on one side.
func (c *compiler) compileWideCompare(e *bmjson.Expr) (expr, error) {
	a, aw := c.wideOperand(e.Left)
	b, bw := c.wideOperand(e.Right)
	var left, right func(p *packet, i int) uint64
	var n int
	switch {
	case aw && bw:
		if a.width != b.width {
			return expr{}, fmt.Errorf("%s: %d bits against %d", e.Op, a.width, b.width)
		}
		left = func(p *packet, i int) uint64 { return p.f[a.slots[i]] }
		right = func(p *packet, i int) uint64 { return p.f[b.slots[i]] }
		n = len(a.slots)
	default:
		field, other := a, e.Right
		if !aw {
			field, other = b, e.Left
		}
		parts, err := wideConstant(other, field.widths)
		if err != nil {
			return expr{}, fmt.Errorf("%s with a %d-bit field: %w", e.Op, field.width, err)
		}
		left = func(p *packet, i int) uint64 { return p.f[field.slots[i]] }
		right = func(_ *packet, i int) uint64 { return parts[i] }
		n = len(field.slots)
	}
	eq := func(p *packet) bool {
		for i := range n {
			if left(p, i) != right(p, i) {
				return false
			}
		}
		return true
	}
	if e.Op == "==" {
		return expr{eval: func(p *packet) int64 { return b2i(eq(p)) }, unsigned: true}, nil
	}
	return expr{eval: func(p *packet) int64 { return b2i(!eq(p)) }, unsigned: true}, nil
}
