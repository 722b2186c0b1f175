// Package tutorialjson reads and writes the two JSON formats of the p4lang
// tutorials: a switch's runtime file (s1-runtime.json: the program, table
// entries, multicast groups and clone sessions to install at start) and
// topology.json (hosts, switches and the links between them).
//
// Values in a runtime file are written as the tutorials write them: JSON
// numbers, or strings holding a decimal or 0x hex number, a dotted IPv4
// address, a colon MAC address or an IPv6 address. Bytes turns one into
// the big-endian bytes of a field of a given width; Format does the
// reverse. Every object read records the line it starts on, so errors
// can name the file, the line and the field.
package tutorialjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Runtime is a switch's runtime file.
type Runtime struct {
	// Path is the file it was read from ("" if parsed from memory).
	Path string `json:"-"`

	Target   string `json:"target,omitempty"`
	P4Info   string `json:"p4info,omitempty"`
	BMv2JSON string `json:"bmv2_json,omitempty"`

	Entries   []TableEntry     `json:"table_entries,omitempty"`
	Multicast []MulticastGroup `json:"multicast_group_entries,omitempty"`
	Clones    []CloneSession   `json:"clone_session_entries,omitempty"`
	Members   []Member         `json:"action_profile_members,omitempty"`
	Groups    []ProfileGroup   `json:"action_profile_groups,omitempty"`
	Meters    []MeterConfig    `json:"meter_configs,omitempty"`
	ValueSets []ValueSetMember `json:"value_set_members,omitempty"`
}

// Pos is the line an object starts on in its file (0 when not read from
// one).
type Pos struct {
	Line int `json:"-"`
}

func (p *Pos) setLine(l int) { p.Line = l }

// TableEntry is one entry of "table_entries". Match values are as the
// package comment says; an lpm match is [value, prefix length], ternary
// [value, mask], range [low, high], optional a value or null (the
// wildcard). A ternary, range or optional field left out matches
// anything.
type TableEntry struct {
	Pos
	Table    string                     `json:"table"`
	Default  bool                       `json:"default_action,omitempty"`
	Match    map[string]json.RawMessage `json:"match,omitempty"`
	Action   string                     `json:"action_name,omitempty"`
	Params   map[string]json.RawMessage `json:"action_params,omitempty"`
	Priority int                        `json:"priority,omitempty"`
	// p4rcm's additions: an entry of a table with an action profile names
	// a member or a group instead of an action; one with a direct meter
	// may set its rates.
	Member *int         `json:"member_id,omitempty"`
	Group  *int         `json:"group_id,omitempty"`
	Meter  [][2]float64 `json:"meter,omitempty"`
}

// Replica is one copy a multicast group or clone session makes.
type Replica struct {
	Port     int `json:"egress_port"`
	Instance int `json:"instance"`
}

// MulticastGroup is one entry of "multicast_group_entries".
type MulticastGroup struct {
	Pos
	ID       int       `json:"multicast_group_id"`
	Replicas []Replica `json:"replicas"`
}

// CloneSession is one entry of "clone_session_entries".
type CloneSession struct {
	Pos
	ID       int       `json:"clone_session_id"`
	Replicas []Replica `json:"replicas"`
	// PacketLength truncates the clones (0: whole packets).
	PacketLength int `json:"packet_length_bytes,omitempty"`
}

// Member is one action profile member (p4rcm's addition to the format,
// P4Runtime's ActionProfileMember).
type Member struct {
	Pos
	Profile string                     `json:"action_profile"`
	ID      int                        `json:"member_id"`
	Action  string                     `json:"action_name"`
	Params  map[string]json.RawMessage `json:"action_params"`
}

// ProfileGroup is one group of an action selector (P4Runtime's
// ActionProfileGroup).
type ProfileGroup struct {
	Pos
	Profile string `json:"action_profile"`
	ID      int    `json:"group_id"`
	Members []int  `json:"members"`
}

// MeterConfig sets the rates of one cell of an indirect meter: [rate per
// microsecond, burst] pairs, committed then peak (simple_switch_CLI's
// meter_set_rates).
type MeterConfig struct {
	Pos
	Meter string       `json:"meter"`
	Index int          `json:"index"`
	Rates [][2]float64 `json:"rates"`
}

// ValueSetMember adds a value to a parser value set.
type ValueSetMember struct {
	Pos
	ValueSet string          `json:"value_set"`
	Value    json.RawMessage `json:"value"`
}

// LoadRuntime reads a runtime file. Errors start with its path and the
// line at fault.
func LoadRuntime(path string) (*Runtime, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rt, err := ParseRuntime(data)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	rt.Path = path
	return rt, nil
}

// ParseRuntime decodes a runtime document. An error starts with the
// line at fault ("12: ...").
func ParseRuntime(data []byte) (*Runtime, error) {
	rt := &Runtime{}
	dec := json.NewDecoder(bytes.NewReader(data))
	lineAt := func(off int) int { return 1 + bytes.Count(data[:off], []byte("\n")) }
	fail := func(err error) error { return fmt.Errorf("%d: %v", lineAt(int(dec.InputOffset())), err) }
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("1: want a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		key, _ := tok.(string)
		var decodeOne func(line int) error
		switch key {
		case "target", "p4info", "bmv2_json":
			var s string
			if err := dec.Decode(&s); err != nil {
				return nil, fail(fmt.Errorf("%s: want a string", key))
			}
			*map[string]*string{"target": &rt.Target, "p4info": &rt.P4Info, "bmv2_json": &rt.BMv2JSON}[key] = s
			continue
		case "table_entries":
			decodeOne = func(l int) error { return decodeAt(dec, l, &rt.Entries) }
		case "multicast_group_entries":
			decodeOne = func(l int) error { return decodeAt(dec, l, &rt.Multicast) }
		case "clone_session_entries":
			decodeOne = func(l int) error { return decodeAt(dec, l, &rt.Clones) }
		case "action_profile_members":
			decodeOne = func(l int) error { return decodeAt(dec, l, &rt.Members) }
		case "action_profile_groups":
			decodeOne = func(l int) error { return decodeAt(dec, l, &rt.Groups) }
		case "meter_configs":
			decodeOne = func(l int) error { return decodeAt(dec, l, &rt.Meters) }
		case "value_set_members":
			decodeOne = func(l int) error { return decodeAt(dec, l, &rt.ValueSets) }
		case "hosts", "switches", "links":
			// The other file of the tutorials, given where a runtime
			// file goes: it would install nothing, without a word.
			return nil, fail(fmt.Errorf("%q: this is a topology.json (hosts, switches, links), not a runtime file (table_entries, multicast_group_entries, clone_session_entries)", key))
		default:
			return nil, fail(fmt.Errorf("%q is no key of a runtime file: want target, p4info, bmv2_json, table_entries, multicast_group_entries, clone_session_entries, action_profile_members, action_profile_groups, meter_configs or value_set_members", key))
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return nil, fail(fmt.Errorf("%s: want a list", key))
		}
		for dec.More() {
			// The offset is past the comma; skip blanks to the object.
			off := int(dec.InputOffset())
			for off < len(data) && strings.ContainsRune(", \t\r\n", rune(data[off])) {
				off++
			}
			if err := decodeOne(lineAt(off)); err != nil {
				return nil, fmt.Errorf("%d: %s: %v", lineAt(off), key, err)
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, fail(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fail(err)
	}
	if dec.More() {
		return nil, fail(fmt.Errorf("more after the object"))
	}
	return rt, nil
}

// decodeAt decodes the next object of a list, recording its line.
func decodeAt[T any, P interface {
	*T
	setLine(int)
}](dec *json.Decoder, line int, list *[]T) error {
	var v T
	if err := dec.Decode(&v); err != nil {
		return err
	}
	P(&v).setLine(line)
	*list = append(*list, v)
	return nil
}

// At is where an object of the file is, for errors: "path:line", or
// "line N" for a document read from memory.
func (rt *Runtime) At(p Pos) string {
	if rt.Path != "" {
		return fmt.Sprintf("%s:%d", rt.Path, p.Line)
	}
	return fmt.Sprintf("line %d", p.Line)
}

// Marshal is the runtime file as indented JSON, its lists in the order
// they hold.
func (rt *Runtime) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(rt, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// WriteFile writes data to path whole or not at all: to a temporary file
// beside it, renamed over path once written, so a reader never sees half
// a file and a failed write leaves what was there.
func WriteFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // fails harmlessly once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
