package p4rt

import (
	"fmt"
	"slices"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"

	"github.com/p4rcm/p4rcm/v1model"
)

// pipeline is one forwarding pipeline: the P4Info, the BMv2 JSON compiled
// by the target, the P4Info's IDs resolved to the target's names and
// shapes (checked against each other when it was set), and what the
// controllers have written to it.
type pipeline struct {
	info   *p4configv1.P4Info
	json   []byte
	cookie *p4v1.ForwardingPipelineConfig_Cookie
	sw     *v1model.Switch

	tables         map[uint32]*tableDesc
	actions        map[uint32]*actionDesc
	profiles       map[uint32]*profileDesc
	counters       map[uint32]*externDesc
	directCounters map[uint32]*tableDesc
	meters         map[uint32]*externDesc
	directMeters   map[uint32]*tableDesc
	registers      map[uint32]*externDesc
	digests        map[uint32]*digestDesc
	digestByList   map[string]*digestDesc
	valueSets      map[uint32]*valueSetDesc
	packetIn       *ctrlHeader
	packetOut      *ctrlHeader

	st  *state
	dig *digester
	// prep is where a write of a table entry is prepared (see
	// writeTable); preps, where a large batch's are (writeBatch), a
	// ring of prepRing chunks.
	prep  tablePrep
	preps []tablePrep
}

type tableDesc struct {
	id      uint32
	name    string
	info    *p4configv1.Table
	target  v1model.TableInfo
	fields  map[uint32]*fieldDesc
	byIndex []*fieldDesc // in the target's key order
	actions map[uint32]*p4configv1.ActionRef
	// ternary says entries need a priority (a ternary, range or optional
	// field).
	ternary      bool
	profile      *profileDesc
	counterUnit  p4configv1.CounterSpec_Unit // direct counter, if any
	directMeter  *externDesc
	hasCounter   bool
	isConst      bool
	defaultConst bool
}

type fieldDesc struct {
	id    uint32
	name  string
	kind  p4configv1.MatchField_MatchType
	width int
	index int
	// asTernary: the target matches the field as ternary (an optional
	// field: a value under a full mask, or a zero mask for don't-care).
	asTernary bool
}

type actionDesc struct {
	id      uint32
	name    string
	params  map[uint32]*paramDesc
	byIndex []*paramDesc // in the target's order
}

type paramDesc struct {
	id    uint32
	name  string
	width int
	index int // in actionDesc.byIndex
}

type profileDesc struct {
	id           uint32
	name         string
	selector     bool
	size         int64
	maxGroupSize int32
	tables       []*tableDesc
}

// externDesc is an indirect counter, a meter or a register.
type externDesc struct {
	id    uint32
	name  string
	size  int64
	width int // registers
	unit  p4configv1.CounterSpec_Unit
	table *tableDesc // direct meters
}

type digestDesc struct {
	id       uint32
	name     string
	members  []int // P4Info struct member widths
	isStruct bool
	parts    []int // the target's value widths (members over 64 bits in parts)
}

type valueSetDesc struct {
	id     uint32
	name   string
	size   int32
	fields []*p4configv1.MatchField
	width  int // bytes of a value in the target
}

// ctrlHeader is a controller header (packet_in or packet_out): its
// metadata fields in order.
type ctrlHeader struct {
	fields []*p4configv1.ControllerPacketMetadata_Metadata
	bits   int
}

// newPipeline compiles the device config and checks the P4Info against
// it: every object the P4Info names must be in the program with the same
// shape, or the pipeline is refused naming the first that is not.
func newPipeline(info *p4configv1.P4Info, device []byte, cookie *p4v1.ForwardingPipelineConfig_Cookie, cfg v1model.Config) (*pipeline, error) {
	if info == nil {
		return nil, errorf(codes.InvalidArgument, "the config has no P4Info")
	}
	if len(device) == 0 {
		return nil, errorf(codes.InvalidArgument, "the config has no device config (the BMv2 JSON)")
	}
	doc, trees, err := decoded.decode(device)
	if err != nil {
		return nil, errorf(codes.InvalidArgument, "device config: %v", err)
	}
	cfg.Trees = trees
	sw, err := v1model.New(doc, cfg)
	if err != nil {
		return nil, errorf(codes.InvalidArgument, "device config: %v", err)
	}
	p := &pipeline{info: info, json: device, cookie: cookie, sw: sw,
		tables: map[uint32]*tableDesc{}, actions: map[uint32]*actionDesc{}, profiles: map[uint32]*profileDesc{},
		counters: map[uint32]*externDesc{}, directCounters: map[uint32]*tableDesc{}, meters: map[uint32]*externDesc{},
		directMeters: map[uint32]*tableDesc{}, registers: map[uint32]*externDesc{}, digests: map[uint32]*digestDesc{},
		digestByList: map[string]*digestDesc{}, valueSets: map[uint32]*valueSetDesc{}}
	if err := p.resolve(); err != nil {
		return nil, errorf(codes.InvalidArgument, "the P4Info does not match the device config: %v", err)
	}
	p.st = newState()
	if err := p.loadConstEntries(); err != nil {
		return nil, errorf(codes.Internal, "%v", err)
	}
	return p, nil
}

func (p *pipeline) resolve() error {
	for _, a := range p.info.Actions {
		params, err := p.sw.ActionParams(a.Preamble.Name)
		if err != nil {
			return fmt.Errorf("action %s: not in the program", a.Preamble.Name)
		}
		if len(params) != len(a.Params) {
			return fmt.Errorf("action %s: %d parameters, the program's has %d", a.Preamble.Name, len(a.Params), len(params))
		}
		ad := &actionDesc{id: a.Preamble.Id, name: a.Preamble.Name, params: map[uint32]*paramDesc{}}
		for i, tp := range params {
			var ip *p4configv1.Action_Param
			for _, x := range a.Params {
				if x.Name == tp.Name {
					ip = x
				}
			}
			if ip == nil || int(ip.Bitwidth) != tp.Width {
				return fmt.Errorf("action %s: parameter %d is %s of %d bits in the program", a.Preamble.Name, i, tp.Name, tp.Width)
			}
			pd := &paramDesc{id: ip.Id, name: ip.Name, width: tp.Width, index: len(ad.byIndex)}
			ad.params[ip.Id] = pd
			ad.byIndex = append(ad.byIndex, pd)
		}
		p.actions[ad.id] = ad
	}
	for _, ap := range p.info.ActionProfiles {
		size, selector, err := p.sw.ActionProfileInfo(ap.Preamble.Name)
		if err != nil {
			return fmt.Errorf("action profile %s: not in the program", ap.Preamble.Name)
		}
		if selector != ap.WithSelector {
			return fmt.Errorf("action profile %s: with_selector %v, the program's %v", ap.Preamble.Name, ap.WithSelector, selector)
		}
		p.profiles[ap.Preamble.Id] = &profileDesc{id: ap.Preamble.Id, name: ap.Preamble.Name, selector: selector,
			size: int64(size), maxGroupSize: ap.MaxGroupSize}
	}
	for _, m := range p.info.Meters {
		mi, err := p.sw.MeterInfo(m.Preamble.Name)
		if err != nil || mi.Direct {
			return fmt.Errorf("meter %s: no indirect meter of this name in the program", m.Preamble.Name)
		}
		p.meters[m.Preamble.Id] = &externDesc{id: m.Preamble.Id, name: m.Preamble.Name, size: int64(mi.Size)}
	}
	for _, t := range p.info.Tables {
		if err := p.resolveTable(t); err != nil {
			return err
		}
	}
	for _, c := range p.info.Counters {
		ci, err := p.sw.CounterInfo(c.Preamble.Name)
		if err != nil || int64(ci.Size) != c.Size {
			return fmt.Errorf("counter %s: no counter of this name and size %d in the program", c.Preamble.Name, c.Size)
		}
		p.counters[c.Preamble.Id] = &externDesc{id: c.Preamble.Id, name: c.Preamble.Name, size: c.Size, unit: c.GetSpec().GetUnit()}
	}
	for _, dc := range p.info.DirectCounters {
		t := p.tables[dc.DirectTableId]
		if t == nil || !t.target.DirectCounter {
			return fmt.Errorf("direct counter %s: its table %d has no direct counter in the program", dc.Preamble.Name, dc.DirectTableId)
		}
		t.hasCounter, t.counterUnit = true, dc.GetSpec().GetUnit()
		p.directCounters[dc.Preamble.Id] = t
	}
	for _, dm := range p.info.DirectMeters {
		t := p.tables[dm.DirectTableId]
		if t == nil || t.target.DirectMeter != dm.Preamble.Name {
			return fmt.Errorf("direct meter %s: not its table %d's direct meter in the program", dm.Preamble.Name, dm.DirectTableId)
		}
		t.directMeter = &externDesc{id: dm.Preamble.Id, name: dm.Preamble.Name, table: t}
		p.directMeters[dm.Preamble.Id] = t
	}
	for _, r := range p.info.Registers {
		ri, err := p.sw.RegisterInfo(r.Preamble.Name)
		width := int(r.GetTypeSpec().GetBitstring().GetBit().GetBitwidth())
		if err != nil || int64(ri.Size) != int64(r.Size) || ri.Width != width {
			return fmt.Errorf("register %s: no register of this name, size %d and width %d in the program", r.Preamble.Name, r.Size, width)
		}
		p.registers[r.Preamble.Id] = &externDesc{id: r.Preamble.Id, name: r.Preamble.Name, size: int64(r.Size), width: width}
	}
	for _, d := range p.info.Digests {
		if err := p.resolveDigest(d); err != nil {
			return err
		}
	}
	for _, vs := range p.info.ValueSets {
		vi, err := p.sw.ValueSetInfo(vs.Preamble.Name)
		if err != nil {
			return fmt.Errorf("value set %s: not in the program", vs.Preamble.Name)
		}
		p.valueSets[vs.Preamble.Id] = &valueSetDesc{id: vs.Preamble.Id, name: vs.Preamble.Name, size: vs.Size, fields: vs.Match, width: vi.Width}
	}
	for _, cm := range p.info.ControllerPacketMetadata {
		h := &ctrlHeader{fields: cm.Metadata}
		for _, f := range cm.Metadata {
			h.bits += int(f.Bitwidth)
		}
		switch cm.Preamble.Name {
		case "packet_in":
			p.packetIn = h
		case "packet_out":
			p.packetOut = h
		}
	}
	return nil
}

var matchKinds = map[p4configv1.MatchField_MatchType]string{
	p4configv1.MatchField_EXACT: "exact", p4configv1.MatchField_LPM: "lpm", p4configv1.MatchField_TERNARY: "ternary",
	p4configv1.MatchField_RANGE: "range", p4configv1.MatchField_OPTIONAL: "optional",
}

func (p *pipeline) resolveTable(t *p4configv1.Table) error {
	name := t.Preamble.Name
	ti, err := p.sw.TableInfo(name)
	if err != nil {
		return fmt.Errorf("table %s: not in the program", name)
	}
	if len(ti.Keys) != len(t.MatchFields) {
		return fmt.Errorf("table %s: %d match fields, the program's has %d", name, len(t.MatchFields), len(ti.Keys))
	}
	td := &tableDesc{id: t.Preamble.Id, name: name, info: t, target: ti, fields: map[uint32]*fieldDesc{},
		byIndex: make([]*fieldDesc, len(ti.Keys)), actions: map[uint32]*p4configv1.ActionRef{}, isConst: t.IsConstTable,
		defaultConst: t.ConstDefaultActionId != 0 || ti.DefaultConst}
	for _, mf := range t.MatchFields {
		idx := -1
		for i, k := range ti.Keys {
			if k.Name == mf.Name {
				idx = i
			}
		}
		if idx < 0 {
			return fmt.Errorf("table %s: match field %s is not in the program's key", name, mf.Name)
		}
		k := ti.Keys[idx]
		kind := matchKinds[mf.GetMatchType()]
		// p4c writes an optional key as ternary in the BMv2 JSON.
		sameKind := kind == k.Kind || (kind == "optional" && k.Kind == "ternary")
		if !sameKind || int(mf.Bitwidth) != k.Width {
			return fmt.Errorf("table %s: match field %s is %s of %d bits, the program's %s of %d", name, mf.Name,
				kind, mf.Bitwidth, k.Kind, k.Width)
		}
		fd := &fieldDesc{id: mf.Id, name: mf.Name, kind: mf.GetMatchType(), width: k.Width, index: idx, asTernary: k.Kind == "ternary"}
		td.fields[mf.Id] = fd
		td.byIndex[idx] = fd
		switch mf.GetMatchType() {
		case p4configv1.MatchField_TERNARY, p4configv1.MatchField_RANGE, p4configv1.MatchField_OPTIONAL:
			td.ternary = true
		}
	}
	for _, ref := range t.ActionRefs {
		a := p.actions[ref.Id]
		if a == nil {
			return fmt.Errorf("table %s: action %d is not in the P4Info's actions", name, ref.Id)
		}
		found := false
		for _, n := range ti.Actions {
			found = found || n == a.name
		}
		if !found {
			return fmt.Errorf("table %s: action %s is not one of the program's table's", name, a.name)
		}
		td.actions[ref.Id] = ref
	}
	if impl := t.ImplementationId; impl != 0 {
		pr := p.profiles[impl]
		if pr == nil || pr.name != ti.Profile {
			return fmt.Errorf("table %s: implementation %d is not its action profile %q in the program", name, impl, ti.Profile)
		}
		td.profile = pr
		pr.tables = append(pr.tables, td)
	} else if ti.Profile != "" {
		return fmt.Errorf("table %s: the program gives it action profile %s, the P4Info none", name, ti.Profile)
	}
	p.tables[td.id] = td
	return nil
}

func (p *pipeline) resolveDigest(d *p4configv1.Digest) error {
	name := d.Preamble.Name
	parts, err := p.sw.DigestWidths(name)
	if err != nil {
		return fmt.Errorf("digest %s: no learn list of this name in the program", name)
	}
	dd := &digestDesc{id: d.Preamble.Id, name: name, parts: parts}
	ts := d.GetTypeSpec()
	if s := ts.GetStruct(); s != nil {
		dd.isStruct = true
		st := p.info.GetTypeInfo().GetStructs()[s.Name]
		if st == nil {
			return fmt.Errorf("digest %s: struct %s is not in the P4Info's type_info", name, s.Name)
		}
		for _, m := range st.Members {
			w := m.GetTypeSpec().GetBitstring()
			width := int(w.GetBit().GetBitwidth() + w.GetInt().GetBitwidth() + w.GetVarbit().GetMaxBitwidth())
			if width == 0 {
				return fmt.Errorf("digest %s: member %s is not a bit string", name, m.Name)
			}
			dd.members = append(dd.members, width)
		}
	} else if bs := ts.GetBitstring(); bs != nil {
		dd.members = []int{int(bs.GetBit().GetBitwidth())}
	}
	// The target holds a member over 64 bits in 64-bit parts.
	n := 0
	for _, w := range dd.members {
		n += len(wordWidths(w))
	}
	if n != len(parts) {
		return fmt.Errorf("digest %s: %d members, the program's learn list has %d fields", name, len(dd.members), len(parts))
	}
	p.digests[dd.id] = dd
	p.digestByList[name] = dd
	return nil
}

// loadConstEntries records the entries the program itself puts in its
// tables, so that reads return them.
func (p *pipeline) loadConstEntries() error {
	for _, td := range p.tables {
		es, err := p.sw.Entries(td.name)
		if err != nil {
			return err
		}
		// P4Runtime numbers a const table's N entries from N for the first
		// down to 1 (the spec's "Constant Tables", as p4c numbers them; BMv2 answers
		// 2^31-2 down). The target's priorities are the JSON's negated,
		// the first entry's the highest: rank them.
		ranked := slices.Clone(es)
		slices.SortStableFunc(ranked, func(a, b v1model.Entry) int { return b.Priority - a.Priority })
		for i, ve := range ranked {
			te, err := p.fromTarget(td, ve)
			if err != nil {
				return fmt.Errorf("table %s: const entry: %v", td.name, err)
			}
			if td.ternary {
				te.Priority = int32(len(ranked) - i)
			}
			ref, err := p.sw.EntryRefOf(td.name, ve)
			if err != nil {
				return fmt.Errorf("table %s: const entry: %v", td.name, err)
			}
			var x storedExtra
			direct := te.Action.GetAction()
			if direct == nil {
				x.action = te.Action
			}
			e := newStored(appendEntryKey(nil, te.Match, te.Priority), direct, te, ref, x)
			e.isConst = true
			ts := p.st.table(td.id)
			ts.hasConst = true
			ts.add(e, false)
		}
	}
	return nil
}

// fromTarget is a target entry as P4Runtime gives it.
func (p *pipeline) fromTarget(td *tableDesc, ve v1model.Entry) (*p4v1.TableEntry, error) {
	te := &p4v1.TableEntry{TableId: td.id, Priority: int32(ve.Priority)}
	for i, m := range ve.Match {
		fd := td.byIndex[i]
		val := func(v uint64, wide []byte) []byte {
			if fd.width > 64 {
				return trimmed(padded(wide, (fd.width+7)/8))
			}
			return canonical(v)
		}
		fm := &p4v1.FieldMatch{FieldId: fd.id}
		switch fd.kind {
		case p4configv1.MatchField_EXACT:
			fm.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: val(m.Value, m.Wide)}}
		case p4configv1.MatchField_LPM:
			if m.PrefixLen == 0 {
				continue
			}
			fm.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: val(m.Value, m.Wide), PrefixLen: int32(m.PrefixLen)}}
		case p4configv1.MatchField_TERNARY:
			if m.Mask == 0 && allZero(m.WideMask) {
				continue
			}
			fm.FieldMatchType = &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: val(m.Value, m.Wide), Mask: val(m.Mask, m.WideMask)}}
		case p4configv1.MatchField_RANGE:
			if m.Low == 0 && m.High == ones(fd.width) {
				continue
			}
			fm.FieldMatchType = &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: canonical(m.Low), High: canonical(m.High)}}
		case p4configv1.MatchField_OPTIONAL:
			if m.Wildcard || (fd.asTernary && m.Mask == 0 && allZero(m.WideMask)) {
				continue
			}
			fm.FieldMatchType = &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: val(m.Value, m.Wide)}}
		}
		te.Match = append(te.Match, fm)
	}
	if ve.Ref != nil {
		if ve.Ref.Group {
			te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileGroupId{ActionProfileGroupId: uint32(ve.Ref.ID)}}
		} else {
			te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileMemberId{ActionProfileMemberId: uint32(ve.Ref.ID)}}
		}
		return te, nil
	}
	act, err := p.actionFromTarget(ve.Action, ve.Params)
	if err != nil {
		return nil, err
	}
	te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: act}}
	return te, nil
}

// actionFromTarget is an action and its data as P4Runtime gives them.
func (p *pipeline) actionFromTarget(name string, data []uint64) (*p4v1.Action, error) {
	var ad *actionDesc
	for _, a := range p.actions {
		if a.name == name {
			ad = a
		}
	}
	if ad == nil {
		return nil, fmt.Errorf("action %s is not in the P4Info", name)
	}
	act := &p4v1.Action{ActionId: ad.id}
	for _, pd := range ad.byIndex {
		ws := wordWidths(pd.width)
		if len(data) < len(ws) {
			return nil, fmt.Errorf("action %s: too little data", name)
		}
		act.Params = append(act.Params, &p4v1.Action_Param{ParamId: pd.id, Value: joinWords(data[:len(ws)], ws)})
		data = data[len(ws):]
	}
	return act, nil
}

func ones(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(w) - 1
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
