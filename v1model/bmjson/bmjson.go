// Package bmjson reads the JSON that p4c's BMv2 back end (p4c-bm2-ss)
// writes for a program: the format of p4lang/behavioral-model's
// docs/JSON_format.md, versions 2.x. It only decodes and indexes the
// document; what the objects mean is the target's (package v1model).
package bmjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Document is one compiled program.
type Document struct {
	HeaderTypes       []HeaderType         `json:"header_types"`
	Headers           []Header             `json:"headers"`
	HeaderStacks      []HeaderStack        `json:"header_stacks"`
	HeaderUnionTypes  []HeaderUnionType    `json:"header_union_types"`
	HeaderUnions      []HeaderUnion        `json:"header_unions"`
	HeaderUnionStacks []HeaderUnionStack   `json:"header_union_stacks"`
	FieldLists        []FieldList          `json:"field_lists"`
	Errors            [][2]json.RawMessage `json:"errors"`
	Enums             []json.RawMessage    `json:"enums"`
	Parsers           []Parser             `json:"parsers"`
	ParseVSets        []ParseVSet          `json:"parse_vsets"`
	Deparsers         []Deparser           `json:"deparsers"`
	MeterArrays       []MeterArray         `json:"meter_arrays"`
	CounterArrays     []CounterArray       `json:"counter_arrays"`
	RegisterArrays    []RegisterArray      `json:"register_arrays"`
	Calculations      []Calculation        `json:"calculations"`
	LearnLists        []FieldList          `json:"learn_lists"`
	Actions           []Action             `json:"actions"`
	Pipelines         []Pipeline           `json:"pipelines"`
	Checksums         []Checksum           `json:"checksums"`
	ForceArith        json.RawMessage      `json:"force_arith"`
	ExternInstances   []json.RawMessage    `json:"extern_instances"`
	FieldAliases      [][2]json.RawMessage `json:"field_aliases"`
	Program           string               `json:"program"`
	Meta              struct {
		Version  []int  `json:"version"`
		Compiler string `json:"compiler"`
	} `json:"__meta__"`
}

// SourceInfo says where in the P4 source an object comes from.
type SourceInfo struct {
	Filename string `json:"filename"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Fragment string `json:"source_fragment"`
}

// String is "file:line: fragment", or "" when p4c gave no source.
func (s *SourceInfo) String() string {
	if s == nil || s.Filename == "" {
		return ""
	}
	frag := s.Fragment
	if len(frag) > 60 {
		frag = frag[:57] + "..."
	}
	return fmt.Sprintf("%s:%d: %s", s.Filename, s.Line, frag)
}

// HeaderType lists its fields as [name, width, signed] (or [name, width]
// in older versions; width "*" is a variable-length field).
type HeaderType struct {
	Name      string              `json:"name"`
	ID        int                 `json:"id"`
	Fields    [][]json.RawMessage `json:"fields"`
	MaxLength *int                `json:"max_length"`
}

// Field is one decoded entry of HeaderType.Fields.
type Field struct {
	Name     string
	Width    int // 0 for a variable-length field
	Signed   bool
	Variable bool
}

// DecodeFields returns the header type's fields.
func (t *HeaderType) DecodeFields() ([]Field, error) {
	out := make([]Field, 0, len(t.Fields))
	for i, raw := range t.Fields {
		if len(raw) < 2 {
			return nil, fmt.Errorf("header_types %q: fields[%d]: want [name, width, signed]", t.Name, i)
		}
		var f Field
		if err := json.Unmarshal(raw[0], &f.Name); err != nil {
			return nil, fmt.Errorf("header_types %q: fields[%d]: name: %v", t.Name, i, err)
		}
		if string(raw[1]) == `"*"` {
			f.Variable = true
		} else if err := json.Unmarshal(raw[1], &f.Width); err != nil {
			return nil, fmt.Errorf("header_types %q: field %q: width: %v", t.Name, f.Name, err)
		}
		if len(raw) > 2 {
			if err := json.Unmarshal(raw[2], &f.Signed); err != nil {
				return nil, fmt.Errorf("header_types %q: field %q: signed: %v", t.Name, f.Name, err)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// Header is one header or metadata instance.
type Header struct {
	Name       string `json:"name"`
	ID         int    `json:"id"`
	HeaderType string `json:"header_type"`
	Metadata   bool   `json:"metadata"`
}

// HeaderStack is an array of headers of one type.
type HeaderStack struct {
	Name       string `json:"name"`
	ID         int    `json:"id"`
	HeaderType string `json:"header_type"`
	Size       int    `json:"size"`
	HeaderIDs  []int  `json:"header_ids"`
}

// HeaderUnionType names the headers a union holds.
type HeaderUnionType struct {
	Name    string              `json:"name"`
	ID      int                 `json:"id"`
	Headers [][]json.RawMessage `json:"headers"`
}

// HeaderUnion is one union instance: at most one of its headers is valid.
type HeaderUnion struct {
	Name      string `json:"name"`
	ID        int    `json:"id"`
	UnionType string `json:"union_type"`
	HeaderIDs []int  `json:"header_ids"`
}

// HeaderUnionStack is an array of unions.
type HeaderUnionStack struct {
	Name      string `json:"name"`
	ID        int    `json:"id"`
	UnionType string `json:"union_type"`
	Size      int    `json:"size"`
	UnionIDs  []int  `json:"header_union_ids"`
}

// FieldList is a named list of fields (clone and recirculate metadata,
// digests).
type FieldList struct {
	ID       int         `json:"id"`
	Name     string      `json:"name"`
	Elements []Value     `json:"elements"`
	Source   *SourceInfo `json:"source_info"`
}

// Value is BMv2's {"type": ..., "value": ...} object, used for operands,
// parameters and keys.
type Value struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
	Mask  json.RawMessage `json:"mask"`
}

// UnmarshalJSON takes the usual {"type", "value"} object, and also a bare
// JSON value, which p4c writes in a few places (access_field's field
// index): that becomes a Value of type "raw".
func (v *Value) UnmarshalJSON(data []byte) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] != '{' {
		*v = Value{Type: "raw", Value: append(json.RawMessage(nil), trimmed...)}
		return nil
	}
	// A program has thousands of values: each decoded by encoding/json
	// on its own was validated and walked again (a quarter of compiling
	// rcm.json). The usual object is read in one pass; anything else
	// takes encoding/json's way, so the result is always its result.
	if fast, ok := scanValue(trimmed); ok && !slowValues {
		*v = fast
		return nil
	}
	return v.unmarshalSlow(data)
}

// slowValues makes UnmarshalJSON take encoding/json's way every time
// (tests compare the two).
var slowValues = false

// unmarshalSlow is UnmarshalJSON by encoding/json alone.
func (v *Value) unmarshalSlow(data []byte) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] != '{' {
		*v = Value{Type: "raw", Value: append(json.RawMessage(nil), trimmed...)}
		return nil
	}
	type plain Value
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*v = Value(p)
	return nil
}

// scanValue reads the usual value object, {"type": "...", "value": ...}
// with an optional "mask", from JSON encoding/json has already checked
// (UnmarshalJSON is only given valid JSON). It gives up (ok false) on
// anything else: another key or a key spelled another way (encoding/json
// matches keys without regard to case), escapes in a key or in the type,
// a type that is not a string.
func scanValue(b []byte) (v Value, ok bool) {
	i := skipSpace(b, 1) // past '{'
	if i < len(b) && b[i] == '}' {
		return v, true
	}
	for i < len(b) {
		if b[i] != '"' {
			return v, false
		}
		kEnd := bytes.IndexByte(b[i+1:], '"')
		if kEnd < 0 {
			return v, false
		}
		key := b[i+1 : i+1+kEnd]
		if bytes.IndexByte(key, '\\') >= 0 {
			return v, false
		}
		i = skipSpace(b, i+2+kEnd)
		if i >= len(b) || b[i] != ':' {
			return v, false
		}
		i = skipSpace(b, i+1)
		end, good := skipJSON(b, i)
		if !good {
			return v, false
		}
		val := b[i:end]
		switch string(key) {
		case "type":
			switch {
			case string(val) == "null":
			case len(val) >= 2 && val[0] == '"' && bytes.IndexByte(val[1:len(val)-1], '\\') < 0:
				v.Type = string(val[1 : len(val)-1])
			default:
				return v, false
			}
		case "value":
			v.Value = append(json.RawMessage(nil), val...)
		case "mask":
			v.Mask = append(json.RawMessage(nil), val...)
		default:
			return v, false
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return v, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return v, skipSpace(b, i+1) == len(b)
		default:
			return v, false
		}
	}
	return v, false
}

// skipSpace is the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipJSON is the end of the (valid) JSON value starting at b[i]: a
// string, a number or literal, or an object or array, its strings'
// escapes and brackets followed.
func skipJSON(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	if c := b[i]; c != '"' && c != '{' && c != '[' {
		// A number or a literal: up to the next delimiter.
		j := i
		for j < len(b) && strings.IndexByte(",}] \t\n\r", b[j]) < 0 {
			j++
		}
		return j, j > i
	}
	depth := 0
	for j := i; j < len(b); j++ {
		switch c := b[j]; c {
		case '"':
			for j++; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j >= len(b) {
				return j, false
			}
			if depth == 0 {
				return j + 1, true
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return j, false
			}
			if depth == 0 {
				return j + 1, true
			}
		}
	}
	return len(b), false
}

// Strings decodes a value that is a list of strings (a field reference
// ["header", "field"]).
func (v Value) Strings() ([]string, error) {
	if s, ok := plainStrings(v.Value); ok {
		return s, nil
	}
	var s []string
	err := json.Unmarshal(v.Value, &s)
	return s, err
}

// plainStrings reads a JSON array of strings of printable ASCII without
// escapes, every field reference p4c writes, in one pass; ok is false
// for anything else, which encoding/json then decodes. Compiling
// rcm.json reads thousands of them, and encoding/json's way (validate,
// then decode by reflection) was a sixth of compiling it.
func plainStrings(b []byte) (out []string, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	out = []string{} // encoding/json's "[]" is an empty list, not nil
	if i = skipSpace(b, i+1); i < len(b) && b[i] == ']' {
		return out, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		j := i + 1
		for ; j < len(b) && b[j] != '"'; j++ {
			if c := b[j]; c < 0x20 || c > 0x7e || c == '\\' {
				return nil, false
			}
		}
		if j >= len(b) {
			return nil, false
		}
		out = append(out, string(b[i+1:j]))
		switch i = skipSpace(b, j+1); {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == ']':
			return out, skipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

// String decodes a value that is one string.
func (v Value) String() (string, error) {
	var s string
	err := json.Unmarshal(v.Value, &s)
	return s, err
}

// Expr is the body of an "expression" value.
type Expr struct {
	Op    string `json:"op"`
	Left  *Value `json:"left"`
	Right *Value `json:"right"`
	Cond  *Value `json:"cond"`
}

// Parser is one parser: a graph of states.
type Parser struct {
	Name        string       `json:"name"`
	ID          int          `json:"id"`
	InitState   string       `json:"init_state"`
	ParseStates []ParseState `json:"parse_states"`
}

// ParseState extracts headers and sets fields, then selects the next state.
type ParseState struct {
	Name          string       `json:"name"`
	ID            int          `json:"id"`
	ParserOps     []ParserOp   `json:"parser_ops"`
	Transitions   []Transition `json:"transitions"`
	TransitionKey []Value      `json:"transition_key"`
}

// ParserOp is one operation of a parse state.
type ParserOp struct {
	Op         string      `json:"op"`
	Parameters []Value     `json:"parameters"`
	Source     *SourceInfo `json:"source_info"`
}

// Transition is one case of a state's select.
type Transition struct {
	Type      string          `json:"type"`
	Value     json.RawMessage `json:"value"`
	Mask      json.RawMessage `json:"mask"`
	NextState *string         `json:"next_state"`
}

// ParseVSet is a value set the control plane fills.
type ParseVSet struct {
	Name               string `json:"name"`
	ID                 int    `json:"id"`
	CompressedBitwidth int    `json:"compressed_bitwidth"`
	MaxSize            int    `json:"max_size"`
}

// Deparser emits the valid headers in order.
type Deparser struct {
	Name       string            `json:"name"`
	ID         int               `json:"id"`
	Order      []string          `json:"order"`
	Primitives []json.RawMessage `json:"primitives"`
}

// MeterArray is an indirect or direct meter.
type MeterArray struct {
	Name         string      `json:"name"`
	ID           int         `json:"id"`
	Source       *SourceInfo `json:"source_info"`
	IsDirect     bool        `json:"is_direct"`
	Size         int         `json:"size"`
	RateCount    int         `json:"rate_count"`
	Type         string      `json:"type"`
	BindingTable string      `json:"binding"`
	ResultTarget []string    `json:"result_target"`
}

// CounterArray is an indirect or direct counter.
type CounterArray struct {
	Name     string      `json:"name"`
	ID       int         `json:"id"`
	Source   *SourceInfo `json:"source_info"`
	Size     int         `json:"size"`
	IsDirect bool        `json:"is_direct"`
	Binding  string      `json:"binding"`
}

// RegisterArray is a register of Size cells of Bitwidth bits.
type RegisterArray struct {
	Name     string      `json:"name"`
	ID       int         `json:"id"`
	Source   *SourceInfo `json:"source_info"`
	Size     int         `json:"size"`
	Bitwidth int         `json:"bitwidth"`
}

// Calculation is a hash or checksum over a list of fields.
type Calculation struct {
	Name   string      `json:"name"`
	ID     int         `json:"id"`
	Algo   string      `json:"algo"`
	Input  []Value     `json:"input"`
	Source *SourceInfo `json:"source_info"`
}

// Action is a list of primitives with runtime parameters.
type Action struct {
	Name        string        `json:"name"`
	ID          int           `json:"id"`
	RuntimeData []RuntimeData `json:"runtime_data"`
	Primitives  []Primitive   `json:"primitives"`
}

// RuntimeData is one action parameter.
type RuntimeData struct {
	Name     string `json:"name"`
	Bitwidth int    `json:"bitwidth"`
}

// Primitive is one call in an action body.
type Primitive struct {
	Op         string      `json:"op"`
	Parameters []Value     `json:"parameters"`
	Source     *SourceInfo `json:"source_info"`
}

// Pipeline is a control: tables and conditionals linked by name.
type Pipeline struct {
	Name           string          `json:"name"`
	ID             int             `json:"id"`
	Source         *SourceInfo     `json:"source_info"`
	InitTable      *string         `json:"init_table"`
	Tables         []Table         `json:"tables"`
	ActionProfiles []ActionProfile `json:"action_profiles"`
	Conditionals   []Conditional   `json:"conditionals"`
	ActionCalls    []ActionCall    `json:"action_calls"`
}

// ActionCall runs one action outside a table (format 2.18 and later).
type ActionCall struct {
	Name     string      `json:"name"`
	ID       int         `json:"id"`
	ActionID int         `json:"action_id"`
	Next     *string     `json:"next_node"`
	Source   *SourceInfo `json:"source_info"`
}

// Table is a match-action table.
type Table struct {
	Name            string             `json:"name"`
	ID              int                `json:"id"`
	Source          *SourceInfo        `json:"source_info"`
	Key             []TableKey         `json:"key"`
	MatchType       string             `json:"match_type"`
	Type            string             `json:"type"`
	ActionProfile   string             `json:"action_profile"`
	MaxSize         int                `json:"max_size"`
	WithCounters    bool               `json:"with_counters"`
	SupportTimeout  bool               `json:"support_timeout"`
	DirectMeters    *string            `json:"direct_meters"`
	ActionIDs       []int              `json:"action_ids"`
	Actions         []string           `json:"actions"`
	BaseDefaultNext *string            `json:"base_default_next"`
	NextTables      map[string]*string `json:"next_tables"`
	DefaultEntry    *DefaultEntry      `json:"default_entry"`
	Entries         []Entry            `json:"entries"`
}

// TableKey is one field of a table's key.
type TableKey struct {
	MatchType string          `json:"match_type"`
	Name      string          `json:"name"`
	Target    json.RawMessage `json:"target"`
	Mask      *string         `json:"mask"`
}

// DefaultEntry is the action a table runs on a miss.
type DefaultEntry struct {
	ActionID         int      `json:"action_id"`
	ActionConst      bool     `json:"action_const"`
	ActionData       []string `json:"action_data"`
	ActionEntryConst bool     `json:"action_entry_const"`
}

// Entry is a const entry of a table.
type Entry struct {
	Source      *SourceInfo `json:"source_info"`
	MatchKey    []EntryKey  `json:"match_key"`
	ActionEntry struct {
		ActionID   int      `json:"action_id"`
		ActionData []string `json:"action_data"`
	} `json:"action_entry"`
	Priority int `json:"priority"`
}

// EntryKey is one field of a const entry's key.
type EntryKey struct {
	MatchType string `json:"match_type"`
	Key       string `json:"key"`
	Mask      string `json:"mask"`
	PrefixLen *int   `json:"prefix_length"`
	Start     string `json:"start"`
	End       string `json:"end"`
}

// ActionProfile holds the members (and with a selector, the groups) of
// indirect tables.
type ActionProfile struct {
	Name     string    `json:"name"`
	ID       int       `json:"id"`
	MaxSize  int       `json:"max_size"`
	Selector *Selector `json:"selector"`
}

// Selector picks a member of a group by a hash of fields.
type Selector struct {
	Algo  string  `json:"algo"`
	Input []Value `json:"input"`
}

// Conditional branches on a boolean expression.
type Conditional struct {
	Name       string      `json:"name"`
	ID         int         `json:"id"`
	Source     *SourceInfo `json:"source_info"`
	Expression Value       `json:"expression"`
	TrueNext   *string     `json:"true_next"`
	FalseNext  *string     `json:"false_next"`
}

// Checksum is a verify_checksum or update_checksum call.
type Checksum struct {
	Name        string      `json:"name"`
	ID          int         `json:"id"`
	Source      *SourceInfo `json:"source_info"`
	Target      []string    `json:"target"`
	Type        string      `json:"type"`
	Calculation string      `json:"calculation"`
	Verify      *bool       `json:"verify"`
	Update      *bool       `json:"update"`
	IfCond      *Value      `json:"if_cond"`
}

// Load reads and decodes a BMv2 JSON file. Errors name the file, and for
// malformed JSON the line and column.
func Load(path string) (*Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// Decode decodes a BMv2 JSON document held in memory. Unknown top-level
// objects are refused by the target, not here.
func Decode(data []byte) (*Document, error) {
	var doc Document
	// Unmarshal, not a Decoder: the document is in memory already, and a
	// Decoder copied it into a buffer grown by doubling, 8 MB allocated
	// for the 960 KB rcm.json (40% of what compiling it allocated).
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, describe(data, err)
	}
	if len(doc.Meta.Version) < 1 {
		return nil, fmt.Errorf("__meta__.version missing: not a BMv2 JSON file from p4c-bm2-ss")
	}
	if doc.Meta.Version[0] != 2 {
		return nil, fmt.Errorf("__meta__.version %v: this target reads format 2.x", doc.Meta.Version)
	}
	return &doc, nil
}

// describe turns a decoding error into one with a line and column.
func describe(data []byte, err error) error {
	var off int64 = -1
	var what string
	switch e := err.(type) {
	case *json.SyntaxError:
		// encoding/json's words for input that stops inside a value.
		if e.Error() == "unexpected end of JSON input" {
			return fmt.Errorf("line %d: the JSON ends before it is complete (a truncated file?)", 1+bytes.Count(data, []byte("\n")))
		}
		off, what = e.Offset, e.Error()
	case *json.UnmarshalTypeError:
		off = e.Offset
		what = fmt.Sprintf("%s: want %s, found JSON %s", e.Field, e.Type, e.Value)
	default:
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("line %d: the JSON ends before it is complete (a truncated file?)", 1+bytes.Count(data, []byte("\n")))
		}
		return err
	}
	if off < 0 || off > int64(len(data)) {
		return err
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Errorf("line %d, column %d: %s", line, col, what)
}

// ParseNumber reads a BMv2 hexstr ("0x0a", "-0x1", or decimal, as
// p4c writes them) into a 64-bit two's complement value. Wider values are
// refused: the target works on fields of up to 64 bits.
func ParseNumber(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	t := strings.TrimPrefix(s, "-")
	base := 10
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X") {
		t, base = t[2:], 16
	}
	if t == "" {
		return 0, fmt.Errorf("number %q: no digits", s)
	}
	u, err := strconv.ParseUint(t, base, 64)
	if err != nil {
		// Leading zeros pad hexstrs to the field's width; strip them.
		trimmed := strings.TrimLeft(t, "0")
		if trimmed == "" {
			trimmed = "0"
		}
		u, err = strconv.ParseUint(trimmed, base, 64)
		if err != nil {
			return 0, fmt.Errorf("number %q: wider than 64 bits, which this target does not handle", s)
		}
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}
