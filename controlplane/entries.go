package controlplane

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"slices"
	"sort"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	"github.com/antoninbas/p4runtime-go-client/pkg/util/conversion"
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Match is one match field of an entry, by name. Values are big-endian
// bytes of any length that holds the value (P4Runtime's canonical form,
// a field's full width, or anything between): exact and optional use
// Value; LPM Value and PrefixLen; ternary Value and Mask; range Value
// (low) and High. A field left out of an entry is a wildcard (ternary,
// range, optional, LPM) or an error (exact).
type Match struct {
	Field     string
	Value     []byte
	PrefixLen int32
	Mask      []byte
	High      []byte
}

// Param is one action parameter, by name.
type Param struct {
	Name  string
	Value []byte
}

// Entry is a table entry by names. Default entries have no matches. An
// entry of a table with an action profile names a Member or a Group
// instead of an Action.
type Entry struct {
	Table    string
	Match    []Match
	Action   string
	Params   []Param
	Priority int32
	Default  bool
	Member   *uint32
	Group    *uint32
}

// Insert, Modify and Delete are the three kinds of update.
const (
	Insert = p4v1.Update_INSERT
	Modify = p4v1.Update_MODIFY
	Delete = p4v1.Update_DELETE
)

// InsertEntry adds an entry.
func (s *Session) InsertEntry(ctx context.Context, e Entry) error {
	return s.writeEntries(ctx, Insert, e)
}

// ModifyEntry changes the action of the entry with e's matches, or a
// table's default action when e.Default.
func (s *Session) ModifyEntry(ctx context.Context, e Entry) error {
	return s.writeEntries(ctx, Modify, e)
}

// DeleteEntry removes the entry with e's matches (its action is not
// needed), or resets a table's default action when e.Default.
func (s *Session) DeleteEntry(ctx context.Context, e Entry) error {
	return s.writeEntries(ctx, Delete, e)
}

// SetEntry installs e whether or not the switch holds an entry with its
// matches: an insert, or a modify of the one there. A default entry is
// always a modify.
func (s *Session) SetEntry(ctx context.Context, e Entry) error {
	if e.Default {
		return s.ModifyEntry(ctx, e)
	}
	err := s.InsertEntry(ctx, e)
	if status.Code(err) == codes.AlreadyExists {
		return s.ModifyEntry(ctx, e)
	}
	return err
}

func (s *Session) writeEntries(ctx context.Context, typ p4v1.Update_Type, entries ...Entry) error {
	updates := make([]*p4v1.Update, 0, len(entries))
	for _, e := range entries {
		u, err := s.EntryUpdate(typ, e)
		if err != nil {
			return err
		}
		updates = append(updates, u)
	}
	return s.Write(ctx, updates...)
}

// EntryUpdate is the update that inserts, modifies or deletes e. A
// default entry is never deleted: its delete is P4Runtime's reset, a
// MODIFY without an action.
func (s *Session) EntryUpdate(typ p4v1.Update_Type, e Entry) (*p4v1.Update, error) {
	if typ == Delete {
		e.Action, e.Params, e.Member, e.Group = "", nil, nil, nil
		if e.Default {
			typ = Modify
		}
	}
	te, err := s.TableEntry(e)
	if err != nil {
		return nil, err
	}
	return &p4v1.Update{Type: typ, Entity: tableEntity(te)}, nil
}

// EntryEntity is e as the entity Reconcile takes, checked as TableEntry
// checks it.
func (s *Session) EntryEntity(e Entry) (*p4v1.Entity, error) {
	te, err := s.TableEntry(e)
	if err != nil {
		return nil, err
	}
	return tableEntity(te), nil
}

func tableEntity(te *p4v1.TableEntry) *p4v1.Entity {
	return &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}
}

// Table resolves a table's name (full, alias or unique suffix).
func (s *Session) Table(name string) (*p4configv1.Table, error) {
	info, err := s.P4Info()
	if err != nil {
		return nil, err
	}
	return resolvePreamble("table", name, info.Tables, (*p4configv1.Table).GetPreamble)
}

// Action resolves an action's name.
func (s *Session) Action(name string) (*p4configv1.Action, error) {
	info, err := s.P4Info()
	if err != nil {
		return nil, err
	}
	return resolvePreamble("action", name, info.Actions, (*p4configv1.Action).GetPreamble)
}

// MatchField resolves a match field of table t by name or unique suffix.
func MatchField(t *p4configv1.Table, name string) (*p4configv1.MatchField, error) {
	return resolveNamed("match field of "+t.Preamble.Name, name, t.MatchFields, (*p4configv1.MatchField).GetName)
}

// ActionParam resolves a parameter of action a by name.
func ActionParam(a *p4configv1.Action, name string) (*p4configv1.Action_Param, error) {
	return resolveNamed("parameter of "+a.Preamble.Name, name, a.Params, (*p4configv1.Action_Param).GetName)
}

// TableEntry builds the P4Runtime entry for e, every name resolved and
// every value checked against its field's width, before anything is
// sent. Errors are INVALID_ARGUMENT or NOT_FOUND statuses that name the
// table, the field and what is wrong.
func (s *Session) TableEntry(e Entry) (*p4v1.TableEntry, error) {
	t, err := s.Table(e.Table)
	if err != nil {
		return nil, err
	}
	name := t.Preamble.Name
	if e.Default && len(e.Match) > 0 {
		return nil, status.Errorf(codes.InvalidArgument, "table %s: a default entry has no match", name)
	}
	mfs := map[string]client.MatchInterface{}
	for _, m := range e.Match {
		f, err := MatchField(t, m.Field)
		if err != nil {
			return nil, err
		}
		if _, twice := mfs[f.Name]; twice {
			return nil, status.Errorf(codes.InvalidArgument, "table %s: field %s matched twice", name, f.Name)
		}
		mi, err := matchInterface(name, f, m)
		if err != nil {
			return nil, err
		}
		if mi != nil {
			mfs[f.Name] = mi
		}
	}
	needsPriority := false
	for _, f := range t.MatchFields {
		switch f.GetMatchType() {
		case p4configv1.MatchField_EXACT:
			if _, ok := mfs[f.Name]; !ok && !e.Default {
				return nil, status.Errorf(codes.InvalidArgument, "table %s: exact field %s must be given", name, f.Name)
			}
		case p4configv1.MatchField_TERNARY, p4configv1.MatchField_RANGE, p4configv1.MatchField_OPTIONAL:
			needsPriority = true
		}
	}
	if !e.Default && needsPriority != (e.Priority > 0) {
		if needsPriority {
			return nil, status.Errorf(codes.InvalidArgument, "table %s has ternary, range or optional fields: an entry needs a priority above 0", name)
		}
		return nil, status.Errorf(codes.InvalidArgument, "table %s has only exact and LPM fields: an entry takes no priority", name)
	}
	action, err := s.tableAction(t, e)
	if err != nil {
		return nil, err
	}
	if e.Default {
		mfs = nil // the library's mark of a default entry
		if t.ConstDefaultActionId != 0 {
			return nil, status.Errorf(codes.PermissionDenied, "table %s: its default action is const", name)
		}
	} else if len(mfs) == 0 {
		mfs = map[string]client.MatchInterface{} // not nil: a match-all entry, not the default
	}
	te := s.c.NewTableEntry(name, mfs, action, &client.TableEntryOptions{Priority: e.Priority})
	if e.Default {
		te.Priority = 0
	}
	sort.Slice(te.Match, func(i, j int) bool { return te.Match[i].FieldId < te.Match[j].FieldId })
	return te, nil
}

// matchInterface checks m against field f of table table and gives it
// to the library at the field's full width (its LPM and ternary code
// reads the bytes as full width), or nil for a wildcard.
func matchInterface(table string, f *p4configv1.MatchField, m Match) (client.MatchInterface, error) {
	w := int(f.Bitwidth)
	fit := func(what string, b []byte) ([]byte, error) {
		out, err := fitWidth(b, w)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "table %s: field %s is %d bits wide: %s 0x%x %v", table, f.Name, w, what, b, err)
		}
		return out, nil
	}
	v, err := fit("value", m.Value)
	if err != nil {
		return nil, err
	}
	switch f.GetMatchType() {
	case p4configv1.MatchField_EXACT:
		if m.Value == nil {
			return nil, status.Errorf(codes.InvalidArgument, "table %s: exact field %s needs a value", table, f.Name)
		}
		return &client.ExactMatch{Value: v}, nil
	case p4configv1.MatchField_OPTIONAL:
		if m.Value == nil {
			return nil, nil
		}
		return &client.OptionalMatch{Value: v}, nil
	case p4configv1.MatchField_LPM:
		if m.PrefixLen < 0 || int(m.PrefixLen) > w {
			return nil, status.Errorf(codes.InvalidArgument, "table %s: field %s is %d bits wide: prefix length %d", table, f.Name, w, m.PrefixLen)
		}
		if m.PrefixLen == 0 {
			return nil, nil
		}
		masked := maskPrefix(v, w, int(m.PrefixLen))
		if !bytes.Equal(masked, v) {
			return nil, status.Errorf(codes.InvalidArgument, "table %s: field %s: 0x%x/%d has bits set past the prefix (0x%x/%d has not)",
				table, f.Name, v, m.PrefixLen, masked, m.PrefixLen)
		}
		return &client.LpmMatch{Value: v, PLen: m.PrefixLen}, nil
	case p4configv1.MatchField_TERNARY:
		mask, err := fit("mask", m.Mask)
		if err != nil {
			return nil, err
		}
		if isZero(mask) {
			return nil, nil
		}
		for i := range v {
			if v[i]&^mask[i] != 0 {
				return nil, status.Errorf(codes.InvalidArgument, "table %s: field %s: value 0x%x has bits outside mask 0x%x", table, f.Name, v, mask)
			}
		}
		return &client.TernaryMatch{Value: v, Mask: mask}, nil
	case p4configv1.MatchField_RANGE:
		high, err := fit("high end", m.High)
		if err != nil {
			return nil, err
		}
		if bytes.Compare(v, high) > 0 {
			return nil, status.Errorf(codes.InvalidArgument, "table %s: field %s: range 0x%x..0x%x is empty", table, f.Name, v, high)
		}
		if isZero(v) && bytes.Equal(high, maskPrefix(bytes.Repeat([]byte{0xff}, len(high)), w, w)) {
			return nil, nil // the whole range: a wildcard
		}
		return &client.RangeMatch{Low: v, High: high}, nil
	}
	return nil, status.Errorf(codes.Unimplemented, "table %s: field %s: match type %v", table, f.Name, f.GetMatchType())
}

// fitWidth is b as exactly ceil(w/8) big-endian bytes, or an error when
// its value needs more than w bits.
func fitWidth(b []byte, w int) ([]byte, error) {
	v := new(big.Int).SetBytes(b)
	if v.BitLen() > w {
		return nil, fmt.Errorf("needs %d bits", v.BitLen())
	}
	return v.FillBytes(make([]byte, (w+7)/8)), nil
}

// atWidth is b, as a switch sent it (canonical, full width or between),
// as the ceil(w/8) bytes of a w-bit field; a value too wide for the field
// is left as it came.
func atWidth(b []byte, w int) []byte {
	out, err := fitWidth(b, w)
	if err != nil {
		return b
	}
	return out
}

// maskPrefix is v (w bits, full width) with all bits past the first
// prefix cleared.
func maskPrefix(v []byte, w, prefix int) []byte {
	out := slices.Clone(v)
	skip := len(v)*8 - w // unused high bits of the first byte
	for bit := skip + prefix; bit < len(v)*8; bit++ {
		out[bit/8] &^= 0x80 >> (bit % 8)
	}
	return out
}

func isZero(b []byte) bool { return new(big.Int).SetBytes(b).Sign() == 0 }

// tableAction is e's action (or member, or group) for table t.
func (s *Session) tableAction(t *p4configv1.Table, e Entry) (*p4v1.TableAction, error) {
	name := t.Preamble.Name
	switch {
	case e.Member != nil || e.Group != nil:
		if t.ImplementationId == 0 {
			return nil, status.Errorf(codes.InvalidArgument, "table %s has no action profile: give an action, not a member or group", name)
		}
		if e.Member != nil && e.Group != nil || e.Action != "" {
			return nil, status.Errorf(codes.InvalidArgument, "table %s: give one of an action, a member and a group", name)
		}
		if e.Member != nil {
			return s.c.NewTableActionMember(*e.Member), nil
		}
		return s.c.NewTableActionGroup(*e.Group), nil
	case e.Action == "":
		return nil, nil // a delete, or a reset of the default entry
	}
	a, err := s.Action(e.Action)
	if err != nil {
		return nil, err
	}
	ref := find(t.ActionRefs, func(r *p4configv1.ActionRef) bool { return r.Id == a.Preamble.Id })
	switch {
	case ref == nil:
		var own []string
		for _, r := range t.ActionRefs {
			if x := s.actionByID(r.Id); x != nil {
				own = append(own, x.Preamble.Name)
			}
		}
		return nil, status.Errorf(codes.InvalidArgument, "action %s is not one of table %s's (%v)", a.Preamble.Name, name, own)
	case e.Default && ref.Scope == p4configv1.ActionRef_TABLE_ONLY:
		return nil, status.Errorf(codes.InvalidArgument, "action %s cannot be table %s's default", a.Preamble.Name, name)
	case !e.Default && ref.Scope == p4configv1.ActionRef_DEFAULT_ONLY:
		return nil, status.Errorf(codes.InvalidArgument, "action %s is only table %s's default", a.Preamble.Name, name)
	}
	params, err := actionParams(a, e.Params)
	if err != nil {
		return nil, err
	}
	ta := s.c.NewTableActionDirect(a.Preamble.Name, params)
	// The library numbers parameters 1, 2, ... in order; use the P4Info's IDs.
	for i, p := range ta.GetAction().Params {
		p.ParamId = a.Params[i].Id
		p.Value = conversion.ToCanonicalBytestring(p.Value)
	}
	return ta, nil
}

// actionParams is given as the values of every parameter of a, in the
// P4Info's order, each checked against its width.
func actionParams(a *p4configv1.Action, given []Param) ([][]byte, error) {
	name := a.Preamble.Name
	byID := map[uint32][]byte{}
	for _, p := range given {
		ap, err := ActionParam(a, p.Name)
		if err != nil {
			return nil, err
		}
		if _, twice := byID[ap.Id]; twice {
			return nil, status.Errorf(codes.InvalidArgument, "action %s: parameter %s given twice", name, ap.Name)
		}
		v, err := fitWidth(p.Value, int(ap.Bitwidth))
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "action %s: parameter %s is %d bits wide: 0x%x %v", name, ap.Name, ap.Bitwidth, p.Value, err)
		}
		byID[ap.Id] = v
	}
	out := make([][]byte, len(a.Params))
	for i, ap := range a.Params {
		v, ok := byID[ap.Id]
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument, "action %s needs parameter %s (%d bits)", name, ap.Name, ap.Bitwidth)
		}
		out[i] = v
	}
	return out, nil
}

func (s *Session) actionByID(id uint32) *p4configv1.Action {
	info, err := s.P4Info()
	if err != nil {
		return nil
	}
	return find(info.Actions, func(a *p4configv1.Action) bool { return a.Preamble.Id == id })
}

// find is the first of xs for which is holds, or nil.
func find[T any](xs []*T, is func(*T) bool) *T {
	for _, x := range xs {
		if is(x) {
			return x
		}
	}
	return nil
}

// ReadEntries reads table's entries (not its default entry), by names,
// values at their fields' full widths.
func (s *Session) ReadEntries(ctx context.Context, table string) ([]Entry, error) {
	t, err := s.Table(table)
	if err != nil {
		return nil, err
	}
	var out []Entry
	err = s.read(ctx, tableEntity(&p4v1.TableEntry{TableId: t.Preamble.Id}), func(e *p4v1.Entity) {
		if te := e.GetTableEntry(); te != nil && !te.IsDefaultAction {
			out = append(out, s.entryOf(t, te))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", t.Preamble.Name, err)
	}
	return out, nil
}

// ReadDefault reads table's default entry.
func (s *Session) ReadDefault(ctx context.Context, table string) (Entry, error) {
	t, err := s.Table(table)
	if err != nil {
		return Entry{}, err
	}
	var out *Entry
	err = s.read(ctx, tableEntity(&p4v1.TableEntry{TableId: t.Preamble.Id, IsDefaultAction: true}), func(e *p4v1.Entity) {
		if te := e.GetTableEntry(); te != nil && te.IsDefaultAction {
			x := s.entryOf(t, te)
			out = &x
		}
	})
	if err == nil && out == nil {
		err = status.Error(codes.NotFound, "no default entry in the answer")
	}
	if err != nil {
		return Entry{}, fmt.Errorf("read %s's default: %w", t.Preamble.Name, err)
	}
	return *out, nil
}

// entryOf is te by names, values at full width.
func (s *Session) entryOf(t *p4configv1.Table, te *p4v1.TableEntry) Entry {
	e := Entry{Table: t.Preamble.Name, Priority: te.Priority, Default: te.IsDefaultAction}
	for _, fm := range te.Match {
		f := find(t.MatchFields, func(f *p4configv1.MatchField) bool { return f.Id == fm.FieldId })
		if f == nil {
			continue
		}
		full := func(b []byte) []byte { return atWidth(b, int(f.Bitwidth)) }
		m := Match{Field: f.Name}
		switch x := fm.FieldMatchType.(type) {
		case *p4v1.FieldMatch_Exact_:
			m.Value = full(x.Exact.Value)
		case *p4v1.FieldMatch_Lpm:
			m.Value, m.PrefixLen = full(x.Lpm.Value), x.Lpm.PrefixLen
		case *p4v1.FieldMatch_Ternary_:
			m.Value, m.Mask = full(x.Ternary.Value), full(x.Ternary.Mask)
		case *p4v1.FieldMatch_Range_:
			m.Value, m.High = full(x.Range.Low), full(x.Range.High)
		case *p4v1.FieldMatch_Optional_:
			m.Value = full(x.Optional.Value)
		}
		e.Match = append(e.Match, m)
	}
	switch x := te.GetAction().GetType().(type) {
	case *p4v1.TableAction_Action:
		if a := s.actionByID(x.Action.ActionId); a != nil {
			e.Action = a.Preamble.Name
			for _, p := range x.Action.Params {
				if ap := find(a.Params, func(ap *p4configv1.Action_Param) bool { return ap.Id == p.ParamId }); ap != nil {
					e.Params = append(e.Params, Param{Name: ap.Name, Value: atWidth(p.Value, int(ap.Bitwidth))})
				}
			}
		}
	case *p4v1.TableAction_ActionProfileMemberId:
		id := x.ActionProfileMemberId
		e.Member = &id
	case *p4v1.TableAction_ActionProfileGroupId:
		id := x.ActionProfileGroupId
		e.Group = &id
	}
	return e
}

// SameEntry reports whether two P4Runtime entries are the same entry
// with the same action, whatever the byte strings' lengths and the
// order of fields and parameters.
func SameEntry(a, b *p4v1.TableEntry) bool {
	return proto.Equal(canonicalEntry(a), canonicalEntry(b))
}

// canonicalEntry is te with canonical byte strings, fields and
// parameters in ID order, and only what identifies it and its action.
func canonicalEntry(te *p4v1.TableEntry) *p4v1.TableEntry {
	c := &p4v1.TableEntry{TableId: te.TableId, Priority: te.Priority, IsDefaultAction: te.IsDefaultAction,
		Action: proto.Clone(te.GetAction()).(*p4v1.TableAction)}
	canon := conversion.ToCanonicalBytestring
	for _, fm := range te.Match {
		x := proto.Clone(fm).(*p4v1.FieldMatch)
		switch m := x.FieldMatchType.(type) {
		case *p4v1.FieldMatch_Exact_:
			m.Exact.Value = canon(m.Exact.Value)
		case *p4v1.FieldMatch_Lpm:
			m.Lpm.Value = canon(m.Lpm.Value)
		case *p4v1.FieldMatch_Ternary_:
			m.Ternary.Value, m.Ternary.Mask = canon(m.Ternary.Value), canon(m.Ternary.Mask)
		case *p4v1.FieldMatch_Range_:
			m.Range.Low, m.Range.High = canon(m.Range.Low), canon(m.Range.High)
		case *p4v1.FieldMatch_Optional_:
			m.Optional.Value = canon(m.Optional.Value)
		}
		c.Match = append(c.Match, x)
	}
	sort.Slice(c.Match, func(i, j int) bool { return c.Match[i].FieldId < c.Match[j].FieldId })
	if a := c.GetAction().GetAction(); a != nil {
		for _, p := range a.Params {
			p.Value = canon(p.Value)
		}
		sort.Slice(a.Params, func(i, j int) bool { return a.Params[i].ParamId < a.Params[j].ParamId })
	}
	return c
}
