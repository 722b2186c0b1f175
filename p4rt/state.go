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
	// byKey holds each entry's index in ents by its entryKey (which
	// shares the entry's blob), but for those in unindexed: the entries
	// a batch inserts are found by the target's key alone (see
	// applyTable), and put in byKey only when a lookup needs it.
	byKey     map[string]int32
	unindexed []int32
	// hasConst: the table holds entries of the program, whose priorities
	// in the target are not P4Runtime's.
	hasConst bool
	// ents are the table's entries by index, in chunks that do not move
	// once full (a table that grows past the first copies nothing); a
	// deleted entry's slot is zero and on free until an insert takes it
	// again. A pointer to an entry is good until the next insert.
	ents [][]stored
	n    int32 // slots in ents
	free []int32
	seq  int
	// deflt is the default entry a controller set; nil while it is the
	// program's.
	deflt *p4v1.TableEntry
}

// stored is one table entry, kept in a form with few pointers for the
// collector to follow (a table of ten thousand entries is marked on
// every collection): its key, its direct action and its metadata as
// bytes in one allocation without pointers, the rest of it as values.
// Reads build the entry's protobuf message from it (tableEntry), the
// same message, in canonical form, as the write gave.
type stored struct {
	// blob is the entry's key (entryKey: its priority and its canonical
	// matches), then its direct action (appendAction), then its
	// metadata.
	blob           string
	keyLen, actLen int32
	ctrlMeta       uint64
	seq            int
	// ref is the target's entry.
	ref     v1model.EntryRef
	isConst bool
	// x holds what few entries have (an action by member, group or
	// action set, a meter configuration); nil for the rest.
	x *storedExtra
}

// storedExtra is the part of a stored entry most entries lack.
type storedExtra struct {
	// action is the entry's action where it is not a direct action: a
	// member, a group or a one-shot action set.
	action *p4v1.TableAction
	// meter is the direct meter's configuration, nil if none.
	meter *p4v1.MeterConfig
	// hidden holds the target's member and group IDs made for a
	// one-shot action set (the group last), nil otherwise.
	hidden []int
}

func (x *storedExtra) empty() bool { return x.action == nil && x.meter == nil && x.hidden == nil }

// key is the entry's entryKey.
func (e *stored) key() string { return e.blob[:e.keyLen] }

// priority is the entry's priority, the key's first four bytes.
func (e *stored) priority() int32 { return int32(binary.BigEndian.Uint32([]byte(e.blob[:4]))) }

func (e *stored) meter() *p4v1.MeterConfig {
	if e.x == nil {
		return nil
	}
	return e.x.meter
}

func (e *stored) hidden() []int {
	if e.x == nil {
		return nil
	}
	return e.x.hidden
}

// setMeter sets the entry's meter configuration (nil: none).
func (e *stored) setMeter(m *p4v1.MeterConfig) {
	if e.x == nil {
		if m == nil {
			return
		}
		e.x = &storedExtra{}
	}
	e.x.meter = m
	if e.x.empty() {
		e.x = nil
	}
}

// directActionID is the ID of the entry's direct action, 0 if it has
// none.
func (e *stored) directActionID() uint32 {
	if e.actLen == 0 {
		return 0
	}
	return binary.BigEndian.Uint32([]byte(e.blob[e.keyLen : e.keyLen+4]))
}

// makeBlob is a stored entry's blob: its key, its direct action a (nil
// for none) and its metadata, in one allocation.
func makeBlob(key []byte, a *p4v1.Action, metadata []byte) (blob string, keyLen, actLen int32) {
	// Most entries fit the buffer, which stays on the stack: the string
	// is then the blob's one allocation.
	var room [128]byte
	b := append(room[:0], key...)
	b = appendAction(b, a)
	actLen = int32(len(b) - len(key))
	b = append(b, metadata...)
	return string(b), int32(len(key)), actLen
}

// appendAction appends a canonical direct action: its ID, then each
// parameter (in order) as its ID and its value, length-prefixed.
func appendAction(b []byte, a *p4v1.Action) []byte {
	if a == nil {
		return b
	}
	b = binary.BigEndian.AppendUint32(b, a.ActionId)
	for _, prm := range a.Params {
		b = binary.BigEndian.AppendUint32(b, prm.ParamId)
		b = binary.AppendUvarint(b, uint64(len(prm.Value)))
		b = append(b, prm.Value...)
	}
	return b
}

// directAction is a direct action as a read gives it, its wrappers and
// its first parameter in one allocation.
type directAction struct {
	ta     p4v1.TableAction
	oneof  p4v1.TableAction_Action
	a      p4v1.Action
	ptrs   [1]*p4v1.Action_Param
	params [1]p4v1.Action_Param
}

// parseAction is the action appendAction wrote, its values sharing b.
func parseAction(b []byte) *p4v1.TableAction {
	x := &directAction{}
	x.a.ActionId = binary.BigEndian.Uint32(b)
	x.oneof.Action = &x.a
	x.ta.Type = &x.oneof
	b = b[4:]
	x.a.Params = x.ptrs[:0]
	for i := 0; len(b) > 0; i++ {
		prm := &p4v1.Action_Param{}
		if i < len(x.params) {
			prm = &x.params[i]
		}
		prm.ParamId = binary.BigEndian.Uint32(b)
		n, k := binary.Uvarint(b[4:])
		b = b[4+k:]
		prm.Value, b = b[:n:n], b[n:]
		x.a.Params = append(x.a.Params, prm)
	}
	return &x.ta
}

// action is the entry's action, built from its stored form (its values
// sharing b, a copy of its blob) where it is a direct action.
func (e *stored) action(b []byte) *p4v1.TableAction {
	if e.x != nil && e.x.action != nil {
		return e.x.action
	}
	if e.actLen == 0 {
		return nil
	}
	return parseAction(b[e.keyLen : e.keyLen+e.actLen])
}

// matches are the entry's canonical matches, parsed from its key.
func (e *stored) matches() []*p4v1.FieldMatch { return parseMatches([]byte(e.key()[4:])) }

// tableEntry is the entry as a read returns it (without counter data,
// which is read live): a new message, sharing with the stored entry
// only the parts writes replace and never change in place. Its byte
// strings share one copy of the stored bytes.
func (e *stored) tableEntry(td *tableDesc) *p4v1.TableEntry {
	b := []byte(e.blob)
	te := &p4v1.TableEntry{TableId: td.id, Match: parseMatches(b[4:e.keyLen]), Action: e.action(b), Priority: e.priority(),
		MeterConfig: e.meter()}
	if n := int(e.keyLen + e.actLen); n < len(b) {
		te.Metadata = b[n:len(b):len(b)]
	}
	setControllerMetadata(te, e.ctrlMeta)
	return te
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
		ts = &tableState{byKey: map[string]int32{}}
		s.tables[id] = ts
	}
	return ts
}

// chunk is the number of entries in a chunk of tableState.ents.
const chunk = 256

// at is the entry in slot i.
func (ts *tableState) at(i int32) *stored { return &ts.ents[i/chunk][i%chunk] }

// lookup is the entry with key key (an entryKey's bytes), nil if none.
func (ts *tableState) lookup(key []byte) *stored {
	ts.index()
	i, ok := ts.byKey[string(key)]
	if !ok {
		return nil
	}
	return ts.at(i)
}

// len is how many entries the table holds: its slots less the free ones.
func (ts *tableState) len() int { return int(ts.n) - len(ts.free) }

// index puts the unindexed entries in byKey.
func (ts *tableState) index() {
	for _, i := range ts.unindexed {
		e := ts.at(i)
		ts.byKey[e.key()] = i
	}
	ts.unindexed = ts.unindexed[:0]
}

// add stores a new entry, numbering it after the table's others.
// Unindexed, it is put in byKey only when a lookup needs it.
func (ts *tableState) add(e stored, unindexed bool) {
	ts.seq++
	e.seq = ts.seq
	var i int32
	if n := len(ts.free); n > 0 {
		i, ts.free = ts.free[n-1], ts.free[:n-1]
	} else {
		i = ts.n
		ts.n++
		switch {
		case i < chunk:
			// The first chunk grows as a slice, so that a table of a
			// few entries takes room for a few.
			if len(ts.ents) == 0 {
				ts.ents = append(ts.ents, nil)
			}
			ts.ents[0] = append(ts.ents[0], stored{})
		case int(i/chunk) == len(ts.ents):
			ts.ents = append(ts.ents, make([]stored, chunk))
		}
	}
	*ts.at(i) = e
	if unindexed {
		ts.unindexed = append(ts.unindexed, i)
		return
	}
	ts.byKey[e.key()] = i
}

// replace puts e, an entry with old's key, in old's place.
func (ts *tableState) replace(old *stored, e stored) {
	i := ts.byKey[old.key()]
	e.seq = old.seq
	*ts.at(i) = e
	// The map's key is taken again from the new blob, so that the old
	// one is not kept alive by it.
	ts.byKey[e.key()] = i
}

// remove deletes a stored entry.
func (ts *tableState) remove(e *stored) {
	i := ts.byKey[e.key()] // indexed: a lookup found it
	delete(ts.byKey, e.key())
	*ts.at(i) = stored{}
	ts.free = append(ts.free, i)
	if ts.len() == 0 {
		// Empty: the first chunk's room is kept (its entries are zero),
		// for a table whose entries come and go.
		ts.ents[0] = ts.ents[0][:0]
		ts.ents, ts.n, ts.free = ts.ents[:1], 0, ts.free[:0]
	}
}

// entries are a table's entries in the order they were written.
func (s *state) entries(id uint32) []*stored {
	ts := s.tables[id]
	if ts == nil {
		return nil
	}
	out := make([]*stored, 0, ts.len())
	for _, c := range ts.ents {
		for i := range c {
			if e := &c[i]; e.blob != "" {
				out = append(out, e)
			}
		}
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

// parseMatches are the matches of an entryKey b (after its priority),
// as appendEntryKey was given them, their values sharing b.
func parseMatches(b []byte) []*p4v1.FieldMatch {
	// The fields are counted first so that the list is one allocation.
	out := make([]*p4v1.FieldMatch, 0, countMatches(b))
	value := func() []byte {
		n, k := binary.Uvarint(b)
		v := b[k : k+int(n) : k+int(n)]
		b = b[k+int(n):]
		return v
	}
	for len(b) > 0 {
		id := binary.BigEndian.Uint32(b)
		kind := b[4]
		b = b[5:]
		if kind == 'e' {
			// The most common match in one allocation.
			x := &canonExact{}
			x.exact.Value = value()
			x.oneof.Exact = &x.exact
			x.fm.FieldId, x.fm.FieldMatchType = id, &x.oneof
			out = append(out, &x.fm)
			continue
		}
		fm := &p4v1.FieldMatch{FieldId: id}
		switch kind {
		case 'l':
			v := value()
			fm.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: v, PrefixLen: int32(binary.BigEndian.Uint32(b))}}
			b = b[4:]
		case 't':
			v := value()
			fm.FieldMatchType = &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: v, Mask: value()}}
		case 'r':
			lo := value()
			fm.FieldMatchType = &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: lo, High: value()}}
		case 'o':
			fm.FieldMatchType = &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: value()}}
		}
		out = append(out, fm)
	}
	return out
}

// countMatches is the number of matches in an entryKey's bytes after
// its priority.
func countMatches(b []byte) int {
	n := 0
	skip := func() {
		v, k := binary.Uvarint(b)
		b = b[k+int(v):]
	}
	for len(b) > 0 {
		kind := b[4]
		b = b[5:]
		switch kind {
		case 'e', 'o':
			skip()
		case 'l':
			skip()
			b = b[4:]
		case 't', 'r':
			skip()
			skip()
		}
		n++
	}
	return n
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
