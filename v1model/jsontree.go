package v1model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// An expression's JSON nests operators in operands (rcm.json's run 53
// deep), and decoding it with encoding/json one level at a time scans
// every subtree again at each level above it, some six times a level
// (validation, the probe for its kind, the operands' own decoding):
// that was most of compiling rcm.json. jsonNode is the tree one linear
// pass finds instead: each value's bytes, a sub-slice of the document's,
// and an object's members. The compiler keeps the nodes of the trees it
// parsed by the address of their bytes, so that an operand handed down
// as a bmjson.Value built from the tree is found there, not decoded
// again.

type jsonNode struct {
	raw     json.RawMessage // the value's bytes, whitespace trimmed
	object  bool
	members []jsonMember // an object's, in the order written
}

type jsonMember struct {
	key  string
	node *jsonNode
}

// member is the object's member named key, the last one if it is there
// twice (as encoding/json takes it), nil if absent or n is no object.
// Objects have a handful of members: a search is cheaper than a map,
// which was one allocation per object of every expression.
func (n *jsonNode) member(key string) *jsonNode {
	if n == nil {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].node
		}
	}
	return nil
}

// jsonTree parses raw, which must be valid JSON (the document was
// validated when it was decoded), and records every object in it in
// nodes by the address of its bytes.
func jsonTree(raw []byte, nodes map[*byte]*jsonNode) (*jsonNode, error) {
	// Every value but the first follows a ':' (a member), a ',' or a
	// '[' (an element): their count (strings' too) bounds the nodes, the
	// ':'s the members, so each is one allocation.
	colons := bytes.Count(raw, []byte{':'})
	p := jsonParser{b: raw, nodes: nodes, chunk: 1 + colons + bytes.Count(raw, []byte{','}) + bytes.Count(raw, []byte{'['}),
		mslab: make([]jsonMember, 0, colons)}
	p.space()
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.b) {
		return nil, fmt.Errorf("expression: %d bytes after the value", len(p.b)-p.i)
	}
	return n, nil
}

type jsonParser struct {
	b     []byte
	i     int
	nodes map[*byte]*jsonNode
	// Nodes and members are cut from chunks, not allocated one by one
	// (a tree of rcm.json has hundreds); chunk is the next one's size,
	// the first one's the bound jsonTree counts.
	slab    []jsonNode
	mslab   []jsonMember
	pending []jsonMember // the members of the objects being parsed
	chunk   int
}

// node is a new node from the current chunk.
func (p *jsonParser) node() *jsonNode {
	if len(p.slab) == cap(p.slab) {
		p.slab = make([]jsonNode, 0, p.chunk)
		p.chunk = 64 // not while the bound holds
	}
	p.slab = p.slab[:len(p.slab)+1]
	return &p.slab[len(p.slab)-1]
}

// keep moves an object's members, the pending ones from base on, into
// a chunk of their own.
func (p *jsonParser) keep(base int) []jsonMember {
	ms := p.pending[base:]
	n := len(ms)
	if n == 0 {
		return nil
	}
	if cap(p.mslab)-len(p.mslab) < n { // not while the bound holds
		p.mslab = make([]jsonMember, 0, max(n, 64))
	}
	k := len(p.mslab)
	p.mslab = append(p.mslab, ms...)
	clear(ms)
	p.pending = p.pending[:base]
	return p.mslab[k : k+n : k+n]
}

// knownKey is the constant string of a key expressions use (no
// allocation), or the key's bytes as a new string.
func knownKey(b []byte) string {
	switch string(b) {
	case "type":
		return "type"
	case "value":
		return "value"
	case "op":
		return "op"
	case "left":
		return "left"
	case "right":
		return "right"
	case "cond":
		return "cond"
	case "mask":
		return "mask"
	}
	return string(b)
}

func (p *jsonParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) fail(what string) error {
	return fmt.Errorf("expression: %s at byte %d", what, p.i)
}

// value parses the value at p.i; only objects get a node of their own
// members (arrays and scalars are kept as bytes, which their users
// decode themselves, all of them small).
func (p *jsonParser) value() (*jsonNode, error) {
	if p.i >= len(p.b) {
		return nil, p.fail("unexpected end")
	}
	start := p.i
	switch c := p.b[p.i]; {
	case c == '{':
		n := p.node()
		n.object = true
		base := len(p.pending)
		p.i++
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
		} else {
			for {
				p.space()
				ks := p.i
				if err := p.skipString(); err != nil {
					return nil, err
				}
				var key string
				if q := p.b[ks+1 : p.i-1]; bytes.IndexByte(q, '\\') < 0 && utf8.Valid(q) {
					key = knownKey(q)
				} else if err := json.Unmarshal(p.b[ks:p.i], &key); err != nil {
					// Escapes, or bytes encoding/json replaces: it
					// has the last word.
					return nil, p.fail("a key")
				}
				p.space()
				if p.i >= len(p.b) || p.b[p.i] != ':' {
					return nil, p.fail("want ':'")
				}
				p.i++
				p.space()
				m, err := p.value()
				if err != nil {
					return nil, err
				}
				p.pending = append(p.pending, jsonMember{key, m})
				p.space()
				if p.i < len(p.b) && p.b[p.i] == ',' {
					p.i++
					continue
				}
				if p.i < len(p.b) && p.b[p.i] == '}' {
					p.i++
					break
				}
				return nil, p.fail("want ',' or '}'")
			}
		}
		n.raw = p.b[start:p.i:p.i]
		n.members = p.keep(base)
		p.nodes[unsafe.SliceData(n.raw)] = n
		return n, nil
	case c == '[':
		p.i++
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
		} else {
			for {
				p.space()
				if _, err := p.value(); err != nil {
					return nil, err
				}
				p.space()
				if p.i < len(p.b) && p.b[p.i] == ',' {
					p.i++
					continue
				}
				if p.i < len(p.b) && p.b[p.i] == ']' {
					p.i++
					break
				}
				return nil, p.fail("want ',' or ']'")
			}
		}
	case c == '"':
		if err := p.skipString(); err != nil {
			return nil, err
		}
	default:
		// A number, true, false or null: up to the next delimiter.
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
			default:
				p.i++
				continue
			}
			break
		}
		if p.i == start {
			return nil, p.fail("a value")
		}
	}
	n := p.node()
	n.raw = p.b[start:p.i:p.i]
	return n, nil
}

func (p *jsonParser) skipString() error {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return p.fail("want a string")
	}
	for p.i++; p.i < len(p.b); p.i++ {
		switch p.b[p.i] {
		case '\\':
			p.i++
		case '"':
			p.i++
			return nil
		}
	}
	return p.fail("an unterminated string")
}

// isNull is whether the node is JSON null (or absent: nil).
func (n *jsonNode) isNull() bool { return n == nil || string(n.raw) == "null" }

// str is a string member's value, "" if it is absent, null or no string.
func (n *jsonNode) str(key string) string {
	m := n.member(key)
	if m.isNull() {
		return ""
	}
	if r := m.raw; len(r) >= 2 && r[0] == '"' {
		if q := r[1 : len(r)-1]; bytes.IndexByte(q, '\\') < 0 && utf8.Valid(q) {
			return knownKey(q)
		}
	}
	var s string
	if json.Unmarshal(m.raw, &s) != nil {
		return ""
	}
	return s
}

// bmValue is the node as bmjson.Value's UnmarshalJSON makes it: a typed
// {type, value, mask} object, or any other value as type "raw".
func (n *jsonNode) bmValue() *bmjson.Value {
	if !n.object {
		return &bmjson.Value{Type: "raw", Value: n.raw}
	}
	v := &bmjson.Value{Type: n.str("type")}
	if m := n.member("value"); m != nil {
		v.Value = m.raw
	}
	if m := n.member("mask"); m != nil {
		v.Mask = m.raw
	}
	return v
}

// operand is an expression's operand as json.Unmarshal into a *Value
// makes it: nil when absent or null.
func (n *jsonNode) operand(key string) *bmjson.Value {
	m := n.member(key)
	if m.isNull() {
		return nil
	}
	return m.bmValue()
}

// expression is the node as a bmjson.Expr.
func (n *jsonNode) expression() *bmjson.Expr {
	return &bmjson.Expr{Op: n.str("op"), Left: n.operand("left"), Right: n.operand("right"), Cond: n.operand("cond")}
}

// tree is the node of raw: found among those parsed already when raw is
// an operand of a tree the compiler has seen, or one the switches
// compiled before from the same document parsed (Config.Trees), parsed
// (once) otherwise.
func (c *compiler) tree(raw json.RawMessage) (*jsonNode, error) {
	if c.trees == nil {
		c.trees = map[*byte]*jsonNode{}
	}
	if len(raw) > 0 {
		key := unsafe.SliceData(raw)
		if n := c.trees[key]; n != nil && len(n.raw) == len(raw) {
			return n, nil
		}
		if n := c.sw.cfg.Trees.get(key); n != nil && len(n.raw) == len(raw) {
			return n, nil
		}
	}
	return jsonTree(raw, c.trees)
}

// Trees keeps the expression trees parsed while compiling one decoded
// document, for the switches compiled from it after (Config.Trees): once
// a document is decoded, parsing its expressions is a third of compiling
// it (rcm.json), and the switches of one process given the same program
// share its document (p4rt). A tree is found by the address of its bytes
// in the document, which the map's keys keep alive, so a Trees given
// another document finds nothing of the first's and parses its own. Safe
// for concurrent use.
type Trees struct {
	mu    sync.RWMutex
	nodes map[*byte]*jsonNode
}

// get is the tree parsed from the bytes at key, nil if none; t may be nil.
func (t *Trees) get(key *byte) *jsonNode {
	if t == nil {
		return nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.nodes[key]
}

// keep adds the trees of one compile, which is done with its map; t may
// be nil. Nodes are never changed once parsed, so any compile may use
// them.
func (t *Trees) keep(nodes map[*byte]*jsonNode) {
	if t == nil || len(nodes) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nodes == nil {
		t.nodes = nodes // the first compile's, taken whole
		return
	}
	maps.Copy(t.nodes, nodes)
}
