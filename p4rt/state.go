package p4rt

import (
	"encoding/binary"
	"slices"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4rcm/p4rcm/v1model"
)

// state is what the controllers wrote to a pipeline, kept as P4Runtime
// entities in canonical form so that a read returns what was written
// (read-write symmetry), with, for table entries, the target's form of
// the same entry.
type state struct {
	tables    map[uint32]*tableState
	members   map[uint32]map[uint32]*p4v1.ActionProfileMember
	groups    map[uint32]map[uint32]*p4v1.ActionProfileGroup
	meterCfg  map[uint32]map[int64]*p4v1.MeterConfig
	clones    map[uint32]*p4v1.CloneSessionEntry
	mcast     map[uint32]*p4v1.MulticastGroupEntry
	digests   map[uint32]*p4v1.DigestEntry
	valueSets map[uint32]*p4v1.ValueSetEntry
	// nextHidden numbers the members and groups the server makes in the
	// target for one-shot action sets, above every P4Runtime ID.
	nextHidden int
}

type tableState struct {
	byKey map[string]*stored
	seq   int
	// deflt is the default entry a controller set; nil while it is the
	// program's.
	deflt *p4v1.TableEntry
}

// stored is one table entry.
type stored struct {
	te      *p4v1.TableEntry // without counter data, which is read live
	key     string           // its entryKey, the server's map's key
	ve      v1model.Entry
	ref     v1model.EntryRef // the target's entry, where it was inserted through this server
	seq     int
	isConst bool
	// hidden holds the target's member and group IDs made for a
	// one-shot action set (the group last), nil otherwise.
	hidden []int
	// direct is the allocation storedEntry.set made this entry in, nil
	// for one made otherwise.
	direct *storedEntry
}

// storedEntry is a stored entry, its table entry, the wrapper of a
// direct action and room for a one-field key in one allocation: a batch
// of inserts makes one per update instead of five.
type storedEntry struct {
	s      stored
	te     p4v1.TableEntry
	action p4v1.TableAction
	direct p4v1.TableAction_Action
	// match and canon back the target's key and the canonical matches
	// of an entry of a table with one key field (most tables).
	match [1]v1model.Match
	canon [1]*p4v1.FieldMatch
	// exact is the canonical copy of the one match, where it is exact
	// and the request's is not canonical (values with leading zeros).
	exact canonExact
	// params backs the target's form of a direct action's data of up
	// to two words (most actions' parameters fit).
	params [2]uint64
}

// paramRoom is room for the entry's action data in its own allocation,
// nil where it has none.
func (e *stored) paramRoom() []uint64 {
	if x := e.direct; x != nil && x.s.te == e.te {
		return x.params[:0]
	}
	return nil
}

// set makes x the stored entry holding a copy of te's fields (not its
// internal state, which a protobuf message must not share).
func (x *storedEntry) set(te *p4v1.TableEntry) *stored {
	x.te.TableId, x.te.Match, x.te.Priority, x.te.Metadata, x.te.MeterConfig = te.TableId, te.Match, te.Priority, te.Metadata, te.MeterConfig
	x.s.te = &x.te
	x.s.direct = x
	return &x.s
}

// setDirect sets the stored entry's action to the direct action a, in
// the wrapper its allocation holds where storedEntry.set made it.
func (e *stored) setDirect(a *p4v1.Action) {
	if x := e.direct; x != nil && x.s.te == e.te {
		x.direct.Action = a
		x.action.Type = &x.direct
		e.te.Action = &x.action
		return
	}
	e.te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
}

func newState() *state {
	return &state{tables: map[uint32]*tableState{}, members: map[uint32]map[uint32]*p4v1.ActionProfileMember{},
		groups: map[uint32]map[uint32]*p4v1.ActionProfileGroup{}, meterCfg: map[uint32]map[int64]*p4v1.MeterConfig{},
		clones: map[uint32]*p4v1.CloneSessionEntry{}, mcast: map[uint32]*p4v1.MulticastGroupEntry{},
		digests: map[uint32]*p4v1.DigestEntry{}, valueSets: map[uint32]*p4v1.ValueSetEntry{}, nextHidden: 1 << 32}
}

func (s *state) table(id uint32) *tableState {
	ts := s.tables[id]
	if ts == nil {
		ts = &tableState{byKey: map[string]*stored{}}
		s.tables[id] = ts
	}
	return ts
}

// put stores an entry under its key.
func (s *state) put(td *tableDesc, e *stored) {
	s.table(td.id).put(entryKey(e.te.Match, e.te.Priority), e)
}

// put stores an entry under key, its entryKey.
func (ts *tableState) put(key string, e *stored) {
	ts.seq++
	e.seq, e.key = ts.seq, key
	ts.byKey[key] = e
}

// entries are a table's entries in the order they were written.
func (s *state) entries(id uint32) []*stored {
	ts := s.tables[id]
	if ts == nil {
		return nil
	}
	out := make([]*stored, 0, len(ts.byKey))
	for _, e := range ts.byKey {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *stored) int { return a.seq - b.seq })
	return out
}

// entryKey identifies an entry within its table: its priority and its
// canonical matches, sorted by field, each value length-prefixed so that
// no two keys run together. Built by hand: it is on every write's path.
func entryKey(match []*p4v1.FieldMatch, priority int32) string {
	// Most keys fit the buffer, which stays on the stack: the string
	// is then the key's one allocation.
	var buf [64]byte
	return string(appendEntryKey(buf[:0], match, priority))
}

// appendEntryKey appends entryKey's bytes to b: a lookup by them
// (m[string(b)]) copies nothing.
func appendEntryKey(b []byte, match []*p4v1.FieldMatch, priority int32) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(priority))
	value := func(v []byte) {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	for _, m := range match {
		b = binary.BigEndian.AppendUint32(b, m.FieldId)
		switch x := m.FieldMatchType.(type) {
		case *p4v1.FieldMatch_Exact_:
			b = append(b, 'e')
			value(x.Exact.GetValue())
		case *p4v1.FieldMatch_Lpm:
			b = append(b, 'l')
			value(x.Lpm.GetValue())
			b = binary.BigEndian.AppendUint32(b, uint32(x.Lpm.GetPrefixLen()))
		case *p4v1.FieldMatch_Ternary_:
			b = append(b, 't')
			value(x.Ternary.GetValue())
			value(x.Ternary.GetMask())
		case *p4v1.FieldMatch_Range_:
			b = append(b, 'r')
			value(x.Range.GetLow())
			value(x.Range.GetHigh())
		case *p4v1.FieldMatch_Optional_:
			b = append(b, 'o')
			value(x.Optional.GetValue())
		default:
			b = append(b, '?') // refused before it gets here
		}
	}
	return b
}

// sortedIDs are a map's keys, ascending: reads answer in a stable order.
func sortedIDs[K uint32 | int64, V any](m map[K]V) []K {
	ids := make([]K, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
