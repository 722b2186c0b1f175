package controlplane

import (
	"context"
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// Match is one match field of an entry: Value, and for LPM PrefixLen.
type Match struct {
	Field     string
	Value     []byte
	PrefixLen int32 // LPM only
}

// Param is one action parameter.
type Param struct {
	Name  string
	Value []byte
}

// InsertEntry adds an entry to table: its matches, action and parameters,
// all by their P4Info names.
func (s *Session) InsertEntry(ctx context.Context, table string, matches []Match, action string, params []Param) error {
	return s.writeEntry(ctx, p4v1.Update_INSERT, "insert into", table, matches, false, action, params)
}

// ModifyEntry changes the action and parameters of table's entry with
// these matches.
func (s *Session) ModifyEntry(ctx context.Context, table string, matches []Match, action string, params []Param) error {
	return s.writeEntry(ctx, p4v1.Update_MODIFY, "modify in", table, matches, false, action, params)
}

// DeleteEntry removes table's entry with these matches.
func (s *Session) DeleteEntry(ctx context.Context, table string, matches []Match) error {
	return s.writeEntry(ctx, p4v1.Update_DELETE, "delete from", table, matches, false, "", nil)
}

// SetDefaultAction sets the action table applies when no entry matches.
func (s *Session) SetDefaultAction(ctx context.Context, table string, action string, params []Param) error {
	return s.writeEntry(ctx, p4v1.Update_MODIFY, "set the default action of", table, nil, true, action, params)
}

// writeEntry is the one path of the table writes: the entry built from
// the P4Info (action "" for none, as a DELETE has), then one update.
func (s *Session) writeEntry(ctx context.Context, typ p4v1.Update_Type, verb, table string,
	matches []Match, isDefault bool, action string, params []Param) error {
	t, err := s.table(table)
	if err != nil {
		return err
	}
	if isDefault && t.ConstDefaultActionId != 0 {
		return fmt.Errorf("controlplane: table %s's default action is const", table)
	}
	e := &p4v1.TableEntry{TableId: t.Preamble.Id, IsDefaultAction: isDefault}
	if e.Match, err = fieldMatches(t, matches); err != nil {
		return err
	}
	if action != "" {
		if e.Action, err = s.tableAction(t, action, params, isDefault); err != nil {
			return err
		}
	}
	if err := s.write(ctx, typ, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: e}}); err != nil {
		return fmt.Errorf("controlplane: %s %s: %w", verb, table, err)
	}
	return nil
}

// Entries reads table's entries (not its default entry).
func (s *Session) Entries(ctx context.Context, table string) ([]*p4v1.TableEntry, error) {
	t, err := s.table(table)
	if err != nil {
		return nil, err
	}
	var out []*p4v1.TableEntry
	err = s.read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: t.Preamble.Id}}},
		func(e *p4v1.Entity) {
			if te := e.GetTableEntry(); te != nil {
				out = append(out, te)
			}
		})
	if err != nil {
		return nil, fmt.Errorf("controlplane: read %s: %w", table, err)
	}
	return out, nil
}

func (s *Session) table(name string) (*p4configv1.Table, error) {
	return lookup(s, "table", name, func(i *p4configv1.P4Info) []*p4configv1.Table { return i.Tables },
		(*p4configv1.Table).GetPreamble)
}

// fieldMatches is matches as table t's field matches.
func fieldMatches(t *p4configv1.Table, matches []Match) ([]*p4v1.FieldMatch, error) {
	var out []*p4v1.FieldMatch
	for _, m := range matches {
		mf := find(t.MatchFields, func(f *p4configv1.MatchField) bool { return f.Name == m.Field })
		if mf == nil {
			return nil, fmt.Errorf("controlplane: table %s has no match field %q", t.Preamble.Name, m.Field)
		}
		fm := &p4v1.FieldMatch{FieldId: mf.Id}
		switch mf.GetMatchType() {
		case p4configv1.MatchField_EXACT:
			fm.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: m.Value}}
		case p4configv1.MatchField_LPM:
			fm.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: m.Value, PrefixLen: m.PrefixLen}}
		default:
			return nil, fmt.Errorf("controlplane: table %s field %s: match type %v not supported", t.Preamble.Name, m.Field, mf.GetMatchType())
		}
		out = append(out, fm)
	}
	return out, nil
}

// tableAction is action with params, for table t's entries or, if
// isDefault, for its default entry: the action must be one of t's, in
// that scope.
func (s *Session) tableAction(t *p4configv1.Table, action string, params []Param, isDefault bool) (*p4v1.TableAction, error) {
	a := find(s.info.Actions, func(a *p4configv1.Action) bool { return named(a.Preamble, action) })
	if a == nil {
		return nil, fmt.Errorf("controlplane: no action %q in the P4Info", action)
	}
	ref := find(t.ActionRefs, func(r *p4configv1.ActionRef) bool { return r.Id == a.Preamble.Id })
	switch {
	case ref == nil:
		return nil, fmt.Errorf("controlplane: action %s is not one of table %s's", action, t.Preamble.Name)
	case isDefault && ref.Scope == p4configv1.ActionRef_TABLE_ONLY:
		return nil, fmt.Errorf("controlplane: action %s cannot be table %s's default", action, t.Preamble.Name)
	case !isDefault && ref.Scope == p4configv1.ActionRef_DEFAULT_ONLY:
		return nil, fmt.Errorf("controlplane: action %s is only table %s's default", action, t.Preamble.Name)
	}
	act := &p4v1.Action{ActionId: a.Preamble.Id}
	for _, p := range params {
		ap := find(a.Params, func(x *p4configv1.Action_Param) bool { return x.Name == p.Name })
		if ap == nil {
			return nil, fmt.Errorf("controlplane: action %s has no parameter %q", action, p.Name)
		}
		act.Params = append(act.Params, &p4v1.Action_Param{ParamId: ap.Id, Value: p.Value})
	}
	return &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: act}}, nil
}
