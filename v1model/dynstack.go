package v1model

import (
	"encoding/json"
	"fmt"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// Header stack elements chosen at run time (hdr.stack[i] with i a
// field), which p4c writes as dereference_header_stack. An index past
// the stack reads as zero and an invalid header, and writes nothing.

// headerSel picks a header instance for a packet; ok is false when the
// index is past the stack.
type headerSel func(p *packet) (hi int, ok bool)

// compileDereference compiles a dereference_header_stack expression.
func (c *compiler) compileDereference(e *bmjson.Expr) (headerSel, *stackInfo, error) {
	if e.Left == nil || e.Left.Type != "header_stack" {
		return nil, nil, fmt.Errorf("dereference_header_stack: want a header stack")
	}
	name, err := e.Left.String()
	if err != nil {
		return nil, nil, err
	}
	si, ok := c.l.stackBy[name]
	if !ok {
		return nil, nil, fmt.Errorf("unknown header stack %q", name)
	}
	idx, err := c.compileValue(e.Right)
	if err != nil {
		return nil, nil, fmt.Errorf("dereference_header_stack %s: index: %w", name, err)
	}
	st := c.l.stacks[si]
	f, hs := idx.eval, st.headers
	return func(p *packet) (int, bool) {
		i := f(p)
		if i < 0 || i >= int64(len(hs)) {
			return 0, false
		}
		return hs[i], true
	}, st, nil
}

// dereferenceIn returns the dereference an operand holds, if it is one:
// an expression whose op is dereference_header_stack.
func dereferenceIn(raw json.RawMessage) (*bmjson.Expr, bool) {
	var v bmjson.Value
	if json.Unmarshal(raw, &v) == nil && v.Type == "expression" {
		return dereferenceIn(v.Value)
	}
	var e bmjson.Expr
	if json.Unmarshal(raw, &e) == nil && e.Op == "dereference_header_stack" {
		return &e, true
	}
	return nil, false
}

// accessField compiles access_field on a dereferenced header: the
// field's slot for the packet, or false past the stack.
func (c *compiler) accessField(e *bmjson.Expr) (func(p *packet) (int, bool), fieldInfo, error) {
	if e.Left == nil {
		return nil, fieldInfo{}, fmt.Errorf("access_field: no header")
	}
	d, ok := dereferenceIn(e.Left.Value)
	if !ok {
		return nil, fieldInfo{}, fmt.Errorf("access_field on something other than a header stack element is not handled by this target")
	}
	sel, st, err := c.compileDereference(d)
	if err != nil {
		return nil, fieldInfo{}, err
	}
	var fi int
	if e.Right == nil {
		return nil, fieldInfo{}, fmt.Errorf("access_field: no field")
	}
	// The field comes as its index in the header type, a bare number.
	if err := json.Unmarshal(e.Right.Value, &fi); err != nil {
		return nil, fieldInfo{}, fmt.Errorf("access_field: field index %s", e.Right.Value)
	}
	if fi < 0 || fi >= len(st.typ.fields) {
		return nil, fieldInfo{}, fmt.Errorf("access_field: field %d of %s", fi, st.typ.name)
	}
	f := st.typ.fields[fi]
	if f.width > maxWidth || len(st.typ.wide) > 0 {
		return nil, fieldInfo{}, fmt.Errorf("access_field: stack %s has fields over 64 bits", st.name)
	}
	headers := c.l.headers
	return func(p *packet) (int, bool) {
		hi, ok := sel(p)
		if !ok {
			return 0, false
		}
		return headers[hi].base + fi, true
	}, f, nil
}

// dynamicValidity compiles the validity bit of a dereferenced header, as
// p4c writes it: a field reference [dereference, "$valid$"].
func (c *compiler) dynamicValidity(raw json.RawMessage) (expr, bool, error) {
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil || len(parts) != 2 {
		return expr{}, false, nil
	}
	var name string
	if json.Unmarshal(parts[1], &name) != nil || name != "$valid$" {
		return expr{}, false, nil
	}
	d, ok := dereferenceIn(parts[0])
	if !ok {
		return expr{}, false, nil
	}
	sel, _, err := c.compileDereference(d)
	if err != nil {
		return expr{}, true, err
	}
	return expr{eval: func(p *packet) int64 {
		hi, ok := sel(p)
		return b2i(ok && p.valid[hi])
	}, unsigned: true}, true, nil
}

// headerSelArg compiles a header operand, static or a stack element
// chosen at run time.
func (c *compiler) headerSelArg(v bmjson.Value) (headerSel, error) {
	if v.Type == "expression" {
		d, ok := dereferenceIn(v.Value)
		if !ok {
			return nil, fmt.Errorf("want a header, found an expression")
		}
		sel, _, err := c.compileDereference(d)
		return sel, err
	}
	hi, err := c.headerArg(v)
	if err != nil {
		return nil, err
	}
	return func(*packet) (int, bool) { return hi, true }, nil
}
