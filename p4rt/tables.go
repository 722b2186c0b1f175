package p4rt

import (
	"bytes"
	"slices"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/p4rcm/p4rcm/v1model"
)

func (p *pipeline) table(id uint32) (*tableDesc, error) {
	td := p.tables[id]
	if td == nil {
		return nil, unknownID("table", id)
	}
	return td, nil
}

// key checks an entry's matches and priority against its table and
// returns them in canonical form (sorted by field ID) with the target's
// form of the key. room, if not nil, is scratch space: the slices
// returned use it where they fit, and are good until its next use.
func (p *pipeline) key(td *tableDesc, te *p4v1.TableEntry, room *keyRoom) ([]*p4v1.FieldMatch, v1model.Entry, error) {
	ve := v1model.Entry{Priority: int(te.Priority)}
	var canonRoom []*p4v1.FieldMatch
	var exactRoom *canonExact
	if room != nil && len(td.byIndex) <= len(room.match) {
		ve.Match, canonRoom, exactRoom = room.match[:len(td.byIndex)], room.canon[:0], &room.exact
	} else {
		ve.Match = make([]v1model.Match, len(td.byIndex))
	}
	switch {
	case td.ternary && te.Priority <= 0:
		return nil, ve, errorf(codes.InvalidArgument, "table %s: an entry needs a priority above 0 (the table has ternary, range or optional fields)", td.name)
	case !td.ternary && te.Priority != 0:
		return nil, ve, errorf(codes.InvalidArgument, "table %s: priority %d on a table without ternary, range or optional fields; give 0", td.name, te.Priority)
	}
	// seen has room on the stack for the fields of most tables: a
	// slice made here was one allocation on every write.
	var seenRoom [32]bool
	var seen []bool
	if n := len(td.byIndex); n <= len(seenRoom) {
		seen = seenRoom[:n]
	} else {
		seen = make([]bool, n)
	}
	// The request's list is used when it is canonical as given (each
	// match, and in field order): most writes are, and then no copy is
	// made.
	var canon []*p4v1.FieldMatch
	for i, fm := range te.Match {
		fd := td.fields[fm.GetFieldId()]
		if fd == nil {
			return nil, ve, errorf(codes.InvalidArgument, "table %s: no match field with ID %d", td.name, fm.GetFieldId())
		}
		if seen[fd.index] {
			return nil, ve, errorf(codes.InvalidArgument, "table %s: match field %s given twice", td.name, fd.name)
		}
		seen[fd.index] = true
		c, m, err := matchOf(td, fd, fm, exactRoom)
		if err != nil {
			return nil, ve, err
		}
		if canon == nil && (c != fm || i > 0 && te.Match[i-1].FieldId > fm.FieldId) {
			if canonRoom == nil {
				canonRoom = make([]*p4v1.FieldMatch, 0, len(te.Match))
			}
			canon = append(canonRoom, te.Match[:i]...)
		}
		if canon != nil {
			canon = append(canon, c)
		}
		ve.Match[fd.index] = m
	}
	for _, fd := range td.byIndex {
		if seen[fd.index] {
			continue
		}
		// An omitted field is a don't-care; exact fields cannot be.
		switch fd.kind {
		case p4configv1.MatchField_EXACT:
			return nil, ve, errorf(codes.InvalidArgument, "table %s: exact match field %s is missing", td.name, fd.name)
		case p4configv1.MatchField_RANGE:
			ve.Match[fd.index] = v1model.Match{Low: 0, High: ones(fd.width)}
		case p4configv1.MatchField_OPTIONAL:
			ve.Match[fd.index] = v1model.Match{Wildcard: true} // a zero mask where the target has it ternary
		}
	}
	if canon == nil {
		return te.Match, ve, nil
	}
	slices.SortFunc(canon, func(a, b *p4v1.FieldMatch) int { return int(a.FieldId) - int(b.FieldId) })
	return canon, ve, nil
}

// matchOf checks one field match: its kind, its values' widths, and the
// spec's canonical don't-care rules; it returns it canonical and in the
// target's form. A match that is canonical as given is returned itself,
// not copied.
// room, if not nil, is where a canonical copy of an exact match is made.
func matchOf(td *tableDesc, fd *fieldDesc, fm *p4v1.FieldMatch, room *canonExact) (*p4v1.FieldMatch, v1model.Match, error) {
	var m v1model.Match
	// Built only for an error: on every field of every write, the
	// concatenation would cost more than the check.
	what := func() string { return "table " + td.name + " field " + fd.name }
	wrongKind := func(got string) error {
		return errorf(codes.InvalidArgument, "%s: a %s match for a field of match kind %s", what(), got, matchKinds[fd.kind])
	}
	// given: the match as the request has it is canonical (every value
	// already shortest, nothing this server would drop).
	given := !hasUnknown(fm)
	value := func(b []byte, part string) ([]byte, uint64, []byte, error) {
		c, err := fitWhat(b, fd.width, func() string { return what() + " " + part })
		if err != nil {
			return nil, 0, nil, err
		}
		given = given && len(c) == len(b)
		if fd.width > 64 {
			return c, 0, c, nil
		}
		return c, toUint(c), nil, nil
	}
	// out is the canonical copy, where one is needed: the match, its
	// oneof wrapper and its value in one allocation, since a write of
	// values with leading zeros (the full width, as many controllers
	// send them) makes one per field.
	var out *p4v1.FieldMatch
	switch x := fm.FieldMatchType.(type) {
	case *p4v1.FieldMatch_Exact_:
		if fd.kind != p4configv1.MatchField_EXACT {
			return nil, m, wrongKind("exact")
		}
		c, v, w, err := value(x.Exact.GetValue(), "value")
		if err != nil {
			return nil, m, err
		}
		m.Value, m.Wide = v, w
		if given = given && !hasUnknown(x.Exact); !given {
			x := room
			if x == nil {
				x = &canonExact{}
			}
			x.exact.Value = c
			x.oneof.Exact = &x.exact
			x.fm.FieldId, x.fm.FieldMatchType = fd.id, &x.oneof
			out = &x.fm
		}
	case *p4v1.FieldMatch_Lpm:
		if fd.kind != p4configv1.MatchField_LPM {
			return nil, m, wrongKind("LPM")
		}
		pl := int(x.Lpm.GetPrefixLen())
		if pl < 0 || pl > fd.width {
			return nil, m, errorf(codes.InvalidArgument, "%s: prefix length %d outside 1..%d", what(), pl, fd.width)
		}
		if pl == 0 {
			return nil, m, errorf(codes.InvalidArgument, "%s: prefix length 0: omit the field for a don't-care", what())
		}
		c, v, w, err := value(x.Lpm.GetValue(), "value")
		if err != nil {
			return nil, m, err
		}
		if !masked(padded(c, (fd.width+7)/8), prefixMask(fd.width, pl)) {
			return nil, m, errorf(codes.InvalidArgument, "%s: bits set past the /%d prefix", what(), pl)
		}
		m.Value, m.Wide, m.PrefixLen = v, w, pl
		if given = given && !hasUnknown(x.Lpm); !given {
			x := &struct {
				fm    p4v1.FieldMatch
				oneof p4v1.FieldMatch_Lpm
				lpm   p4v1.FieldMatch_LPM
			}{}
			x.lpm.Value, x.lpm.PrefixLen = c, int32(pl)
			x.oneof.Lpm = &x.lpm
			x.fm.FieldId, x.fm.FieldMatchType = fd.id, &x.oneof
			out = &x.fm
		}
	case *p4v1.FieldMatch_Ternary_:
		if fd.kind != p4configv1.MatchField_TERNARY {
			return nil, m, wrongKind("ternary")
		}
		c, v, w, err := value(x.Ternary.GetValue(), "value")
		if err != nil {
			return nil, m, err
		}
		cm, mv, mw, err := value(x.Ternary.GetMask(), "mask")
		if err != nil {
			return nil, m, err
		}
		n := (fd.width + 7) / 8
		if allZero(cm) {
			return nil, m, errorf(codes.InvalidArgument, "%s: mask 0: omit the field for a don't-care", what())
		}
		if !masked(padded(c, n), padded(cm, n)) {
			return nil, m, errorf(codes.InvalidArgument, "%s: the value has bits set outside its mask", what())
		}
		m.Value, m.Wide, m.Mask, m.WideMask = v, w, mv, mw
		if given = given && !hasUnknown(x.Ternary); !given {
			x := &struct {
				fm      p4v1.FieldMatch
				oneof   p4v1.FieldMatch_Ternary_
				ternary p4v1.FieldMatch_Ternary
			}{}
			x.ternary.Value, x.ternary.Mask = c, cm
			x.oneof.Ternary = &x.ternary
			x.fm.FieldId, x.fm.FieldMatchType = fd.id, &x.oneof
			out = &x.fm
		}
	case *p4v1.FieldMatch_Range_:
		if fd.kind != p4configv1.MatchField_RANGE {
			return nil, m, wrongKind("range")
		}
		if fd.width > 64 {
			return nil, m, errorf(codes.Unimplemented, "%s: range fields over 64 bits", what())
		}
		lo, lv, _, err := value(x.Range.GetLow(), "low")
		if err != nil {
			return nil, m, err
		}
		hi, hv, _, err := value(x.Range.GetHigh(), "high")
		if err != nil {
			return nil, m, err
		}
		if lv > hv {
			return nil, m, errorf(codes.InvalidArgument, "%s: range low %d above high %d", what(), lv, hv)
		}
		if lv == 0 && hv == ones(fd.width) {
			return nil, m, errorf(codes.InvalidArgument, "%s: the full range: omit the field for a don't-care", what())
		}
		m.Low, m.High = lv, hv
		if given = given && !hasUnknown(x.Range); !given {
			x := &struct {
				fm    p4v1.FieldMatch
				oneof p4v1.FieldMatch_Range_
				rng   p4v1.FieldMatch_Range
			}{}
			x.rng.Low, x.rng.High = lo, hi
			x.oneof.Range = &x.rng
			x.fm.FieldId, x.fm.FieldMatchType = fd.id, &x.oneof
			out = &x.fm
		}
	case *p4v1.FieldMatch_Optional_:
		if fd.kind != p4configv1.MatchField_OPTIONAL {
			return nil, m, wrongKind("optional")
		}
		c, v, w, err := value(x.Optional.GetValue(), "value")
		if err != nil {
			return nil, m, err
		}
		m.Value, m.Wide = v, w
		if fd.asTernary {
			m.Mask, m.WideMask = ones(fd.width), prefixMask(fd.width, fd.width)
		}
		if given = given && !hasUnknown(x.Optional); !given {
			x := &struct {
				fm       p4v1.FieldMatch
				oneof    p4v1.FieldMatch_Optional_
				optional p4v1.FieldMatch_Optional
			}{}
			x.optional.Value = c
			x.oneof.Optional = &x.optional
			x.fm.FieldId, x.fm.FieldMatchType = fd.id, &x.oneof
			out = &x.fm
		}
	default:
		return nil, m, errorf(codes.InvalidArgument, "%s: no match value (or a kind this server does not know)", what())
	}
	if given {
		return fm, m, nil
	}
	return out, m, nil
}

// canonExact is a canonical copy of an exact match: the match, its
// oneof wrapper and its value in one allocation, or in a keyRoom.
type canonExact struct {
	fm    p4v1.FieldMatch
	oneof p4v1.FieldMatch_Exact_
	exact p4v1.FieldMatch_Exact
}

// keyRoom is scratch space for checking a write's key (the pipeline's
// room, see writeTable): the target's form of a key of one field, the
// canonical match list and copy of an exact match, and a direct
// action's data of up to two words (most actions' parameters fit).
type keyRoom struct {
	match  [1]v1model.Match
	canon  [1]*p4v1.FieldMatch
	exact  canonExact
	params [2]uint64
}

// hasUnknown reports whether m carries fields this server does not know,
// which a canonical copy drops.
func hasUnknown(m proto.Message) bool { return len(m.ProtoReflect().GetUnknown()) > 0 }

// prefixMask is the mask of the first pl bits of a width-bit value held
// right-aligned in whole bytes.
func prefixMask(width, pl int) []byte {
	n := (width + 7) / 8
	m := make([]byte, n)
	pad := n*8 - width
	for b := pad; b < pad+pl; b++ {
		m[b/8] |= 1 << (7 - uint(b%8))
	}
	return m
}

// masked reports whether v has no bit set outside mask (same lengths).
func masked(v, mask []byte) bool {
	for i := range v {
		if v[i]&^mask[i] != 0 {
			return false
		}
	}
	return true
}

// action checks an action for a table (or, with isDefault, its default
// entry) and returns it canonical with the target's data.
//
// room, if it has the capacity, is where the target's data is put.
func (p *pipeline) action(td *tableDesc, a *p4v1.Action, isDefault bool, room []uint64) (*p4v1.Action, []uint64, error) {
	ad := p.actions[a.GetActionId()]
	ref := td.actions[a.GetActionId()]
	switch {
	case ad == nil || ref == nil:
		return nil, nil, errorf(codes.InvalidArgument, "table %s: action ID %d is not one of its actions (%s)", td.name, a.GetActionId(), p.actionNames(td))
	case isDefault && ref.Scope == p4configv1.ActionRef_TABLE_ONLY:
		return nil, nil, errorf(codes.PermissionDenied, "table %s: action %s is @tableonly: not a default action", td.name, ad.name)
	case !isDefault && ref.Scope == p4configv1.ActionRef_DEFAULT_ONLY:
		return nil, nil, errorf(codes.PermissionDenied, "table %s: action %s is @defaultonly: not for entries", td.name, ad.name)
	}
	return p.actionData(ad, a, room)
}

// actionData checks an action's parameters: each once, each fitting.
// An action canonical as given (its values shortest, its parameters in
// ID order) is returned itself, not copied.
func (p *pipeline) actionData(ad *actionDesc, a *p4v1.Action, room []uint64) (*p4v1.Action, []uint64, error) {
	// Each parameter's value by its place in the target's order; most
	// actions have a few parameters, which need no allocation.
	var small [8][]byte
	var vals [][]byte
	if n := len(ad.byIndex); n <= len(small) {
		vals = small[:n]
	} else {
		vals = make([][]byte, n)
	}
	given := !hasUnknown(a)
	for i, prm := range a.Params {
		pd := ad.params[prm.GetParamId()]
		if pd == nil {
			return nil, nil, errorf(codes.InvalidArgument, "action %s: no parameter with ID %d", ad.name, prm.GetParamId())
		}
		if vals[pd.index] != nil {
			return nil, nil, errorf(codes.InvalidArgument, "action %s: parameter %s given twice", ad.name, pd.name)
		}
		c, err := fitWhat(prm.Value, pd.width, func() string { return "action " + ad.name + " parameter " + pd.name })
		if err != nil {
			return nil, nil, err
		}
		vals[pd.index] = c
		given = given && len(c) == len(prm.Value) && !hasUnknown(prm) && (i == 0 || a.Params[i-1].ParamId < prm.ParamId)
	}
	data := room[:0]
	if cap(room) < len(ad.byIndex) {
		data = make([]uint64, 0, len(ad.byIndex))
	}
	for i, pd := range ad.byIndex {
		if vals[i] == nil {
			return nil, nil, errorf(codes.InvalidArgument, "action %s: parameter %s is missing", ad.name, pd.name)
		}
		data = appendWords(data, vals[i], pd.width)
	}
	if given {
		return a, data, nil
	}
	out := &p4v1.Action{ActionId: ad.id, Params: make([]*p4v1.Action_Param, 0, len(ad.byIndex))}
	for i, pd := range ad.byIndex {
		out.Params = append(out.Params, &p4v1.Action_Param{ParamId: pd.id, Value: vals[i]})
	}
	slices.SortFunc(out.Params, func(x, y *p4v1.Action_Param) int { return int(x.ParamId) - int(y.ParamId) })
	return out, data, nil
}

func (p *pipeline) actionNames(td *tableDesc) string {
	var names []string
	for _, id := range sortedIDs(td.actions) {
		names = append(names, p.actions[id].name)
	}
	return strings.Join(names, ", ")
}

// writeTable applies one update of a table entry.
func (p *pipeline) writeTable(typ p4v1.Update_Type, te *p4v1.TableEntry) error {
	// The pipeline's scratch room (writes hold the server's lock):
	// nothing of it is kept, the target copying what it keeps of its
	// form of the entry and the stored entry being bytes.
	pr := &p.prep
	p.prepTable(typ, te, pr, false)
	return p.applyTable(typ, te, pr)
}

// tablePrep is the part of a table write that depends on the program
// alone, not on what was written before it: its checks, the key in its
// forms and the direct action. A large batch prepares its updates on
// another core ahead of their turn (see pipeline.writeBatch); their
// errors are kept to be returned where the write meets them, so that
// each update fails as it would have alone.
type tablePrep struct {
	td *tableDesc
	// err is the first error before the key's state is looked at.
	err error
	// deflt: the update is of the default entry (writeDefault's).
	deflt bool
	ve    v1model.Entry
	key   []byte
	// actDone says act, data and actErr are the direct action's check.
	actDone bool
	act     *p4v1.Action
	data    []uint64
	actErr  error
	// built is the target's entry for an INSERT, built ahead; blob,
	// keyLen and actLen are the stored entry's, made ahead (blob "" if
	// not).
	hasBuilt       bool
	built          v1model.BuiltEntry
	blob           string
	keyLen, actLen int32
	room           keyRoom
	keyBuf         [64]byte
}

// prepTable fills pr for a write of te. ahead, it also builds the
// target's entry and the stored entry's blob, which a write made on its
// own makes only once it has passed the checks on the state.
func (p *pipeline) prepTable(typ p4v1.Update_Type, te *p4v1.TableEntry, pr *tablePrep, ahead bool) {
	*pr = tablePrep{}
	td, err := p.table(te.TableId)
	if err != nil {
		pr.err = err
		return
	}
	pr.td = td
	switch {
	case te.IsDefaultAction:
		pr.deflt = true
		return
	case te.IdleTimeoutNs != 0:
		pr.err = errorf(codes.InvalidArgument, "table %s: an idle timeout on a table without idle timeout support", td.name)
		return
	case td.isConst && typ != p4v1.Update_MODIFY:
		pr.err = errorf(codes.PermissionDenied, "table %s is const: its entries come from the program", td.name)
		return
	case len(td.byIndex) == 0 && typ == p4v1.Update_INSERT:
		pr.err = errorf(codes.InvalidArgument, "table %s has no key: set its default action instead", td.name)
		return
	}
	match, ve, err := p.key(td, te, &pr.room)
	if err != nil {
		pr.err = err
		return
	}
	pr.ve = ve
	pr.key = appendEntryKey(pr.keyBuf[:0], match, te.Priority)
	if !ahead || typ == p4v1.Update_DELETE || td.profile != nil {
		return
	}
	// The direct action, as entryAction checks it.
	a, ok := te.GetAction().GetType().(*p4v1.TableAction_Action)
	if !ok {
		return
	}
	pr.act, pr.data, pr.actErr = p.action(td, a.Action, false, pr.room.params[:0])
	pr.actDone = true
	if pr.actErr != nil {
		return
	}
	pr.blob, pr.keyLen, pr.actLen = makeBlob(pr.key, pr.act, te.Metadata)
	if typ == p4v1.Update_INSERT && te.MeterConfig == nil {
		// The target's entry as the INSERT gives it (ve.Meter comes from
		// a meter configuration, which this entry lacks).
		ve.Action, ve.Params = p.actions[pr.act.ActionId].name, pr.data
		pr.built, pr.hasBuilt = p.sw.BuildEntry(td.name, ve), true
	}
}

// applyTable applies a table write that prepTable prepared.
func (p *pipeline) applyTable(typ p4v1.Update_Type, te *p4v1.TableEntry, pr *tablePrep) error {
	if pr.err != nil {
		return pr.err
	}
	td, ve, key := pr.td, pr.ve, pr.key
	if pr.deflt {
		return p.writeDefault(typ, td, te)
	}
	ts := p.st.table(td.id)
	// An INSERT built ahead into a table of the controllers' entries
	// alone is looked up by the target's key, which stands for the
	// server's (both canonical): the server's map is not kept up to date
	// through a batch of inserts, but brought up to date by the next
	// lookup that needs it.
	byTarget := typ == p4v1.Update_INSERT && pr.hasBuilt && pr.built.Packed() && !ts.hasConst
	var old *stored
	exists := false
	if byTarget {
		exists = p.sw.HoldsBuilt(pr.built)
	} else {
		old = ts.lookup(key)
		exists = old != nil
	}
	switch typ {
	case p4v1.Update_INSERT:
		if td.isConst {
			return errorf(codes.PermissionDenied, "table %s is const: its entries come from the program", td.name)
		}
		if exists {
			return errorf(codes.AlreadyExists, "table %s: an entry with this key exists", td.name)
		}
		if te.Action == nil {
			return errorf(codes.InvalidArgument, "table %s: an entry needs an action", td.name)
		}
		if max := int64(td.target.MaxSize); max > 0 && int64(ts.len()) >= max {
			return errorf(codes.ResourceExhausted, "table %s is full (%d entries)", td.name, max)
		}
		var x storedExtra
		if err := p.entryResources(td, te, &x); err != nil {
			return err
		}
		direct, err := p.entryAction(td, te.Action, &x, &ve, pr)
		if err != nil {
			return err
		}
		var ref v1model.EntryRef
		if pr.hasBuilt {
			ref, err = p.sw.InsertBuilt(pr.built)
		} else {
			ref, err = p.sw.InsertEntry(td.name, ve)
		}
		if err != nil {
			p.freeHidden(td, x.hidden)
			return errorf(codes.Internal, "%v", err)
		}
		if te.CounterData != nil {
			_ = p.sw.SetEntryCounterRef(ref, uint64(te.CounterData.PacketCount), uint64(te.CounterData.ByteCount))
		}
		ts.add(pr.stored(direct, te, ref, x), byTarget)
	case p4v1.Update_MODIFY:
		if old == nil {
			return errorf(codes.NotFound, "table %s: no entry with this key", td.name)
		}
		if old.isConst || td.isConst {
			if te.Action != nil {
				return errorf(codes.PermissionDenied, "table %s is const: only its entries' direct counters and meters change", td.name)
			}
			return p.modifyResources(td, te, old)
		}
		if te.Action == nil {
			return errorf(codes.InvalidArgument, "table %s: MODIFY needs the entry's action", td.name)
		}
		x := storedExtra{meter: old.meter()}
		if err := p.entryResources(td, te, &x); err != nil {
			return err
		}
		direct, err := p.entryAction(td, te.Action, &x, &ve, pr)
		if err != nil {
			return err
		}
		if err := p.sw.ModifyEntry(td.name, ve); err != nil {
			p.freeHidden(td, x.hidden)
			return errorf(codes.Internal, "%v", err)
		}
		if te.CounterData != nil {
			_ = p.sw.SetEntryCounterRef(old.ref, uint64(te.CounterData.PacketCount), uint64(te.CounterData.ByteCount))
		}
		p.freeHidden(td, old.hidden())
		// The target's entry is changed in place: the reference holds.
		ts.replace(old, pr.stored(direct, te, old.ref, x))
	case p4v1.Update_DELETE:
		if old == nil {
			return errorf(codes.NotFound, "table %s: no entry with this key", td.name)
		}
		if old.isConst || td.isConst {
			return errorf(codes.PermissionDenied, "table %s is const: its entries come from the program", td.name)
		}
		if err := p.sw.DeleteEntryRef(old.ref); err != nil {
			return errorf(codes.Internal, "%v", err)
		}
		p.freeHidden(td, old.hidden())
		ts.remove(old)
	default:
		return errorf(codes.InvalidArgument, "update type %v", typ)
	}
	return nil
}

// stored is the stored form of the entry te, written with the prepared
// key and direct action direct (canonical; nil if none), the target's
// entry ref.
func (pr *tablePrep) stored(direct *p4v1.Action, te *p4v1.TableEntry, ref v1model.EntryRef, x storedExtra) stored {
	if pr.blob == "" || direct != pr.act {
		return newStored(pr.key, direct, te, ref, x)
	}
	e := stored{blob: pr.blob, keyLen: pr.keyLen, actLen: pr.actLen, ctrlMeta: controllerMetadata(te), ref: ref}
	if !x.empty() {
		e.x = new(storedExtra)
		*e.x = x
	}
	return e
}

// newStored is the stored form of the entry te, written with key key
// (its entryKey) and direct action direct (canonical; nil if none), the
// target's entry ref.
func newStored(key []byte, direct *p4v1.Action, te *p4v1.TableEntry, ref v1model.EntryRef, x storedExtra) stored {
	e := stored{ctrlMeta: controllerMetadata(te), ref: ref}
	e.blob, e.keyLen, e.actLen = makeBlob(key, direct, te.Metadata)
	if !x.empty() {
		e.x = new(storedExtra)
		*e.x = x
	}
	return e
}

// entryResources checks the direct resources an entry carries and puts
// its meter configuration in x.
func (p *pipeline) entryResources(td *tableDesc, te *p4v1.TableEntry, x *storedExtra) error {
	if te.CounterData != nil && !td.hasCounter {
		return errorf(codes.InvalidArgument, "table %s has no direct counter: counter_data is not for it", td.name)
	}
	if te.MeterCounterData != nil {
		return errorf(codes.Unimplemented, "table %s: meter counters", td.name)
	}
	if te.MeterConfig != nil {
		if td.directMeter == nil {
			return errorf(codes.InvalidArgument, "table %s has no direct meter: meter_config is not for it", td.name)
		}
		if _, err := meterRates(te.MeterConfig, td.name); err != nil {
			return err
		}
		x.meter = proto.Clone(te.MeterConfig).(*p4v1.MeterConfig)
	}
	return nil
}

// modifyResources changes only an entry's direct counter and meter (the
// one MODIFY a const table takes).
func (p *pipeline) modifyResources(td *tableDesc, te *p4v1.TableEntry, old *stored) error {
	var x storedExtra
	if err := p.entryResources(td, te, &x); err != nil {
		return err
	}
	if te.MeterConfig != nil {
		rates, _ := meterRates(te.MeterConfig, td.name)
		if err := p.sw.SetEntryMeterRef(old.ref, rates); err != nil {
			return errorf(codes.Internal, "%v", err)
		}
		old.setMeter(x.meter)
	}
	if te.CounterData != nil {
		_ = p.sw.SetEntryCounterRef(old.ref, uint64(te.CounterData.PacketCount), uint64(te.CounterData.ByteCount))
	}
	return nil
}

// entryAction checks an entry's action (direct, a member, a group or a
// one-shot set) and fills the target's entry and x. It returns the
// canonical direct action, nil for the others (which it puts in x).
// A direct action's check is pr's where it was prepared; otherwise the
// target's action data is put in pr's room.
func (p *pipeline) entryAction(td *tableDesc, ta *p4v1.TableAction, x *storedExtra, ve *v1model.Entry, pr *tablePrep) (*p4v1.Action, error) {
	if x.meter != nil {
		ve.Meter, _ = meterRates(x.meter, td.name)
	}
	switch a := ta.Type.(type) {
	case *p4v1.TableAction_Action:
		if td.profile != nil {
			return nil, errorf(codes.InvalidArgument, "table %s takes its actions from action profile %s: give a member or a group", td.name, td.profile.name)
		}
		act, data, err := pr.act, pr.data, pr.actErr
		if !pr.actDone {
			act, data, err = p.action(td, a.Action, false, pr.room.params[:0])
		}
		if err != nil {
			return nil, err
		}
		ve.Action, ve.Params = p.actions[act.ActionId].name, data
		return act, nil
	case *p4v1.TableAction_ActionProfileMemberId:
		if td.profile == nil {
			return nil, errorf(codes.InvalidArgument, "table %s has no action profile: give an action", td.name)
		}
		if p.st.members[td.profile.id][a.ActionProfileMemberId] == nil {
			return nil, errorf(codes.NotFound, "action profile %s has no member %d", td.profile.name, a.ActionProfileMemberId)
		}
		ve.Ref = &v1model.Ref{ID: int(a.ActionProfileMemberId)}
		x.action = proto.Clone(ta).(*p4v1.TableAction)
	case *p4v1.TableAction_ActionProfileGroupId:
		if td.profile == nil || !td.profile.selector {
			return nil, errorf(codes.InvalidArgument, "table %s has no action selector: no groups", td.name)
		}
		if p.st.groups[td.profile.id][a.ActionProfileGroupId] == nil {
			return nil, errorf(codes.NotFound, "action profile %s has no group %d", td.profile.name, a.ActionProfileGroupId)
		}
		ve.Ref = &v1model.Ref{ID: int(a.ActionProfileGroupId), Group: true}
		x.action = proto.Clone(ta).(*p4v1.TableAction)
	case *p4v1.TableAction_ActionProfileActionSet:
		return nil, p.oneShot(td, a.ActionProfileActionSet, x, ve)
	default:
		return nil, errorf(codes.InvalidArgument, "table %s: an empty action", td.name)
	}
	return nil, nil
}

// oneShot programs an action selector from the entry itself (spec
// "One Shot Action Selector Programming"): the server makes a member per
// action and a group of them, out of the controller's sight.
func (p *pipeline) oneShot(td *tableDesc, set *p4v1.ActionProfileActionSet, x *storedExtra, ve *v1model.Entry) error {
	if td.profile == nil || !td.profile.selector {
		return errorf(codes.InvalidArgument, "table %s has no action selector: no action sets", td.name)
	}
	if len(set.ActionProfileActions) == 0 {
		return errorf(codes.InvalidArgument, "table %s: an empty action set", td.name)
	}
	if m := td.profile.maxGroupSize; m > 0 && len(set.ActionProfileActions) > int(m) {
		return errorf(codes.InvalidArgument, "table %s: %d actions, the selector's groups hold %d", td.name, len(set.ActionProfileActions), m)
	}
	canon := &p4v1.ActionProfileActionSet{}
	type act struct {
		name string
		data []uint64
	}
	var acts []act
	for _, apa := range set.ActionProfileActions {
		if apa.Weight <= 0 {
			return errorf(codes.InvalidArgument, "table %s: action weight %d, want 1 or more", td.name, apa.Weight)
		}
		if apa.Weight > 1 {
			return errorf(codes.Unimplemented, "table %s: weights above 1 (the target picks members with equal weight)", td.name)
		}
		_, oldWatch := apa.WatchKind.(*p4v1.ActionProfileAction_Watch)
		wp, err := watchPort(oldWatch, apa.GetWatchPort(), "table "+td.name)
		if err != nil {
			return err
		}
		a, data, err := p.action(td, apa.Action, false, nil)
		if err != nil {
			return err
		}
		c := &p4v1.ActionProfileAction{Action: a, Weight: apa.Weight}
		if wp != nil {
			c.WatchKind = &p4v1.ActionProfileAction_WatchPort{WatchPort: wp}
		}
		canon.ActionProfileActions = append(canon.ActionProfileActions, c)
		acts = append(acts, act{p.actions[a.ActionId].name, data})
	}
	var ids []int
	for _, a := range acts {
		id := p.st.nextHidden
		p.st.nextHidden++
		if err := p.sw.AddMember(td.profile.name, id, a.name, a.data); err != nil {
			p.freeHidden(td, ids)
			return errorf(codes.Internal, "%v", err)
		}
		ids = append(ids, id)
	}
	gid := p.st.nextHidden
	p.st.nextHidden++
	if err := p.sw.SetGroup(td.profile.name, gid, ids); err != nil {
		p.freeHidden(td, ids)
		return errorf(codes.Internal, "%v", err)
	}
	x.hidden = append(ids, gid)
	ve.Ref = &v1model.Ref{ID: gid, Group: true}
	x.action = &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileActionSet{ActionProfileActionSet: canon}}
	return nil
}

// watchPort checks a member's watch port and returns it canonical, nil
// if none. A watched member is always used: the target has no port
// status to watch (as BMv2 before a port is reported down), so a watch
// port is kept and read back but changes nothing. The int32 watch that
// P4Runtime 1.4 deprecates for watch_port is refused.
func watchPort(deprecated bool, port []byte, what string) ([]byte, error) {
	switch {
	case deprecated:
		return nil, errorf(codes.Unimplemented, "%s: the deprecated int32 watch: give watch_port", what)
	case len(port) == 0: // empty: always in use, as the spec says
		return nil, nil
	}
	return fit(port, 32, what+": watch_port")
}

// freeHidden removes the target's members and group of a one-shot set:
// the group first (the last ID), then its members.
func (p *pipeline) freeHidden(td *tableDesc, ids []int) {
	if len(ids) == 0 {
		return
	}
	_ = p.sw.DeleteGroup(td.profile.name, ids[len(ids)-1])
	for _, id := range ids {
		_ = p.sw.DeleteMember(td.profile.name, id)
	}
}

// writeDefault applies an update of a table's default entry.
func (p *pipeline) writeDefault(typ p4v1.Update_Type, td *tableDesc, te *p4v1.TableEntry) error {
	switch {
	case typ != p4v1.Update_MODIFY:
		return errorf(codes.InvalidArgument, "table %s: the default entry is always there: MODIFY it, do not %v it", td.name, typ)
	case len(te.Match) > 0 || te.Priority != 0:
		return errorf(codes.InvalidArgument, "table %s: the default entry has no match and no priority", td.name)
	case td.defaultConst:
		return errorf(codes.PermissionDenied, "table %s: its default action is const", td.name)
	case td.profile != nil:
		return errorf(codes.PermissionDenied, "table %s takes its actions from an action profile: its default is a const NoAction", td.name)
	case te.CounterData != nil || te.MeterConfig != nil:
		return errorf(codes.Unimplemented, "table %s: direct resources of the default entry", td.name)
	}
	ts := p.st.table(td.id)
	if te.Action == nil {
		if err := p.sw.ResetDefault(td.name); err != nil {
			return errorf(codes.Internal, "%v", err)
		}
		ts.deflt = nil
		return nil
	}
	x, ok := te.Action.Type.(*p4v1.TableAction_Action)
	if !ok {
		return errorf(codes.InvalidArgument, "table %s: a default entry's action is an action", td.name)
	}
	a, data, err := p.action(td, x.Action, true, nil)
	if err != nil {
		return err
	}
	if err := p.sw.SetDefault(td.name, p.actions[a.ActionId].name, data); err != nil {
		return errorf(codes.Internal, "%v", err)
	}
	ts.deflt = &p4v1.TableEntry{TableId: td.id, IsDefaultAction: true,
		Metadata: te.Metadata, Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}}
	return nil
}

// defaultEntry is a table's default entry as a read returns it.
func (p *pipeline) defaultEntry(td *tableDesc) *p4v1.TableEntry {
	if d := p.st.table(td.id).deflt; d != nil {
		return proto.Clone(d).(*p4v1.TableEntry)
	}
	te := &p4v1.TableEntry{TableId: td.id, IsDefaultAction: true}
	if td.target.DefaultAction != "" {
		if a, err := p.actionFromTarget(td.target.DefaultAction, td.target.DefaultParams); err == nil {
			te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
		}
	}
	return te
}

// readTables answers a read of table entries with the spec's filters
// ("Wildcard Reads" of TableEntry), each a wildcard at its default:
// table_id (0: every table), match (exact: at most one entry; on a table
// with priorities, with priority 0, the entries of that match at any
// priority), action (an action ID: the entries whose direct action it
// is; not for tables of action profiles), priority, controller_metadata,
// metadata, is_default_action (the default entry instead of the
// others). With table_id 0 a match has no table to belong to and is
// INVALID_ARGUMENT; the other filters apply to every table, as PI's
// server applies them.
func (p *pipeline) readTables(f *p4v1.TableEntry, out func(*p4v1.Entity) error) error {
	var tds []*tableDesc
	if f.TableId == 0 {
		if len(f.Match) > 0 {
			return errorf(codes.InvalidArgument, "a match without a table")
		}
		for _, id := range sortedIDs(p.tables) {
			tds = append(tds, p.tables[id])
		}
	} else {
		td, err := p.table(f.TableId)
		if err != nil {
			return err
		}
		tds = []*tableDesc{td}
	}
	var actionID uint32
	if f.Action != nil {
		a := f.Action.GetAction()
		if a == nil {
			return errorf(codes.InvalidArgument, "a read filters table entries by action ID only, not by member, group or action set (the spec's Wildcard Reads)")
		}
		if p.actions[a.ActionId] == nil {
			return unknownID("action", a.ActionId)
		}
		if f.TableId != 0 && tds[0].profile != nil {
			return errorf(codes.InvalidArgument, "table %s takes its actions from action profile %s: its entries cannot be filtered by action ID", tds[0].name, tds[0].profile.name)
		}
		actionID = a.ActionId
	}
	if f.IsDefaultAction && (len(f.Match) > 0 || f.Priority != 0) {
		return errorf(codes.InvalidArgument, "a default entry has no match and no priority: give is_default_action alone")
	}
	keep := func(te *p4v1.TableEntry) bool {
		switch {
		case actionID != 0 && te.GetAction().GetAction().GetActionId() != actionID:
			return false
		case f.IsDefaultAction:
			return true
		case f.Priority != 0 && te.Priority != f.Priority:
			return false
		case controllerMetadata(f) != 0 && controllerMetadata(te) != controllerMetadata(f):
			return false
		case len(f.Metadata) > 0 && !bytes.Equal(te.Metadata, f.Metadata):
			return false
		}
		return true
	}
	// keepStored is keep for a stored entry, which it reads in place:
	// only the entries kept are built as messages.
	keepStored := func(e *stored) bool {
		switch {
		case actionID != 0 && e.directActionID() != actionID:
			return false
		case f.Priority != 0 && e.priority() != f.Priority:
			return false
		case controllerMetadata(f) != 0 && e.ctrlMeta != controllerMetadata(f):
			return false
		case len(f.Metadata) > 0 && e.blob[e.keyLen+e.actLen:] != string(f.Metadata):
			return false
		}
		return true
	}
	for _, td := range tds {
		if f.IsDefaultAction {
			if d := p.defaultEntry(td); keep(d) {
				if err := out(tableEntity(d)); err != nil {
					return err
				}
			}
			continue
		}
		if actionID != 0 && td.profile != nil {
			continue // table 0: a table of members and groups holds no direct action
		}
		var es []*stored
		if len(f.Match) > 0 {
			// The match must be a valid key of the table; the priority
			// is a filter of its own, checked below.
			probe := &p4v1.TableEntry{Match: f.Match}
			if td.ternary {
				probe.Priority = 1
			}
			match, _, err := p.key(td, probe, nil)
			if err != nil {
				return err
			}
			// The key without its priority (its first four bytes).
			key := entryKey(match, 0)[4:]
			for _, e := range p.st.entries(td.id) {
				if e.key()[4:] == key {
					es = append(es, e)
				}
			}
		} else {
			es = p.st.entries(td.id)
		}
		for _, e := range es {
			if !keepStored(e) {
				continue
			}
			te := e.tableEntry(td)
			if f.CounterData != nil && td.hasCounter {
				pk, by, _ := p.sw.EntryCounterRef(e.ref)
				te.CounterData = &p4v1.CounterData{PacketCount: int64(pk), ByteCount: int64(by)}
			}
			if err := out(tableEntity(te)); err != nil {
				return err
			}
		}
	}
	return nil
}

// controllerMetadata is an entry's controller_metadata, which P4Runtime
// 1.4 deprecates but still lists among the read filters: the server keeps
// what a controller writes there and filters by it, for read-write
// symmetry with older controllers.
func controllerMetadata(te *p4v1.TableEntry) uint64 {
	//lint:ignore SA1019 the spec's read filters still name it
	return te.ControllerMetadata
}

func setControllerMetadata(te *p4v1.TableEntry, v uint64) {
	//lint:ignore SA1019 kept for the filter above
	te.ControllerMetadata = v
}

func tableEntity(te *p4v1.TableEntry) *p4v1.Entity {
	return &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}
}
