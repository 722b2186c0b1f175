package v1model

import (
	"fmt"
	"slices"
	"sort"
)

// Tables lists the program's tables by name.
func (sw *Switch) Tables() []string {
	var names []string
	for _, t := range sw.tableList {
		names = append(names, t.Name)
	}
	return names
}

func (sw *Switch) table(name string) (*Table, error) {
	t := sw.tables[name]
	if t == nil {
		return nil, fmt.Errorf("no table %q", name)
	}
	return t, nil
}

// AddEntry inserts an entry into a table.
func (sw *Switch) AddEntry(table string, e Entry) error {
	_, err := sw.InsertEntry(table, e)
	return err
}

// EntryRef is an entry a table holds, as InsertEntry returns it: a
// control plane that keeps it removes the entry without packing its key
// again (an allocation) or looking it up by that key.
type EntryRef struct {
	t *Table
	e *entry
}

// InsertEntry is AddEntry returning the inserted entry.
func (sw *Switch) InsertEntry(table string, e Entry) (EntryRef, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	t, err := sw.table(table)
	if err != nil {
		return EntryRef{}, err
	}
	return sw.insertBuilt(BuiltEntry{t: t, ue: e})
}

// BuiltEntry is an entry checked against its table and packed, ahead of
// its insert (InsertBuilt), or the error that made it fail.
type BuiltEntry struct {
	t   *Table
	e   *entry
	ue  Entry // an entry of a table with an action profile, built at its insert
	err error
}

// BuildEntry does the part of InsertEntry that depends on the program
// alone: it checks e against the table and packs it. Unlike the other
// methods it may run at the same time as any of them (it reads only
// what the program fixed), so that a control plane can build the
// entries of a batch on another core while it inserts the ones before.
// An entry of a table with an action profile, whose members and groups
// change, is checked by InsertBuilt instead.
func (sw *Switch) BuildEntry(table string, e Entry) BuiltEntry {
	t := sw.tables[table] // fixed once the switch is made
	if t == nil {
		return BuiltEntry{err: fmt.Errorf("no table %q", table)}
	}
	if t.profile != nil {
		return BuiltEntry{t: t, ue: e}
	}
	built, err := t.build(e)
	return BuiltEntry{t: t, e: built, err: err}
}

// Packed says b was built and packed: HoldsBuilt can look it up.
func (b BuiltEntry) Packed() bool { return b.err == nil && b.e != nil }

// HoldsBuilt says whether the table holds an entry with the key (and
// priority, for ternary tables) of b, which must be Packed: the lookup
// InsertBuilt makes before it inserts, without packing the key again.
func (sw *Switch) HoldsBuilt(b BuiltEntry) bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return b.t.find(b.e) != nil
}

// InsertBuilt inserts an entry BuildEntry built, as InsertEntry would
// have inserted it, with the same errors.
func (sw *Switch) InsertBuilt(b BuiltEntry) (EntryRef, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.insertBuilt(b)
}

// insertBuilt is InsertBuilt with sw.mu held; an entry not built yet
// (b.e nil) is built here.
func (sw *Switch) insertBuilt(b BuiltEntry) (EntryRef, error) {
	if b.err != nil {
		return EntryRef{}, b.err
	}
	built := b.e
	if built == nil {
		var err error
		if built, err = b.t.build(b.ue); err != nil {
			return EntryRef{}, err
		}
	}
	if err := b.t.insert(built); err != nil {
		return EntryRef{}, err
	}
	return EntryRef{b.t, built}, nil
}

// DeleteEntryRef removes the entry r names, which must still be in its
// table (an entry deleted since, or of a pipeline replaced since, is an
// error, not another entry with the same key).
func (sw *Switch) DeleteEntryRef(r EntryRef) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if err := sw.checkRef(r); err != nil {
		return err
	}
	r.t.remove(r.e)
	return nil
}

// checkRef checks that the entry r names is still in its table. Called
// with sw.mu held.
func (sw *Switch) checkRef(r EntryRef) error {
	if r.t == nil || sw.tables[r.t.Name] != r.t || r.t.find(r.e) != r.e {
		return fmt.Errorf("no such entry (deleted, or of another pipeline)")
	}
	return nil
}

// EntryRefOf is a reference to the entry with e's key (and priority,
// for ternary tables), as InsertEntry returns for the entries it inserts:
// for the entries the program itself puts in its tables.
func (sw *Switch) EntryRefOf(table string, e Entry) (EntryRef, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	t, found, err := sw.entryOf(table, e)
	if err != nil {
		return EntryRef{}, err
	}
	return EntryRef{t, found}, nil
}

// DeleteEntry removes the entry with the same key (and priority, for
// ternary tables).
func (sw *Switch) DeleteEntry(table string, e Entry) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	t, err := sw.table(table)
	if err != nil {
		return err
	}
	built, err := t.pack(e, true)
	if err != nil {
		return err
	}
	if !t.remove(built) {
		return fmt.Errorf("table %s: no entry with this key", t.Name)
	}
	return nil
}

func (t *Table) remove(key *entry) bool {
	e := t.find(key)
	if e == nil {
		return false
	}
	switch t.kind {
	case "exact":
		delete(t.exact, e.key())
	case "lpm":
		delete(t.byPrefix[e.prefix], e.key())
	default:
		t.list = slices.DeleteFunc(t.list, func(o *entry) bool { return o == e })
	}
	t.count--
	return true
}

// changeableDefault is the table named table if its program lets the
// control plane change its default action. Called with sw.mu held.
func (sw *Switch) changeableDefault(table string) (*Table, error) {
	t, err := sw.table(table)
	if err != nil {
		return nil, err
	}
	if t.defConst {
		return nil, fmt.Errorf("table %s: the default action is const in the program", t.Name)
	}
	return t, nil
}

// SetDefault sets the action a table runs on a miss.
func (sw *Switch) SetDefault(table, action string, params []uint64) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	t, err := sw.changeableDefault(table)
	if err != nil {
		return err
	}
	a := t.actions[action]
	if a == nil {
		return fmt.Errorf("table %s: action %q is not one of its actions", t.Name, action)
	}
	if err := a.check(params); err != nil {
		return fmt.Errorf("table %s: %w", t.Name, err)
	}
	t.deflt, t.defData = a, slices.Clone(params)
	return nil
}

// Entries returns a table's entries, in a stable order: by key bytes for
// exact and LPM tables (longest prefix first), by priority for the rest.
func (sw *Switch) Entries(table string) ([]Entry, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	t, err := sw.table(table)
	if err != nil {
		return nil, err
	}
	es := t.all()
	if t.kind != "ternary" {
		sort.Slice(es, func(i, j int) bool {
			if es[i].prefix != es[j].prefix {
				return es[i].prefix > es[j].prefix
			}
			return string(es[i].value) < string(es[j].value)
		})
	}
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = e.user
	}
	return out, nil
}

// Counter reads cell index of an indirect counter: packets and bytes.
func (sw *Switch) Counter(name string, index int) (packets, bytes uint64, err error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	c := sw.counters[name]
	if c == nil {
		return 0, 0, fmt.Errorf("no counter %q", name)
	}
	if index < 0 || index >= len(c.packets) {
		return 0, 0, fmt.Errorf("counter %s: index %d outside 0..%d", name, index, len(c.packets)-1)
	}
	return c.packets[index], c.bytes[index], nil
}

// Counters lists the indirect counters by name, sorted.
func (sw *Switch) Counters() []string {
	var names []string
	for n := range sw.counters {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CounterSize is the number of cells of a counter.
func (sw *Switch) CounterSize(name string) int {
	if c := sw.counters[name]; c != nil {
		return len(c.packets)
	}
	return 0
}

// Register reads cell index of a register.
func (sw *Switch) Register(name string, index int) (uint64, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	r, err := sw.register(name, index)
	if err != nil {
		return 0, err
	}
	return r.cells[index], nil
}

// SetRegister writes cell index of a register.
func (sw *Switch) SetRegister(name string, index int, v uint64) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	r, err := sw.register(name, index)
	if err != nil {
		return err
	}
	if v > ones(r.width) {
		return fmt.Errorf("register %s: %d does not fit in %d bits", name, v, r.width)
	}
	r.cells[index] = v
	return nil
}

func (sw *Switch) register(name string, index int) (*registerArray, error) {
	r := sw.registers[name]
	if r == nil {
		return nil, fmt.Errorf("no register %q", name)
	}
	if index < 0 || index >= len(r.cells) {
		return nil, fmt.Errorf("register %s: index %d outside 0..%d", name, index, len(r.cells)-1)
	}
	return r, nil
}

// Registers lists the registers by name, sorted.
func (sw *Switch) Registers() []string {
	var names []string
	for n := range sw.registers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// RegisterSize is the number of cells of a register.
func (sw *Switch) RegisterSize(name string) int {
	if r := sw.registers[name]; r != nil {
		return len(r.cells)
	}
	return 0
}

// SetMirror sends clones of mirror session to port (simple_switch_CLI
// mirroring_add).
func (sw *Switch) SetMirror(session, port int) error {
	return sw.SetCloneSession(session, []Replica{{Port: port}})
}

// SetCloneSession sets the copies a clone session makes: one per
// replica, each to its port; none deletes the session.
func (sw *Switch) SetCloneSession(session int, replicas []Replica) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if session < 0 || session > 0x7fff {
		return fmt.Errorf("mirror session %d outside 0..32767", session)
	}
	if len(replicas) == 0 {
		delete(sw.mirror, session)
		return nil
	}
	sw.mirror[session] = slices.Clone(replicas)
	return nil
}

// SetMulticastGroup sets the copies of a multicast group; none deletes it.
func (sw *Switch) SetMulticastGroup(group int, replicas []Replica) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if group <= 0 || group > 0xffff {
		return fmt.Errorf("multicast group %d outside 1..65535", group)
	}
	if len(replicas) == 0 {
		delete(sw.mcast, group)
		return nil
	}
	sw.mcast[group] = slices.Clone(replicas)
	return nil
}

// SetValueSet replaces the values of a parser value set.
func (sw *Switch) SetValueSet(name string, values [][]byte) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	vs := sw.vsets[name]
	if vs == nil {
		return fmt.Errorf("no parser value set %q", name)
	}
	if vs.max > 0 && len(values) > vs.max {
		return fmt.Errorf("value set %s holds at most %d values, %d given", name, vs.max, len(values))
	}
	set := map[string]bool{}
	for _, v := range values {
		if len(v) != vs.width {
			return fmt.Errorf("value set %s holds %d-byte values, %d given", name, vs.width, len(v))
		}
		set[string(v)] = true
	}
	vs.values = set
	return nil
}

// AddValueSetMember adds a value to a parser value set.
func (sw *Switch) AddValueSetMember(name string, value []byte) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	vs := sw.vsets[name]
	if vs == nil {
		return fmt.Errorf("no parser value set %q", name)
	}
	if len(value) != vs.width {
		return fmt.Errorf("value set %s holds %d-byte values, %d given", name, vs.width, len(value))
	}
	if len(vs.values) >= vs.max && vs.max > 0 {
		return fmt.Errorf("value set %s is full (%d values)", name, vs.max)
	}
	vs.values[string(value)] = true
	return nil
}

// DirectCounters reads the direct counter of each of a table's entries,
// in the order the entries were added: packets and bytes.
func (sw *Switch) DirectCounters(table string) ([][2]uint64, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	t, err := sw.table(table)
	if err != nil {
		return nil, err
	}
	if !t.counters {
		return nil, fmt.Errorf("table %s has no direct counter", table)
	}
	es := t.all()
	slices.SortFunc(es, func(a, b *entry) int { return a.seq - b.seq })
	out := make([][2]uint64, len(es))
	for i, e := range es {
		out[i] = [2]uint64{e.packets, e.bytes}
	}
	return out, nil
}

// CountedTables lists the tables with a direct counter, with the
// counter's name, sorted by table.
func (sw *Switch) CountedTables() map[string]string {
	out := map[string]string{}
	for _, t := range sw.tableList {
		if t.counters {
			out[t.Name] = sw.directCounterOf[t.Name]
		}
	}
	return out
}

// ModifyEntry changes the action (or member, or group) and parameters of
// the entry with e's key and priority, keeping its counters and its place
// among the table's entries. A direct meter configuration in e replaces
// the entry's; none leaves it as it was.
func (sw *Switch) ModifyEntry(table string, e Entry) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	t, old, err := sw.entryOf(table, e)
	if err != nil {
		return err
	}
	built, err := t.build(e)
	if err != nil {
		return err
	}
	// The data is copied: built's may share built's allocation, which
	// old would otherwise keep alive.
	old.act, old.data, old.ref, old.group, old.indirect = built.act, slices.Clone(built.data), built.ref, built.group, built.indirect
	if len(e.Meter) > 0 {
		old.meter = built.meter
	} else {
		e.Meter = old.user.Meter
	}
	// As an insert, the entry keeps its own copies of e's slices.
	e.Match = ownMatch(nil, e.Match)
	if len(e.Params) > 0 {
		e.Params = old.data
	}
	old.user = e
	return nil
}

// entryOf finds the stored entry with e's key and priority.
func (sw *Switch) entryOf(table string, e Entry) (*Table, *entry, error) {
	t, err := sw.table(table)
	if err != nil {
		return nil, nil, err
	}
	key, err := t.pack(e, true)
	if err != nil {
		return nil, nil, err
	}
	if found := t.find(key); found != nil {
		return t, found, nil
	}
	return nil, nil, fmt.Errorf("table %s: no entry with this key", t.Name)
}

// EntryCounter reads the direct counter of the entry with e's key.
func (sw *Switch) EntryCounter(table string, e Entry) (packets, bytes uint64, err error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	t, found, err := sw.entryOf(table, e)
	if err != nil {
		return 0, 0, err
	}
	return t.entryCounter(found)
}

// EntryCounterRef reads the direct counter of the entry r names.
func (sw *Switch) EntryCounterRef(r EntryRef) (packets, bytes uint64, err error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if err := sw.checkRef(r); err != nil {
		return 0, 0, err
	}
	return r.t.entryCounter(r.e)
}

func (t *Table) entryCounter(found *entry) (packets, bytes uint64, err error) {
	if !t.counters {
		return 0, 0, fmt.Errorf("table %s has no direct counter", t.Name)
	}
	return found.packets, found.bytes, nil
}

// SetEntryCounter sets the direct counter of the entry with e's key.
func (sw *Switch) SetEntryCounter(table string, e Entry, packets, bytes uint64) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	t, found, err := sw.entryOf(table, e)
	if err != nil {
		return err
	}
	return t.setEntryCounter(found, packets, bytes)
}

// SetEntryCounterRef sets the direct counter of the entry r names.
func (sw *Switch) SetEntryCounterRef(r EntryRef, packets, bytes uint64) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if err := sw.checkRef(r); err != nil {
		return err
	}
	return r.t.setEntryCounter(r.e, packets, bytes)
}

func (t *Table) setEntryCounter(found *entry, packets, bytes uint64) error {
	if !t.counters {
		return fmt.Errorf("table %s has no direct counter", t.Name)
	}
	found.packets, found.bytes = packets, bytes
	return nil
}

// SetEntryMeter configures the direct meter of the entry with e's key;
// no rates returns it to colouring every packet green.
func (sw *Switch) SetEntryMeter(table string, e Entry, rates []MeterRate) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	t, found, err := sw.entryOf(table, e)
	if err != nil {
		return err
	}
	return t.setEntryMeter(found, rates)
}

// SetEntryMeterRef configures the direct meter of the entry r names, as
// SetEntryMeter.
func (sw *Switch) SetEntryMeterRef(r EntryRef, rates []MeterRate) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if err := sw.checkRef(r); err != nil {
		return err
	}
	return r.t.setEntryMeter(r.e, rates)
}

func (t *Table) setEntryMeter(found *entry, rates []MeterRate) error {
	if t.meter == nil {
		return fmt.Errorf("table %s has no direct meter", t.Name)
	}
	if len(rates) == 0 {
		found.meter = meter{}
		found.user.Meter = nil
		return nil
	}
	if len(rates) != t.meter.rateCount {
		return fmt.Errorf("table %s: meter %s takes %d rates, %d given", t.Name, t.meter.name, t.meter.rateCount, len(rates))
	}
	var m meter
	if err := m.set(rates); err != nil {
		return fmt.Errorf("table %s: meter %s: %w", t.Name, t.meter.name, err)
	}
	found.meter, found.user.Meter = m, slices.Clone(rates)
	return nil
}

// ResetDefault gives a table back the default action the program gave it.
func (sw *Switch) ResetDefault(table string) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	t, err := sw.changeableDefault(table)
	if err != nil {
		return err
	}
	t.deflt, t.defData = t.progDeflt, t.progDefData
	return nil
}

// SetCounter sets cell index of an indirect counter.
func (sw *Switch) SetCounter(name string, index int, packets, bytes uint64) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	c := sw.counters[name]
	if c == nil {
		return fmt.Errorf("no counter %q", name)
	}
	if index < 0 || index >= len(c.packets) {
		return fmt.Errorf("counter %s: index %d outside 0..%d", name, index, len(c.packets)-1)
	}
	c.packets[index], c.bytes[index] = packets, bytes
	return nil
}
