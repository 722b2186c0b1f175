package v1model

import (
	"encoding/json"
	"fmt"
	"strconv"
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
	raw     json.RawMessage      // the value's bytes, whitespace trimmed
	members map[string]*jsonNode // an object's, by key; nil otherwise
}

// jsonTree parses raw, which must be valid JSON (the document was
// validated when it was decoded), and records every object in it in
// nodes by the address of its bytes.
func jsonTree(raw []byte, nodes map[*byte]*jsonNode) (*jsonNode, error) {
	p := jsonParser{b: raw, nodes: nodes}
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
		n := &jsonNode{members: map[string]*jsonNode{}}
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
				key, err := strconv.Unquote(string(p.b[ks:p.i]))
				if err != nil {
					// An escape strconv reads differently from JSON;
					// encoding/json has the last word.
					if err := json.Unmarshal(p.b[ks:p.i], &key); err != nil {
						return nil, p.fail("a key")
					}
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
				n.members[key] = m
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
	return &jsonNode{raw: p.b[start:p.i:p.i]}, nil
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
	m := n.members[key]
	if m.isNull() {
		return ""
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
	if n.members == nil {
		return &bmjson.Value{Type: "raw", Value: n.raw}
	}
	v := &bmjson.Value{Type: n.str("type")}
	if m := n.members["value"]; m != nil {
		v.Value = m.raw
	}
	if m := n.members["mask"]; m != nil {
		v.Mask = m.raw
	}
	return v
}

// operand is an expression's operand as json.Unmarshal into a *Value
// makes it: nil when absent or null.
func (n *jsonNode) operand(key string) *bmjson.Value {
	m := n.members[key]
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
// an operand of a tree the compiler has seen, parsed (once) otherwise.
func (c *compiler) tree(raw json.RawMessage) (*jsonNode, error) {
	if c.trees == nil {
		c.trees = map[*byte]*jsonNode{}
	}
	if len(raw) > 0 {
		if n := c.trees[unsafe.SliceData(raw)]; n != nil && len(n.raw) == len(raw) {
			return n, nil
		}
	}
	return jsonTree(raw, c.trees)
}
