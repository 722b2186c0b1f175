package v1model

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestMasksAndSumsAgainstReference: random p4c-style expressions (every
// operation masked to a width, masks within masks, sums of fields,
// shifts, products, bools as bit<1>, comparisons of them) compiled by
// the target, whose masks under masks drop and whose sums become one
// closure, give what a plain recursive evaluation of the same tree
// gives, for random field values.
func TestMasksAndSumsAgainstReference(t *testing.T) {
	sw := rcmSwitch(t)
	// Unsigned scalars of rcm.p4 of several widths, and a 1-bit one.
	names := []string{"metadata_t.now_ns", "metadata_t.flow_id", "metadata_t.pfc_class", "q_1", "account_0", "metadata_t.low", "tmp_30"}
	var slots, widths []int
	for _, n := range names {
		slot, _, f, err := sw.l.field("scalars", n)
		if err != nil || f == nil || f.signed {
			t.Fatalf("scalars.%s: %v", n, err)
		}
		slots = append(slots, slot)
		widths = append(widths, f.width)
	}
	r := rand.New(rand.NewPCG(5, 6))
	masks := []string{"0xff", "0xffff", "0xffffffff", "0xffffffffffff", "0xffffffffffffffff", "0x0f", "0x01", "0xff00"}
	field := func() (string, func(p *packet) int64) {
		i := r.IntN(len(names))
		s := slots[i]
		return fmt.Sprintf(`{"type":"field","value":["scalars",%q]}`, names[i]), func(p *packet) int64 { return int64(p.f[s]) }
	}
	var gen func(depth int) (string, func(p *packet) int64)
	gen = func(depth int) (string, func(p *packet) int64) {
		if depth == 0 || r.IntN(4) == 0 {
			if r.IntN(4) == 0 {
				k := int64(r.IntN(300))
				return fmt.Sprintf(`{"type":"hexstr","value":"0x%x"}`, k), func(*packet) int64 { return k }
			}
			return field()
		}
		ops := []string{"+", "-", "*", "&", "|", "^", "<<", "&k", "&k", "&k", "?", "==", "<", "b2d"}
		op := ops[r.IntN(len(ops))]
		x, xf := gen(depth - 1)
		if op == "<" || op == "?" {
			// Compared unsigned, as p4c's masked operands are.
			inner := xf
			x = fmt.Sprintf(`{"type":"expression","value":{"op":"&","left":%s,"right":{"type":"hexstr","value":"0xffffffff"}}}`, x)
			xf = func(p *packet) int64 { return inner(p) & 0xffffffff }
		}
		switch op {
		case "&k":
			m := masks[r.IntN(len(masks))]
			var k uint64
			fmt.Sscanf(m, "0x%x", &k)
			return fmt.Sprintf(`{"type":"expression","value":{"op":"&","left":%s,"right":{"type":"hexstr","value":%q}}}`, x, m),
				func(p *packet) int64 { return xf(p) & int64(k) }
		case "<<":
			s := int64(r.IntN(20))
			return fmt.Sprintf(`{"type":"expression","value":{"op":"<<","left":%s,"right":{"type":"hexstr","value":"0x%x"}}}`, x, s),
				func(p *packet) int64 { return xf(p) << uint(s) }
		case "b2d":
			y, yf := gen(depth - 1)
			return fmt.Sprintf(`{"type":"expression","value":{"op":"b2d","left":null,"right":{"type":"expression","value":{"op":"==","left":%s,"right":%s}}}}`, x, y),
				func(p *packet) int64 { return b2i(xf(p) == yf(p)) }
		case "?":
			a, af := field()
			return fmt.Sprintf(`{"type":"expression","value":{"op":"?","left":{"type":"hexstr","value":"0x1"},"right":{"type":"hexstr","value":"0x0"},"cond":{"type":"expression","value":{"op":"<","left":%s,"right":%s}}}}`, x, a),
				func(p *packet) int64 { return b2i(uint64(xf(p)) < uint64(af(p))) }
		}
		y, yf := gen(depth - 1)
		if op == "<" {
			inner := yf
			y = fmt.Sprintf(`{"type":"expression","value":{"op":"&","left":%s,"right":{"type":"hexstr","value":"0xffffffff"}}}`, y)
			yf = func(p *packet) int64 { return inner(p) & 0xffffffff }
		}
		ref := map[string]func(a, b int64) int64{
			"+": func(a, b int64) int64 { return a + b }, "-": func(a, b int64) int64 { return a - b },
			"*": func(a, b int64) int64 { return a * b }, "&": func(a, b int64) int64 { return a & b },
			"|": func(a, b int64) int64 { return a | b }, "^": func(a, b int64) int64 { return a ^ b },
			"==": func(a, b int64) int64 { return b2i(a == b) }, "<": func(a, b int64) int64 { return b2i(uint64(a) < uint64(b)) },
		}[op]
		return fmt.Sprintf(`{"type":"expression","value":{"op":%q,"left":%s,"right":%s}}`, op, x, y),
			func(p *packet) int64 { return ref(xf(p), yf(p)) }
	}
	p := newPacket(sw.l, 64)
	for trial := 0; trial < 3000; trial++ {
		src, ref := gen(1 + r.IntN(5))
		if r.IntN(2) == 0 {
			m := masks[r.IntN(5)]
			var k uint64
			fmt.Sscanf(m, "0x%x", &k)
			inner := ref
			src = fmt.Sprintf(`{"type":"expression","value":{"op":"&","left":%s,"right":{"type":"hexstr","value":%q}}}`, src, m)
			ref = func(p *packet) int64 { return inner(p) & int64(k) }
		}
		var v struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal([]byte(src), &v); err != nil {
			t.Fatal(err)
		}
		c := &compiler{l: sw.l, errs: sw.errs, sw: sw}
		var e expr
		var err error
		if v.Type == "expression" {
			e, err = c.compileExprValue(v.Value)
		} else {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		for k := 0; k < 20; k++ {
			for i, s := range slots {
				w := widths[i]
				switch r.IntN(3) {
				case 0:
					p.f[s] = r.Uint64() & ones(w)
				case 1:
					p.f[s] = ones(w)
				default:
					p.f[s] = uint64(r.IntN(4))
				}
			}
			if got, want := e.eval(p), ref(p); got != want {
				t.Fatalf("%s: %d, want %d", src, got, want)
			}
		}
	}
}
