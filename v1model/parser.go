package v1model

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// Core error codes, as BMv2 numbers them when the JSON does not.
var coreErrors = []string{"NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort", "ParserTimeout", "ParserInvalidArgument"}

// parseOp runs one parser operation; a non-zero result is the error code
// that ends parsing.
type parseOp func(p *packet) int

// keyPart writes its part of a select key into dst and returns the bytes
// written, or an error code.
type keyPart func(p *packet, dst []byte) (int, int)

type parseCase struct {
	value, mask []byte
	vset        *ValueSet // a parser value set instead of value/mask
	next        *parseState
}

type parseState struct {
	name string
	ops  []parseOp
	// extracts, beside ops, is the header each op extracts with a
	// codec (not in a union or a stack), for the generator (gen.go);
	// nil for the others.
	extracts []*headerSpan
	key      []keyPart
	keyLen   int
	cases    []parseCase
	deflt    *parseState
	hasDflt  bool
	// word: the key is one field read as a leaf, of at most 8 bytes,
	// and no case is a value set, so that the cases compare numbers
	// (wordCases, beside cases) instead of the key's bytes.
	word      bool
	wordLeaf  leaf
	wordMask  uint64 // the key's bytes
	wordCases []wordCase
}

// wordCase is a case's value and mask as numbers, the value masked.
type wordCase struct{ value, mask uint64 }

type parser struct {
	init *parseState
	// gen, when set, is the parser as generated code (gen.go): the
	// states and their transitions, run with g; it returns the error
	// code that ended parsing, or 0.
	gen genParser
	g   *genState
	// verify lists the checksums checked after parsing.
	verify []*checksum
}

// maxParseSteps bounds a parser loop: a program whose states loop
// without consuming input gets ParserTimeout, as it would on hardware.
const maxParseSteps = 1000

// run parses p.buf[:p.n] from the start.
func (ps *parser) run(p *packet, errs *errorCodes) {
	p.parserError = 0
	p.checksumErr = false
	p.payload = 0
	st := ps.init
	if ps.gen != nil {
		p.parserError = ps.gen(p, ps.g)
		st = nil
	}
	for steps := 0; st != nil; steps++ {
		if steps == maxParseSteps {
			p.parserError = errs.timeout
			break
		}
		if code := st.run(p); code != 0 {
			p.parserError = code
			break
		}
		next, code := st.choose(p)
		if code != 0 {
			p.parserError = code
			break
		}
		st = next
	}
	for _, c := range ps.verify {
		if c.cond != nil && c.cond(p) == 0 {
			continue
		}
		if c.compute(p) != p.f[c.slot] {
			p.checksumErr = true
		}
	}
}

func (st *parseState) run(p *packet) int {
	for _, op := range st.ops {
		if code := op(p); code != 0 {
			return code
		}
	}
	return 0
}

func (st *parseState) choose(p *packet) (*parseState, int) {
	if len(st.cases) == 0 {
		return st.deflt, 0
	}
	if st.word {
		k := uint64(st.wordLeaf.get(p)) & st.wordMask
		for i := range st.wordCases {
			if c := &st.wordCases[i]; k&c.mask == c.value {
				return st.cases[i].next, 0
			}
		}
		return st.deflt, 0
	}
	if st.keyLen > cap(p.key) {
		p.key = make([]byte, st.keyLen) // once per packet buffer, for long keys
	}
	key := p.key[:st.keyLen]
	off := 0
	for _, k := range st.key {
		n, code := k(p, key[off:])
		if code != 0 {
			return nil, code
		}
		off += n
	}
	for i := range st.cases {
		c := &st.cases[i]
		if c.vset != nil {
			if c.vset.match(key) {
				return c.next, 0
			}
			continue
		}
		if maskedEqual(key, c.value, c.mask) {
			return c.next, 0
		}
	}
	return st.deflt, 0
}

func maskedEqual(key, value, mask []byte) bool {
	for i := range key {
		m := byte(0xff)
		if mask != nil {
			m = mask[i]
		}
		if key[i]&m != value[i]&m {
			return false
		}
	}
	return true
}

// errorCodes maps the program's error names to their values.
type errorCodes struct {
	byName                                            map[string]int
	tooShort, noMatch, stackOut, headerShort, timeout int
}

func newErrorCodes(doc *bmjson.Document) (*errorCodes, error) {
	e := &errorCodes{byName: map[string]int{}}
	for i, n := range coreErrors {
		e.byName[n] = i
	}
	for _, pair := range doc.Errors {
		var name string
		var v int
		if json.Unmarshal(pair[0], &name) != nil || json.Unmarshal(pair[1], &v) != nil {
			return nil, fmt.Errorf("errors: want [name, value] pairs")
		}
		e.byName[name] = v
	}
	e.tooShort, e.noMatch = e.byName["PacketTooShort"], e.byName["NoMatch"]
	e.stackOut, e.headerShort = e.byName["StackOutOfBounds"], e.byName["HeaderTooShort"]
	e.timeout = e.byName["ParserTimeout"]
	return e, nil
}

func (c *compiler) compileParser(bp *bmjson.Parser) (*parser, error) {
	states := map[string]*parseState{}
	for i := range bp.ParseStates {
		s := &bp.ParseStates[i]
		states[s.Name] = &parseState{name: s.Name}
	}
	for i := range bp.ParseStates {
		s := &bp.ParseStates[i]
		st := states[s.Name]
		for j := range s.ParserOps {
			op := &s.ParserOps[j]
			c.where = fmt.Sprintf("parser %q state %q op %d (%s)", bp.Name, s.Name, j, op.Op)
			if src := op.Source.String(); src != "" {
				c.where += " at " + src
			}
			c.lastExtract = nil
			f, err := c.compileParseOp(op)
			if err != nil {
				return nil, c.errorf("%v", err)
			}
			st.ops = append(st.ops, f)
			st.extracts = append(st.extracts, c.lastExtract)
		}
		c.where = fmt.Sprintf("parser %q state %q transition key", bp.Name, s.Name)
		for _, k := range s.TransitionKey {
			part, n, err := c.compileKeyPart(k)
			if err != nil {
				return nil, c.errorf("%v", err)
			}
			st.key = append(st.key, part)
			st.keyLen += n
		}
		for j, t := range s.Transitions {
			c.where = fmt.Sprintf("parser %q state %q transition %d", bp.Name, s.Name, j)
			var next *parseState
			if t.NextState != nil {
				next = states[*t.NextState]
				if next == nil {
					return nil, c.errorf("unknown next state %q", *t.NextState)
				}
			}
			switch t.Type {
			case "default":
				if !st.hasDflt {
					st.deflt, st.hasDflt = next, true
				}
			case "hexstr":
				var v string
				if err := json.Unmarshal(t.Value, &v); err != nil {
					return nil, c.errorf("value: %v", err)
				}
				value, err := hexBytes(v, st.keyLen)
				if err != nil {
					return nil, c.errorf("value: %v", err)
				}
				pc := parseCase{value: value, next: next}
				if len(t.Mask) > 0 && string(t.Mask) != "null" {
					var m string
					if err := json.Unmarshal(t.Mask, &m); err != nil {
						return nil, c.errorf("mask: %v", err)
					}
					if pc.mask, err = hexBytes(m, st.keyLen); err != nil {
						return nil, c.errorf("mask: %v", err)
					}
				}
				st.cases = append(st.cases, pc)
			case "parse_vset":
				var name string
				if err := json.Unmarshal(t.Value, &name); err != nil {
					return nil, c.errorf("value: %v", err)
				}
				vs := c.sw.vsets[name]
				if vs == nil {
					return nil, c.errorf("unknown parser value set %q", name)
				}
				if vs.width != st.keyLen {
					return nil, c.errorf("value set %q holds %d-byte values, the key is %d bytes", name, vs.width, st.keyLen)
				}
				pc := parseCase{vset: vs, next: next}
				if len(t.Mask) > 0 && string(t.Mask) != "null" {
					return nil, c.errorf("masked parser value sets are not handled by this target")
				}
				st.cases = append(st.cases, pc)
			default:
				return nil, c.errorf("transition type %q is not handled by this target", t.Type)
			}
		}
		if len(s.TransitionKey) == 1 && s.TransitionKey[0].Type == "field" && st.keyLen <= 8 {
			if e, _, err := c.widthOf(s.TransitionKey[0]); err == nil && e.leaf != nil {
				st.wordCases = wordCases(st.cases, st.keyLen)
				st.word, st.wordLeaf, st.wordMask = st.wordCases != nil, *e.leaf, ones(st.keyLen*8)
			}
		}
	}
	init := states[bp.InitState]
	if init == nil {
		return nil, fmt.Errorf("parser %q: unknown init_state %q", bp.Name, bp.InitState)
	}
	return &parser{init: init}, nil
}

// hexBytes decodes a hexstr into exactly n bytes, left-padding with zeros.
func hexBytes(s string, n int) ([]byte, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if len(t)%2 == 1 {
		t = "0" + t
	}
	b, err := hex.DecodeString(t)
	if err != nil {
		return nil, fmt.Errorf("%q: %v", s, err)
	}
	for len(b) > n && b[0] == 0 {
		b = b[1:]
	}
	if len(b) > n {
		return nil, fmt.Errorf("%q is wider than the %d-byte key", s, n)
	}
	return append(make([]byte, n-len(b)), b...), nil
}

// wordCases is cases as numbers of n bytes, or nil if one is a value
// set (or there are none).
func wordCases(cases []parseCase, n int) []wordCase {
	var wc []wordCase
	for _, pc := range cases {
		if pc.vset != nil {
			return nil
		}
		m := ones(n * 8)
		if pc.mask != nil {
			m = getBits(pc.mask, 0, n*8)
		}
		wc = append(wc, wordCase{value: getBits(pc.value, 0, n*8) & m, mask: m})
	}
	return wc
}

// compileKeyPart compiles one element of a transition key. Fields take
// their width rounded up to whole bytes, as BMv2 builds the key.
func (c *compiler) compileKeyPart(k bmjson.Value) (keyPart, int, error) {
	switch k.Type {
	case "field", "stack_field":
		e, w, err := c.widthOf(k)
		if err != nil {
			return nil, 0, err
		}
		n := (w + 7) / 8
		f := e.eval
		return func(p *packet, dst []byte) (int, int) {
			putBits(dst[:n], 0, n*8, uint64(f(p)))
			return n, 0
		}, n, nil
	case "lookahead":
		var v [2]int
		if err := json.Unmarshal(k.Value, &v); err != nil {
			return nil, 0, fmt.Errorf("lookahead: want [offset, width]: %v", err)
		}
		off, w := v[0], v[1]
		if w <= 0 || w > maxWidth {
			return nil, 0, fmt.Errorf("lookahead of %d bits: this target looks ahead up to %d bits", w, maxWidth)
		}
		n := (w + 7) / 8
		tooShort := c.errs.tooShort
		return func(p *packet, dst []byte) (int, int) {
			start := p.payload*8 + off
			if start+w > p.n*8 {
				return 0, tooShort
			}
			putBits(dst[:n], 0, n*8, getBits(p.buf, start, w))
			return n, 0
		}, n, nil
	}
	return nil, 0, fmt.Errorf("transition key of type %q is not handled by this target", k.Type)
}

// widthOf compiles a field operand and returns its width in bits.
func (c *compiler) widthOf(v bmjson.Value) (expr, int, error) {
	ref, err := v.Strings()
	if err != nil || len(ref) != 2 {
		return expr{}, 0, fmt.Errorf("%s: want [header, field], found %s", v.Type, v.Value)
	}
	e, err := c.compileValue(&v)
	if err != nil {
		return expr{}, 0, err
	}
	if v.Type == "stack_field" {
		st := c.l.stacks[c.l.stackBy[ref[0]]]
		return e, st.typ.fields[st.typ.index[ref[1]]].width, nil
	}
	_, _, f, err := c.l.field(ref[0], ref[1])
	if err != nil {
		return expr{}, 0, err
	}
	if f == nil {
		return e, 1, nil
	}
	return e, f.width, nil
}

func (c *compiler) compileParseOp(op *bmjson.ParserOp) (parseOp, error) {
	switch op.Op {
	case "extract":
		if len(op.Parameters) != 1 {
			return nil, fmt.Errorf("want one parameter")
		}
		prm := op.Parameters[0]
		name, err := prm.String()
		if err != nil {
			return nil, err
		}
		switch prm.Type {
		case "regular":
			hi, err := c.l.header(name)
			if err != nil {
				return nil, err
			}
			if h := c.l.headers[hi]; h.typ.codec != nil && h.union < 0 {
				span := c.l.span(hi)
				c.lastExtract = &span
			}
			return c.extractor(hi), nil
		case "stack":
			si, ok := c.l.stackBy[name]
			if !ok {
				return nil, fmt.Errorf("unknown header stack %q", name)
			}
			st := c.l.stacks[si]
			exs := make([]func(*packet) int, len(st.headers))
			for i, h := range st.headers {
				exs[i] = c.extractor(h)
			}
			stackOut := c.errs.stackOut
			return func(p *packet) int {
				i := p.next[si]
				if i >= len(exs) {
					return stackOut
				}
				if code := exs[i](p); code != 0 {
					return code
				}
				p.next[si] = i + 1
				return 0
			}, nil
		}
		return nil, fmt.Errorf("extract into %q is not handled by this target", prm.Type)
	case "set":
		if len(op.Parameters) != 2 {
			return nil, fmt.Errorf("want two parameters")
		}
		dst, err := c.lvalue(op.Parameters[0])
		if err != nil {
			return nil, err
		}
		src := op.Parameters[1]
		if src.Type == "lookahead" {
			part, n, err := c.compileKeyPart(src)
			if err != nil {
				return nil, err
			}
			return func(p *packet) int {
				b := p.look[:n]
				if _, code := part(p, b); code != 0 {
					return code
				}
				dst(p, int64(getBits(b, 0, n*8)))
				return 0
			}, nil
		}
		e, err := c.compileValue(&src)
		if err != nil {
			return nil, err
		}
		f := e.eval
		return func(p *packet) int { dst(p, f(p)); return 0 }, nil
	case "verify":
		if len(op.Parameters) != 2 {
			return nil, fmt.Errorf("want two parameters")
		}
		cond, err := c.compileValue(&op.Parameters[0])
		if err != nil {
			return nil, err
		}
		code, err := c.compileValue(&op.Parameters[1])
		if err != nil {
			return nil, err
		}
		cf, ef := cond.eval, code.eval
		return func(p *packet) int {
			if cf(p) == 0 {
				if v := int(ef(p)); v != 0 {
					return v
				}
			}
			return 0
		}, nil
	case "shift":
		if len(op.Parameters) != 1 {
			return nil, fmt.Errorf("want one parameter")
		}
		var n int
		if err := json.Unmarshal(op.Parameters[0].Value, &n); err != nil {
			return nil, fmt.Errorf("shift: %v", err)
		}
		tooShort := c.errs.tooShort
		return func(p *packet) int {
			if p.n-p.payload < n {
				return tooShort
			}
			p.payload += n
			return 0
		}, nil
	case "advance":
		if len(op.Parameters) != 1 {
			return nil, fmt.Errorf("want one parameter")
		}
		e, err := c.compileValue(&op.Parameters[0])
		if err != nil {
			return nil, err
		}
		f, tooShort := e.eval, c.errs.tooShort
		return func(p *packet) int {
			bits := f(p)
			if bits%8 != 0 {
				return tooShort // BMv2 advances whole bytes only
			}
			n := int(bits / 8)
			if n < 0 || p.n-p.payload < n {
				return tooShort
			}
			p.payload += n
			return 0
		}, nil
	case "primitive":
		if len(op.Parameters) != 1 {
			return nil, fmt.Errorf("want one parameter")
		}
		var prim bmjson.Primitive
		if err := json.Unmarshal(op.Parameters[0].Value, &prim); err != nil {
			return nil, fmt.Errorf("primitive: %v", err)
		}
		run, err := c.compilePrimitives([]bmjson.Primitive{prim})
		if err != nil {
			return nil, err
		}
		return func(p *packet) int { run(p); return 0 }, nil
	}
	return nil, fmt.Errorf("parser operation %q is not handled by this target", op.Op)
}

// extractor returns a function that extracts header hi at the parse
// position.
func (c *compiler) extractor(hi int) func(p *packet) int {
	h := c.l.headers[hi]
	n := h.typ.bytes()
	fields := h.typ.fields
	base := h.base
	tooShort := c.errs.tooShort
	setValid := c.validSetter(hi)
	cd := h.typ.codec
	union := h.union >= 0
	return func(p *packet) int {
		if p.n-p.payload < n {
			return tooShort
		}
		// The buffer runs on past the frame (headroom), so each field
		// but the last few of a header at the very end of the buffer is
		// one 8-byte load, and a word of fields one load with a codec.
		b := p.buf[p.payload:]
		vals := p.f[base : base+len(fields)]
		if cd != nil && cd.span <= len(b) {
			cd.extract(b, vals)
			if union {
				setValid(p)
			} else {
				p.valid[hi] = true
			}
			p.payload += n
			return 0
		}
		for i := range fields {
			f := &fields[i]
			start, shift := f.offset>>3, f.offset&7
			var v uint64
			if shift+f.width <= 64 && start+8 <= len(b) {
				v = loadBits(b, start, shift, f.width)
			} else {
				v = getBits(b, f.offset, f.width)
			}
			if f.signed {
				v = wrap(int64(v), f.width, true)
			}
			vals[i] = v
		}
		setValid(p)
		p.payload += n
		return 0
	}
}

// validSetter marks header hi valid, and the other members of its union
// invalid.
func (c *compiler) validSetter(hi int) func(p *packet) {
	l := c.l
	return func(p *packet) { l.markValid(p, hi) }
}

// deparser emits the valid headers in order, then the payload.
type deparser struct {
	order  []int
	update []*checksum
	// emits is order with what the deparser reads of each header, in
	// one place.
	emits []headerSpan
}

// headerSpan is where header hi lives: its nf fields from slot base, its
// bytes on the wire and the codec that reads and writes them (nil where
// none does).
type headerSpan struct {
	hi, base, nf, bytes int
	codec               *codec
	fields              []fieldInfo
}

// span is header hi's headerSpan.
func (l *layout) span(hi int) headerSpan {
	h := l.headers[hi]
	return headerSpan{hi: hi, base: h.base, nf: len(h.typ.fields), bytes: h.typ.bytes(), codec: h.typ.codec, fields: h.typ.fields}
}

func (c *compiler) compileDeparser(d *bmjson.Deparser) (*deparser, error) {
	dp := &deparser{}
	for _, name := range d.Order {
		hi, err := c.l.header(name)
		if err != nil {
			return nil, fmt.Errorf("deparser %q: %w", d.Name, err)
		}
		dp.order = append(dp.order, hi)
		dp.emits = append(dp.emits, c.l.span(hi))
	}
	if len(d.Primitives) > 0 {
		return nil, fmt.Errorf("deparser %q: primitives in the deparser are not handled by this target", d.Name)
	}
	return dp, nil
}

// run writes the packet's frame into p.out.
func (dp *deparser) run(p *packet, l *layout) {
	for _, c := range dp.update {
		if c.cond != nil && c.cond(p) == 0 {
			continue
		}
		p.f[c.slot] = c.compute(p)
	}
	out := p.out[:0]
	for i := range dp.emits {
		h := &dp.emits[i]
		if !p.valid[h.hi] {
			continue
		}
		start := len(out)
		vals := p.f[h.base : h.base+h.nf]
		if cd := h.codec; cd != nil && start+cd.span <= cap(out) {
			out = out[:start+h.bytes]
			cd.pack(out[start:start+cd.span], vals)
			continue
		}
		if n := h.bytes; start+n <= cap(out) {
			out = out[:start+n] // packFields writes every byte
		} else {
			out = append(out, make([]byte, n)...) // past the reserved capacity
		}
		packFields(out[start:], h.fields, vals)
	}
	out = append(out, p.buf[p.payload:p.n]...)
	if p.truncate > 0 && p.truncate < len(out) {
		out = out[:p.truncate]
	}
	p.out = out
}
