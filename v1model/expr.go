package v1model

import (
	"encoding/json"
	"fmt"
	"math/bits"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// expr is a compiled expression. Values are mathematical integers held
// in an int64, as BMv2 holds them in arbitrary precision: p4c masks the
// result of every operation that can leave a bit<W>, so for fields of up
// to 64 bits the two agree. unsigned records that the value is known not
// to be negative, so that comparisons and right shifts of 64-bit values
// with the top bit set stay unsigned.
type expr struct {
	eval     func(p *packet) int64
	unsigned bool
	// konst: eval returns k whatever the packet. Operators use it to
	// fold constants at compile time.
	konst bool
	k     int64
	// leaf, when set, is eval in a form an operator reads inline, with
	// no call: a field, a field masked or offset by a constant, or a
	// constant (p4c masks almost every operand, so these are most of a
	// program's operands).
	leaf *leaf
	// under, for x & k, is x, and underMask k: an assignment to a field
	// no wider than k's ones reads x instead, as it masks to the
	// field's width anyway (p4c masks the value of nearly every
	// assignment to it).
	under     *expr
	underMask uint64
	// boolean: the value is 0 or 1 (a comparison, and, or, not, a
	// validity bit), so d2b and b2d of it are itself. cmps, when set,
	// is eval as comparisons of leaves, all of which hold (any: one of
	// which), so that and, or, not and ?: test them inline.
	boolean bool
	cmps    []cmpLeaf
	any     bool
	// arith, when set, is eval as x op y on two leaves (or x << shift),
	// for a mask over it to fold into the same call.
	arith *arith
	// sum, when set, is eval as a sum of terms read inline (sumEval):
	// p4c's arithmetic on bit<W> over several fields and bools.
	sum []sumTerm
	// src, for an operator in its general form, is the operator and
	// its operands, from which the generator writes eval as Go (gen.go).
	src *exprSrc
}

// exprSrc is an operator and its operands: c is ?:'s condition, b is
// nil for a unary operator.
type exprSrc struct {
	op      string
	a, b, c *expr
}

// sumTerm is a term of a sum: mul times a leaf's value, or times 1 or 0
// for a comparison (c set) that holds or not.
type sumTerm struct {
	l   leaf
	mul int64
	c   *cmpLeaf
}

// maxSumTerms bounds a sum's terms: past it, an operator keeps its
// general form.
const maxSumTerms = 8

// sumEval is the value of a sum of terms.
func sumEval(ts []sumTerm, p *packet) int64 {
	var s int64
	for i := range ts {
		t := &ts[i]
		if t.c != nil {
			s += b2i(t.c.test(p)) * t.mul
		} else {
			s += t.l.get(p) * t.mul
		}
	}
	return s
}

// terms is e as a sum's terms, or nil: a leaf, a leaf shifted or
// multiplied by a constant, one comparison, or a sum.
func (e *expr) terms() []sumTerm {
	switch {
	case e.sum != nil:
		return e.sum
	case e.leaf != nil:
		return []sumTerm{{l: *e.leaf, mul: 1}}
	case e.arith != nil && e.arith.op == "<<":
		return []sumTerm{{l: e.arith.x, mul: 1 << uint(e.arith.shift)}}
	case e.arith != nil && e.arith.op == "*" && e.arith.y.mask == 0:
		return []sumTerm{{l: e.arith.x, mul: e.arith.y.add}}
	case len(e.cmps) == 1:
		return []sumTerm{{mul: 1, c: &e.cmps[0]}}
	}
	return nil
}

// sumOf is the sum a op b (+ or -) when both are terms and together
// not too many; nil otherwise.
func sumOf(op string, a, b expr) []sumTerm {
	at, bt := a.terms(), b.terms()
	if at == nil || bt == nil || len(at)+len(bt) > maxSumTerms {
		return nil
	}
	ts := append(append([]sumTerm(nil), at...), bt...)
	if op == "-" {
		for i := len(at); i < len(ts); i++ {
			ts[i].mul = -ts[i].mul
		}
	}
	return ts
}

// lowMask is the number of low bits a constant mask 2^k-1 keeps, or 0
// for any other value.
func lowMask(e expr) int {
	if !e.konst || e.k == 0 {
		return 0
	}
	if e.k == -1 {
		return 64
	}
	if e.k < 0 || e.k&(e.k+1) != 0 {
		return 0
	}
	return bits.Len64(uint64(e.k))
}

type arith struct {
	op    string
	x, y  leaf
	shift int64
}

// cmpLeaf is a comparison of two leaves.
type cmpLeaf struct {
	x, y leaf
	op   cmpOp
}

type cmpOp uint8

const (
	cmpEQ cmpOp = iota
	cmpNE
	cmpLT // signed
	cmpLE
	cmpGT
	cmpGE
	cmpULT // unsigned
	cmpULE
	cmpUGT
	cmpUGE
	// A header's validity: x.slot is the header's index, y is unused.
	cmpValid
	cmpInvalid
)

// negated is the comparison that holds where op does not.
var negated = [...]cmpOp{cmpEQ: cmpNE, cmpNE: cmpEQ, cmpLT: cmpGE, cmpLE: cmpGT, cmpGT: cmpLE, cmpGE: cmpLT,
	cmpULT: cmpUGE, cmpULE: cmpUGT, cmpUGT: cmpULE, cmpUGE: cmpULT, cmpValid: cmpInvalid, cmpInvalid: cmpValid}

// cmpOps are the comparison operators, signed and unsigned.
var cmpOps = map[string][2]cmpOp{"==": {cmpEQ, cmpEQ}, "!=": {cmpNE, cmpNE}, "<": {cmpLT, cmpULT}, "<=": {cmpLE, cmpULE},
	">": {cmpGT, cmpUGT}, ">=": {cmpGE, cmpUGE}}

func (c *cmpLeaf) test(p *packet) bool {
	if c.op >= cmpValid {
		return p.valid[c.x.slot] == (c.op == cmpValid)
	}
	x, y := c.x.get(p), c.y.get(p)
	switch c.op {
	case cmpEQ:
		return x == y
	case cmpNE:
		return x != y
	case cmpLT:
		return x < y
	case cmpLE:
		return x <= y
	case cmpGT:
		return x > y
	case cmpGE:
		return x >= y
	case cmpULT:
		return uint64(x) < uint64(y)
	case cmpULE:
		return uint64(x) <= uint64(y)
	case cmpUGT:
		return uint64(x) > uint64(y)
	}
	return uint64(x) >= uint64(y)
}

// validExpr is header hi's validity bit, as a comparison that chains
// and conditionals test inline.
func validExpr(hi int) expr {
	return cmpExpr([]cmpLeaf{{x: leaf{slot: hi}, op: cmpValid}}, false)
}

// cmpExpr is the expression that is 1 where all of cs hold (any: one of
// them), 0 elsewhere.
func cmpExpr(cs []cmpLeaf, any bool) expr {
	var f func(p *packet) int64
	switch {
	case len(cs) == 1:
		c := cs[0]
		f = func(p *packet) int64 { return b2i(c.test(p)) }
	case any:
		f = func(p *packet) int64 {
			for i := range cs {
				if cs[i].test(p) {
					return 1
				}
			}
			return 0
		}
	default:
		f = func(p *packet) int64 {
			for i := range cs {
				if !cs[i].test(p) {
					return 0
				}
			}
			return 1
		}
	}
	return expr{eval: f, unsigned: true, boolean: true, cmps: cs, any: any}
}

// leaf is the value int64(p.f[slot]&mask) + add: a field (mask all
// ones, add 0), a field under a constant mask, a field plus a constant,
// or a constant (mask 0). Every form reads one slot and has no branch;
// a constant reads slot 0, which every program has (standard_metadata),
// and masks it away.
type leaf struct {
	slot int
	mask uint64
	add  int64
}

// get is the leaf's value: small enough for the compiler to inline in
// the closures that read leaves.
func (l leaf) get(p *packet) int64 { return int64(p.f[l.slot]&l.mask) + l.add }

// boolConstant is 1 for true, 0 for false, a boolean constant.
func boolConstant(b bool) expr {
	e := constant(b2i(b))
	e.boolean = true
	return e
}

func constant(v int64) expr {
	return expr{eval: func(*packet) int64 { return v }, unsigned: v >= 0, konst: true, k: v, leaf: &leaf{add: v}}
}

// compileValue compiles an operand: a field, a constant, action data, a
// validity bit or a nested expression.
func (c *compiler) compileValue(v *bmjson.Value) (expr, error) {
	if v == nil {
		return expr{}, fmt.Errorf("missing operand")
	}
	switch v.Type {
	case "field":
		ref, err := v.Strings()
		if err != nil || len(ref) != 2 {
			if e, ok, err := c.dynamicValidity(v.Value); ok {
				return e, err
			}
			return expr{}, fmt.Errorf("field: want [header, field], found %s", v.Value)
		}
		return c.fieldExpr(ref[0], ref[1])
	case "hexstr":
		s, err := v.String()
		if err != nil {
			return expr{}, fmt.Errorf("hexstr: %v", err)
		}
		n, err := bmjson.ParseNumber(s)
		if err != nil {
			return expr{}, err
		}
		return constant(n), nil
	case "bool":
		var b bool
		if err := json.Unmarshal(v.Value, &b); err != nil {
			return expr{}, fmt.Errorf("bool: %v", err)
		}
		if b {
			return constant(1), nil
		}
		return constant(0), nil
	case "runtime_data", "local":
		var i int
		if err := json.Unmarshal(v.Value, &i); err != nil {
			return expr{}, fmt.Errorf("%s: %v", v.Type, err)
		}
		if c.act == nil || i < 0 || i >= len(c.act.params) {
			return expr{}, fmt.Errorf("%s %d: not a parameter of the action", v.Type, i)
		}
		if w := c.act.params[i].Bitwidth; w > maxWidth {
			return expr{}, fmt.Errorf("parameter %s is %d bits: this target takes parameters over 64 bits only as the value assigned to a field as wide", c.act.params[i].Name, w)
		}
		word := c.act.word[i]
		return expr{eval: func(p *packet) int64 { return int64(p.adata[word]) }, unsigned: true}, nil
	case "stack_field":
		ref, err := v.Strings()
		if err != nil || len(ref) != 2 {
			return expr{}, fmt.Errorf("stack_field: want [stack, field], found %s", v.Value)
		}
		si, ok := c.l.stackBy[ref[0]]
		if !ok {
			return expr{}, fmt.Errorf("stack_field: unknown header stack %q", ref[0])
		}
		st := c.l.stacks[si]
		fi, ok := st.typ.index[ref[1]]
		if !ok {
			return expr{}, fmt.Errorf("stack_field: stack %q has no field %q", ref[0], ref[1])
		}
		f := st.typ.fields[fi]
		bases := make([]int, len(st.headers))
		for i, h := range st.headers {
			bases[i] = c.l.headers[h].base + fi
		}
		return expr{eval: func(p *packet) int64 {
			n := p.next[si]
			if n == 0 {
				return 0 // .last of an empty stack: BMv2 reads element 0
			}
			return int64(p.f[bases[n-1]])
		}, unsigned: !f.signed}, nil
	case "expression":
		return c.compileExprValue(v.Value)
	default:
		return expr{}, fmt.Errorf("operand type %q is not handled by this target", v.Type)
	}
}

// compileExprValue compiles the value of an "expression" object: either
// {op, left, right} or, as p4c sometimes nests it, another typed value.
// The whole tree is parsed once (jsontree.go), not a level at a time.
func (c *compiler) compileExprValue(raw json.RawMessage) (expr, error) {
	n, err := c.tree(raw)
	if err != nil {
		return expr{}, err
	}
	if !n.object {
		return expr{}, fmt.Errorf("expression: want an object, found %s", raw)
	}
	if !n.member("type").isNull() && n.member("op").isNull() {
		return c.compileValue(n.bmValue())
	}
	return c.compileOp(n.expression())
}

func (c *compiler) fieldExpr(hdr, name string) (expr, error) {
	slot, h, f, err := c.l.field(hdr, name)
	if err != nil {
		return expr{}, err
	}
	if slot < 0 {
		hi := c.l.byName[h.name]
		if h.metadata {
			return constant(1), nil
		}
		return validExpr(hi), nil
	}
	return expr{eval: func(p *packet) int64 { return int64(p.f[slot]) }, unsigned: !f.signed, leaf: &leaf{slot: slot, mask: ^uint64(0)}}, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// compileOp compiles one operator node.
//
// Masks under a mask: the value of x & (2^k-1) depends only on x's low k
// bits, and the low bits of x + y, x - y, x * y, x << s, x & y, x | y
// and x ^ y only on the operands' low bits as many, so below such an
// operator (c.modBits) a mask x & (2^j-1) with j >= k is x. p4c writes
// every operation on bit<W> masked, so that a sum of several terms is a
// mask over each partial sum: without them, the terms make one sum.
func (c *compiler) compileOp(e *bmjson.Expr) (expr, error) {
	outer := c.modBits
	c.modBits = 0 // the operands of most operators need all their bits
	defer func() { c.modBits = outer }()
	unary := func() (expr, error) {
		if e.Left != nil && e.Right == nil {
			return c.compileValue(e.Left)
		}
		return c.compileValue(e.Right)
	}
	switch e.Op {
	case "access_field":
		slot, f, err := c.accessField(e)
		if err != nil {
			return expr{}, err
		}
		return expr{eval: func(p *packet) int64 {
			if s, ok := slot(p); ok {
				return int64(p.f[s])
			}
			return 0
		}, unsigned: !f.signed}, nil
	case "valid":
		if e.Right == nil || e.Right.Type != "header" {
			return expr{}, fmt.Errorf("valid: want a header operand")
		}
		name, err := e.Right.String()
		if err != nil {
			return expr{}, err
		}
		hi, err := c.l.header(name)
		if err != nil {
			return expr{}, err
		}
		return validExpr(hi), nil
	case "valid_union":
		if e.Right == nil {
			return expr{}, fmt.Errorf("valid_union: missing operand")
		}
		name, err := e.Right.String()
		if err != nil {
			return expr{}, err
		}
		ui, ok := c.l.unionBy[name]
		if !ok {
			return expr{}, fmt.Errorf("valid_union: unknown header union %q", name)
		}
		hs := c.l.unions[ui].headers
		return expr{eval: func(p *packet) int64 {
			for _, h := range hs {
				if p.valid[h] {
					return 1
				}
			}
			return 0
		}, unsigned: true}, nil
	case "not", "~", "d2b", "b2d":
		x, err := unary()
		if err != nil {
			return expr{}, fmt.Errorf("%s: %w", e.Op, err)
		}
		f := x.eval
		switch {
		case x.konst:
			// p4c writes a bool constant's value as b2d(true).
			switch e.Op {
			case "not":
				return boolConstant(x.k == 0), nil
			case "~":
				r := constant(^x.k)
				r.unsigned = false
				return r, nil
			}
			return boolConstant(x.k != 0), nil
		case (e.Op == "d2b" || e.Op == "b2d") && x.boolean:
			return x, nil // already 0 or 1
		case e.Op == "not" && len(x.cmps) > 0:
			// Every comparison negated, all for any (De Morgan).
			cs := make([]cmpLeaf, len(x.cmps))
			for i, c := range x.cmps {
				c.op = negated[c.op]
				cs[i] = c
			}
			return cmpExpr(cs, len(cs) > 1 && !x.any), nil
		}
		if x.leaf != nil && e.Op != "~" {
			// A comparison with 0, which conditionals and jumps test
			// inline.
			op := cmpNE
			if e.Op == "not" {
				op = cmpEQ
			}
			return cmpExpr([]cmpLeaf{{x: *x.leaf, y: leaf{}, op: op}}, false), nil
		}
		src := &exprSrc{op: e.Op, a: &x}
		switch e.Op {
		case "not":
			return expr{eval: func(p *packet) int64 { return b2i(f(p) == 0) }, unsigned: true, src: src}, nil
		case "~":
			return expr{eval: func(p *packet) int64 { return ^f(p) }, src: src}, nil
		default:
			return expr{eval: func(p *packet) int64 { return b2i(f(p) != 0) }, unsigned: true, src: src}, nil
		}
	case "?":
		cond, err := c.compileValue(e.Cond)
		if err != nil {
			return expr{}, fmt.Errorf("?: condition: %w", err)
		}
		a, err := c.compileValue(e.Left)
		if err != nil {
			return expr{}, fmt.Errorf("?: %w", err)
		}
		b, err := c.compileValue(e.Right)
		if err != nil {
			return expr{}, fmt.Errorf("?: %w", err)
		}
		cf, af, bf := cond.eval, a.eval, b.eval
		if cond.boolean && a.konst && b.konst && a.k == 1 && b.k == 0 {
			return cond, nil // a bool's value as bit<1>: already 0 or 1
		}
		src := &exprSrc{op: "?", a: &a, b: &b, c: &cond}
		if a.leaf != nil && b.leaf != nil && len(cond.cmps) == 1 {
			c, x, y := cond.cmps[0], *a.leaf, *b.leaf
			return expr{eval: func(p *packet) int64 {
				if c.test(p) {
					return x.get(p)
				}
				return y.get(p)
			}, unsigned: a.unsigned && b.unsigned, src: src}, nil
		}
		if a.leaf != nil && b.leaf != nil {
			// Mostly cond ? 1 : 0, which p4c writes for a bool's value.
			x, y := *a.leaf, *b.leaf
			return expr{eval: func(p *packet) int64 {
				if cf(p) != 0 {
					return x.get(p)
				}
				return y.get(p)
			}, unsigned: a.unsigned && b.unsigned, src: src}, nil
		}
		return expr{eval: func(p *packet) int64 {
			if cf(p) != 0 {
				return af(p)
			}
			return bf(p)
		}, unsigned: a.unsigned && b.unsigned, src: src}, nil
	case "two_comp_mod", "sat_cast", "usat_cast":
		x, err := c.compileValue(e.Left)
		if err != nil {
			return expr{}, fmt.Errorf("%s: %w", e.Op, err)
		}
		wv, err := c.compileValue(e.Right)
		if err != nil {
			return expr{}, fmt.Errorf("%s: %w", e.Op, err)
		}
		w := int(wv.eval(nil))
		if w <= 0 || w > maxWidth {
			return expr{}, fmt.Errorf("%s: width %d", e.Op, w)
		}
		f := x.eval
		switch e.Op {
		case "two_comp_mod":
			return expr{eval: func(p *packet) int64 { return int64(wrap(f(p), w, true)) }}, nil
		case "sat_cast":
			lo, hi := -(int64(1) << uint(w-1)), int64(1)<<uint(w-1)-1
			return expr{eval: func(p *packet) int64 { return min(max(f(p), lo), hi) }}, nil
		default:
			hi := uint64(1)<<uint(w) - 1
			if w == 64 {
				hi = ^uint64(0)
			}
			return expr{eval: func(p *packet) int64 {
				v := f(p)
				if v < 0 && !x.unsigned {
					return 0
				}
				return int64(min(uint64(v), hi))
			}, unsigned: true}, nil
		}
	}
	// Binary operators.
	_, leftWide := c.wideOperand(e.Left)
	_, rightWide := c.wideOperand(e.Right)
	if leftWide || rightWide {
		if e.Op != "==" && e.Op != "!=" {
			return expr{}, fmt.Errorf("%s on a field over 64 bits: this target compares such fields with == and != only", e.Op)
		}
		return c.compileWideCompare(e)
	}
	if e.Op == "-" && e.Left == nil {
		return expr{}, fmt.Errorf("-: missing left operand")
	}
	switch e.Op {
	case "+", "-", "*", "|", "^", "&":
		c.modBits = outer
	}
	b, err := c.compileValue(e.Right)
	c.modBits = 0
	if err != nil {
		// The right operand goes first only for its mask: an error in
		// the left one is still the one named, as the expression reads.
		if _, lerr := c.compileValue(e.Left); lerr != nil {
			c.modBits = 0
			return expr{}, fmt.Errorf("%s: left: %w", e.Op, lerr)
		}
		c.modBits = 0
		return expr{}, fmt.Errorf("%s: right: %w", e.Op, err)
	}
	switch e.Op {
	case "+", "-", "*", "|", "^", "<<":
		c.modBits = outer
	case "&":
		if k := lowMask(b); k > 0 {
			if outer > 0 && k >= outer {
				// Masked again above, to as many bits or fewer.
				c.modBits = outer
				return c.compileValue(e.Left)
			}
			c.modBits = k
		} else {
			c.modBits = outer
		}
	}
	a, err := c.compileValue(e.Left)
	c.modBits = 0
	if err != nil {
		return expr{}, fmt.Errorf("%s: left: %w", e.Op, err)
	}
	if (e.Op == "and" || e.Op == "or") && a.cmps != nil && b.cmps != nil {
		// A chain of comparisons: one closure tests them all.
		any := e.Op == "or"
		if (len(a.cmps) == 1 || a.any == any) && (len(b.cmps) == 1 || b.any == any) {
			return cmpExpr(append(append([]cmpLeaf(nil), a.cmps...), b.cmps...), any), nil
		}
	}
	if ops, ok := cmpOps[e.Op]; ok && a.leaf != nil && b.leaf != nil && !(a.konst && b.konst) {
		op := ops[0]
		if a.unsigned && b.unsigned {
			op = ops[1]
		}
		return cmpExpr([]cmpLeaf{{x: *a.leaf, y: *b.leaf, op: op}}, false), nil
	}
	general, err := binary(e.Op, a, b)
	if err != nil {
		return expr{}, err
	}
	general.src = &exprSrc{op: e.Op, a: &a, b: &b}
	switch e.Op {
	case "and", "or", "==", "!=", "<", "<=", ">", ">=":
		general.boolean = true
	}
	r := specialize(e.Op, a, b, general)
	if e.Op == "&" && b.konst && !a.konst {
		r.under, r.underMask = &a, uint64(b.k)
	}
	return r, nil
}

// specialize is general, the compiled binary operator op on a and b,
// made cheaper where the operands allow: folded to a constant when both
// are constants (p4c leaves conditions such as a compile-time flag's
// test to the target); a leaf itself (a field masked or offset by a
// constant); with both operands read inline when both are leaves; with
// a constant operand read inline otherwise. Each is one call where
// general makes three.
func specialize(op string, a, b, general expr) expr {
	if a.konst && b.konst {
		v := general.eval(nil) // reads no packet: both operands are constants
		return expr{eval: func(*packet) int64 { return v }, unsigned: general.unsigned, konst: true, k: v, leaf: &leaf{add: v}}
	}
	if a.konst && op == "+" {
		a, b = b, a // k + x is x + k
	}
	if b.konst && a.leaf != nil {
		l, k := *a.leaf, b.k
		switch {
		case op == "&" && l.add == 0:
			l.mask &= uint64(k)
		case op == "+":
			l.add += k
		case op == "-":
			l.add -= k
		default:
			l.slot = -1
		}
		if l.slot >= 0 {
			general.eval = func(p *packet) int64 { return l.get(p) }
			general.leaf = &l
			return general
		}
	}
	if a.leaf != nil && b.leaf != nil {
		if f := fused(op, *a.leaf, *b.leaf, a.unsigned && b.unsigned); f != nil {
			general.eval = f
			if op == "+" || op == "-" || op == "*" {
				general.arith = &arith{op: op, x: *a.leaf, y: *b.leaf}
			}
			return general
		}
	}
	if (op == "+" || op == "-") && !(a.konst && b.konst) {
		if ts := sumOf(op, a, b); ts != nil {
			general.eval = func(p *packet) int64 { return sumEval(ts, p) }
			general.sum = ts
			return general
		}
	}
	if b.konst && a.leaf == nil && (op == "*" || op == "<<" && b.k >= 0 && b.k < 64) {
		if at := a.terms(); at != nil {
			m := b.k
			if op == "<<" {
				m = 1 << uint(b.k)
			}
			ts := append([]sumTerm(nil), at...)
			for i := range ts {
				ts[i].mul *= m
			}
			general.eval = func(p *packet) int64 { return sumEval(ts, p) }
			general.sum = ts
			return general
		}
	}
	if op == "&" && b.konst && a.sum != nil {
		ts, k := a.sum, b.k
		general.eval = func(p *packet) int64 { return sumEval(ts, p) & k }
		return general
	}
	if op == "&" && b.konst && a.arith != nil {
		// (x op y) & k, p4c's form of arithmetic on bit<W>: one call.
		x, y, k := a.arith.x, a.arith.y, b.k
		switch a.arith.op {
		case "+":
			general.eval = func(p *packet) int64 { return (x.get(p) + y.get(p)) & k }
		case "-":
			general.eval = func(p *packet) int64 { return (x.get(p) - y.get(p)) & k }
		case "*":
			general.eval = func(p *packet) int64 { return (x.get(p) * y.get(p)) & k }
		case "<<":
			s := uint(a.arith.shift)
			general.eval = func(p *packet) int64 { return x.get(p) << s & k }
		}
		return general
	}
	if !b.konst {
		return general
	}
	k, af := b.k, a.eval
	var f func(p *packet) int64
	switch op {
	case "&":
		f = func(p *packet) int64 { return af(p) & k }
	case "|":
		f = func(p *packet) int64 { return af(p) | k }
	case "+":
		f = func(p *packet) int64 { return af(p) + k }
	case "-":
		f = func(p *packet) int64 { return af(p) - k }
	case "==":
		f = func(p *packet) int64 { return b2i(af(p) == k) }
	case "!=":
		f = func(p *packet) int64 { return b2i(af(p) != k) }
	case "<<":
		if k < 0 || k >= 64 {
			return general
		}
		if a.leaf != nil {
			l := *a.leaf
			f = func(p *packet) int64 { return l.get(p) << uint(k) }
			general.arith = &arith{op: op, x: l, shift: k}
		} else {
			f = func(p *packet) int64 { return af(p) << uint(k) }
		}
	case ">>":
		if !a.unsigned || k < 0 || k >= 64 {
			return general
		}
		if a.leaf != nil {
			l := *a.leaf
			f = func(p *packet) int64 { return int64(uint64(l.get(p)) >> uint(k)) }
		} else {
			f = func(p *packet) int64 { return int64(uint64(af(p)) >> uint(k)) }
		}
	default:
		return general
	}
	general.eval = f
	return general
}

// fused is the binary operator op on two leaves, both read inline; nil
// for an operator that keeps its general form. unsigned is as binary
// takes it: both operands known not to be negative.
func fused(op string, x, y leaf, unsigned bool) func(p *packet) int64 {
	switch op {
	case "+":
		return func(p *packet) int64 { return x.get(p) + y.get(p) }
	case "-":
		return func(p *packet) int64 { return x.get(p) - y.get(p) }
	case "*":
		return func(p *packet) int64 { return x.get(p) * y.get(p) }
	case "&":
		return func(p *packet) int64 { return x.get(p) & y.get(p) }
	case "|":
		return func(p *packet) int64 { return x.get(p) | y.get(p) }
	case "^":
		return func(p *packet) int64 { return x.get(p) ^ y.get(p) }
	case "==":
		return func(p *packet) int64 { return b2i(x.get(p) == y.get(p)) }
	case "!=":
		return func(p *packet) int64 { return b2i(x.get(p) != y.get(p)) }
	case "and":
		return func(p *packet) int64 { return b2i(x.get(p) != 0 && y.get(p) != 0) }
	case "or":
		return func(p *packet) int64 { return b2i(x.get(p) != 0 || y.get(p) != 0) }
	}
	if unsigned {
		switch op {
		case "<":
			return func(p *packet) int64 { return b2i(uint64(x.get(p)) < uint64(y.get(p))) }
		case "<=":
			return func(p *packet) int64 { return b2i(uint64(x.get(p)) <= uint64(y.get(p))) }
		case ">":
			return func(p *packet) int64 { return b2i(uint64(x.get(p)) > uint64(y.get(p))) }
		case ">=":
			return func(p *packet) int64 { return b2i(uint64(x.get(p)) >= uint64(y.get(p))) }
		}
		return nil
	}
	switch op {
	case "<":
		return func(p *packet) int64 { return b2i(x.get(p) < y.get(p)) }
	case "<=":
		return func(p *packet) int64 { return b2i(x.get(p) <= y.get(p)) }
	case ">":
		return func(p *packet) int64 { return b2i(x.get(p) > y.get(p)) }
	case ">=":
		return func(p *packet) int64 { return b2i(x.get(p) >= y.get(p)) }
	}
	return nil
}

// binary compiles the binary operator op on a and b.
func binary(op string, a, b expr) (expr, error) {
	af, bf := a.eval, b.eval
	uu := a.unsigned && b.unsigned
	switch op {
	case "+":
		return expr{eval: func(p *packet) int64 { return af(p) + bf(p) }, unsigned: uu}, nil
	case "-":
		return expr{eval: func(p *packet) int64 { return af(p) - bf(p) }}, nil
	case "*":
		return expr{eval: func(p *packet) int64 { return af(p) * bf(p) }, unsigned: uu}, nil
	case "/", "%":
		if !uu {
			return expr{}, fmt.Errorf("%s on signed values is not handled by this target", op)
		}
		div := op == "/"
		return expr{eval: func(p *packet) int64 {
			x, y := uint64(af(p)), uint64(bf(p))
			if y == 0 {
				return 0
			}
			if div {
				return int64(x / y)
			}
			return int64(x % y)
		}, unsigned: true}, nil
	case "&":
		return expr{eval: func(p *packet) int64 { return af(p) & bf(p) }, unsigned: a.unsigned || b.unsigned}, nil
	case "|":
		return expr{eval: func(p *packet) int64 { return af(p) | bf(p) }, unsigned: uu}, nil
	case "^":
		return expr{eval: func(p *packet) int64 { return af(p) ^ bf(p) }, unsigned: uu}, nil
	case "<<":
		return expr{eval: func(p *packet) int64 { return shl(af(p), bf(p)) }, unsigned: a.unsigned}, nil
	case ">>":
		if a.unsigned {
			return expr{eval: func(p *packet) int64 { return shrU(af(p), bf(p)) }, unsigned: true}, nil
		}
		return expr{eval: func(p *packet) int64 { return shrS(af(p), bf(p)) }}, nil
	case "and":
		return expr{eval: func(p *packet) int64 { return b2i(af(p) != 0 && bf(p) != 0) }, unsigned: true}, nil
	case "or":
		return expr{eval: func(p *packet) int64 { return b2i(af(p) != 0 || bf(p) != 0) }, unsigned: true}, nil
	case "==":
		return expr{eval: func(p *packet) int64 { return b2i(af(p) == bf(p)) }, unsigned: true}, nil
	case "!=":
		return expr{eval: func(p *packet) int64 { return b2i(af(p) != bf(p)) }, unsigned: true}, nil
	case "<", "<=", ">", ">=":
		return compare(op, af, bf, uu), nil
	}
	return expr{}, fmt.Errorf("operator %q is not handled by this target", op)
}

// shl is x << s, 0 for a shift out of range.
func shl(x, s int64) int64 {
	if s < 0 || s >= 64 {
		return 0
	}
	return x << uint(s)
}

// shrU is x >> s for x not negative as a value (its bits as unsigned).
func shrU(x, s int64) int64 {
	if s < 0 || s >= 64 {
		return 0
	}
	return int64(uint64(x) >> uint(s))
}

// shrS is x >> s, arithmetic.
func shrS(x, s int64) int64 {
	if s < 0 {
		return 0
	}
	return x >> uint(min(s, 63))
}

// pick is a if c, else b: ?: in generated code, whose operands have no
// side effects.
func pick(c bool, a, b int64) int64 {
	if c {
		return a
	}
	return b
}

func compare(op string, af, bf func(*packet) int64, unsigned bool) expr {
	var f func(p *packet) int64
	if unsigned {
		switch op {
		case "<":
			f = func(p *packet) int64 { return b2i(uint64(af(p)) < uint64(bf(p))) }
		case "<=":
			f = func(p *packet) int64 { return b2i(uint64(af(p)) <= uint64(bf(p))) }
		case ">":
			f = func(p *packet) int64 { return b2i(uint64(af(p)) > uint64(bf(p))) }
		default:
			f = func(p *packet) int64 { return b2i(uint64(af(p)) >= uint64(bf(p))) }
		}
	} else {
		switch op {
		case "<":
			f = func(p *packet) int64 { return b2i(af(p) < bf(p)) }
		case "<=":
			f = func(p *packet) int64 { return b2i(af(p) <= bf(p)) }
		case ">":
			f = func(p *packet) int64 { return b2i(af(p) > bf(p)) }
		default:
			f = func(p *packet) int64 { return b2i(af(p) >= bf(p)) }
		}
	}
	return expr{eval: f, unsigned: true}
}
