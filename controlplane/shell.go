package controlplane

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/p4rcm/p4rcm/tutorialjson"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ParseEntry reads a table entry written the way p4runtime-shell users
// write one. Each match is FIELD=VALUE, its value read by the field's
// kind: LPM VALUE/PREFIX, ternary VALUE&&&MASK, range LOW..HIGH, and a
// bare VALUE as an exact match (a full prefix, a full mask, or LOW =
// HIGH). Values are decimal, 0x hex, dotted IPv4, colon MAC or IPv6.
// action is NAME or NAME(PARAM=VALUE, ...); empty for a delete.
// Names are full, aliases or unique suffixes.
func (s *Session) ParseEntry(table string, matches []string, action string, priority int) (Entry, error) {
	t, err := s.Table(table)
	if err != nil {
		return Entry{}, err
	}
	if err := checkPriority(t, priority, len(matches) > 0); err != nil {
		return Entry{}, err
	}
	re := tutorialjson.TableEntry{Table: t.Preamble.Name, Priority: priority, Match: map[string]json.RawMessage{}}
	for _, m := range matches {
		name, value, ok := strings.Cut(m, "=")
		if !ok || name == "" || value == "" {
			return Entry{}, status.Errorf(codes.InvalidArgument, "match %q: want FIELD=VALUE", m)
		}
		f, err := MatchField(t, name)
		if err != nil {
			return Entry{}, err
		}
		if _, twice := re.Match[f.Name]; twice {
			return Entry{}, status.Errorf(codes.InvalidArgument, "table %s: field %s matched twice", t.Preamble.Name, f.Name)
		}
		raw, err := shellMatch(f, value)
		if err != nil {
			return Entry{}, status.Errorf(codes.InvalidArgument, "match %s: %v", f.Name, err)
		}
		re.Match[f.Name] = raw
	}
	if action != "" {
		name, params, err := parseAction(action)
		if err != nil {
			return Entry{}, status.Error(codes.InvalidArgument, err.Error())
		}
		re.Action = name
		re.Params = map[string]json.RawMessage{}
		for _, p := range params {
			if _, twice := re.Params[p[0]]; twice {
				return Entry{}, status.Errorf(codes.InvalidArgument, "action %s: parameter %s given twice", name, p[0])
			}
			re.Params[p[0]] = quote(p[1])
		}
	}
	return s.runtimeEntry(re)
}

// checkPriority refuses a priority on a table whose entries take none
// (P4Runtime: only tables with ternary, range or optional fields), a
// negative one, and, for an entry with matches, none where the table
// needs one: the switch would refuse each, after the command was sent.
func checkPriority(t *p4configv1.Table, priority int, matched bool) error {
	needs := false
	var kinds []string
	for _, f := range t.MatchFields {
		switch f.GetMatchType() {
		case p4configv1.MatchField_TERNARY, p4configv1.MatchField_RANGE, p4configv1.MatchField_OPTIONAL:
			needs = true
		}
		kinds = append(kinds, strings.ToLower(f.GetMatchType().String()))
	}
	switch {
	case priority < 0:
		return status.Errorf(codes.InvalidArgument, "priority %d: want 1 or more (higher wins)", priority)
	case priority != 0 && !needs:
		return status.Errorf(codes.InvalidArgument, "table %s takes no priority: its match fields are %s, and a priority orders only ternary, range and optional matches",
			t.Preamble.Name, strings.Join(slices.Compact(slices.Sorted(slices.Values(kinds))), " and "))
	case priority == 0 && needs && matched:
		return status.Errorf(codes.InvalidArgument, "table %s needs a priority, 1 or more (higher wins): it has ternary, range or optional fields", t.Preamble.Name)
	}
	return nil
}

// shellMatch turns one p4runtime-shell match value into the runtime
// file's form for field f.
func shellMatch(f *p4configv1.MatchField, v string) (json.RawMessage, error) {
	pair := func(a, b string) json.RawMessage {
		out, _ := json.Marshal([]json.RawMessage{quote(a), quote(b)})
		return out
	}
	full := func() string { // all ones at the field's width
		return "0x" + new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(f.Bitwidth)), big.NewInt(1)).Text(16)
	}
	switch f.GetMatchType() {
	case p4configv1.MatchField_LPM:
		if a, p, ok := strings.Cut(v, "/"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("prefix length %q: want a whole number", p)
			}
			return json.RawMessage(fmt.Sprintf("[%s, %d]", quote(a), n)), nil
		}
		return json.RawMessage(fmt.Sprintf("[%s, %d]", quote(v), f.Bitwidth)), nil
	case p4configv1.MatchField_TERNARY:
		if a, m, ok := strings.Cut(v, "&&&"); ok {
			return pair(a, m), nil
		}
		return pair(v, full()), nil
	case p4configv1.MatchField_RANGE:
		if lo, hi, ok := strings.Cut(v, ".."); ok {
			return pair(lo, hi), nil
		}
		return pair(v, v), nil
	case p4configv1.MatchField_EXACT, p4configv1.MatchField_OPTIONAL:
		return quote(v), nil
	}
	return nil, fmt.Errorf("match kind %v is not supported", f.GetMatchType())
}

// quote is a value as a JSON string, which the runtime file's reader
// takes in every notation.
func quote(s string) json.RawMessage {
	b, _ := json.Marshal(strings.TrimSpace(s))
	return b
}

// parseAction reads NAME or NAME(PARAM=VALUE, ...).
func parseAction(s string) (string, [][2]string, error) {
	s = strings.TrimSpace(s)
	name, rest, call := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	if name == "" || strings.ContainsAny(name, "=) ") {
		return "", nil, fmt.Errorf("action %q: want NAME or NAME(PARAM=VALUE, ...)", s)
	}
	if !call {
		return name, nil, nil
	}
	body, ok := strings.CutSuffix(rest, ")")
	if !ok {
		return "", nil, fmt.Errorf("action %q: no closing parenthesis", s)
	}
	var params [][2]string
	for _, p := range strings.Split(body, ",") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		k, v, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
			return "", nil, fmt.Errorf("action %s: parameter %q: want PARAM=VALUE", name, strings.TrimSpace(p))
		}
		params = append(params, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return name, params, nil
}

// FormatEntry writes e the way ParseEntry reads it: the table, its
// matches and its action, values as addresses where the field's name
// and width say so.
func (s *Session) FormatEntry(e Entry) string {
	var b strings.Builder
	b.WriteString(e.Table)
	t, _ := s.Table(e.Table)
	if e.Default {
		b.WriteString(" (default)")
	}
	for _, m := range e.Match {
		var f *p4configv1.MatchField
		if t != nil {
			f, _ = MatchField(t, m.Field)
		}
		if f == nil {
			continue
		}
		w := int(f.Bitwidth)
		v := text(m.Value, f.Name, w)
		switch f.GetMatchType() {
		case p4configv1.MatchField_LPM:
			v = fmt.Sprintf("%s/%d", v, m.PrefixLen)
		case p4configv1.MatchField_TERNARY:
			v = fmt.Sprintf("%s&&&%s", v, text(m.Mask, "", w))
		case p4configv1.MatchField_RANGE:
			v = fmt.Sprintf("%s..%s", v, text(m.High, f.Name, w))
		}
		fmt.Fprintf(&b, " %s=%s", f.Name, v)
	}
	if e.Priority != 0 {
		fmt.Fprintf(&b, " priority=%d", e.Priority)
	}
	switch {
	case e.Member != nil:
		fmt.Fprintf(&b, " member=%d", *e.Member)
	case e.Group != nil:
		fmt.Fprintf(&b, " group=%d", *e.Group)
	case e.Action != "":
		b.WriteString(" " + s.formatAction(e))
	}
	return b.String()
}

// formatAction writes NAME(PARAM=VALUE, ...).
func (s *Session) formatAction(e Entry) string {
	a, err := s.Action(e.Action)
	if err != nil {
		return e.Action
	}
	var ps []string
	for _, p := range e.Params {
		w := 0
		if ap, err := ActionParam(a, p.Name); err == nil {
			w = int(ap.Bitwidth)
		}
		ps = append(ps, p.Name+"="+text(p.Value, p.Name, w))
	}
	return a.Preamble.Name + "(" + strings.Join(ps, ", ") + ")"
}

// RuntimeEntry is e as an entry of a runtime file, as ApplyRuntime reads
// it back.
func (s *Session) RuntimeEntry(e Entry) (tutorialjson.TableEntry, error) {
	t, err := s.Table(e.Table)
	if err != nil {
		return tutorialjson.TableEntry{}, err
	}
	re := tutorialjson.TableEntry{Table: t.Preamble.Name, Default: e.Default, Action: e.Action, Priority: int(e.Priority)}
	for _, m := range e.Match {
		f, err := MatchField(t, m.Field)
		if err != nil {
			return tutorialjson.TableEntry{}, err
		}
		w := int(f.Bitwidth)
		v := tutorialjson.Format(m.Value, tutorialjson.KindFor(f.Name, w))
		var raw json.RawMessage
		switch f.GetMatchType() {
		case p4configv1.MatchField_LPM:
			raw = json.RawMessage(fmt.Sprintf("[%s, %d]", v, m.PrefixLen))
		case p4configv1.MatchField_TERNARY:
			raw = json.RawMessage(fmt.Sprintf("[%s, %s]", v, tutorialjson.Format(m.Mask, tutorialjson.Number)))
		case p4configv1.MatchField_RANGE:
			raw = json.RawMessage(fmt.Sprintf("[%s, %s]", v, tutorialjson.Format(m.High, tutorialjson.KindFor(f.Name, w))))
		default:
			raw = v
		}
		if re.Match == nil {
			re.Match = map[string]json.RawMessage{}
		}
		re.Match[f.Name] = raw
	}
	if e.Member != nil || e.Group != nil {
		return tutorialjson.TableEntry{}, status.Errorf(codes.Unimplemented, "table %s: entries naming action profile members or groups are not written to runtime files yet", t.Preamble.Name)
	}
	if e.Action != "" {
		a, err := s.Action(e.Action)
		if err != nil {
			return tutorialjson.TableEntry{}, err
		}
		re.Action = a.Preamble.Name
		re.Params = map[string]json.RawMessage{}
		for _, p := range e.Params {
			ap, err := ActionParam(a, p.Name)
			if err != nil {
				return tutorialjson.TableEntry{}, err
			}
			re.Params[ap.Name] = tutorialjson.Format(p.Value, tutorialjson.KindFor(ap.Name, int(ap.Bitwidth)))
		}
	}
	return re, nil
}

// text is a value as FormatEntry writes it: an address where name and
// width say so, else decimal up to 2^53 and 0x hex beyond.
func text(b []byte, name string, width int) string {
	raw := tutorialjson.Format(b, tutorialjson.KindFor(name, width))
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// Describe is an update as one line, its entity as FormatEntry writes
// table entries: "INSERT RcmIngress.ipv4_lpm hdr.ipv4.dst_addr=... ".
func (s *Session) Describe(u *p4v1.Update) string {
	what := fmt.Sprint(u.GetEntity())
	switch x := u.GetEntity().GetEntity().(type) {
	case *p4v1.Entity_TableEntry:
		info, err := s.P4Info()
		if err != nil {
			break
		}
		t := find(info.Tables, func(t *p4configv1.Table) bool { return t.Preamble.Id == x.TableEntry.TableId })
		if t != nil {
			what = s.FormatEntry(s.entryOf(t, x.TableEntry))
		}
	case *p4v1.Entity_PacketReplicationEngineEntry:
		var kind string
		var id uint32
		var replicas []*p4v1.Replica
		if cs := x.PacketReplicationEngineEntry.GetCloneSessionEntry(); cs != nil {
			kind, id, replicas = "clone session", cs.SessionId, cs.Replicas
		} else if mg := x.PacketReplicationEngineEntry.GetMulticastGroupEntry(); mg != nil {
			kind, id, replicas = "multicast group", mg.MulticastGroupId, mg.Replicas
		}
		var ports []string
		for _, r := range replicas {
			ports = append(ports, fmt.Sprintf("%d", r.EgressPort))
		}
		what = fmt.Sprintf("%s %d to ports %s", kind, id, strings.Join(ports, ","))
	}
	return u.Type.String() + " " + what
}
