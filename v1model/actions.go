package v1model

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// action is a compiled action: its body and parameters. Its data is one
// 64-bit word per parameter, but a parameter over 64 bits (an IPv6
// address) takes several, the most significant first.
type action struct {
	name   string
	id     int
	params []bmjson.RuntimeData
	word   []int // the first word of each parameter
	widths []int // the width of each word
	run    func(p *packet)
	// prims is the body of a straight-line action (no _jump): a
	// control runs a chain of such actions as one list (control.go).
	// nil for an action with jumps.
	prims []prim
	// ops, beside prims, describes each primitive a control's block
	// runs without a call (a plain move, a register read or write at an
	// index a leaf holds, a sum assigned), nil for the others.
	ops []*op
	// steps and stepOps are the body of an action with jumps: each
	// primitive, and beside it its op where it has one (a jump among
	// them), for the generator to write out (gen.go).
	steps   []prim
	stepOps []*op
}

// op is a primitive in a form the control loop runs inline (runOps):
// p4c's temporaries, register accesses and arithmetic make most of a
// program's statements one of these.
type op struct {
	kind  opKind
	dst   int    // the slot assigned (move, register read, sum)
	src   leaf   // the value moved, or the register index
	val   leaf   // the value a register write stores
	mask  uint64 // applied to the value stored
	cells []uint64
	ts    []sumTerm
	f     prim // opCall
	// e and fn: the expression an opExpr assigns, or an opJumpIfZero
	// tests, and its eval.
	e  *expr
	fn func(p *packet) int64
	to int // where a jump goes
}

type opKind uint8

const (
	opCall     opKind = iota // f(p)
	opMove                   // p.f[dst] = uint64(src) & mask: a leaf assigned to an unsigned field
	opRegRead                // p.f[dst] = cells[src] & mask, if src is in range
	opRegWrite               // cells[src] = uint64(val) & mask, if src is in range
	opSum                    // p.f[dst] = uint64(sum of ts) & mask
	opExpr                   // p.f[dst] = uint64(fn(p)) & mask
	// Jumps, only in an action's steps: never in a block.
	opJump       // to to
	opJumpIfZero // to to if fn(p) == 0
)

// runOps runs a block's primitives in order, until one exits.
func runOps(ops []op, p *packet) {
	for i := range ops {
		o := &ops[i]
		switch o.kind {
		case opMove:
			p.f[o.dst] = uint64(o.src.get(p)) & o.mask
		case opRegRead:
			if j := uint64(o.src.get(p)); j < uint64(len(o.cells)) {
				p.f[o.dst] = o.cells[j] & o.mask
			}
		case opRegWrite:
			if j := uint64(o.src.get(p)); j < uint64(len(o.cells)) {
				o.cells[j] = uint64(o.val.get(p)) & o.mask
			}
		case opSum:
			p.f[o.dst] = uint64(sumEval(o.ts, p)) & o.mask
		case opExpr:
			p.f[o.dst] = uint64(o.fn(p)) & o.mask
		default:
			if o.f(p); p.exited {
				return
			}
		}
	}
}

// words splits a parameter's width into its words' widths.
func words(width int) []int {
	var ws []int
	for rest := width; rest > 0; {
		w := rest - (rest-1)/maxWidth*maxWidth
		ws = append(ws, w)
		rest -= w
	}
	return ws
}

// check validates an action's data: as many words as it takes, each
// fitting its width.
func (a *action) check(data []uint64) error {
	if len(data) != len(a.widths) {
		if len(a.widths) != len(a.params) {
			return fmt.Errorf("action %s takes %d parameters in %d words (parameters over 64 bits take one word per 64 bits), %d given", a.name, len(a.params), len(a.widths), len(data))
		}
		return fmt.Errorf("action %s takes %d parameters, %d given", a.name, len(a.params), len(data))
	}
	// By word, without words' slice: this is on every entry's insert.
	for k, w := range a.widths {
		if v := data[k]; v > ones(w) {
			i, _ := slices.BinarySearch(a.word, k+1) // the parameter word k is of
			p := a.params[i-1]
			return fmt.Errorf("action %s parameter %s: %d does not fit in %d bits", a.name, p.Name, v, p.Bitwidth)
		}
	}
	return nil
}

// prim runs one primitive and returns the index of the next one, or -1
// for the one after it.
type prim func(p *packet) int

func (c *compiler) compileAction(a *bmjson.Action) (*action, error) {
	act := &action{name: a.Name, id: a.ID, params: a.RuntimeData}
	for _, rd := range a.RuntimeData {
		act.word = append(act.word, len(act.widths))
		act.widths = append(act.widths, words(rd.Bitwidth)...)
	}
	c.act = act
	defer func() { c.act = nil }()
	c.action = a.Name
	defer func() { c.action = "" }()
	run, err := c.compilePrimitives(a.Primitives)
	if err != nil {
		return nil, err
	}
	act.run = run
	act.prims, act.ops = c.straight, c.straightOps
	act.steps, act.stepOps = c.steps, c.stepOps
	return act, nil
}

// compilePrimitives compiles an action body. _jump and _jump_if_zero
// (p4c's if-statements inside actions) move the program counter.
func (c *compiler) compilePrimitives(ps []bmjson.Primitive) (func(p *packet), error) {
	prims := make([]prim, len(ps))
	ops := make([]*op, len(ps))
	for i := range ps {
		c.where = fmt.Sprintf("primitive %d (%s)", i, ps[i].Op)
		if c.action != "" {
			c.where = fmt.Sprintf("action %q %s", c.action, c.where)
		}
		if s := ps[i].Source.String(); s != "" {
			c.where += " at " + s
		}
		c.lastOp = nil
		f, err := c.compilePrimitive(&ps[i], len(ps))
		if err != nil {
			return nil, c.errorf("%v", err)
		}
		prims[i] = f
		ops[i] = c.lastOp
	}
	c.straightOps = ops
	c.straight = prims // none or one: no jump to follow
	switch len(prims) {
	case 0:
		return func(*packet) {}, nil
	case 1:
		f := prims[0]
		return func(p *packet) { f(p) }, nil
	}
	jumps := false
	for i := range ps {
		jumps = jumps || ps[i].Op == "_jump" || ps[i].Op == "_jump_if_zero"
	}
	c.straight, c.straightOps = nil, nil
	c.steps, c.stepOps = nil, nil
	if !jumps {
		c.straightOps = ops
		c.straight = prims
		// Straight-line (most actions): no program counter to follow.
		return func(p *packet) {
			for _, f := range prims {
				if f(p); p.exited {
					return
				}
			}
		}, nil
	}
	c.steps, c.stepOps = prims, ops
	return func(p *packet) {
		for pc := 0; pc < len(prims) && !p.exited; {
			if next := prims[pc](p); next >= 0 {
				pc = next
			} else {
				pc++
			}
		}
	}, nil
}

func (c *compiler) compilePrimitive(pr *bmjson.Primitive, n int) (prim, error) {
	args := pr.Parameters
	want := func(k int) error {
		if len(args) != k {
			return fmt.Errorf("want %d parameters, found %d", k, len(args))
		}
		return nil
	}
	value := func(i int) (func(p *packet) int64, error) {
		e, err := c.compileValue(&args[i])
		if err != nil {
			return nil, fmt.Errorf("parameter %d: %w", i, err)
		}
		return e.eval, nil
	}
	// operand is value's expression, for a leaf to read inline.
	operand := func(i int) (expr, error) {
		e, err := c.compileValue(&args[i])
		if err != nil {
			return expr{}, fmt.Errorf("parameter %d: %w", i, err)
		}
		return e, nil
	}
	constArg := func(i int) (int64, error) {
		if args[i].Type != "hexstr" {
			return 0, fmt.Errorf("parameter %d: want a constant, found %s", i, args[i].Type)
		}
		f, err := value(i)
		if err != nil {
			return 0, err
		}
		return f(nil), nil
	}
	switch pr.Op {
	case "assign", "modify_field":
		if err := want(2); err != nil {
			return nil, err
		}
		if args[0].Type == "header" {
			return c.assignHeader(args)
		}
		if w, wide := c.wideOperand(&args[0]); wide {
			return c.compileWideAssign(w, &args[1])
		}
		if a, ok, err := c.assignField(args); ok || err != nil {
			return a, err
		}
		dst, err := c.lvalue(args[0])
		if err != nil {
			return nil, err
		}
		src, err := value(1)
		if err != nil {
			return nil, err
		}
		return func(p *packet) int { dst(p, src(p)); return -1 }, nil
	case "assign_header", "copy_header":
		if err := want(2); err != nil {
			return nil, err
		}
		return c.assignHeader(args)
	case "add_header", "setValid", "add_header_fast":
		if err := want(1); err != nil {
			return nil, err
		}
		sel, err := c.headerSelArg(args[0])
		if err != nil {
			return nil, err
		}
		l, fast := c.l, pr.Op == "add_header_fast"
		return func(p *packet) int {
			hi, ok := sel(p)
			if !ok {
				return -1
			}
			if fast {
				p.valid[hi] = true
				return -1
			}
			if !p.valid[hi] {
				h := l.headers[hi]
				clear(p.f[h.base : h.base+len(h.typ.fields)])
				l.markValid(p, hi)
				p.lengthReg += h.typ.bytes()
			}
			return -1
		}, nil
	case "remove_header", "setInvalid":
		if err := want(1); err != nil {
			return nil, err
		}
		sel, err := c.headerSelArg(args[0])
		if err != nil {
			return nil, err
		}
		headers := c.l.headers
		return func(p *packet) int {
			if hi, ok := sel(p); ok && p.valid[hi] {
				p.valid[hi] = false
				p.lengthReg -= headers[hi].typ.bytes()
			}
			return -1
		}, nil
	case "push", "pop":
		if err := want(2); err != nil {
			return nil, err
		}
		return c.pushPop(pr.Op == "push", args)
	case "mark_to_drop", "drop", "mark_for_drop":
		spec, grp := c.l.std.egressSpec, c.l.std.mcastGrp
		if spec < 0 {
			return nil, fmt.Errorf("the program has no standard_metadata.egress_spec")
		}
		return func(p *packet) int {
			p.f[spec] = DropPort
			if grp >= 0 {
				p.f[grp] = 0
			}
			return -1
		}, nil
	case "exit":
		return func(p *packet) int { p.exited = true; return -1 }, nil
	case "no_op":
		return func(*packet) int { return -1 }, nil
	case "_jump":
		if err := want(1); err != nil {
			return nil, err
		}
		to, err := constArg(0)
		if err != nil {
			return nil, err
		}
		if to < 0 || int(to) > n {
			return nil, fmt.Errorf("jump to %d, outside the action's %d primitives", to, n)
		}
		c.lastOp = &op{kind: opJump, to: int(to)}
		return func(*packet) int { return int(to) }, nil
	case "_jump_if_zero":
		if err := want(2); err != nil {
			return nil, err
		}
		ce, err := operand(0)
		if err != nil {
			return nil, err
		}
		cond := ce.eval
		to, err := constArg(1)
		if err != nil {
			return nil, err
		}
		if to < 0 || int(to) > n {
			return nil, fmt.Errorf("jump to %d, outside the action's %d primitives", to, n)
		}
		c.lastOp = &op{kind: opJumpIfZero, to: int(to), e: &ce, fn: cond}
		if len(ce.cmps) == 1 {
			c := ce.cmps[0]
			return func(p *packet) int {
				if !c.test(p) {
					return int(to)
				}
				return -1
			}, nil
		}
		return func(p *packet) int {
			if cond(p) == 0 {
				return int(to)
			}
			return -1
		}, nil
	case "count":
		if err := want(2); err != nil {
			return nil, err
		}
		ctr, err := c.counterArg(args[0])
		if err != nil {
			return nil, err
		}
		idx, err := value(1)
		if err != nil {
			return nil, err
		}
		return func(p *packet) int {
			if i := uint64(idx(p)); i < uint64(len(ctr.packets)) {
				ctr.packets[i]++
				ctr.bytes[i] += uint64(p.ingressLen)
			}
			return -1
		}, nil
	case "execute_meter":
		if err := want(3); err != nil {
			return nil, err
		}
		if args[0].Type != "meter_array" {
			return nil, fmt.Errorf("parameter 0: want a meter_array, found %s", args[0].Type)
		}
		name, err := args[0].String()
		if err != nil {
			return nil, err
		}
		m := c.sw.meters[name]
		if m == nil || m.direct {
			return nil, fmt.Errorf("no indirect meter %q", name)
		}
		idx, err := value(1)
		if err != nil {
			return nil, err
		}
		dst, err := c.lvalue(args[2])
		if err != nil {
			return nil, err
		}
		sw := c.sw
		return func(p *packet) int {
			i := uint64(idx(p))
			if i >= uint64(len(m.cells)) {
				return -1 // as BMv2: out of range, neither meter nor field changes
			}
			dst(p, int64(m.cells[i].execute(m.size(p), sw.now())))
			return -1
		}, nil
	case "register_read":
		if err := want(3); err != nil {
			return nil, err
		}
		dst, err := c.lvalue(args[0])
		if err != nil {
			return nil, err
		}
		reg, err := c.registerArg(args[1])
		if err != nil {
			return nil, err
		}
		ie, err := operand(2)
		if err != nil {
			return nil, err
		}
		idx := ie.eval
		if slot, w, ok := c.plainField(args[0]); ok && ie.leaf != nil {
			// The common form, a field read at an index a field
			// holds: inline, without the lvalue and index calls.
			il, m, cells := *ie.leaf, ones(w), reg.cells
			c.lastOp = &op{kind: opRegRead, dst: slot, src: il, mask: m, cells: cells}
			return func(p *packet) int {
				if i := uint64(il.get(p)); i < uint64(len(cells)) {
					p.f[slot] = cells[i] & m
				}
				return -1
			}, nil
		}
		return func(p *packet) int {
			if i := uint64(idx(p)); i < uint64(len(reg.cells)) {
				dst(p, int64(reg.cells[i]))
			}
			return -1
		}, nil
	case "register_write":
		if err := want(3); err != nil {
			return nil, err
		}
		reg, err := c.registerArg(args[0])
		if err != nil {
			return nil, err
		}
		ie, err := operand(1)
		if err != nil {
			return nil, err
		}
		se, err := operand(2)
		if err != nil {
			return nil, err
		}
		idx, src := ie.eval, se.eval
		if ie.leaf != nil && se.leaf != nil {
			il, sl, m, cells := *ie.leaf, *se.leaf, ones(reg.width), reg.cells
			c.lastOp = &op{kind: opRegWrite, src: il, val: sl, mask: m, cells: cells}
			return func(p *packet) int {
				if i := uint64(il.get(p)); i < uint64(len(cells)) {
					cells[i] = uint64(sl.get(p)) & m // wrap, unsigned
				}
				return -1
			}, nil
		}
		return func(p *packet) int {
			if i := uint64(idx(p)); i < uint64(len(reg.cells)) {
				reg.cells[i] = wrap(src(p), reg.width, false)
			}
			return -1
		}, nil
	case "modify_field_with_hash_based_offset":
		if err := want(4); err != nil {
			return nil, err
		}
		dst, err := c.lvalue(args[0])
		if err != nil {
			return nil, err
		}
		be, err := operand(1)
		if err != nil {
			return nil, err
		}
		base := be.eval
		if args[2].Type != "calculation" {
			return nil, fmt.Errorf("parameter 2: want a calculation, found %s", args[2].Type)
		}
		name, err := args[2].String()
		if err != nil {
			return nil, err
		}
		calc := c.sw.calcs[name]
		if calc == nil {
			return nil, fmt.Errorf("unknown calculation %q", name)
		}
		se, err := operand(3)
		if err != nil {
			return nil, err
		}
		size := se.eval
		if slot, w, ok := c.plainField(args[0]); ok && be.konst && se.konst {
			// The common form: constant base and size, a field
			// assigned; a size that is a power of two a mask.
			b, sz, m := uint64(be.k), uint64(se.k), ones(w)
			if sz == 0 {
				sz = 1
			}
			if sz&(sz-1) == 0 {
				return func(p *packet) int {
					p.f[slot] = (calc.compute(p)&(sz-1) + b) & m
					return -1
				}, nil
			}
			return func(p *packet) int {
				p.f[slot] = (calc.compute(p)%sz + b) & m
				return -1
			}, nil
		}
		return func(p *packet) int {
			sz := uint64(size(p))
			if sz == 0 {
				sz = 1 // as BMv2: a size of 0 counts as 1
			}
			dst(p, int64(calc.compute(p)%sz+uint64(base(p))))
			return -1
		}, nil
	case "modify_field_rng_uniform":
		if err := want(3); err != nil {
			return nil, err
		}
		dst, err := c.lvalue(args[0])
		if err != nil {
			return nil, err
		}
		lo, err := value(1)
		if err != nil {
			return nil, err
		}
		hi, err := value(2)
		if err != nil {
			return nil, err
		}
		sw := c.sw
		return func(p *packet) int {
			l, h := uint64(lo(p)), uint64(hi(p))
			if l > h {
				return -1 // as BMv2: unspecified, the field is left alone
			}
			dst(p, int64(l+sw.random(h-l)))
			return -1
		}, nil
	case "truncate":
		if err := want(1); err != nil {
			return nil, err
		}
		n, err := value(0)
		if err != nil {
			return nil, err
		}
		return func(p *packet) int {
			if v := int(n(p)); p.truncate == 0 || v < p.truncate {
				p.truncate = max(v, 1)
			}
			return -1
		}, nil
	case "generate_digest":
		if err := want(2); err != nil {
			return nil, err
		}
		id, err := constArg(1)
		if err != nil {
			return nil, err
		}
		if c.sw.learnLists[int(id)] == nil {
			return nil, fmt.Errorf("learn list %d is not in learn_lists", id)
		}
		return func(p *packet) int { p.learnList = int(id); return -1 }, nil
	case "clone_ingress_pkt_to_egress", "clone_egress_pkt_to_egress":
		if err := want(2); err != nil {
			return nil, err
		}
		session, err := value(0)
		if err != nil {
			return nil, err
		}
		fl, err := constArg(1)
		if err != nil {
			return nil, err
		}
		if _, ok := c.sw.fieldLists[int(fl)]; fl != 0 && !ok {
			return nil, fmt.Errorf("field list %d is not in field_lists", fl)
		}
		return func(p *packet) int {
			p.cloneSession = int(uint16(session(p))) + 1
			p.cloneList = int(fl)
			return -1
		}, nil
	case "resubmit", "recirculate":
		if err := want(1); err != nil {
			return nil, err
		}
		fl, err := constArg(0)
		if err != nil {
			return nil, err
		}
		if _, ok := c.sw.fieldLists[int(fl)]; fl != 0 && !ok {
			return nil, fmt.Errorf("field list %d is not in field_lists", fl)
		}
		// BMv2 keeps the field list id as the flag: 0 would mean none, so
		// an empty list is recorded as -1.
		flag := int(fl)
		if flag == 0 {
			flag = -1
		}
		if pr.Op == "resubmit" {
			return func(p *packet) int { p.resubmitList = flag; return -1 }, nil
		}
		return func(p *packet) int { p.recircList = flag; return -1 }, nil
	case "log_msg":
		return c.logMsg(args)
	case "assert", "assume":
		if err := want(1); err != nil {
			return nil, err
		}
		cond, err := value(0)
		if err != nil {
			return nil, err
		}
		sw, where, op := c.sw, c.where, pr.Op
		return func(p *packet) int {
			if cond(p) == 0 {
				sw.assertFailed(op, where)
			}
			return -1
		}, nil
	}
	return nil, fmt.Errorf("primitive %q is not handled by this target", pr.Op)
}

// lvalue compiles a destination: a field, truncated on assignment to its
// width as BMv2 stores it.
// assignField compiles an assignment to a plain field (most of a
// program's) as one closure that stores into the field's slot, with a
// constant source masked once here and a field source read inline: the
// general form calls a store closure and a source closure per packet.
// ok is false for any other destination.
func (c *compiler) assignField(args []bmjson.Value) (prim, bool, error) {
	if args[0].Type != "field" {
		return nil, false, nil
	}
	ref, err := args[0].Strings()
	if err != nil || len(ref) != 2 {
		return nil, false, nil
	}
	slot, _, f, err := c.l.field(ref[0], ref[1])
	if err != nil || f == nil {
		return nil, false, nil
	}
	src, err := c.compileValue(&args[1])
	if err != nil {
		return nil, true, fmt.Errorf("parameter 1: %w", err)
	}
	w, signed := f.width, f.signed
	for src.under != nil && src.underMask&ones(w) == ones(w) {
		src = *src.under // the store masks to w bits as the & did
	}
	m := ones(w)
	switch {
	case src.konst:
		v := wrap(src.k, w, signed)
		c.lastOp = &op{kind: opMove, dst: slot, src: leaf{add: int64(v)}, mask: ^uint64(0)}
		return func(p *packet) int { p.f[slot] = v; return -1 }, true, nil
	case src.leaf != nil && !signed:
		l := *src.leaf
		c.lastOp = &op{kind: opMove, dst: slot, src: l, mask: m}
		return func(p *packet) int { p.f[slot] = uint64(l.get(p)) & m; return -1 }, true, nil
	case src.leaf != nil:
		l := *src.leaf
		return func(p *packet) int { p.f[slot] = wrap(l.get(p), w, signed); return -1 }, true, nil
	}
	sf := src.eval
	if src.sum != nil && !signed {
		ts := src.sum
		c.lastOp = &op{kind: opSum, dst: slot, ts: ts, mask: m}
		return func(p *packet) int { p.f[slot] = uint64(sumEval(ts, p)) & m; return -1 }, true, nil
	}
	if !signed {
		c.lastOp = &op{kind: opExpr, dst: slot, mask: m, e: &src, fn: sf}
		return func(p *packet) int { p.f[slot] = uint64(sf(p)) & m; return -1 }, true, nil
	}
	return func(p *packet) int { p.f[slot] = wrap(sf(p), w, signed); return -1 }, true, nil
}

// plainField is the slot and width of an unsigned field named as
// [header, field]; ok is false for anything else (a validity bit, a
// signed field, a stack's field, an expression).
func (c *compiler) plainField(v bmjson.Value) (slot, width int, ok bool) {
	if v.Type != "field" {
		return 0, 0, false
	}
	ref, err := v.Strings()
	if err != nil || len(ref) != 2 {
		return 0, 0, false
	}
	slot, _, f, err := c.l.field(ref[0], ref[1])
	if err != nil || f == nil || f.signed {
		return 0, 0, false
	}
	return slot, f.width, true
}

func (c *compiler) lvalue(v bmjson.Value) (func(p *packet, x int64), error) {
	switch v.Type {
	case "field":
		ref, err := v.Strings()
		if err != nil || len(ref) != 2 {
			return nil, fmt.Errorf("field: want [header, field], found %s", v.Value)
		}
		slot, h, f, err := c.l.field(ref[0], ref[1])
		if err != nil {
			return nil, err
		}
		if f == nil {
			hi := c.l.byName[h.name]
			set := c.validSetter(hi)
			return func(p *packet, x int64) {
				if x != 0 {
					set(p)
				} else {
					p.valid[hi] = false
				}
			}, nil
		}
		w, signed := f.width, f.signed
		return func(p *packet, x int64) { p.f[slot] = wrap(x, w, signed) }, nil
	case "stack_field":
		ref, err := v.Strings()
		if err != nil || len(ref) != 2 {
			return nil, fmt.Errorf("stack_field: want [stack, field], found %s", v.Value)
		}
		si, ok := c.l.stackBy[ref[0]]
		if !ok {
			return nil, fmt.Errorf("unknown header stack %q", ref[0])
		}
		st := c.l.stacks[si]
		fi, ok := st.typ.index[ref[1]]
		if !ok {
			return nil, fmt.Errorf("stack %q has no field %q", ref[0], ref[1])
		}
		f := st.typ.fields[fi]
		bases := make([]int, len(st.headers))
		for i, h := range st.headers {
			bases[i] = c.l.headers[h].base + fi
		}
		return func(p *packet, x int64) {
			if n := p.next[si]; n > 0 {
				p.f[bases[n-1]] = wrap(x, f.width, f.signed)
			}
		}, nil
	case "expression":
		var e bmjson.Expr
		if err := jsonUnmarshal(v.Value, &e); err != nil || e.Op == "" {
			var inner bmjson.Value
			if jsonUnmarshal(v.Value, &inner) == nil && inner.Type == "expression" {
				return c.lvalue(inner)
			}
			return nil, fmt.Errorf("assignment to an expression %s", v.Value)
		}
		if e.Op != "access_field" {
			return nil, fmt.Errorf("assignment to a %s expression is not handled by this target", e.Op)
		}
		slot, f, err := c.accessField(&e)
		if err != nil {
			return nil, err
		}
		return func(p *packet, x int64) {
			if s, ok := slot(p); ok {
				p.f[s] = wrap(x, f.width, f.signed)
			}
		}, nil
	}
	return nil, fmt.Errorf("assignment to a %q is not handled by this target", v.Type)
}

func (c *compiler) headerArg(v bmjson.Value) (int, error) {
	if v.Type != "header" {
		return 0, fmt.Errorf("want a header, found %s", v.Type)
	}
	name, err := v.String()
	if err != nil {
		return 0, err
	}
	return c.l.header(name)
}

func (c *compiler) assignHeader(args []bmjson.Value) (prim, error) {
	dst, err := c.headerArg(args[0])
	if err != nil {
		return nil, err
	}
	src, err := c.headerArg(args[1])
	if err != nil {
		return nil, err
	}
	d, s := c.l.headers[dst], c.l.headers[src]
	if d.typ != s.typ {
		return nil, fmt.Errorf("assign_header: %q is %s, %q is %s", d.name, d.typ.name, s.name, s.typ.name)
	}
	nf := len(d.typ.fields)
	set := c.validSetter(dst)
	return func(p *packet) int {
		copy(p.f[d.base:d.base+nf], p.f[s.base:s.base+nf])
		if p.valid[src] {
			set(p)
		} else {
			p.valid[dst] = false
		}
		return -1
	}, nil
}

func (c *compiler) pushPop(push bool, args []bmjson.Value) (prim, error) {
	if args[0].Type != "header_stack" {
		return nil, fmt.Errorf("want a header stack, found %s", args[0].Type)
	}
	name, err := args[0].String()
	if err != nil {
		return nil, err
	}
	si, ok := c.l.stackBy[name]
	if !ok {
		return nil, fmt.Errorf("unknown header stack %q", name)
	}
	e, err := c.compileValue(&args[1])
	if err != nil {
		return nil, err
	}
	count := e.eval
	st := c.l.stacks[si]
	size := len(st.headers)
	nf := len(st.typ.fields)
	hs := st.headers
	l := c.l
	move := func(p *packet, to, from int) {
		dh, sh := l.headers[hs[to]], l.headers[hs[from]]
		copy(p.f[dh.base:dh.base+nf], p.f[sh.base:sh.base+nf])
		p.valid[hs[to]] = p.valid[hs[from]]
	}
	return func(p *packet) int {
		k := int(count(p))
		if k <= 0 {
			return -1
		}
		k = min(k, size)
		if push {
			// push_front: elements move up, the first k become invalid.
			for i := size - 1; i >= k; i-- {
				move(p, i, i-k)
			}
			for i := 0; i < k; i++ {
				p.valid[hs[i]] = false
			}
			p.next[si] = min(p.next[si]+k, size)
		} else {
			for i := 0; i+k < size; i++ {
				move(p, i, i+k)
			}
			for i := size - k; i < size; i++ {
				p.valid[hs[i]] = false
			}
			p.next[si] = max(p.next[si]-k, 0)
		}
		return -1
	}, nil
}

func (c *compiler) counterArg(v bmjson.Value) (*counterArray, error) {
	if v.Type != "counter_array" {
		return nil, fmt.Errorf("want a counter_array, found %s", v.Type)
	}
	name, err := v.String()
	if err != nil {
		return nil, err
	}
	ctr := c.sw.counters[name]
	if ctr == nil {
		return nil, fmt.Errorf("unknown counter %q", name)
	}
	return ctr, nil
}

func (c *compiler) registerArg(v bmjson.Value) (*registerArray, error) {
	if v.Type != "register_array" {
		return nil, fmt.Errorf("want a register_array, found %s", v.Type)
	}
	name, err := v.String()
	if err != nil {
		return nil, err
	}
	reg := c.sw.registers[name]
	if reg == nil {
		return nil, fmt.Errorf("unknown register %q", name)
	}
	return reg, nil
}

// logMsg compiles log_msg(format, {values}): logged at info level, as
// BMv2 logs it, only when that level is on.
func (c *compiler) logMsg(args []bmjson.Value) (prim, error) {
	if len(args) == 0 || args[0].Type != "string" {
		return nil, fmt.Errorf("log_msg: want a format string")
	}
	format, err := args[0].String()
	if err != nil {
		return nil, err
	}
	var vals []func(*packet) int64
	if len(args) > 1 {
		var list []bmjson.Value
		if args[1].Type != "parameters_vector" {
			return nil, fmt.Errorf("log_msg: want a parameters_vector, found %s", args[1].Type)
		}
		if err := json.Unmarshal(args[1].Value, &list); err != nil {
			return nil, fmt.Errorf("log_msg: %v", err)
		}
		for i := range list {
			e, err := c.compileValue(&list[i])
			if err != nil {
				return nil, fmt.Errorf("log_msg: value %d: %w", i, err)
			}
			vals = append(vals, e.eval)
		}
	}
	sw := c.sw
	return func(p *packet) int {
		if sw.log.Enabled(context.Background(), slog.LevelInfo) {
			sw.logMessage(format, vals, p)
		}
		return -1
	}, nil
}
