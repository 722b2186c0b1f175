package v1model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Runtime is a switch's start-up configuration in the format of the
// p4lang tutorials' runtime JSON (s1-runtime.json): table entries,
// default actions, multicast groups and clone sessions.
type Runtime struct {
	File    string
	Entries []RuntimeEntry
	Groups  []RuntimeGroup
	Clones  []RuntimeGroup
}

// RuntimeEntry is one entry of "table_entries". Match values are JSON
// numbers or strings: decimal, 0x hex, dotted IPv4 or colon MAC; lpm
// takes [value, prefix length], ternary [value, mask], range [low, high],
// optional a value or null for the wildcard.
type RuntimeEntry struct {
	Line     int                        `json:"-"`
	Table    string                     `json:"table"`
	Default  bool                       `json:"default_action"`
	Match    map[string]json.RawMessage `json:"match"`
	Action   string                     `json:"action_name"`
	Params   map[string]json.RawMessage `json:"action_params"`
	Priority int                        `json:"priority"`
}

// RuntimeGroup is a multicast group or a clone session.
type RuntimeGroup struct {
	Line     int `json:"-"`
	ID       int `json:"multicast_group_id"`
	Session  int `json:"clone_session_id"`
	Replicas []struct {
		Port     int `json:"egress_port"`
		Instance int `json:"instance"`
	} `json:"replicas"`
}

// LoadRuntime reads a runtime JSON file.
func LoadRuntime(path string) (*Runtime, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rt, err := ParseRuntime(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rt.File = path
	return rt, nil
}

// ParseRuntime decodes a runtime JSON document, recording the line of
// every entry for errors.
func ParseRuntime(data []byte) (*Runtime, error) {
	rt := &Runtime{}
	dec := json.NewDecoder(bytes.NewReader(data))
	line := func() int { return 1 + bytes.Count(data[:dec.InputOffset()], []byte("\n")) }
	fail := func(err error) error { return fmt.Errorf("line %d: %v", line(), err) }
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("line 1: want a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		key, _ := tok.(string)
		switch key {
		case "table_entries", "multicast_group_entries", "clone_session_entries":
			if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
				return nil, fail(fmt.Errorf("%s: want a list", key))
			}
			for dec.More() {
				// The offset is past the comma; skip blanks to the entry.
				off := int(dec.InputOffset())
				for off < len(data) && strings.ContainsRune(", \t\r\n", rune(data[off])) {
					off++
				}
				l := 1 + bytes.Count(data[:off], []byte("\n"))
				if key == "table_entries" {
					var e RuntimeEntry
					if err := dec.Decode(&e); err != nil {
						return nil, fmt.Errorf("line %d: %s: %v", l, key, err)
					}
					e.Line = l
					rt.Entries = append(rt.Entries, e)
					continue
				}
				var g RuntimeGroup
				if err := dec.Decode(&g); err != nil {
					return nil, fmt.Errorf("line %d: %s: %v", l, key, err)
				}
				g.Line = l
				if key == "multicast_group_entries" {
					rt.Groups = append(rt.Groups, g)
				} else {
					rt.Clones = append(rt.Clones, g)
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, fail(err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, fail(err)
			}
		}
	}
	return rt, nil
}

// Install puts the runtime configuration on the switch. Errors name the
// file, the line of the entry and the field.
func (sw *Switch) Install(rt *Runtime) error {
	at := func(line int) string {
		if rt.File != "" {
			return fmt.Sprintf("%s:%d", rt.File, line)
		}
		return fmt.Sprintf("line %d", line)
	}
	for _, re := range rt.Entries {
		if err := sw.installEntry(re); err != nil {
			return fmt.Errorf("%s: %w", at(re.Line), err)
		}
	}
	for _, g := range rt.Groups {
		var reps []Replica
		for _, r := range g.Replicas {
			reps = append(reps, Replica{Port: r.Port, RID: r.Instance})
		}
		if err := sw.SetMulticastGroup(g.ID, reps); err != nil {
			return fmt.Errorf("%s: %w", at(g.Line), err)
		}
	}
	for _, g := range rt.Clones {
		if len(g.Replicas) != 1 {
			return fmt.Errorf("%s: clone session %d: this target sends a clone to one port, %d replicas given", at(g.Line), g.Session, len(g.Replicas))
		}
		if err := sw.SetMirror(g.Session, g.Replicas[0].Port); err != nil {
			return fmt.Errorf("%s: %w", at(g.Line), err)
		}
	}
	return nil
}

func (sw *Switch) installEntry(re RuntimeEntry) error {
	t := sw.tables[re.Table]
	if t == nil {
		return fmt.Errorf("table: no table %q", re.Table)
	}
	a := t.actions[re.Action]
	if a == nil {
		return fmt.Errorf("action_name: %q is not an action of table %s (%s)", re.Action, t.Name, strings.Join(t.actList, ", "))
	}
	params := make([]uint64, len(a.params))
	for i, p := range a.params {
		raw, ok := re.Params[p.Name]
		if !ok {
			return fmt.Errorf("action_params: %s needs %q", a.name, p.Name)
		}
		v, err := runtimeValue(raw, p.Bitwidth)
		if err != nil {
			return fmt.Errorf("action_params.%s: %v", p.Name, err)
		}
		params[i] = v
	}
	for name := range re.Params {
		if !hasParam(a, name) {
			return fmt.Errorf("action_params.%s: %s has no such parameter", name, a.name)
		}
	}
	if re.Default {
		if len(re.Match) > 0 {
			return fmt.Errorf("match: a default action has none")
		}
		return sw.SetDefault(t.Name, a.name, params)
	}
	var known []string
	for _, kf := range t.keys {
		known = append(known, kf.name)
	}
	var given []string
	for name := range re.Match {
		given = append(given, name)
	}
	sort.Strings(given)
	for _, name := range given {
		if !contains(known, name) {
			return fmt.Errorf("match.%s: table %s has no such key (its keys: %s)", name, t.Name, strings.Join(known, ", "))
		}
	}
	e := Entry{Action: a.name, Params: params, Priority: re.Priority}
	for _, kf := range t.keys {
		raw, ok := re.Match[kf.name]
		if !ok {
			if kf.kind == "exact" || kf.kind == "lpm" {
				return fmt.Errorf("match: %q missing", kf.name)
			}
			// Ternary, range and optional fields left out match anything.
			e.Match = append(e.Match, Match{Wildcard: true, High: ones(kf.width)})
			continue
		}
		m, err := runtimeMatch(raw, kf)
		if err != nil {
			return fmt.Errorf("match.%s: %v", kf.name, err)
		}
		e.Match = append(e.Match, m)
	}
	return sw.AddEntry(t.Name, e)
}

func hasParam(a *action, name string) bool {
	for _, p := range a.params {
		if p.Name == name {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func runtimeMatch(raw json.RawMessage, kf keyField) (Match, error) {
	var pair []json.RawMessage
	isList := json.Unmarshal(raw, &pair) == nil
	switch kf.kind {
	case "exact":
		v, err := runtimeValue(raw, kf.width)
		return Match{Value: v}, err
	case "optional":
		if string(raw) == "null" {
			return Match{Wildcard: true}, nil
		}
		v, err := runtimeValue(raw, kf.width)
		return Match{Value: v}, err
	}
	if !isList || len(pair) != 2 {
		return Match{}, fmt.Errorf("%s match: want [%s]", kf.kind, map[string]string{"lpm": "value, prefix length", "ternary": "value, mask", "range": "low, high"}[kf.kind])
	}
	a, err := runtimeValue(pair[0], kf.width)
	if err != nil {
		return Match{}, err
	}
	switch kf.kind {
	case "lpm":
		var pl int
		if err := json.Unmarshal(pair[1], &pl); err != nil {
			return Match{}, fmt.Errorf("prefix length: %v", err)
		}
		return Match{Value: a, PrefixLen: pl}, nil
	case "ternary":
		m, err := runtimeValue(pair[1], kf.width)
		return Match{Value: a, Mask: m}, err
	default:
		b, err := runtimeValue(pair[1], kf.width)
		return Match{Low: a, High: b}, err
	}
}

// runtimeValue reads a number, 0x hex, dotted IPv4 or colon MAC, and
// checks it fits in width bits.
func runtimeValue(raw json.RawMessage, width int) (uint64, error) {
	var v uint64
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var n json.Number
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&n); err != nil {
			return 0, fmt.Errorf("want a number or a string, found %s", raw)
		}
		s = n.String()
	}
	switch {
	case strings.Count(s, ".") == 3:
		ip := net.ParseIP(s).To4()
		if ip == nil {
			return 0, fmt.Errorf("%q is not an IPv4 address", s)
		}
		v = uint64(ip[0])<<24 | uint64(ip[1])<<16 | uint64(ip[2])<<8 | uint64(ip[3])
	case strings.Count(s, ":") == 5:
		mac, err := net.ParseMAC(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a MAC address", s)
		}
		for _, b := range mac {
			v = v<<8 | uint64(b)
		}
	default:
		var err error
		v, err = strconv.ParseUint(s, 0, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", s)
		}
	}
	if v > ones(width) {
		return 0, fmt.Errorf("%s does not fit in %d bits", s, width)
	}
	return v, nil
}

// CLICommands translates a runtime configuration into simple_switch_CLI
// commands, so that BMv2 gets the same entries (the golden recorder uses
// it). Priorities are turned around: BMv2's smaller number wins.
func (sw *Switch) CLICommands(rt *Runtime) ([]string, error) {
	var cmds []string
	for _, re := range rt.Entries {
		cmd, err := sw.cliEntry(re)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", re.Line, err)
		}
		cmds = append(cmds, cmd)
	}
	handle := 0
	for _, g := range rt.Groups {
		cmds = append(cmds, fmt.Sprintf("mc_mgrp_create %d", g.ID))
		for _, r := range g.Replicas {
			cmds = append(cmds, fmt.Sprintf("mc_node_create %d %d", r.Instance, r.Port), fmt.Sprintf("mc_node_associate %d %d", g.ID, handle))
			handle++
		}
	}
	for _, g := range rt.Clones {
		if len(g.Replicas) != 1 {
			return nil, fmt.Errorf("line %d: clone session %d: one replica wanted", g.Line, g.Session)
		}
		cmds = append(cmds, fmt.Sprintf("mirroring_add %d %d", g.Session, g.Replicas[0].Port))
	}
	return cmds, nil
}

// cliPriorityBase turns P4Runtime-style priorities (larger wins) into
// BMv2's (smaller wins).
const cliPriorityBase = 1 << 20

func (sw *Switch) cliEntry(re RuntimeEntry) (string, error) {
	// Build the entry on a scratch copy of the check: installEntry's
	// validation, without touching the switch.
	t := sw.tables[re.Table]
	if t == nil {
		return "", fmt.Errorf("table: no table %q", re.Table)
	}
	a := t.actions[re.Action]
	if a == nil {
		return "", fmt.Errorf("action_name: %q is not an action of table %s", re.Action, t.Name)
	}
	var params []string
	for _, p := range a.params {
		raw, ok := re.Params[p.Name]
		if !ok {
			return "", fmt.Errorf("action_params: %s needs %q", a.name, p.Name)
		}
		v, err := runtimeValue(raw, p.Bitwidth)
		if err != nil {
			return "", fmt.Errorf("action_params.%s: %v", p.Name, err)
		}
		params = append(params, strconv.FormatUint(v, 10))
	}
	if re.Default {
		return strings.TrimSpace(fmt.Sprintf("table_set_default %s %s %s", t.Name, a.name, strings.Join(params, " "))), nil
	}
	var keys []string
	for _, kf := range t.keys {
		raw, ok := re.Match[kf.name]
		var m Match
		if ok {
			var err error
			if m, err = runtimeMatch(raw, kf); err != nil {
				return "", fmt.Errorf("match.%s: %v", kf.name, err)
			}
		} else {
			m = Match{Wildcard: true, High: ones(kf.width)}
		}
		switch kf.kind {
		case "exact":
			keys = append(keys, strconv.FormatUint(m.Value, 10))
		case "lpm":
			keys = append(keys, fmt.Sprintf("%d/%d", m.Value, m.PrefixLen))
		case "ternary":
			keys = append(keys, fmt.Sprintf("%d&&&%d", m.Value, m.Mask))
		case "optional":
			if m.Wildcard {
				keys = append(keys, "0&&&0")
			} else {
				keys = append(keys, fmt.Sprintf("%d&&&%d", m.Value, ones(kf.width)))
			}
		case "range":
			keys = append(keys, fmt.Sprintf("%d->%d", m.Low, m.High))
		}
	}
	cmd := fmt.Sprintf("table_add %s %s %s => %s", t.Name, a.name, strings.Join(keys, " "), strings.Join(params, " "))
	if t.kind == "ternary" {
		cmd += fmt.Sprintf(" %d", cliPriorityBase-re.Priority)
	}
	return strings.TrimSpace(cmd), nil
}
