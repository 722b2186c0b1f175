package v1model

import (
	"fmt"
	"sort"
)

// What a control plane needs to know of the loaded program to check its
// own description of it (a P4Info) and to translate its requests: the
// shapes of tables, actions, externs and digests, by their JSON names.

// TableInfo describes a table.
type TableInfo struct {
	Name    string
	Keys    []KeyInfo // in the order of Entry.Match
	Actions []string
	// MaxSize is the most entries the table holds (0: no limit).
	MaxSize int
	// Profile names the table's action profile ("" for a table whose
	// entries carry their action); Selector says it has a selector.
	Profile       string
	Selector      bool
	DirectCounter bool
	DirectMeter   string
	// DefaultAction is the program's default action, "" for none;
	// DefaultConst says the control plane cannot change it.
	DefaultAction string
	DefaultParams []uint64
	DefaultConst  bool
}

// KeyInfo is one field of a table's key: its name (as p4c writes it in
// the JSON and the P4Info), match kind and width in bits.
type KeyInfo struct {
	Name  string
	Kind  string // exact, lpm, ternary, range or optional
	Width int
}

// ParamInfo is one parameter of an action.
type ParamInfo struct {
	Name  string
	Width int
}

// TableInfo describes a table by name.
func (sw *Switch) TableInfo(name string) (TableInfo, error) {
	t, err := sw.table(name)
	if err != nil {
		return TableInfo{}, err
	}
	ti := TableInfo{Name: t.Name, MaxSize: t.maxSize, DirectCounter: t.counters, DefaultConst: t.defConst,
		Actions: append([]string(nil), t.actList...)}
	for _, k := range t.keys {
		ti.Keys = append(ti.Keys, KeyInfo{Name: k.name, Kind: k.kind, Width: k.width})
	}
	if t.profile != nil {
		ti.Profile, ti.Selector = t.profile.name, t.profile.selector != nil
	}
	if t.meter != nil {
		ti.DirectMeter = t.meter.name
	}
	if t.progDeflt != nil {
		ti.DefaultAction, ti.DefaultParams = t.progDeflt.name, append([]uint64(nil), t.progDefData...)
	}
	return ti, nil
}

// ActionParams lists an action's parameters.
func (sw *Switch) ActionParams(name string) ([]ParamInfo, error) {
	for _, a := range sw.actions {
		if a.name == name {
			var ps []ParamInfo
			for _, p := range a.params {
				ps = append(ps, ParamInfo{Name: p.Name, Width: p.Bitwidth})
			}
			return ps, nil
		}
	}
	return nil, fmt.Errorf("no action %q", name)
}

// ExternInfo describes an indirect counter, meter or register array, or a
// parser value set.
type ExternInfo struct {
	Size int
	// Width is a register's cell width, or a value set's value width in
	// bytes.
	Width int
	// Direct is set for a meter bound to a table; Bytes for a meter
	// counting bytes (else packets); Rates is how many rates it takes.
	Direct bool
	Bytes  bool
	Rates  int
}

// CounterInfo describes an indirect counter.
func (sw *Switch) CounterInfo(name string) (ExternInfo, error) {
	c := sw.counters[name]
	if c == nil {
		return ExternInfo{}, fmt.Errorf("no counter %q", name)
	}
	return ExternInfo{Size: len(c.packets)}, nil
}

// MeterInfo describes a meter, direct or indirect.
func (sw *Switch) MeterInfo(name string) (ExternInfo, error) {
	m := sw.meters[name]
	if m == nil {
		return ExternInfo{}, fmt.Errorf("no meter %q", name)
	}
	return ExternInfo{Size: len(m.cells), Direct: m.direct, Bytes: m.bytes, Rates: m.rateCount}, nil
}

// RegisterInfo describes a register array.
func (sw *Switch) RegisterInfo(name string) (ExternInfo, error) {
	r := sw.registers[name]
	if r == nil {
		return ExternInfo{}, fmt.Errorf("no register %q", name)
	}
	return ExternInfo{Size: len(r.cells), Width: r.width}, nil
}

// ValueSetInfo describes a parser value set.
func (sw *Switch) ValueSetInfo(name string) (ExternInfo, error) {
	vs := sw.vsets[name]
	if vs == nil {
		return ExternInfo{}, fmt.Errorf("no parser value set %q", name)
	}
	return ExternInfo{Size: vs.max, Width: vs.width}, nil
}

// ActionProfiles lists the action profiles by name, sorted.
func (sw *Switch) ActionProfiles() []string {
	var names []string
	for n := range sw.profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ActionProfileInfo says how many members an action profile holds at
// most (0: no limit) and whether it has a selector.
func (sw *Switch) ActionProfileInfo(name string) (maxSize int, selector bool, err error) {
	pr, err := sw.profileOf(name)
	if err != nil {
		return 0, false, err
	}
	return pr.max, pr.selector != nil, nil
}

// DigestWidths gives the widths of a learn list's values, in the order of
// Digest.Values; a field over 64 bits gives one value per 64-bit part.
func (sw *Switch) DigestWidths(list string) ([]int, error) {
	for _, ll := range sw.learnLists {
		if ll.name == list {
			ws := make([]int, len(ll.slots))
			for i, s := range ll.slots {
				ws[i] = sw.l.width[s]
			}
			return ws, nil
		}
	}
	return nil, fmt.Errorf("no learn list %q", list)
}
