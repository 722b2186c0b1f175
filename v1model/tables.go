package v1model

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"unsafe"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// Match is one field of an entry's key. Which members count depends on
// the field's match kind: Value for exact; Value and PrefixLen for lpm;
// Value and Mask for ternary; Low and High for range; for optional,
// Value, or nothing when Wildcard is set.
type Match struct {
	Value     uint64
	Mask      uint64
	PrefixLen int
	Low, High uint64
	Wildcard  bool
	// Wide and WideMask stand for Value and Mask on a key over 64 bits
	// (an IPv6 address): big-endian, right-aligned.
	Wide, WideMask []byte
}

// Entry is a table entry as the control plane gives it.
type Entry struct {
	Match []Match
	// Priority orders ternary, range and optional entries: as in
	// P4Runtime, the larger wins.
	Priority int
	// Action and Params for a direct table; Ref for a table with an
	// action profile (a member) or selector (a member or a group).
	Action string
	Params []uint64
	Ref    *Ref
	// Meter configures the entry's direct meter, if the table has one:
	// committed rate, then peak.
	Meter []MeterRate
}

// Ref points an entry at an action profile's member or group.
type Ref struct {
	ID    int
	Group bool
}

// keyField is one field of a table's key.
type keyField struct {
	name   string
	kind   string // exact, lpm, ternary, range, optional
	eval   func(p *packet) int64
	leaf   *leaf // eval inline, where it is a leaf
	width  int
	mask   uint64 // the key's own mask (a slice of a field), all ones if none
	nbytes int
	off    int      // byte offset in the packed key
	wide   *wideRef // a key over 64 bits
}

// packWide writes a wide key's parts into its bytes, right-aligned.
func (kf *keyField) packWide(p *packet, b []byte) {
	clear(b)
	pos := len(b)*8 - kf.width
	for j, slot := range kf.wide.slots {
		putBits(b, pos, kf.wide.widths[j], p.f[slot])
		pos += kf.wide.widths[j]
	}
}

// prefixMask is the mask of the first pl bits of a w-bit field held
// right-aligned in n bytes.
func prefixMask(w, n, pl int) []byte {
	m := make([]byte, n)
	pad := n*8 - w
	for b := pad; b < pad+pl; b++ {
		m[b/8] |= 1 << (7 - uint(b%8))
	}
	return m
}

// entry is a stored entry: its key packed as bytes.
type entry struct {
	value, mask []byte // packed key; mask nil for exact-only tables
	lo, hi      []byte // range bounds, packed as value
	prefix      int    // LPM prefix length
	priority    int
	seq         int
	act         *action
	data        []uint64
	ref         int // indirect tables: member or group id
	group       bool
	indirect    bool
	meter       meter  // direct meter
	packets     uint64 // direct counter
	bytes       uint64
	user        Entry
}

// Table is a match-action table.
type Table struct {
	Name     string
	id       int
	keys     []keyField
	keyLen   int
	kind     string // "exact", "lpm" or "ternary": how it is searched
	lpmField int
	maxSize  int
	actions  map[string]*action
	actList  []string
	deflt    *action
	defData  []uint64
	defConst bool
	// progDeflt and progDefData are the default the program gave.
	progDeflt   *action
	progDefData []uint64
	counters    bool
	profile     *profile
	meter       *meterArray // direct meter
	meterWidth  int
	micros      func() uint64

	exact    map[string]*entry
	byPrefix map[int]map[string]*entry
	prefixes []int // descending
	// wideMasks holds, for an LPM key over 64 bits, each prefix length's
	// mask, so that a lookup masks bytes without computing or allocating.
	wideMasks map[int][]byte
	list      []*entry // ternary: by priority, then insertion
	seq       int
	count     int

	// nextAct and nextNode are next_tables by action: a list, searched
	// by pointer (names compared only where two action values differ),
	// where a map by name hashed a string for every packet at every
	// table.
	nextAct  []*action
	nextNode []*node
	hit      *node
	miss     *node
	hitMiss  bool
	baseNext *node
}

func (c *compiler) compileTable(bt *bmjson.Table) (*Table, error) {
	where := fmt.Sprintf("table %q", bt.Name)
	if s := bt.Source.String(); s != "" {
		where += " at " + s
	}
	var prof *profile
	switch bt.Type {
	case "simple", "":
	case "indirect", "indirect_ws":
		prof = c.sw.profiles[bt.ActionProfile]
		if prof == nil {
			return nil, fmt.Errorf("%s: unknown action profile %q", where, bt.ActionProfile)
		}
		if (bt.Type == "indirect_ws") != (prof.selector != nil) {
			return nil, fmt.Errorf("%s: table type %s with action profile %q, which %s a selector", where, bt.Type, prof.name,
				map[bool]string{true: "has", false: "has no"}[prof.selector != nil])
		}
	default:
		return nil, fmt.Errorf("%s: table type %q is not handled by this target", where, bt.Type)
	}
	var dm *meterArray
	if bt.DirectMeters != nil {
		dm = c.sw.meters[*bt.DirectMeters]
		if dm == nil || !dm.direct {
			return nil, fmt.Errorf("%s: unknown direct meter %q", where, *bt.DirectMeters)
		}
	}
	if bt.SupportTimeout {
		return nil, fmt.Errorf("%s: entry timeouts (idle_timeout) are not handled by this target yet", where)
	}
	t := &Table{Name: bt.Name, id: bt.ID, maxSize: bt.MaxSize, actions: map[string]*action{}, counters: bt.WithCounters,
		exact: map[string]*entry{}, byPrefix: map[int]map[string]*entry{}, wideMasks: map[int][]byte{}, lpmField: -1, kind: "exact", profile: prof, meter: dm,
		micros: c.sw.now}
	if dm != nil {
		t.meterWidth = c.l.width[dm.result]
	}
	c.where = where
	for i, k := range bt.Key {
		var ref []string
		if err := jsonUnmarshal(k.Target, &ref); err != nil || len(ref) != 2 {
			return nil, fmt.Errorf("%s: key %d: target: want [header, field]", where, i)
		}
		if wr, wide := c.l.wideField(ref[0], ref[1]); wide {
			if k.Mask != nil || k.MatchType == "range" || wr.width > 256 {
				return nil, fmt.Errorf("%s: key %d: a %d-bit %s key%s is not handled by this target", where, i, wr.width, k.MatchType,
					map[bool]string{true: " with a mask", false: ""}[k.Mask != nil])
			}
			kf := keyField{name: k.Name, kind: k.MatchType, width: wr.width, nbytes: (wr.width + 7) / 8, off: t.keyLen, wide: wr}
			if kf.name == "" {
				kf.name = strings.Join(ref, ".")
			}
			if kf.kind == "lpm" {
				if t.lpmField >= 0 {
					return nil, fmt.Errorf("%s: two lpm keys", where)
				}
				t.lpmField = i
			}
			t.keys = append(t.keys, kf)
			t.keyLen += kf.nbytes
			continue
		}
		e, w, err := c.widthOf(bmjson.Value{Type: "field", Value: k.Target})
		if err != nil {
			return nil, fmt.Errorf("%s: key %d: %w", where, i, err)
		}
		kf := keyField{name: k.Name, kind: k.MatchType, eval: e.eval, leaf: e.leaf, width: w, mask: ones(w), nbytes: (w + 7) / 8, off: t.keyLen}
		if kf.name == "" {
			kf.name = strings.Join(ref, ".")
		}
		if k.MatchType == "valid" {
			kf.kind = "exact"
		}
		if k.Mask != nil {
			m, err := bmjson.ParseNumber(*k.Mask)
			if err != nil {
				return nil, fmt.Errorf("%s: key %d: mask: %w", where, i, err)
			}
			kf.mask = uint64(m)
		}
		switch kf.kind {
		case "exact":
		case "lpm":
			if t.lpmField >= 0 {
				return nil, fmt.Errorf("%s: two lpm keys", where)
			}
			t.lpmField = i
		case "ternary", "range", "optional":
		default:
			return nil, fmt.Errorf("%s: key %d: match kind %q is not handled by this target", where, i, k.MatchType)
		}
		t.keys = append(t.keys, kf)
		t.keyLen += kf.nbytes
	}
	for _, kf := range t.keys {
		switch kf.kind {
		case "ternary", "range", "optional":
			t.kind = "ternary"
		}
	}
	if t.kind == "exact" && t.lpmField >= 0 {
		t.kind = "lpm"
	}
	for _, id := range bt.ActionIDs {
		a := c.sw.actionByID[id]
		if a == nil {
			return nil, fmt.Errorf("%s: unknown action id %d", where, id)
		}
		t.actions[a.name] = a
		t.actList = append(t.actList, a.name)
		if prof != nil {
			prof.actions[a.name] = a
		}
	}
	if d := bt.DefaultEntry; d != nil {
		a := c.sw.actionByID[d.ActionID]
		if a == nil {
			return nil, fmt.Errorf("%s: default_entry: unknown action id %d", where, d.ActionID)
		}
		data, err := parseData(d.ActionData, a)
		if err != nil {
			return nil, fmt.Errorf("%s: default_entry: %w", where, err)
		}
		t.deflt, t.defData, t.defConst = a, data, d.ActionConst
		t.progDeflt, t.progDefData = a, data
	}
	for i, be := range bt.Entries {
		e, err := c.constEntry(t, &be)
		if err != nil {
			return nil, fmt.Errorf("%s: entries[%d]: %w", where, i, err)
		}
		if err := t.insert(e); err != nil {
			return nil, fmt.Errorf("%s: entries[%d]: %w", where, i, err)
		}
	}
	return t, nil
}

func ones(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(w) - 1
}

// constEntry converts an entry of the JSON (const entries) to an Entry.
func (c *compiler) constEntry(t *Table, be *bmjson.Entry) (*entry, error) {
	if len(be.MatchKey) != len(t.keys) {
		return nil, fmt.Errorf("%d key fields, the table has %d", len(be.MatchKey), len(t.keys))
	}
	a := c.sw.actionByID[be.ActionEntry.ActionID]
	if a == nil {
		return nil, fmt.Errorf("unknown action id %d", be.ActionEntry.ActionID)
	}
	var ue Entry
	ue.Action = a.name
	for i, mk := range be.MatchKey {
		var m Match
		num := func(s string) (uint64, error) {
			v, err := bmjson.ParseNumber(s)
			return uint64(v), err
		}
		var err error
		switch mk.MatchType {
		case "exact", "valid":
			m.Value, err = num(mk.Key)
		case "lpm":
			m.Value, err = num(mk.Key)
			if mk.PrefixLen != nil {
				m.PrefixLen = *mk.PrefixLen
			}
		case "ternary":
			if m.Value, err = num(mk.Key); err == nil {
				m.Mask, err = num(mk.Mask)
			}
		case "optional":
			if m.Value, err = num(mk.Key); err == nil && mk.Mask != "" {
				var mask uint64
				mask, err = num(mk.Mask)
				m.Wildcard = mask == 0 // a zero mask: the don't-care of an optional key
			}
		case "range":
			if m.Low, err = num(mk.Start); err == nil {
				m.High, err = num(mk.End)
			}
		default:
			return nil, fmt.Errorf("key %d: match kind %q", i, mk.MatchType)
		}
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		ue.Match = append(ue.Match, m)
	}
	data, err := parseData(be.ActionEntry.ActionData, a)
	if err != nil {
		return nil, err
	}
	ue.Params = data
	// In the JSON a smaller priority wins; in Entry a larger one does.
	ue.Priority = -be.Priority
	return t.build(ue)
}

func parseData(ss []string, a *action) ([]uint64, error) {
	if len(ss) != len(a.params) {
		return nil, fmt.Errorf("action %q takes %d parameters, %d given", a.name, len(a.params), len(ss))
	}
	var out []uint64
	for i, s := range ss {
		ws := words(a.params[i].Bitwidth)
		if len(ws) > 1 {
			n, ok := new(big.Int).SetString(s, 0)
			if !ok || n.Sign() < 0 {
				return nil, fmt.Errorf("action %s parameter %s: %q", a.name, a.params[i].Name, s)
			}
			out = append(out, splitBig(n, ws)...)
			continue
		}
		v, err := bmjson.ParseNumber(s)
		if err != nil {
			return nil, err
		}
		out = append(out, uint64(v)&ones(a.params[i].Bitwidth))
	}
	return out, nil
}

// entryWithKey is an entry with its packed key, its action data and
// the copy of a one-field key as given in one allocation, for the keys
// and actions most tables have (448 bytes, one size class).
type entryWithKey struct {
	e     entry
	key   [16]byte
	data  [3]uint64
	match [1]Match
}

// newEntry is an entry with room for a packed key of n bytes, and room
// for action data of up to words words and for a key of fields fields
// as given.
func newEntry(n, words, fields int) (e *entry, data []uint64, match []Match) {
	if n <= len(entryWithKey{}.key) {
		x := &entryWithKey{}
		x.e.value = x.key[:n:n]
		if words <= len(x.data) {
			data = x.data[:0:words]
		}
		if fields <= len(x.match) {
			match = x.match[:0:fields]
		}
		return &x.e, data, match
	}
	return &entry{value: make([]byte, n)}, nil, nil
}

// ownMatch is a copy of a key as given, in room where it fits, its wide
// values copied too: a table keeps nothing of its caller's.
func ownMatch(room, ms []Match) []Match {
	out := append(room[:0:cap(room)], ms...)
	for i := range out {
		if out[i].Wide != nil {
			out[i].Wide = slices.Clone(out[i].Wide)
		}
		if out[i].WideMask != nil {
			out[i].WideMask = slices.Clone(out[i].WideMask)
		}
	}
	return out
}

// build checks an Entry against the table and packs its key.
func (t *Table) build(ue Entry) (*entry, error) { return t.pack(ue, false) }

// pack packs an entry's key and, unless keyOnly, checks its action.
func (t *Table) pack(ue Entry, keyOnly bool) (*entry, error) {
	if len(ue.Match) != len(t.keys) {
		return nil, fmt.Errorf("table %s: %d key fields given, the table has %d", t.Name, len(ue.Match), len(t.keys))
	}
	fields := len(ue.Match)
	if keyOnly {
		fields = 0
	}
	e, data, room := newEntry(t.keyLen, len(ue.Params), fields)
	e.priority, e.user = ue.Priority, ue
	if keyOnly {
		// Deleting: the key and priority say which entry.
	} else if t.profile != nil {
		if ue.Ref == nil || ue.Action != "" {
			return nil, fmt.Errorf("table %s: its actions come from action profile %s: give a member or a group, not an action", t.Name, t.profile.name)
		}
		switch {
		case ue.Ref.Group && t.profile.selector == nil:
			return nil, fmt.Errorf("table %s: action profile %s has no selector: no groups", t.Name, t.profile.name)
		case ue.Ref.Group && t.profile.groups[ue.Ref.ID] == nil:
			return nil, fmt.Errorf("table %s: action profile %s has no group %d", t.Name, t.profile.name, ue.Ref.ID)
		case !ue.Ref.Group && t.profile.members[ue.Ref.ID] == nil:
			return nil, fmt.Errorf("table %s: action profile %s has no member %d", t.Name, t.profile.name, ue.Ref.ID)
		}
		e.indirect, e.ref, e.group = true, ue.Ref.ID, ue.Ref.Group
	} else {
		if ue.Ref != nil {
			return nil, fmt.Errorf("table %s has no action profile: give an action, not a member or group", t.Name)
		}
		a := t.actions[ue.Action]
		if a == nil {
			return nil, fmt.Errorf("table %s: action %q is not one of its actions (%s)", t.Name, ue.Action, strings.Join(t.actList, ", "))
		}
		if err := a.check(ue.Params); err != nil {
			return nil, fmt.Errorf("table %s: %w", t.Name, err)
		}
		e.act = a
		e.data = append(data, ue.Params...) // a copy: the caller keeps its slice
		if len(ue.Params) > 0 {
			e.user.Params = e.data
		}
	}
	if !keyOnly {
		// The entry keeps its own copies of what the caller gave (the
		// key here, the action data above): the caller may reuse its
		// slices.
		e.user.Match = ownMatch(room, ue.Match)
	}
	if len(ue.Meter) > 0 {
		if t.meter == nil {
			return nil, fmt.Errorf("table %s has no direct meter", t.Name)
		}
		if len(ue.Meter) != t.meter.rateCount {
			return nil, fmt.Errorf("table %s: meter %s takes %d rates, %d given", t.Name, t.meter.name, t.meter.rateCount, len(ue.Meter))
		}
		if err := e.meter.set(ue.Meter); err != nil {
			return nil, fmt.Errorf("table %s: meter %s: %w", t.Name, t.meter.name, err)
		}
	}
	if t.kind == "ternary" {
		e.mask = make([]byte, t.keyLen)
		e.lo = make([]byte, t.keyLen)
		e.hi = make([]byte, t.keyLen)
	}
	for i, kf := range t.keys {
		m := ue.Match[i]
		if kf.wide != nil {
			if err := t.packWideMatch(e, kf, m); err != nil {
				return nil, err
			}
			continue
		}
		full := kf.mask
		val, mask := m.Value, full
		switch kf.kind {
		case "exact":
		case "lpm":
			if m.PrefixLen < 0 || m.PrefixLen > kf.width {
				return nil, fmt.Errorf("table %s: key %s: prefix length %d outside 0..%d", t.Name, kf.name, m.PrefixLen, kf.width)
			}
			mask = ones(kf.width) &^ ones(kf.width-m.PrefixLen)
			e.prefix = m.PrefixLen
		case "ternary":
			mask = m.Mask & full
		case "optional":
			if m.Wildcard {
				mask = 0
			}
		case "range":
			if m.Low > m.High {
				return nil, fmt.Errorf("table %s: key %s: range %d..%d is empty", t.Name, kf.name, m.Low, m.High)
			}
			putBits(e.lo[kf.off:], 0, kf.nbytes*8, m.Low)
			putBits(e.hi[kf.off:], 0, kf.nbytes*8, m.High)
			val, mask = 0, 0
		}
		if val&^full != 0 && kf.kind != "range" {
			return nil, fmt.Errorf("table %s: key %s: %#x does not fit in %d bits", t.Name, kf.name, val, kf.width)
		}
		if val&^mask != 0 && kf.kind != "exact" {
			return nil, fmt.Errorf("table %s: key %s: %#x has bits outside its mask %#x", t.Name, kf.name, val, mask)
		}
		putBits(e.value[kf.off:], 0, kf.nbytes*8, val&mask)
		if e.mask != nil {
			putBits(e.mask[kf.off:], 0, kf.nbytes*8, mask)
		}
	}
	return e, nil
}

// packWideMatch puts a wide key's value and mask into an entry.
func (t *Table) packWideMatch(e *entry, kf keyField, m Match) error {
	n := kf.nbytes
	val := make([]byte, n)
	if len(m.Wide) > n {
		return fmt.Errorf("table %s: key %s: %d bytes for a %d-bit field", t.Name, kf.name, len(m.Wide), kf.width)
	}
	copy(val[n-len(m.Wide):], m.Wide)
	full := prefixMask(kf.width, n, kf.width)
	mask := full
	switch kf.kind {
	case "exact":
	case "lpm":
		if m.PrefixLen < 0 || m.PrefixLen > kf.width {
			return fmt.Errorf("table %s: key %s: prefix length %d outside 0..%d", t.Name, kf.name, m.PrefixLen, kf.width)
		}
		mask = prefixMask(kf.width, n, m.PrefixLen)
		e.prefix = m.PrefixLen
	case "ternary", "optional":
		mask = make([]byte, n)
		if !m.Wildcard {
			if len(m.WideMask) > n {
				return fmt.Errorf("table %s: key %s: a mask of %d bytes for a %d-bit field", t.Name, kf.name, len(m.WideMask), kf.width)
			}
			copy(mask[n-len(m.WideMask):], m.WideMask)
		}
	}
	for j := range val {
		if val[j]&^full[j] != 0 {
			return fmt.Errorf("table %s: key %s: the value does not fit in %d bits", t.Name, kf.name, kf.width)
		}
		if kf.kind != "exact" && val[j]&^mask[j] != 0 {
			return fmt.Errorf("table %s: key %s: the value has bits outside its mask", t.Name, kf.name)
		}
		e.value[kf.off+j] = val[j] & mask[j]
		if e.mask != nil {
			e.mask[kf.off+j] = mask[j] & full[j]
		}
	}
	return nil
}

// insert adds a built entry; an entry with the same key is an error, as
// in P4Runtime. Entries are numbered in the order they come, as BMv2
// hands out entry handles (ternary tables also break ties by it).
func (t *Table) insert(e *entry) error {
	if t.maxSize > 0 && t.count >= t.maxSize {
		return fmt.Errorf("table %s is full (%d entries)", t.Name, t.maxSize)
	}
	t.seq++
	e.seq = t.seq
	switch t.kind {
	case "exact":
		k := e.key()
		if t.exact[k] != nil {
			return fmt.Errorf("table %s: an entry with this key exists", t.Name)
		}
		t.exact[k] = e
	case "lpm":
		m := t.byPrefix[e.prefix]
		if m == nil {
			m = map[string]*entry{}
			t.byPrefix[e.prefix] = m
			if kf := &t.keys[t.lpmField]; kf.wide != nil {
				t.wideMasks[e.prefix] = prefixMask(kf.width, kf.nbytes, e.prefix)
			}
			t.prefixes = append(t.prefixes, e.prefix)
			slices.SortFunc(t.prefixes, func(a, b int) int { return b - a })
		}
		k := e.key()
		if m[k] != nil {
			return fmt.Errorf("table %s: an entry with this key exists", t.Name)
		}
		m[k] = e
	default:
		if t.find(e) != nil {
			return fmt.Errorf("table %s: an entry with this key and priority exists", t.Name)
		}
		i, _ := slices.BinarySearchFunc(t.list, e, func(a, b *entry) int {
			if a.priority != b.priority {
				return b.priority - a.priority
			}
			return a.seq - b.seq
		})
		t.list = slices.Insert(t.list, i, e)
	}
	t.count++
	return nil
}

// key is the entry's packed key as a map key, sharing its bytes rather
// than copying them (a copy was an allocation on every insert): an
// entry's key is packed once, before it is stored, and never written
// again, as a string's bytes must not be.
func (e *entry) key() string { return unsafe.String(unsafe.SliceData(e.value), len(e.value)) }

// find returns the stored entry with key's key and priority, or nil.
func (t *Table) find(key *entry) *entry {
	switch t.kind {
	case "exact":
		return t.exact[string(key.value)]
	case "lpm":
		return t.byPrefix[key.prefix][string(key.value)]
	}
	for _, o := range t.list {
		if o.priority == key.priority && bytes.Equal(o.value, key.value) && bytes.Equal(o.mask, key.mask) &&
			bytes.Equal(o.lo, key.lo) && bytes.Equal(o.hi, key.hi) {
			return o
		}
	}
	return nil
}

// all returns the table's entries, in no particular order but the
// ternary one (by priority).
func (t *Table) all() []*entry {
	es := slices.Clone(t.list)
	for _, e := range t.exact {
		es = append(es, e)
	}
	for _, m := range t.byPrefix {
		for _, e := range m {
			es = append(es, e)
		}
	}
	return es
}

// lookup finds the entry for the packet, nil on a miss.
func (t *Table) lookup(p *packet) *entry {
	if len(t.keys) == 0 {
		return nil
	}
	var scratch [64]byte
	var key []byte
	if t.keyLen > len(scratch) {
		key = make([]byte, t.keyLen) // keys over 64 bytes: rare
	} else {
		key = scratch[:t.keyLen]
	}
	for i := range t.keys {
		kf := &t.keys[i]
		if kf.wide != nil {
			kf.packWide(p, key[kf.off:kf.off+kf.nbytes])
			continue
		}
		var v int64
		if kf.leaf != nil {
			v = kf.leaf.get(p)
		} else {
			v = kf.eval(p)
		}
		putBytes(key[kf.off:kf.off+kf.nbytes], uint64(v)&kf.mask)
	}
	switch t.kind {
	case "exact":
		return t.exact[string(key)]
	case "lpm":
		kf := &t.keys[t.lpmField]
		if kf.wide != nil {
			return t.lookupWideLPM(key, kf)
		}
		full := getBits(key[kf.off:], 0, kf.nbytes*8)
		for _, pl := range t.prefixes {
			mask := ones(kf.width) &^ ones(kf.width-pl)
			putBytes(key[kf.off:kf.off+kf.nbytes], full&mask)
			if e := t.byPrefix[pl][string(key)]; e != nil {
				return e
			}
		}
		return nil
	}
	for _, e := range t.list {
		if e.matches(key, t.keys) {
			return e
		}
	}
	return nil
}

// lookupWideLPM is the LPM search on a key over 64 bits: the key's
// bytes masked to each prefix length in turn, longest first.
func (t *Table) lookupWideLPM(key []byte, kf *keyField) *entry {
	var orig [32]byte
	field := key[kf.off : kf.off+kf.nbytes]
	copy(orig[:], field)
	for _, pl := range t.prefixes {
		mask := t.wideMasks[pl]
		for j := range field {
			field[j] = orig[j] & mask[j]
		}
		if e := t.byPrefix[pl][string(key)]; e != nil {
			return e
		}
	}
	return nil
}

func (e *entry) matches(key []byte, keys []keyField) bool {
	for i := range keys {
		kf := &keys[i]
		k := key[kf.off : kf.off+kf.nbytes]
		if kf.kind == "range" {
			if bytes.Compare(k, e.lo[kf.off:kf.off+kf.nbytes]) < 0 || bytes.Compare(k, e.hi[kf.off:kf.off+kf.nbytes]) > 0 {
				return false
			}
			continue
		}
		v, m := e.value[kf.off:kf.off+kf.nbytes], e.mask[kf.off:kf.off+kf.nbytes]
		for j := range k {
			if k[j]&m[j] != v[j] {
				return false
			}
		}
	}
	return true
}

// apply looks the packet up and runs the action; it returns the next node.
func (t *Table) apply(p *packet) *node {
	if len(t.keys) == 0 {
		// No key (p4c makes a table of every action call outside one,
		// most of a program's tables): always a miss, so the default
		// action directly, without the search and the hit's branches.
		a := t.deflt
		p.adata = t.defData
		if a != nil {
			a.run(p)
		}
		if t.hitMiss {
			return t.miss
		}
		return t.after(a)
	}
	e := t.lookup(p)
	var a *action
	if e != nil && e.indirect {
		if m := t.profile.pick(e, p); m != nil {
			a, p.adata = m.act, m.data
		} else {
			e = nil // an empty group: as a miss
		}
	} else if e != nil {
		a, p.adata = e.act, e.data
	}
	if e != nil {
		if t.counters {
			e.packets++
			e.bytes += uint64(p.ingressLen)
		}
		if t.meter != nil {
			color := Green
			if len(e.meter.rates) > 0 {
				color = e.meter.execute(t.meter.size(p), t.micros())
			}
			p.f[t.meter.result] = wrap(int64(color), t.meterWidth, false)
		}
	} else {
		a = t.deflt
		p.adata = t.defData
	}
	if a != nil {
		a.run(p)
	}
	if t.hitMiss {
		if e != nil {
			return t.hit
		}
		return t.miss
	}
	return t.after(a)
}

// after is the node next_tables names for action a, or the base
// default next.
func (t *Table) after(a *action) *node {
	if a != nil {
		for i, na := range t.nextAct {
			if na == a || na.name == a.name {
				return t.nextNode[i]
			}
		}
	}
	return t.baseNext
}
