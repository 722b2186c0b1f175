package tutorialjson

import (
	"encoding/json"
	"fmt"
)

// Value reads one value of a runtime file (see the package comment) for
// a field width bits wide, as Bytes gives it.
func Value(raw json.RawMessage, width int) ([]byte, error) {
	s, err := Text(raw)
	if err != nil {
		return nil, err
	}
	return Bytes(s, width)
}

// Match is a field's match as a runtime file writes it, values at the
// field's full width: exact and optional use Value, lpm Value and
// PrefixLen, ternary Value and Mask, range Value (low) and High. An
// optional match written null is a Wildcard.
type Match struct {
	Value     []byte
	PrefixLen int
	Mask      []byte
	High      []byte
	Wildcard  bool
}

// ReadMatch reads the match of a field of kind "exact", "lpm",
// "ternary", "range" or "optional" (P4Info and BMv2 JSON names, in any
// case), width bits wide: a value, [value, prefix length], [value,
// mask], [low, high], or a value or null.
func ReadMatch(raw json.RawMessage, kind string, width int) (Match, error) {
	switch kind {
	case "exact", "EXACT":
		v, err := Value(raw, width)
		return Match{Value: v}, err
	case "optional", "OPTIONAL":
		if string(raw) == "null" {
			return Match{Wildcard: true}, nil
		}
		v, err := Value(raw, width)
		return Match{Value: v}, err
	}
	var pair []json.RawMessage
	if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 {
		shape := map[string]string{"lpm": "value, prefix length", "LPM": "value, prefix length",
			"ternary": "value, mask", "TERNARY": "value, mask", "range": "low, high", "RANGE": "low, high"}[kind]
		if shape == "" {
			return Match{}, fmt.Errorf("match kind %q: want exact, lpm, ternary, range or optional", kind)
		}
		return Match{}, fmt.Errorf("a %s match is [%s]", kind, shape)
	}
	v, err := Value(pair[0], width)
	if err != nil {
		return Match{}, err
	}
	m := Match{Value: v}
	switch kind {
	case "lpm", "LPM":
		if err := json.Unmarshal(pair[1], &m.PrefixLen); err != nil || m.PrefixLen < 0 || m.PrefixLen > width {
			return Match{}, fmt.Errorf("prefix length %s: want 0 to %d", pair[1], width)
		}
	case "ternary", "TERNARY":
		m.Mask, err = Value(pair[1], width)
	default:
		m.High, err = Value(pair[1], width)
	}
	return m, err
}
