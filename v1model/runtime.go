package v1model

import (
	"encoding/json"
	"fmt"
	"github.com/p4rcm/p4rcm/tutorialjson"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// Runtime is a switch's start-up configuration in the p4lang tutorials'
// runtime JSON (package tutorialjson).
type Runtime = tutorialjson.Runtime

// LoadRuntime reads a runtime JSON file.
func LoadRuntime(path string) (*Runtime, error) { return tutorialjson.LoadRuntime(path) }

// ParseRuntime decodes a runtime JSON document.
func ParseRuntime(data []byte) (*Runtime, error) { return tutorialjson.ParseRuntime(data) }

// Install puts the runtime configuration on the switch. Errors name the
// file, the line of the entry and the field.
func (sw *Switch) Install(rt *Runtime) error {
	at := func(line int) string { return rt.At(tutorialjson.Pos{Line: line}) }
	for _, m := range rt.Members {
		pr, err := sw.profileOf(m.Profile)
		if err != nil {
			return fmt.Errorf("%s: action_profile: %w", at(m.Line), err)
		}
		a := pr.actions[m.Action]
		if a == nil {
			return fmt.Errorf("%s: action_name: %q is not an action of action profile %s", at(m.Line), m.Action, pr.name)
		}
		params, err := runtimeParams(a, m.Params)
		if err != nil {
			return fmt.Errorf("%s: %w", at(m.Line), err)
		}
		if err := sw.AddMember(m.Profile, m.ID, m.Action, params); err != nil {
			return fmt.Errorf("%s: %w", at(m.Line), err)
		}
	}
	for _, g := range rt.Groups {
		if err := sw.SetGroup(g.Profile, g.ID, g.Members); err != nil {
			return fmt.Errorf("%s: %w", at(g.Line), err)
		}
	}
	for _, m := range rt.Meters {
		if err := sw.SetMeterRates(m.Meter, m.Index, meterRates(m.Rates)); err != nil {
			return fmt.Errorf("%s: %w", at(m.Line), err)
		}
	}
	for _, v := range rt.ValueSets {
		b, err := sw.valueSetBytes(v)
		if err != nil {
			return fmt.Errorf("%s: %w", at(v.Line), err)
		}
		if err := sw.AddValueSetMember(v.ValueSet, b); err != nil {
			return fmt.Errorf("%s: %w", at(v.Line), err)
		}
	}
	for _, re := range rt.Entries {
		if err := sw.installEntry(re); err != nil {
			return fmt.Errorf("%s: %w", at(re.Line), err)
		}
	}
	for _, g := range rt.Multicast {
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
			return fmt.Errorf("%s: clone session %d: this target sends a clone to one port, %d replicas given", at(g.Line), g.ID, len(g.Replicas))
		}
		if err := sw.SetMirror(g.ID, g.Replicas[0].Port); err != nil {
			return fmt.Errorf("%s: %w", at(g.Line), err)
		}
	}
	return nil
}

func (sw *Switch) installEntry(re tutorialjson.TableEntry) error {
	t := sw.tables[re.Table]
	if t == nil {
		return fmt.Errorf("table: no table %q", re.Table)
	}
	var params []uint64
	var ref *Ref
	switch {
	case re.Member != nil || re.Group != nil:
		if re.Member != nil && re.Group != nil {
			return fmt.Errorf("member_id and group_id: give one")
		}
		if re.Action != "" {
			return fmt.Errorf("action_name with a member or group: give one or the other")
		}
		if re.Member != nil {
			ref = &Ref{ID: *re.Member}
		} else {
			ref = &Ref{ID: *re.Group, Group: true}
		}
	default:
		a := t.actions[re.Action]
		if a == nil {
			return fmt.Errorf("action_name: %q is not an action of table %s (%s)", re.Action, t.Name, strings.Join(t.actList, ", "))
		}
		var err error
		if params, err = runtimeParams(a, re.Params); err != nil {
			return err
		}
		re.Action = a.name
	}
	if re.Default {
		if len(re.Match) > 0 {
			return fmt.Errorf("match: a default action has none")
		}
		if ref != nil {
			return fmt.Errorf("default_action: this target sets an action profile table's default only from the program")
		}
		return sw.SetDefault(t.Name, re.Action, params)
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
	e := Entry{Action: re.Action, Params: params, Priority: re.Priority, Ref: ref, Meter: meterRates(re.Meter)}
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

// valueSetBytes reads a value set member as the set's bytes.
func (sw *Switch) valueSetBytes(v tutorialjson.ValueSetMember) ([]byte, error) {
	vs := sw.vsets[v.ValueSet]
	if vs == nil {
		return nil, fmt.Errorf("value_set: no parser value set %q", v.ValueSet)
	}
	n, err := runtimeValue(v.Value, min(vs.width*8, 64))
	if err != nil {
		return nil, fmt.Errorf("value: %v", err)
	}
	b := make([]byte, vs.width)
	putBits(b, 0, vs.width*8, n)
	return b, nil
}

// runtimeParams reads an action's parameters by name.
func runtimeParams(a *action, given map[string]json.RawMessage) ([]uint64, error) {
	var params []uint64
	for _, p := range a.params {
		raw, ok := given[p.Name]
		if !ok {
			return nil, fmt.Errorf("action_params: %s needs %q", a.name, p.Name)
		}
		if p.Bitwidth > maxWidth {
			b, err := tutorialjson.Value(raw, p.Bitwidth)
			if err != nil {
				return nil, fmt.Errorf("action_params.%s: %v", p.Name, err)
			}
			params = append(params, splitBig(new(big.Int).SetBytes(b), words(p.Bitwidth))...)
			continue
		}
		v, err := runtimeValue(raw, p.Bitwidth)
		if err != nil {
			return nil, fmt.Errorf("action_params.%s: %v", p.Name, err)
		}
		params = append(params, v)
	}
	for name := range given {
		if !hasParam(a, name) {
			return nil, fmt.Errorf("action_params.%s: %s has no such parameter", name, a.name)
		}
	}
	return params, nil
}

func meterRates(pairs [][2]float64) []MeterRate {
	var out []MeterRate
	for _, p := range pairs {
		out = append(out, MeterRate{PerMicrosecond: p[0], Burst: uint64(p[1])})
	}
	return out
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
	m, err := tutorialjson.ReadMatch(raw, kf.kind, kf.width)
	if err != nil || m.Wildcard {
		return Match{Wildcard: m.Wildcard}, err
	}
	if kf.wide != nil {
		switch kf.kind {
		case "exact":
			return Match{Wide: m.Value}, nil
		case "lpm":
			return Match{Wide: m.Value, PrefixLen: m.PrefixLen}, nil
		case "ternary":
			return Match{Wide: m.Value, WideMask: m.Mask}, nil
		}
		return Match{}, fmt.Errorf("a %s match over 64 bits is not supported", kf.kind)
	}
	switch kf.kind {
	case "lpm":
		return Match{Value: toUint(m.Value), PrefixLen: m.PrefixLen}, nil
	case "ternary":
		return Match{Value: toUint(m.Value), Mask: toUint(m.Mask)}, nil
	case "range":
		return Match{Low: toUint(m.Value), High: toUint(m.High)}, nil
	}
	return Match{Value: toUint(m.Value)}, nil
}

// runtimeValue reads a value of a field of at most 64 bits.
func runtimeValue(raw json.RawMessage, width int) (uint64, error) {
	b, err := tutorialjson.Value(raw, width)
	return toUint(b), err
}

// toUint is big-endian bytes (at most 8) as a number.
func toUint(b []byte) uint64 {
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

// CLICommands translates a runtime configuration into simple_switch_CLI
// commands, so that BMv2 gets the same entries (the golden recorder uses
// it). Priorities are turned around: BMv2's smaller number wins.
func (sw *Switch) CLICommands(rt *Runtime) ([]string, error) {
	var cmds []string
	// BMv2 numbers members, groups and entries from 0 in the order they
	// are made, per action profile and per table.
	memberHandle := map[string]map[int]int{}
	groupHandle := map[string]map[int]int{}
	entryHandle := map[string]int{}
	for _, m := range rt.Members {
		pr, err := sw.profileOf(m.Profile)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", m.Line, err)
		}
		a := pr.actions[m.Action]
		if a == nil {
			return nil, fmt.Errorf("line %d: action_name: %q is not an action of action profile %s", m.Line, m.Action, pr.name)
		}
		params, err := runtimeParams(a, m.Params)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", m.Line, err)
		}
		if memberHandle[pr.name] == nil {
			memberHandle[pr.name] = map[int]int{}
		}
		memberHandle[pr.name][m.ID] = len(memberHandle[pr.name])
		cmds = append(cmds, strings.TrimSpace(fmt.Sprintf("act_prof_create_member %s %s %s", pr.name, a.name, cliParams(a, params))))
	}
	for _, g := range rt.Groups {
		if groupHandle[g.Profile] == nil {
			groupHandle[g.Profile] = map[int]int{}
		}
		h := len(groupHandle[g.Profile])
		groupHandle[g.Profile][g.ID] = h
		cmds = append(cmds, "act_prof_create_group "+g.Profile)
		for _, m := range g.Members {
			mh, ok := memberHandle[g.Profile][m]
			if !ok {
				return nil, fmt.Errorf("line %d: group %d: no member %d", g.Line, g.ID, m)
			}
			cmds = append(cmds, fmt.Sprintf("act_prof_add_member_to_group %s %d %d", g.Profile, mh, h))
		}
	}
	for _, m := range rt.Meters {
		cmds = append(cmds, fmt.Sprintf("meter_set_rates %s %d %s", m.Meter, m.Index, cliRates(m.Rates)))
	}
	for _, v := range rt.ValueSets {
		b, err := sw.valueSetBytes(v)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", v.Line, err)
		}
		cmds = append(cmds, fmt.Sprintf("pvs_add %s 0x%x", v.ValueSet, b))
	}
	for _, re := range rt.Entries {
		cmd, err := sw.cliEntry(re, memberHandle, groupHandle)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", re.Line, err)
		}
		cmds = append(cmds, cmd)
		if t := sw.tables[re.Table]; !re.Default && t != nil {
			h := entryHandle[t.Name]
			entryHandle[t.Name] = h + 1
			if len(re.Meter) > 0 && t.meter != nil {
				cmds = append(cmds, fmt.Sprintf("meter_set_rates %s %d %s", t.meter.name, h, cliRates(re.Meter)))
			}
		}
	}
	handle := 0
	for _, g := range rt.Multicast {
		cmds = append(cmds, fmt.Sprintf("mc_mgrp_create %d", g.ID))
		for _, r := range g.Replicas {
			cmds = append(cmds, fmt.Sprintf("mc_node_create %d %d", r.Instance, r.Port), fmt.Sprintf("mc_node_associate %d %d", g.ID, handle))
			handle++
		}
	}
	for _, g := range rt.Clones {
		if len(g.Replicas) != 1 {
			return nil, fmt.Errorf("line %d: clone session %d: one replica wanted", g.Line, g.ID)
		}
		cmds = append(cmds, fmt.Sprintf("mirroring_add %d %d", g.ID, g.Replicas[0].Port))
	}
	return cmds, nil
}

// cliParams writes an action's data as simple_switch_CLI takes it: one
// number per parameter, a wide one in hex.
func cliParams(a *action, data []uint64) string {
	var s []string
	for i, p := range a.params {
		ws := words(p.Bitwidth)
		if len(ws) == 1 {
			s = append(s, strconv.FormatUint(data[a.word[i]], 10))
			continue
		}
		v := new(big.Int)
		for j, w := range ws {
			v.Lsh(v, uint(w)).Or(v, new(big.Int).SetUint64(data[a.word[i]+j]))
		}
		s = append(s, "0x"+v.Text(16))
	}
	return strings.Join(s, " ")
}

// cliRates writes meter rates as meter_set_rates takes them: rate:burst.
func cliRates(pairs [][2]float64) string {
	var s []string
	for _, p := range pairs {
		s = append(s, fmt.Sprintf("%s:%d", strconv.FormatFloat(p[0], 'g', -1, 64), uint64(p[1])))
	}
	return strings.Join(s, " ")
}

// cliPriorityBase turns P4Runtime-style priorities (larger wins) into
// BMv2's (smaller wins).
const cliPriorityBase = 1 << 20

func (sw *Switch) cliEntry(re tutorialjson.TableEntry, members, groups map[string]map[int]int) (string, error) {
	t := sw.tables[re.Table]
	if t == nil {
		return "", fmt.Errorf("table: no table %q", re.Table)
	}
	var target string // what follows "=>"
	verb := "table_add " + t.Name
	switch {
	case re.Member != nil && t.profile != nil:
		h, ok := members[t.profile.name][*re.Member]
		if !ok {
			return "", fmt.Errorf("member_id: action profile %s has no member %d", t.profile.name, *re.Member)
		}
		verb, target = "table_indirect_add "+t.Name, strconv.Itoa(h)
	case re.Group != nil && t.profile != nil:
		h, ok := groups[t.profile.name][*re.Group]
		if !ok {
			return "", fmt.Errorf("group_id: action profile %s has no group %d", t.profile.name, *re.Group)
		}
		verb, target = "table_indirect_add_with_group "+t.Name, strconv.Itoa(h)
	default:
		a := t.actions[re.Action]
		if a == nil {
			return "", fmt.Errorf("action_name: %q is not an action of table %s", re.Action, t.Name)
		}
		params, err := runtimeParams(a, re.Params)
		if err != nil {
			return "", err
		}
		if re.Default {
			return strings.TrimSpace(fmt.Sprintf("table_set_default %s %s %s", t.Name, a.name, cliParams(a, params))), nil
		}
		verb += " " + a.name
		target = cliParams(a, params)
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
		if kf.wide != nil {
			hexOf := func(b []byte) string {
				if len(b) == 0 {
					return "0x0"
				}
				return fmt.Sprintf("0x%x", b)
			}
			switch kf.kind {
			case "exact":
				keys = append(keys, hexOf(m.Wide))
			case "lpm":
				keys = append(keys, fmt.Sprintf("%s/%d", hexOf(m.Wide), m.PrefixLen))
			default:
				keys = append(keys, hexOf(m.Wide)+"&&&"+hexOf(m.WideMask))
			}
			continue
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
	cmd := fmt.Sprintf("%s %s => %s", verb, strings.Join(keys, " "), target)
	if t.kind == "ternary" {
		cmd += fmt.Sprintf(" %d", cliPriorityBase-re.Priority)
	}
	return strings.TrimSpace(cmd), nil
}
