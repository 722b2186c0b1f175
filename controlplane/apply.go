package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/p4rcm/p4rcm/tutorialjson"
)

// Applied counts what Apply did: entities written new, changed, and
// found as they should be.
type Applied struct {
	Inserted, Modified, Unchanged int
}

func (a Applied) String() string {
	if a.Inserted+a.Modified == 0 {
		return fmt.Sprintf("nothing to change (%d entities already as given)", a.Unchanged)
	}
	return fmt.Sprintf("%d inserted, %d modified, %d unchanged", a.Inserted, a.Modified, a.Unchanged)
}

// ApplyRuntime installs a tutorials runtime file on the switch, table
// entries, default actions, multicast groups and clone sessions, so that
// the switch holds them whatever it held before: what is missing is
// inserted, what differs is modified, what is already so is left alone
// (a second apply changes nothing). Entries the switch holds that the
// file does not name are left alone too. The whole file is checked
// against the P4Info before anything is sent; errors name the file, the
// line and the field.
func (s *Session) ApplyRuntime(ctx context.Context, rt *tutorialjson.Runtime) (Applied, error) {
	want, err := s.RuntimeEntities(rt)
	if err != nil {
		return Applied{}, err
	}
	return s.Reconcile(ctx, want)
}

// RuntimeEntities are the P4Runtime entities a runtime file asks for,
// every name and value checked against the P4Info; errors name the file,
// the line and the field.
func (s *Session) RuntimeEntities(rt *tutorialjson.Runtime) ([]*p4v1.Entity, error) {
	var want []*p4v1.Entity
	for _, re := range rt.Entries {
		e, err := s.runtimeEntry(re)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rt.At(re.Pos), err)
		}
		te, err := s.TableEntry(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rt.At(re.Pos), err)
		}
		want = append(want, tableEntity(te))
	}
	for _, g := range rt.Multicast {
		mg := &p4v1.MulticastGroupEntry{MulticastGroupId: uint32(g.ID)}
		for _, r := range g.Replicas {
			mg.Replicas = append(mg.Replicas, &p4v1.Replica{EgressPort: uint32(r.Port), Instance: uint32(r.Instance)})
		}
		want = append(want, &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{
			PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{
				Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: mg}}}})
	}
	for _, c := range rt.Clones {
		cs := &p4v1.CloneSessionEntry{SessionId: uint32(c.ID), PacketLengthBytes: int32(c.PacketLength)}
		for _, r := range c.Replicas {
			cs.Replicas = append(cs.Replicas, &p4v1.Replica{EgressPort: uint32(r.Port), Instance: uint32(r.Instance)})
		}
		want = append(want, cloneSessionEntity(cs))
	}
	return want, nil
}

// Reconcile makes the switch hold the entities want (table entries,
// default entries, multicast groups, clone sessions): each is read, and
// inserted when missing or modified when it differs, in one batched
// write. Entities not in want are left alone.
func (s *Session) Reconcile(ctx context.Context, want []*p4v1.Entity) (Applied, error) {
	updates, done, err := s.Plan(ctx, want)
	if err != nil {
		return Applied{}, err
	}
	if err := s.Write(ctx, updates...); err != nil {
		return Applied{}, err
	}
	return done, nil
}

// Plan is what Reconcile would write, without writing it: the updates,
// and their count by kind.
func (s *Session) Plan(ctx context.Context, want []*p4v1.Entity) ([]*p4v1.Update, Applied, error) {
	var done Applied
	var updates []*p4v1.Update
	tables := map[uint32]map[string]*p4v1.TableEntry{} // each table read once, entries by key
	for _, e := range want {
		have, err := s.held(ctx, e, tables)
		if err != nil {
			return nil, done, fmt.Errorf("read back: %w", err)
		}
		switch {
		case have == nil && e.GetTableEntry().GetIsDefaultAction():
			return nil, done, status.Errorf(codes.Internal, "the switch has no default entry for table %d", e.GetTableEntry().TableId)
		case have == nil:
			updates = append(updates, &p4v1.Update{Type: Insert, Entity: e})
			done.Inserted++
		case sameEntity(have, e):
			done.Unchanged++
		default:
			updates = append(updates, &p4v1.Update{Type: Modify, Entity: e})
			done.Modified++
		}
	}
	return updates, done, nil
}

// held is the switch's entity with e's key, or nil. Table entries come
// from one wildcard read of their table, kept in tables; default entries
// and replication entries are read one by one.
func (s *Session) held(ctx context.Context, e *p4v1.Entity, tables map[uint32]map[string]*p4v1.TableEntry) (*p4v1.Entity, error) {
	if te := e.GetTableEntry(); te != nil && !te.IsDefaultAction {
		byKey, ok := tables[te.TableId]
		if !ok {
			byKey = map[string]*p4v1.TableEntry{}
			err := s.read(ctx, tableEntity(&p4v1.TableEntry{TableId: te.TableId}), func(x *p4v1.Entity) {
				if h := x.GetTableEntry(); h != nil && !h.IsDefaultAction {
					byKey[entryKey(h)] = h
				}
			})
			if err != nil {
				return nil, err
			}
			tables[te.TableId] = byKey
		}
		if h := byKey[entryKey(te)]; h != nil {
			return tableEntity(h), nil
		}
		return nil, nil
	}
	var have *p4v1.Entity
	err := s.read(ctx, readFilter(e), func(x *p4v1.Entity) {
		if have == nil {
			have = x
		}
	})
	if status.Code(err) == codes.NotFound {
		err = nil
	}
	return have, err
}

// entryKey is what identifies a table entry (table, matches, priority),
// whatever the byte strings' lengths and the order of its fields.
func entryKey(te *p4v1.TableEntry) string {
	c := canonicalEntry(te)
	c.Action = nil
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	return string(b)
}

// readFilter is what reads e back: e without what it sets (an entry's
// action, a group's replicas).
func readFilter(e *p4v1.Entity) *p4v1.Entity {
	f := proto.Clone(e).(*p4v1.Entity)
	if te := f.GetTableEntry(); te != nil {
		te.Action = nil
	}
	if mg := f.GetPacketReplicationEngineEntry().GetMulticastGroupEntry(); mg != nil {
		mg.Replicas = nil
	}
	if cs := f.GetPacketReplicationEngineEntry().GetCloneSessionEntry(); cs != nil {
		cs.Replicas, cs.PacketLengthBytes, cs.ClassOfService = nil, 0, 0
	}
	return f
}

// sameEntity reports whether the switch's entity have is want.
func sameEntity(have, want *p4v1.Entity) bool {
	if a, b := have.GetTableEntry(), want.GetTableEntry(); a != nil && b != nil {
		return SameEntry(a, b)
	}
	replicas := func(e *p4v1.Entity) []string {
		pre := e.GetPacketReplicationEngineEntry()
		rs := append(pre.GetMulticastGroupEntry().GetReplicas(), pre.GetCloneSessionEntry().GetReplicas()...)
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%d/%d", r.EgressPort, r.Instance))
		}
		sort.Strings(out)
		return out
	}
	a, b := replicas(have), replicas(want)
	if len(a) != len(b) || have.GetPacketReplicationEngineEntry().GetCloneSessionEntry().GetPacketLengthBytes() !=
		want.GetPacketReplicationEngineEntry().GetCloneSessionEntry().GetPacketLengthBytes() {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// runtimeEntry is a runtime file's table entry by names, its values read
// at the widths the P4Info gives.
func (s *Session) runtimeEntry(re tutorialjson.TableEntry) (Entry, error) {
	t, err := s.Table(re.Table)
	if err != nil {
		return Entry{}, fmt.Errorf("table: %w", err)
	}
	e := Entry{Table: t.Preamble.Name, Default: re.Default, Action: re.Action, Priority: int32(re.Priority)}
	if re.Member != nil || re.Group != nil || re.Meter != nil {
		return Entry{}, status.Errorf(codes.Unimplemented, "member_id, group_id and meter are not applied over P4Runtime yet")
	}
	names := make([]string, 0, len(re.Match))
	for name := range re.Match {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f, err := MatchField(t, name)
		if err != nil {
			return Entry{}, fmt.Errorf("match.%s: %w", name, err)
		}
		m, err := runtimeMatch(f, re.Match[name])
		if err != nil {
			return Entry{}, fmt.Errorf("match.%s: %w", name, err)
		}
		e.Match = append(e.Match, m)
	}
	if re.Action == "" {
		return e, nil
	}
	a, err := s.Action(re.Action)
	if err != nil {
		return Entry{}, fmt.Errorf("action_name: %w", err)
	}
	for name, raw := range re.Params {
		p, err := ActionParam(a, name)
		if err != nil {
			return Entry{}, fmt.Errorf("action_params.%s: %w", name, err)
		}
		v, err := runtimeBytes(raw, p.Bitwidth)
		if err != nil {
			return Entry{}, fmt.Errorf("action_params.%s: %w", name, err)
		}
		e.Params = append(e.Params, Param{Name: p.Name, Value: v})
	}
	sort.Slice(e.Params, func(i, j int) bool { return e.Params[i].Name < e.Params[j].Name })
	return e, nil
}

// runtimeMatch reads a runtime file's match of field f.
func runtimeMatch(f *p4configv1.MatchField, raw json.RawMessage) (Match, error) {
	m, err := tutorialjson.ReadMatch(raw, f.GetMatchType().String(), int(f.Bitwidth))
	if err != nil {
		return Match{}, status.Error(codes.InvalidArgument, err.Error())
	}
	if m.Wildcard {
		return Match{Field: f.Name}, nil
	}
	return Match{Field: f.Name, Value: m.Value, PrefixLen: int32(m.PrefixLen), Mask: m.Mask, High: m.High}, nil
}

// runtimeBytes reads one runtime-file value for a field width bits wide.
func runtimeBytes(raw json.RawMessage, width int32) ([]byte, error) {
	b, err := tutorialjson.Value(raw, int(width))
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return b, nil
}
