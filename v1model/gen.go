package v1model

//go:generate go test -run TestGeneratedControls -update .

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A control can also run as Go code generated from its compiled form
// (gen_controls.go, written by TestGeneratedControls with -update): the
// same nodes and primitives, with every slot, mask and constant written
// into the code and the graph's edges as gotos, so a packet pays no
// dispatch on node kinds, op kinds or comparison operators. What the
// interpreter runs by a call (a table's search, an action with
// parameters, a hash) the generated code calls too, through genState.
//
// Generated code is looked up by the SHA-256 of the body the generator
// writes for the control just compiled: a program, or a compiler, that
// changed in any way that matters gives another body, finds nothing and
// is interpreted as before. The generated code is therefore never stale;
// at worst it goes unused, which TestGeneratedControls reports.

// genState is what a generated control reads from its switch: the
// objects the interpreter's nodes and ops hold, in the order the
// generator met them.
type genState struct {
	tables []*Table
	nodes  []*node // where a table may lead
	calls  []prim
	conds  []func(p *packet) int64 // conditions and expressions the generator cannot write
	acts   []*action
	cells  [][]uint64
	// A parser's: the ops it calls, and the states whose transitions
	// it calls or compares with.
	pops    []parseOp
	pstates []*parseState
}

// genControl is a generated control.
type genControl func(p *packet, g *genState)

// genParser is a generated parser: it returns the error code that ended
// parsing, or 0.
type genParser func(p *packet, g *genState) int

// generatedParsers holds the generated parsers built in, by the hex
// SHA-256 of their bodies.
var generatedParsers = map[string]genParser{}

// useGenerated gives ps the generated code written for it, if any is
// built in; timeout is the program's ParserTimeout code.
func (ps *parser) useGenerated(timeout int) bool {
	body, st := generateParser(ps, timeout)
	f := generatedParsers[bodyKey(body)]
	if f == nil {
		return false
	}
	ps.gen, ps.g = f, st
	return true
}

// generateParser is the body of ps, up to its checksums, as Go code,
// and the state it runs with: the states as labels, each counting a
// step as parser.run does, extracts with a codec called directly.
func generateParser(ps *parser, timeout int) (string, *genState) {
	g := &generator{maxSlot: -1, maxValid: -1}
	var order []*parseState
	pos := map[*parseState]int{}
	var visit func(st *parseState)
	visit = func(st *parseState) {
		if st == nil {
			return
		}
		if _, seen := pos[st]; seen {
			return
		}
		pos[st] = len(order)
		order = append(order, st)
		for i := range st.cases {
			visit(st.cases[i].next)
		}
		visit(st.deflt)
	}
	visit(ps.init)
	jumped := map[int]bool{}
	to := func(at int, st *parseState) string { // a jump that may fall through
		if st == nil {
			return "\treturn 0\n"
		}
		if pos[st] == at+1 {
			return ""
		}
		jumped[pos[st]] = true
		return fmt.Sprintf("\tgoto s%d\n", pos[st])
	}
	far := func(st *parseState) string { // a jump inside a block
		if st == nil {
			return "\treturn 0\n"
		}
		jumped[pos[st]] = true
		return fmt.Sprintf("\tgoto s%d\n", pos[st])
	}
	code := make([]string, len(order))
	for at, st := range order {
		var b strings.Builder
		fmt.Fprintf(&b, "\tif steps == %d {\n\t\treturn %d\n\t}\n", maxParseSteps, timeout)
		if leadsOn(st) { // a state that ends parsing has no step to count
			b.WriteString("\tsteps++\n")
		}
		for k, op := range st.ops {
			ex := st.extracts[k]
			if ex == nil {
				fmt.Fprintf(&b, "\tif code := g.pops[%d](p); code != 0 {\n\t\treturn code\n\t}\n", len(g.st.pops))
				g.st.pops = append(g.st.pops, op)
				continue
			}
			// The interpreter's extract where the frame is too short or
			// the header ends too near the buffer's end for the codec.
			fn := "extract" + ex.codec.genKey()[:12]
			g.maxValid = max(g.maxValid, ex.hi)
			fmt.Fprintf(&b, "\tif p.n-p.payload >= %d && p.payload+%d <= len(p.buf) {\n\t\t%s(p.buf[p.payload:], f[%d:%d])\n\t\tvalid[%d] = true\n\t\tp.payload += %d\n\t} else if code := g.pops[%d](p); code != 0 {\n\t\treturn code\n\t}\n",
				ex.bytes, ex.codec.span, fn, ex.base, ex.base+ex.nf, ex.hi, ex.bytes, len(g.st.pops))
			g.maxSlot = max(g.maxSlot, ex.base+ex.nf-1)
			g.st.pops = append(g.st.pops, op)
		}
		switch {
		case len(st.cases) == 0:
			b.WriteString(to(at, st.deflt))
		case st.word:
			fmt.Fprintf(&b, "\tswitch k := %s; {\n", g.masked(st.wordLeaf, st.wordMask))
			for i, wc := range st.wordCases {
				fmt.Fprintf(&b, "\tcase k&%s == %s:\n\t%s", hexConst(wc.mask), hexConst(wc.value), far(st.cases[i].next))
			}
			b.WriteString("\t}\n")
			b.WriteString(to(at, st.deflt))
		default:
			fmt.Fprintf(&b, "\tif t, code := g.pstates[%d].choose(p); code != 0 {\n\t\treturn code\n\t}", len(g.st.pstates))
			g.st.pstates = append(g.st.pstates, st)
			var seen []*parseState
			for _, c := range st.cases {
				if slices.Contains(seen, c.next) {
					continue
				}
				seen = append(seen, c.next)
				if c.next == nil {
					b.WriteString(" else if t == nil {\n\t" + far(nil) + "\t}")
					continue
				}
				fmt.Fprintf(&b, " else if t == g.pstates[%d] {\n\t%s\t}", len(g.st.pstates), far(c.next))
				g.st.pstates = append(g.st.pstates, c.next)
			}
			b.WriteString("\n")
			b.WriteString(to(at, st.deflt))
		}
		code[at] = b.String()
	}
	var b strings.Builder
	if g.maxSlot >= 0 {
		fmt.Fprintf(&b, "\tf := p.f\n\t_ = f[%d]\n", g.maxSlot)
	}
	if g.maxValid >= 0 {
		fmt.Fprintf(&b, "\tvalid := p.valid\n\t_ = valid[%d]\n", g.maxValid)
	}
	b.WriteString("\tsteps := 0\n")
	for at := range order {
		if jumped[at] {
			fmt.Fprintf(&b, "s%d:\n", at)
		}
		b.WriteString(code[at])
	}
	if len(order) == 0 {
		// Otherwise the last state ends in a return or a goto: no state
		// comes after it to fall into.
		b.WriteString("\treturn 0\n")
	}
	return b.String(), &g.st
}

// generatedControls holds the generated controls built in, by the hex
// SHA-256 of their bodies.
var generatedControls = map[string]genControl{}

// useGenerated gives ctl the generated code written for it, if any is
// built in; it reports whether there was.
func (ctl *control) useGenerated() bool {
	body, st := generate(ctl)
	f := generatedControls[bodyKey(body)]
	if f == nil {
		return false
	}
	ctl.gen, ctl.g = f, st
	return true
}

func bodyKey(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// generator writes one control's body.
type generator struct {
	st    genState
	order []*node
	pos   map[*node]int
	// code is each node's statements, without its label; jumped marks
	// the nodes a goto leads to, which alone get a label.
	code   []string
	jumped map[*node]bool
	// maxSlot and maxValid bound the slots and validity bits the body
	// reads, for one bounds check each at its top.
	maxSlot, maxValid int
}

// generate is the body of ctl as Go code and the state it runs with.
func generate(ctl *control) (string, *genState) {
	g := &generator{pos: map[*node]int{}, jumped: map[*node]bool{}, maxSlot: -1, maxValid: -1}
	g.visit(ctl.start)
	for _, n := range g.order {
		g.code = append(g.code, g.node(n))
	}
	var b strings.Builder
	if g.maxSlot >= 0 {
		fmt.Fprintf(&b, "\tf := p.f\n\t_ = f[%d]\n", g.maxSlot)
	}
	if g.maxValid >= 0 {
		fmt.Fprintf(&b, "\tvalid := p.valid\n\t_ = valid[%d]\n", g.maxValid)
	}
	for i, n := range g.order {
		if g.jumped[n] {
			fmt.Fprintf(&b, "n%d:\n", i)
		}
		b.WriteString(g.code[i])
	}
	return b.String(), &g.st
}

// visit puts the nodes reachable from n in order, depth first, each
// node's first successor right after it where it can, so that the most
// common edge falls through instead of jumping.
func (g *generator) visit(n *node) {
	for range 1 << 16 { // a bound: see decided
		if n == nil {
			return
		}
		if _, seen := g.pos[n]; seen {
			return
		}
		g.pos[n] = len(g.order)
		g.order = append(g.order, n)
		next := successors(n)
		if len(next) == 0 {
			return
		}
		for _, m := range next[1:] {
			defer g.visit(m)
		}
		n = next[0]
	}
}

// successors is where n may lead, in the order the interpreter tries.
func successors(n *node) []*node {
	switch {
	case n.block != nil:
		return []*node{n.after}
	case n.table != nil:
		return tableNext(n.table)
	case n.test != nil, n.tests != nil, n.cond != nil:
		return []*node{n.t, n.f}
	}
	return []*node{n.next}
}

// tableNext is every node a table may lead to, without repeats.
func tableNext(t *Table) []*node {
	var ns []*node
	add := func(n *node) {
		for _, m := range ns {
			if m == n {
				return
			}
		}
		ns = append(ns, n)
	}
	if t.hitMiss {
		add(t.hit)
		add(t.miss)
	} else {
		for _, n := range t.nextNode {
			add(n)
		}
		add(t.baseNext)
	}
	return ns
}

// jump is the statement that goes from the node at position at to n:
// nothing where n comes next, return where n is the end.
func (g *generator) jump(at int, n *node) string {
	if n == nil {
		if at == len(g.order)-1 {
			return ""
		}
		return "\treturn\n"
	}
	if g.pos[n] == at+1 {
		return ""
	}
	g.jumped[n] = true
	return fmt.Sprintf("\tgoto n%d\n", g.pos[n])
}

func (g *generator) node(n *node) string {
	at := g.pos[n]
	var b strings.Builder
	switch {
	case n.block != nil:
		b.WriteString("\tp.adata = nil\n")
		for i := range n.block {
			g.op(&b, &n.block[i])
		}
		b.WriteString(g.jump(at, n.after))
	case n.table != nil:
		next := tableNext(n.table)
		t := "t := "
		if len(next) == 1 {
			t = ""
		}
		fmt.Fprintf(&b, "\tif %sg.tables[%d].apply(p); p.exited {\n\t\treturn\n\t}", t, len(g.st.tables))
		g.st.tables = append(g.st.tables, n.table)
		// The table's last way out, or the one that comes next, is
		// taken without a test.
		last := len(next) - 1
		for i, m := range next {
			if m != nil && g.pos[m] == at+1 {
				last = i
			}
		}
		for i, m := range next {
			if i == last {
				continue
			}
			if m == nil {
				b.WriteString(" else if t == nil {\n\t")
			} else {
				fmt.Fprintf(&b, " else if t == g.nodes[%d] {\n\t", len(g.st.nodes))
				g.st.nodes = append(g.st.nodes, m)
			}
			b.WriteString(g.farJump(m) + "\t}")
		}
		b.WriteString("\n")
		b.WriteString(g.jump(at, next[last]))
	case n.test != nil, n.tests != nil, n.cond != nil:
		var cond string
		switch {
		case n.test != nil:
			cond = g.cmp(n.test)
		case n.tests != nil:
			cond = g.chain(n.tests, n.any)
		default:
			cond = g.truth(n.ce, n.cond)
		}
		if n.t != nil && g.pos[n.t] == at+1 {
			// The true branch comes next: jump on the false one.
			if n.test != nil {
				c := *n.test
				c.op = negated[c.op]
				cond = g.cmp(&c)
			} else {
				cond = "!(" + cond + ")"
			}
			fmt.Fprintf(&b, "\tif %s {\n\t%s\t}\n", cond, g.farJump(n.f))
		} else {
			fmt.Fprintf(&b, "\tif %s {\n\t%s\t}\n", cond, g.farJump(n.t))
			b.WriteString(g.jump(at, n.f))
		}
	case n.call.steps != nil:
		b.WriteString("\tp.adata = nil\n")
		g.steps(&b, at, n.call)
		b.WriteString(g.jump(at, n.next))
	default:
		fmt.Fprintf(&b, "\tp.adata = nil\n\tif g.acts[%d].run(p); p.exited {\n\t\treturn\n\t}\n", len(g.st.acts))
		g.st.acts = append(g.st.acts, n.call)
		b.WriteString(g.jump(at, n.next))
	}
	return b.String()
}

// farJump is a jump that cannot fall through: it sits inside an if.
func (g *generator) farJump(n *node) string {
	if n == nil {
		return "\treturn\n"
	}
	g.jumped[n] = true
	return fmt.Sprintf("\tgoto n%d\n", g.pos[n])
}

func (g *generator) op(b *strings.Builder, o *op) {
	switch o.kind {
	case opMove:
		fmt.Fprintf(b, "\t%s = %s\n", g.slot(o.dst), g.masked(o.src, o.mask))
	case opRegRead:
		c := g.cellsOf(o.cells)
		fmt.Fprintf(b, "\tif j := %s; j < uint64(len(g.cells[%d])) {\n\t\t%s = g.cells[%d][j]%s\n\t}\n",
			g.masked(o.src, ^uint64(0)), c, g.slot(o.dst), c, maskSuffix(o.mask))
	case opRegWrite:
		c := g.cellsOf(o.cells)
		fmt.Fprintf(b, "\tif j := %s; j < uint64(len(g.cells[%d])) {\n\t\tg.cells[%d][j] = %s\n\t}\n",
			g.masked(o.src, ^uint64(0)), c, c, g.masked(o.val, o.mask))
	case opSum:
		fmt.Fprintf(b, "\t%s = uint64(%s)%s\n", g.slot(o.dst), g.sum(o.ts), maskSuffix(o.mask))
	case opExpr:
		fmt.Fprintf(b, "\t%s = uint64(%s)%s\n", g.slot(o.dst), g.value(o.e, o.fn), maskSuffix(o.mask))
	default:
		fmt.Fprintf(b, "\tif g.calls[%d](p); p.exited {\n\t\treturn\n\t}\n", len(g.st.calls))
		g.st.calls = append(g.st.calls, o.f)
	}
}

// steps writes the body of an action with jumps, called from the node
// at position at, its program counter as labels a<at>_<pc>.
func (g *generator) steps(b *strings.Builder, at int, a *action) {
	label := func(pc int) string { return fmt.Sprintf("a%d_%d", at, pc) }
	target := map[int]bool{}
	for _, o := range a.stepOps {
		if o != nil && (o.kind == opJump || o.kind == opJumpIfZero) {
			target[o.to] = true
		}
	}
	for pc, f := range a.steps {
		if target[pc] {
			b.WriteString(label(pc) + ":\n")
		}
		switch o := a.stepOps[pc]; {
		case o == nil:
			fmt.Fprintf(b, "\tif g.calls[%d](p); p.exited {\n\t\treturn\n\t}\n", len(g.st.calls))
			g.st.calls = append(g.st.calls, f)
		case o.kind == opJump:
			fmt.Fprintf(b, "\tgoto %s\n", label(o.to))
		case o.kind == opJumpIfZero:
			fmt.Fprintf(b, "\tif !(%s) {\n\t\tgoto %s\n\t}\n", g.truth(o.e, o.fn), label(o.to))
		default:
			g.op(b, o)
		}
	}
	if target[len(a.steps)] {
		// The end of the action: a label needs a statement after it.
		b.WriteString(label(len(a.steps)) + ":\n\t;\n")
	}
}

// truth is a condition, e != 0, as a Go bool expression; fn, e's eval,
// is called where the generator cannot write e.
func (g *generator) truth(e *expr, fn func(p *packet) int64) string {
	if e != nil && e.cmps != nil {
		return g.chain(e.cmps, e.any)
	}
	return g.value(e, fn) + " != 0"
}

// chain is comparisons that must all hold (any: one of them) as a Go
// bool expression.
func (g *generator) chain(cs []cmpLeaf, any bool) string {
	parts := make([]string, len(cs))
	for i := range cs {
		parts[i] = g.cmp(&cs[i])
	}
	if any {
		return strings.Join(parts, " || ")
	}
	return strings.Join(parts, " && ")
}

// value is e as a Go int64 expression, or a call of fn, its eval, where
// the generator cannot write e.
func (g *generator) value(e *expr, fn func(p *packet) int64) string {
	if v, ok := g.expr(e); ok {
		return v
	}
	g.st.conds = append(g.st.conds, fn)
	return fmt.Sprintf("g.conds[%d](p)", len(g.st.conds)-1)
}

// expr is e as a Go int64 expression over f and valid, as its eval
// computes it; false where e is not in a form the generator writes (a
// stack's field at an index the packet holds, a saturating cast).
func (g *generator) expr(e *expr) (string, bool) {
	switch {
	case e == nil:
		return "", false
	case e.konst:
		return "int64(" + strconv.FormatInt(e.k, 10) + ")", true
	case e.leaf != nil:
		return g.signed(*e.leaf), true
	case e.cmps != nil:
		return "b2i(" + g.truth(e, nil) + ")", true
	case e.sum != nil:
		return "(" + g.sum(e.sum) + ")", true
	case e.src == nil:
		return "", false
	}
	s := e.src
	x, ok := g.expr(s.a)
	if !ok {
		return "", false
	}
	if s.b == nil { // unary
		switch s.op {
		case "not":
			return "b2i(" + x + " == 0)", true
		case "~":
			return "(^" + x + ")", true
		case "d2b", "b2d":
			return "b2i(" + x + " != 0)", true
		}
		return "", false
	}
	y, ok := g.expr(s.b)
	if !ok {
		return "", false
	}
	if s.op == "?" {
		c, ok := g.expr(s.c)
		if !ok {
			return "", false
		}
		if s.c.cmps != nil {
			c = g.truth(s.c, nil)
		} else {
			c += " != 0"
		}
		return "pick(" + c + ", " + x + ", " + y + ")", true
	}
	uu := s.a.unsigned && s.b.unsigned
	switch s.op {
	case "+", "-", "*", "&", "|", "^":
		return "(" + x + " " + s.op + " " + y + ")", true
	case "<<":
		return "shl(" + x + ", " + y + ")", true
	case ">>":
		if s.a.unsigned {
			return "shrU(" + x + ", " + y + ")", true
		}
		return "shrS(" + x + ", " + y + ")", true
	case "and":
		return "b2i(" + x + " != 0 && " + y + " != 0)", true
	case "or":
		return "b2i(" + x + " != 0 || " + y + " != 0)", true
	case "==", "!=":
		return "b2i(" + x + " " + s.op + " " + y + ")", true
	case "<", "<=", ">", ">=":
		if uu {
			return "b2i(uint64(" + x + ") " + s.op + " uint64(" + y + "))", true
		}
		return "b2i(" + x + " " + s.op + " " + y + ")", true
	}
	return "", false // / and %
}

// sum is a sum's terms as a Go int64 expression.
func (g *generator) sum(ts []sumTerm) string {
	terms := make([]string, len(ts))
	for i := range ts {
		t := &ts[i]
		v := g.signed(t.l)
		if t.c != nil {
			v = "b2i(" + g.cmp(t.c) + ")"
		}
		if t.mul != 1 {
			v += "*" + strconv.FormatInt(t.mul, 10)
		}
		terms[i] = v
	}
	return strings.Join(terms, " + ")
}

// cellsOf is the index in genState of a register's cells.
func (g *generator) cellsOf(cells []uint64) int {
	for i, c := range g.st.cells {
		if len(c) == len(cells) && (len(c) == 0 || &c[0] == &cells[0]) {
			return i
		}
	}
	g.st.cells = append(g.st.cells, cells)
	return len(g.st.cells) - 1
}

func (g *generator) slot(s int) string {
	g.maxSlot = max(g.maxSlot, s)
	return "f[" + strconv.Itoa(s) + "]"
}

func hexConst(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

func maskSuffix(mask uint64) string {
	if mask == ^uint64(0) {
		return ""
	}
	return " & " + hexConst(mask)
}

// masked is uint64(l.get(p)) & mask as a uint64 expression: in uint64
// arithmetic, which wraps as the int64 sum converted does.
func (g *generator) masked(l leaf, mask uint64) string {
	if l.mask == 0 {
		return hexConst(uint64(l.add) & mask)
	}
	v := g.slot(l.slot) + maskSuffix(l.mask)
	if l.add == 0 {
		if mask != ^uint64(0) && mask&l.mask != l.mask {
			return g.slot(l.slot) + maskSuffix(l.mask&mask)
		}
		return v
	}
	v += " + " + hexConst(uint64(l.add))
	if mask != ^uint64(0) {
		v = "(" + v + ")" + maskSuffix(mask)
	}
	return v
}

// signed is l.get(p), an int64 expression.
func (g *generator) signed(l leaf) string {
	if l.mask == 0 {
		return "(" + strconv.FormatInt(l.add, 10) + ")"
	}
	v := "int64(" + g.slot(l.slot) + maskSuffix(l.mask) + ")"
	if l.add != 0 {
		v = "(" + v + " + " + strconv.FormatInt(l.add, 10) + ")"
	}
	return v
}

var cmpText = [...]string{cmpEQ: "==", cmpNE: "!=", cmpLT: "<", cmpLE: "<=", cmpGT: ">", cmpGE: ">=",
	cmpULT: "<", cmpULE: "<=", cmpUGT: ">", cmpUGE: ">="}

// cmp is c.test(p) as a Go condition.
func (g *generator) cmp(c *cmpLeaf) string {
	switch c.op {
	case cmpValid, cmpInvalid:
		g.maxValid = max(g.maxValid, c.x.slot)
		v := "valid[" + strconv.Itoa(c.x.slot) + "]"
		if c.op == cmpInvalid {
			v = "!" + v
		}
		return v
	case cmpEQ, cmpNE, cmpULT, cmpULE, cmpUGT, cmpUGE:
		// Equality is the same in either sign, and the unsigned
		// comparisons are of the values as uint64.
		return g.masked(c.x, ^uint64(0)) + " " + cmpText[c.op] + " " + g.masked(c.y, ^uint64(0))
	}
	return g.signed(c.x) + " " + cmpText[c.op] + " " + g.signed(c.y)
}

// leadsOn is whether st may go on to another state.
func leadsOn(st *parseState) bool {
	for i := range st.cases {
		if st.cases[i].next != nil {
			return true
		}
	}
	return st.deflt != nil
}

// genCodec is a header type's codec as generated code.
type genCodec struct {
	extract, pack func(b []byte, vals []uint64)
}

// generatedCodecs holds the generated codecs built in, by the hex
// SHA-256 of what generate writes for them.
var generatedCodecs = map[string]*genCodec{}

// useGenerated gives c the generated code written for its layout, if
// any is built in.
func (c *codec) useGenerated() { c.gen = generatedCodecs[c.genKey()] }

// genKey is the key of the codec's generated code, computed once: the
// parser's generated code names the codec's functions by it too.
func (c *codec) genKey() string {
	if c.key == "" {
		c.key = bodyKey(c.generate())
	}
	return c.key
}

// generate is the codec's extract and pack as the bodies of two Go
// functions of (b []byte, vals []uint64), in one text: extract's, then
// pack's after a line "//pack".
func (c *codec) generate() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\t_ = b[%d]\n\t_ = vals[%d]\n", c.span-1, len(c.fields)-1)
	for _, w := range c.words {
		fmt.Fprintf(&b, "\tx%d := endian.BigEndian.Uint64(b[%d:])\n", w.at, w.at)
		for i := w.first; i < w.last; i++ {
			f := &c.fields[i]
			v := fmt.Sprintf("x%d>>%d&%s", w.at, f.shift, hexConst(f.mask))
			if f.signed {
				v = fmt.Sprintf("wrap(int64(%s), %d, true)", v, f.width)
			}
			fmt.Fprintf(&b, "\tvals[%d] = %s\n", i, v)
		}
	}
	fmt.Fprintf(&b, "//pack\n\t_ = b[%d]\n\t_ = vals[%d]\n", c.span-1, len(c.fields)-1)
	for _, w := range c.words {
		parts := make([]string, 0, w.last-w.first)
		for i := w.first; i < w.last; i++ {
			f := &c.fields[i]
			parts = append(parts, fmt.Sprintf("vals[%d]&%s<<%d", i, hexConst(f.mask), f.shift))
		}
		fmt.Fprintf(&b, "\tendian.BigEndian.PutUint64(b[%d:], %s)\n", w.at, strings.Join(parts, "|"))
	}
	return b.String()
}
