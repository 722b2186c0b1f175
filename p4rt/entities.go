package p4rt

import (
	"slices"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/p4rcm/p4rcm/v1model"
)

// Writes and reads of the entities other than table entries: action
// profile members and groups, counters, meters, registers, the packet
// replication engine, digest configurations and parser value sets.

func (p *pipeline) profile(id uint32) (*profileDesc, error) {
	pr := p.profiles[id]
	if pr == nil {
		return nil, unknownID("action profile", id)
	}
	return pr, nil
}

// profileAction checks a member's action: one of the actions of the
// tables the profile serves.
func (p *pipeline) profileAction(pr *profileDesc, a *p4v1.Action) (*p4v1.Action, []uint64, error) {
	if a == nil {
		return nil, nil, errorf(codes.InvalidArgument, "action profile %s: a member needs an action", pr.name)
	}
	for _, td := range pr.tables {
		if _, ok := td.actions[a.ActionId]; ok {
			return p.action(td, a, false, nil)
		}
	}
	return nil, nil, errorf(codes.InvalidArgument, "action profile %s: action ID %d is not an action of its tables", pr.name, a.ActionId)
}

func (p *pipeline) writeMember(typ p4v1.Update_Type, m *p4v1.ActionProfileMember) error {
	pr, err := p.profile(m.ActionProfileId)
	if err != nil {
		return err
	}
	members := p.st.members[pr.id]
	if members == nil {
		members = map[uint32]*p4v1.ActionProfileMember{}
		p.st.members[pr.id] = members
	}
	old := members[m.MemberId]
	switch typ {
	case p4v1.Update_INSERT, p4v1.Update_MODIFY:
		if typ == p4v1.Update_INSERT && old != nil {
			return errorf(codes.AlreadyExists, "action profile %s: member %d exists", pr.name, m.MemberId)
		}
		if typ == p4v1.Update_MODIFY && old == nil {
			return errorf(codes.NotFound, "action profile %s: no member %d", pr.name, m.MemberId)
		}
		if typ == p4v1.Update_INSERT && pr.size > 0 && int64(len(members)) >= pr.size {
			return errorf(codes.ResourceExhausted, "action profile %s is full (%d members)", pr.name, pr.size)
		}
		a, data, err := p.profileAction(pr, m.Action)
		if err != nil {
			return err
		}
		name := p.actions[a.ActionId].name
		if typ == p4v1.Update_INSERT {
			err = p.sw.AddMember(pr.name, int(m.MemberId), name, data)
		} else {
			err = p.sw.ModifyMember(pr.name, int(m.MemberId), name, data)
		}
		if err != nil {
			return errorf(codes.Internal, "%v", err)
		}
		members[m.MemberId] = &p4v1.ActionProfileMember{ActionProfileId: pr.id, MemberId: m.MemberId, Action: a}
	case p4v1.Update_DELETE:
		if old == nil {
			return errorf(codes.NotFound, "action profile %s: no member %d", pr.name, m.MemberId)
		}
		for gid, g := range p.st.groups[pr.id] {
			for _, gm := range g.Members {
				if gm.MemberId == m.MemberId {
					return errorf(codes.FailedPrecondition, "action profile %s: member %d is in group %d", pr.name, m.MemberId, gid)
				}
			}
		}
		if t := p.referrer(pr, m.MemberId, false); t != "" {
			return errorf(codes.FailedPrecondition, "action profile %s: an entry of table %s uses member %d", pr.name, t, m.MemberId)
		}
		if err := p.sw.DeleteMember(pr.name, int(m.MemberId)); err != nil {
			return errorf(codes.Internal, "%v", err)
		}
		delete(members, m.MemberId)
	default:
		return errorf(codes.InvalidArgument, "update type %v", typ)
	}
	return nil
}

// referrer names a table with an entry that points at the member (or
// group) id, or is "".
func (p *pipeline) referrer(pr *profileDesc, id uint32, group bool) string {
	for _, td := range pr.tables {
		for _, e := range p.st.entries(td.id) {
			if e.x == nil || e.x.hidden != nil {
				continue // a direct action, or a one-shot set's members and group
			}
			switch a := e.x.action.GetType().(type) {
			case *p4v1.TableAction_ActionProfileGroupId:
				if group && a.ActionProfileGroupId == id {
					return td.name
				}
			case *p4v1.TableAction_ActionProfileMemberId:
				if !group && a.ActionProfileMemberId == id {
					return td.name
				}
			}
		}
	}
	return ""
}

func (p *pipeline) writeGroup(typ p4v1.Update_Type, g *p4v1.ActionProfileGroup) error {
	pr, err := p.profile(g.ActionProfileId)
	if err != nil {
		return err
	}
	if !pr.selector {
		return errorf(codes.InvalidArgument, "action profile %s has no selector: no groups", pr.name)
	}
	groups := p.st.groups[pr.id]
	if groups == nil {
		groups = map[uint32]*p4v1.ActionProfileGroup{}
		p.st.groups[pr.id] = groups
	}
	old := groups[g.GroupId]
	switch typ {
	case p4v1.Update_INSERT, p4v1.Update_MODIFY:
		if typ == p4v1.Update_INSERT && old != nil {
			return errorf(codes.AlreadyExists, "action profile %s: group %d exists", pr.name, g.GroupId)
		}
		if typ == p4v1.Update_MODIFY && old == nil {
			return errorf(codes.NotFound, "action profile %s: no group %d", pr.name, g.GroupId)
		}
		maxSize := g.MaxSize
		if typ == p4v1.Update_MODIFY && maxSize == 0 {
			maxSize = old.MaxSize
		}
		if g.MaxSize < 0 || (pr.maxGroupSize > 0 && g.MaxSize > pr.maxGroupSize) {
			return errorf(codes.InvalidArgument, "action profile %s: group max_size %d, the selector's limit is %d", pr.name, g.MaxSize, pr.maxGroupSize)
		}
		if maxSize > 0 && len(g.Members) > int(maxSize) {
			return errorf(codes.ResourceExhausted, "action profile %s: group %d holds at most %d members, %d given", pr.name, g.GroupId, maxSize, len(g.Members))
		}
		canon := &p4v1.ActionProfileGroup{ActionProfileId: pr.id, GroupId: g.GroupId, MaxSize: maxSize}
		var ids []int
		for _, m := range g.Members {
			switch {
			case m.Weight <= 0:
				return errorf(codes.InvalidArgument, "action profile %s: member %d has weight %d, want 1 or more", pr.name, m.MemberId, m.Weight)
			case m.Weight > 1:
				return errorf(codes.Unimplemented, "action profile %s: weights above 1 (the target picks members with equal weight)", pr.name)
			case p.st.members[pr.id][m.MemberId] == nil:
				return errorf(codes.NotFound, "action profile %s: no member %d", pr.name, m.MemberId)
			case slices.Contains(ids, int(m.MemberId)):
				return errorf(codes.InvalidArgument, "action profile %s: member %d twice in group %d", pr.name, m.MemberId, g.GroupId)
			}
			_, oldWatch := m.WatchKind.(*p4v1.ActionProfileGroup_Member_Watch)
			wp, err := watchPort(oldWatch, m.GetWatchPort(), "action profile "+pr.name)
			if err != nil {
				return err
			}
			ids = append(ids, int(m.MemberId))
			cm := &p4v1.ActionProfileGroup_Member{MemberId: m.MemberId, Weight: m.Weight}
			if wp != nil {
				cm.WatchKind = &p4v1.ActionProfileGroup_Member_WatchPort{WatchPort: wp}
			}
			canon.Members = append(canon.Members, cm)
		}
		slices.SortFunc(canon.Members, func(a, b *p4v1.ActionProfileGroup_Member) int { return int(a.MemberId) - int(b.MemberId) })
		if err := p.sw.SetGroup(pr.name, int(g.GroupId), ids); err != nil {
			return errorf(codes.Internal, "%v", err)
		}
		groups[g.GroupId] = canon
	case p4v1.Update_DELETE:
		if old == nil {
			return errorf(codes.NotFound, "action profile %s: no group %d", pr.name, g.GroupId)
		}
		if t := p.referrer(pr, g.GroupId, true); t != "" {
			return errorf(codes.FailedPrecondition, "action profile %s: an entry of table %s uses group %d", pr.name, t, g.GroupId)
		}
		if err := p.sw.DeleteGroup(pr.name, int(g.GroupId)); err != nil {
			return errorf(codes.Internal, "%v", err)
		}
		delete(groups, g.GroupId)
	default:
		return errorf(codes.InvalidArgument, "update type %v", typ)
	}
	return nil
}

// readProfiles answers a read of members (or groups): one profile or all
// (ID 0), one member or all (ID 0).
func (p *pipeline) readProfiles(profileID, id uint32, groups bool, out func(*p4v1.Entity) error) error {
	ids := sortedIDs(p.profiles)
	if profileID != 0 {
		if _, err := p.profile(profileID); err != nil {
			return err
		}
		ids = []uint32{profileID}
	}
	for _, pid := range ids {
		if groups {
			gs := p.st.groups[pid]
			for _, gid := range sortedIDs(gs) {
				if id == 0 || id == gid {
					g := proto.Clone(gs[gid]).(*p4v1.ActionProfileGroup)
					if err := out(&p4v1.Entity{Entity: &p4v1.Entity_ActionProfileGroup{ActionProfileGroup: g}}); err != nil {
						return err
					}
				}
			}
			continue
		}
		ms := p.st.members[pid]
		for _, mid := range sortedIDs(ms) {
			if id == 0 || id == mid {
				m := proto.Clone(ms[mid]).(*p4v1.ActionProfileMember)
				if err := out(&p4v1.Entity{Entity: &p4v1.Entity_ActionProfileMember{ActionProfileMember: m}}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// index checks an extern's index: negative is INVALID_ARGUMENT, past the
// end OUT_OF_RANGE.
func index(what string, ix *p4v1.Index, size int64) error {
	switch {
	case ix.Index < 0:
		return errorf(codes.InvalidArgument, "%s: index %d is negative", what, ix.Index)
	case ix.Index >= size:
		return errorf(codes.OutOfRange, "%s: index %d, it has %d cells", what, ix.Index, size)
	}
	return nil
}

// cells are the indexes an extern read or write covers: one, or all when
// ix is unset.
func cells(what string, ix *p4v1.Index, size int64) ([]int64, error) {
	if ix != nil {
		if err := index(what, ix, size); err != nil {
			return nil, err
		}
		return []int64{ix.Index}, nil
	}
	all := make([]int64, size)
	for i := range all {
		all[i] = int64(i)
	}
	return all, nil
}

// eachCell calls f for every cell a read of indexed externs covers: those
// of one extern (id) or of all (id 0), one cell (ix) or all (ix nil), in
// ID and index order.
func eachCell(descs map[uint32]*externDesc, kind string, id uint32, ix *p4v1.Index, f func(id uint32, d *externDesc, i int64) error) error {
	ids := sortedIDs(descs)
	if id != 0 {
		if descs[id] == nil {
			return unknownID(kind, id)
		}
		ids = []uint32{id}
	}
	for _, id := range ids {
		d := descs[id]
		ixs, err := cells(kind+" "+d.name, ix, d.size)
		if err != nil {
			return err
		}
		for _, i := range ixs {
			if err := f(id, d, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// notInsertDelete refuses INSERT and DELETE of an entity that always
// exists (counter, meter and register cells, value sets).
func notInsertDelete(typ p4v1.Update_Type, what string) error {
	if typ != p4v1.Update_MODIFY {
		return errorf(codes.InvalidArgument, "%s always exists: MODIFY it, do not %v it", what, typ)
	}
	return nil
}

// counterData is a counter cell as its unit reports it.
func counterData(pk, by uint64, unit string) *p4v1.CounterData {
	d := &p4v1.CounterData{}
	if unit != "PACKETS" {
		d.ByteCount = int64(by)
	}
	if unit != "BYTES" {
		d.PacketCount = int64(pk)
	}
	return d
}

func (p *pipeline) writeCounter(typ p4v1.Update_Type, c *p4v1.CounterEntry) error {
	cd := p.counters[c.CounterId]
	if cd == nil {
		return unknownID("counter", c.CounterId)
	}
	if err := notInsertDelete(typ, "counter "+cd.name); err != nil {
		return err
	}
	ixs, err := cells("counter "+cd.name, c.Index, cd.size)
	if err != nil {
		return err
	}
	d := c.Data
	if d == nil {
		d = &p4v1.CounterData{}
	}
	if d.PacketCount < 0 || d.ByteCount < 0 {
		return errorf(codes.InvalidArgument, "counter %s: negative counts", cd.name)
	}
	for _, i := range ixs {
		if err := p.sw.SetCounter(cd.name, int(i), uint64(d.PacketCount), uint64(d.ByteCount)); err != nil {
			return errorf(codes.Internal, "%v", err)
		}
	}
	return nil
}

func (p *pipeline) readCounters(f *p4v1.CounterEntry, out func(*p4v1.Entity) error) error {
	return eachCell(p.counters, "counter", f.CounterId, f.Index, func(id uint32, cd *externDesc, i int64) error {
		pk, by, err := p.sw.Counter(cd.name, int(i))
		if err != nil {
			return errorf(codes.Internal, "%v", err)
		}
		e := &p4v1.CounterEntry{CounterId: id, Index: &p4v1.Index{Index: i}, Data: counterData(pk, by, cd.unit.String())}
		return out(&p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: e}})
	})
}

// directEntry finds the stored entry a direct counter or meter entry
// names; the table must have the resource.
func (p *pipeline) directEntry(te *p4v1.TableEntry, has func(*tableDesc) bool, what string) (*tableDesc, *stored, error) {
	if te == nil {
		return nil, nil, errorf(codes.InvalidArgument, "a direct %s entry needs its table entry", what)
	}
	td, err := p.table(te.TableId)
	if err != nil {
		return nil, nil, err
	}
	if !has(td) {
		return nil, nil, errorf(codes.InvalidArgument, "table %s has no direct %s", td.name, what)
	}
	if te.IsDefaultAction {
		return nil, nil, errorf(codes.Unimplemented, "table %s: direct resources of the default entry", td.name)
	}
	match, _, err := p.key(td, te, nil)
	if err != nil {
		return nil, nil, err
	}
	var keyBuf [64]byte
	e := p.st.table(td.id).lookup(appendEntryKey(keyBuf[:0], match, te.Priority))
	if e == nil {
		return nil, nil, errorf(codes.NotFound, "table %s: no entry with this key", td.name)
	}
	return td, e, nil
}

func hasCounter(td *tableDesc) bool { return td.hasCounter }
func hasMeter(td *tableDesc) bool   { return td.directMeter != nil }

func (p *pipeline) writeDirectCounter(typ p4v1.Update_Type, c *p4v1.DirectCounterEntry) error {
	if err := notInsertDelete(typ, "a direct counter"); err != nil {
		return err
	}
	td, e, err := p.directEntry(c.TableEntry, hasCounter, "counter")
	if err != nil {
		return err
	}
	d := c.Data
	if d == nil {
		d = &p4v1.CounterData{}
	}
	if d.PacketCount < 0 || d.ByteCount < 0 {
		return errorf(codes.InvalidArgument, "table %s: negative counts", td.name)
	}
	if err := p.sw.SetEntryCounterRef(e.ref, uint64(d.PacketCount), uint64(d.ByteCount)); err != nil {
		return errorf(codes.Internal, "%v", err)
	}
	return nil
}

// readDirect answers a read of direct counters or meters: of one entry,
// of every entry of a table, or of every table that has them (table 0).
func (p *pipeline) readDirect(te *p4v1.TableEntry, has func(*tableDesc) bool, what string,
	each func(td *tableDesc, e *stored) *p4v1.Entity, out func(*p4v1.Entity) error) error {
	if te == nil {
		te = &p4v1.TableEntry{}
	}
	if len(te.Match) > 0 {
		td, e, err := p.directEntry(te, has, what)
		if err != nil {
			return err
		}
		return out(each(td, e))
	}
	ids := sortedIDs(p.tables)
	if te.TableId != 0 {
		td, err := p.table(te.TableId)
		if err != nil {
			return err
		}
		if !has(td) {
			return errorf(codes.InvalidArgument, "table %s has no direct %s", td.name, what)
		}
		ids = []uint32{te.TableId}
	}
	for _, id := range ids {
		td := p.tables[id]
		if !has(td) {
			continue
		}
		for _, e := range p.st.entries(id) {
			if err := out(each(td, e)); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyOnly is an entry's identity, as direct resources' reads give it.
func keyOnly(td *tableDesc, e *stored) *p4v1.TableEntry {
	return &p4v1.TableEntry{TableId: td.id, Match: e.matches(), Priority: e.priority()}
}

func (p *pipeline) directCounterEntity(td *tableDesc, e *stored) *p4v1.Entity {
	pk, by, _ := p.sw.EntryCounterRef(e.ref)
	return &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{
		TableEntry: keyOnly(td, e), Data: counterData(pk, by, td.counterUnit.String())}}}
}

// meterRates converts a meter configuration (rates in units per second)
// to the target's (per microsecond), committed then peak.
func meterRates(c *p4v1.MeterConfig, what string) ([]v1model.MeterRate, error) {
	switch {
	case c.Cir < 0 || c.Cburst < 0 || c.Pir < 0 || c.Pburst < 0:
		return nil, errorf(codes.InvalidArgument, "meter of %s: negative rates or bursts", what)
	case c.Pir < c.Cir:
		return nil, errorf(codes.InvalidArgument, "meter of %s: peak rate %d below committed rate %d", what, c.Pir, c.Cir)
	}
	return []v1model.MeterRate{
		{PerMicrosecond: float64(c.Cir) / 1e6, Burst: uint64(c.Cburst)},
		{PerMicrosecond: float64(c.Pir) / 1e6, Burst: uint64(c.Pburst)},
	}, nil
}

func (p *pipeline) writeMeter(typ p4v1.Update_Type, m *p4v1.MeterEntry) error {
	md := p.meters[m.MeterId]
	if md == nil {
		return unknownID("meter", m.MeterId)
	}
	if err := notInsertDelete(typ, "meter "+md.name); err != nil {
		return err
	}
	if m.CounterData != nil {
		return errorf(codes.Unimplemented, "meter %s: meter counters", md.name)
	}
	ixs, err := cells("meter "+md.name, m.Index, md.size)
	if err != nil {
		return err
	}
	var rates []v1model.MeterRate
	if m.Config != nil {
		if rates, err = meterRates(m.Config, md.name); err != nil {
			return err
		}
	}
	cfg := p.st.meterCfg[md.id]
	if cfg == nil {
		cfg = map[int64]*p4v1.MeterConfig{}
		p.st.meterCfg[md.id] = cfg
	}
	for _, i := range ixs {
		if err := p.sw.SetMeterRates(md.name, int(i), rates); err != nil {
			return errorf(codes.Internal, "%v", err)
		}
		if m.Config == nil {
			delete(cfg, i)
		} else {
			cfg[i] = proto.Clone(m.Config).(*p4v1.MeterConfig)
		}
	}
	return nil
}

func (p *pipeline) readMeters(f *p4v1.MeterEntry, out func(*p4v1.Entity) error) error {
	return eachCell(p.meters, "meter", f.MeterId, f.Index, func(id uint32, _ *externDesc, i int64) error {
		e := &p4v1.MeterEntry{MeterId: id, Index: &p4v1.Index{Index: i}}
		if c := p.st.meterCfg[id][i]; c != nil {
			e.Config = proto.Clone(c).(*p4v1.MeterConfig)
		}
		return out(&p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: e}})
	})
}

func (p *pipeline) writeDirectMeter(typ p4v1.Update_Type, m *p4v1.DirectMeterEntry) error {
	if err := notInsertDelete(typ, "a direct meter"); err != nil {
		return err
	}
	if m.CounterData != nil {
		return errorf(codes.Unimplemented, "meter counters")
	}
	td, e, err := p.directEntry(m.TableEntry, hasMeter, "meter")
	if err != nil {
		return err
	}
	var rates []v1model.MeterRate
	if m.Config != nil {
		if rates, err = meterRates(m.Config, td.name); err != nil {
			return err
		}
	}
	if err := p.sw.SetEntryMeterRef(e.ref, rates); err != nil {
		return errorf(codes.Internal, "%v", err)
	}
	var cfg *p4v1.MeterConfig
	if m.Config != nil {
		cfg = proto.Clone(m.Config).(*p4v1.MeterConfig)
	}
	e.setMeter(cfg)
	return nil
}

func (p *pipeline) directMeterEntity(td *tableDesc, e *stored) *p4v1.Entity {
	d := &p4v1.DirectMeterEntry{TableEntry: keyOnly(td, e)}
	if m := e.meter(); m != nil {
		d.Config = proto.Clone(m).(*p4v1.MeterConfig)
	}
	return &p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: d}}
}

// Registers: BMv2's P4Runtime server answers UNIMPLEMENTED to register
// reads and writes; this one reads and MODIFYs cells as the spec says.
func (p *pipeline) writeRegister(typ p4v1.Update_Type, r *p4v1.RegisterEntry) error {
	rd := p.registers[r.RegisterId]
	if rd == nil {
		return unknownID("register", r.RegisterId)
	}
	if err := notInsertDelete(typ, "register "+rd.name); err != nil {
		return err
	}
	ixs, err := cells("register "+rd.name, r.Index, rd.size)
	if err != nil {
		return err
	}
	bs, ok := r.GetData().GetData().(*p4v1.P4Data_Bitstring)
	if !ok {
		return errorf(codes.InvalidArgument, "register %s: the data is a bit string", rd.name)
	}
	c, err := fit(bs.Bitstring, rd.width, "register "+rd.name)
	if err != nil {
		return err
	}
	for _, i := range ixs {
		if err := p.sw.SetRegister(rd.name, int(i), toUint(c)); err != nil {
			return errorf(codes.Internal, "%v", err)
		}
	}
	return nil
}

func (p *pipeline) readRegisters(f *p4v1.RegisterEntry, out func(*p4v1.Entity) error) error {
	return eachCell(p.registers, "register", f.RegisterId, f.Index, func(id uint32, rd *externDesc, i int64) error {
		v, err := p.sw.Register(rd.name, int(i))
		if err != nil {
			return errorf(codes.Internal, "%v", err)
		}
		e := &p4v1.RegisterEntry{RegisterId: id, Index: &p4v1.Index{Index: i},
			Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: canonical(v)}}}
		return out(&p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: e}})
	})
}

// replicas checks a replica list: each (port, instance) once, ports the
// target can address.
func replicas(what string, rs []*p4v1.Replica) ([]v1model.Replica, error) {
	var out []v1model.Replica
	seen := map[[2]uint32]bool{}
	for _, r := range rs {
		k := [2]uint32{r.EgressPort, r.Instance}
		switch {
		case seen[k]:
			return nil, errorf(codes.InvalidArgument, "%s: replica (port %d, instance %d) twice", what, r.EgressPort, r.Instance)
		case r.EgressPort >= v1model.DropPort:
			return nil, errorf(codes.InvalidArgument, "%s: port %d is not a port (0 to %d)", what, r.EgressPort, v1model.DropPort-1)
		case r.Instance > 0xffff:
			return nil, errorf(codes.InvalidArgument, "%s: instance %d over 16 bits", what, r.Instance)
		}
		seen[k] = true
		out = append(out, v1model.Replica{Port: int(r.EgressPort), RID: int(r.Instance)})
	}
	return out, nil
}

func (p *pipeline) writePRE(typ p4v1.Update_Type, e *p4v1.PacketReplicationEngineEntry) error {
	switch x := e.Type.(type) {
	case *p4v1.PacketReplicationEngineEntry_CloneSessionEntry:
		cs := x.CloneSessionEntry
		switch {
		case cs.SessionId == 0:
			return errorf(codes.InvalidArgument, "clone session 0 is not a session")
		case cs.SessionId > 0x7fff:
			return errorf(codes.OutOfRange, "clone session %d: the target's sessions are 1 to 32767", cs.SessionId)
		case cs.PacketLengthBytes != 0:
			return errorf(codes.Unimplemented, "clone session %d: truncation (packet_length_bytes)", cs.SessionId)
		}
		return writeReplication(typ, "clone session", cs.SessionId, cs, cs.Replicas, p.st.clones, p.sw.SetCloneSession)
	case *p4v1.PacketReplicationEngineEntry_MulticastGroupEntry:
		mg := x.MulticastGroupEntry
		if mg.MulticastGroupId == 0 || mg.MulticastGroupId > 0xffff {
			return errorf(codes.InvalidArgument, "multicast group %d: groups are 1 to 65535", mg.MulticastGroupId)
		}
		return writeReplication(typ, "multicast group", mg.MulticastGroupId, mg, mg.Replicas, p.st.mcast, p.sw.SetMulticastGroup)
	}
	return errorf(codes.InvalidArgument, "an empty packet replication engine entry")
}

// writeReplication applies one update of a clone session or multicast
// group (what, numbered id): set gives the switch its replicas (none to
// delete it), and held keeps a copy of each for reads.
func writeReplication[T proto.Message](typ p4v1.Update_Type, what string, id uint32, entry T, given []*p4v1.Replica,
	held map[uint32]T, set func(int, []v1model.Replica) error) error {
	_, exists := held[id]
	if err := presence(typ, exists, what, id); err != nil {
		return err
	}
	var rs []v1model.Replica
	if typ != p4v1.Update_DELETE {
		var err error
		if rs, err = replicas(what, given); err != nil {
			return err
		}
	}
	if err := set(int(id), rs); err != nil {
		return errorf(codes.Internal, "%v", err)
	}
	if typ == p4v1.Update_DELETE {
		delete(held, id)
	} else {
		held[id] = proto.Clone(entry).(T)
	}
	return nil
}

// presence checks that an INSERT is of something new, a MODIFY or DELETE
// of something that exists.
func presence(typ p4v1.Update_Type, exists bool, what string, id uint32) error {
	switch {
	case typ == p4v1.Update_INSERT && exists:
		return errorf(codes.AlreadyExists, "%s %d exists", what, id)
	case typ != p4v1.Update_INSERT && !exists:
		return errorf(codes.NotFound, "no %s %d", what, id)
	case typ == p4v1.Update_UNSPECIFIED:
		return errorf(codes.InvalidArgument, "update type %v", typ)
	}
	return nil
}

func (p *pipeline) readPRE(f *p4v1.PacketReplicationEngineEntry, out func(*p4v1.Entity) error) error {
	pre := func(e *p4v1.PacketReplicationEngineEntry) *p4v1.Entity {
		return &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: e}}
	}
	switch x := f.GetType().(type) {
	case *p4v1.PacketReplicationEngineEntry_CloneSessionEntry:
		// One session by ID that does not exist: NOT_FOUND, as BMv2.
		if id := x.CloneSessionEntry.SessionId; id != 0 && p.st.clones[id] == nil {
			return errorf(codes.NotFound, "no clone session %d", id)
		}
		for _, id := range sortedIDs(p.st.clones) {
			if x.CloneSessionEntry.SessionId == 0 || x.CloneSessionEntry.SessionId == id {
				cs := proto.Clone(p.st.clones[id]).(*p4v1.CloneSessionEntry)
				if err := out(pre(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: cs}})); err != nil {
					return err
				}
			}
		}
	case *p4v1.PacketReplicationEngineEntry_MulticastGroupEntry:
		if id := x.MulticastGroupEntry.MulticastGroupId; id != 0 && p.st.mcast[id] == nil {
			return errorf(codes.NotFound, "no multicast group %d", id)
		}
		for _, id := range sortedIDs(p.st.mcast) {
			if x.MulticastGroupEntry.MulticastGroupId == 0 || x.MulticastGroupEntry.MulticastGroupId == id {
				mg := proto.Clone(p.st.mcast[id]).(*p4v1.MulticastGroupEntry)
				if err := out(pre(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: mg}})); err != nil {
					return err
				}
			}
		}
	default:
		return errorf(codes.InvalidArgument, "read of the packet replication engine: say clone sessions or multicast groups")
	}
	return nil
}

func (p *pipeline) writeDigest(typ p4v1.Update_Type, d *p4v1.DigestEntry) error {
	dd := p.digests[d.DigestId]
	if dd == nil {
		return unknownID("digest", d.DigestId)
	}
	if err := presence(typ, p.st.digests[d.DigestId] != nil, "configuration of digest", d.DigestId); err != nil {
		return err
	}
	if typ == p4v1.Update_DELETE {
		delete(p.st.digests, d.DigestId)
		p.dig.configure(p, d.DigestId, nil)
		return nil
	}
	c := d.Config
	switch {
	case c == nil:
		return errorf(codes.InvalidArgument, "digest %s: no config", dd.name)
	case c.MaxTimeoutNs < 0 || c.MaxListSize < 0 || c.AckTimeoutNs < 0:
		return errorf(codes.InvalidArgument, "digest %s: negative max_timeout_ns, max_list_size or ack_timeout_ns", dd.name)
	}
	p.st.digests[d.DigestId] = proto.Clone(d).(*p4v1.DigestEntry)
	p.dig.configure(p, d.DigestId, p.st.digests[d.DigestId].Config)
	return nil
}

func (p *pipeline) readDigests(f *p4v1.DigestEntry, out func(*p4v1.Entity) error) error {
	if f.DigestId != 0 && p.digests[f.DigestId] == nil {
		return unknownID("digest", f.DigestId)
	}
	for _, id := range sortedIDs(p.st.digests) {
		if f.DigestId == 0 || f.DigestId == id {
			d := proto.Clone(p.st.digests[id]).(*p4v1.DigestEntry)
			if err := out(&p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: d}}); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeValueSet replaces a parser value set's members (MODIFY only, as
// the spec says).
func (p *pipeline) writeValueSet(typ p4v1.Update_Type, v *p4v1.ValueSetEntry) error {
	vd := p.valueSets[v.ValueSetId]
	if vd == nil {
		return unknownID("value set", v.ValueSetId)
	}
	if err := notInsertDelete(typ, "value set "+vd.name); err != nil {
		return err
	}
	if vd.size > 0 && len(v.Members) > int(vd.size) {
		return errorf(codes.ResourceExhausted, "value set %s holds %d values, %d given", vd.name, vd.size, len(v.Members))
	}
	canon := &p4v1.ValueSetEntry{ValueSetId: vd.id}
	var values [][]byte
	for i, m := range v.Members {
		if len(m.Match) != len(vd.fields) {
			return errorf(codes.InvalidArgument, "value set %s member %d: %d fields, it has %d", vd.name, i, len(m.Match), len(vd.fields))
		}
		var val []byte
		cm := &p4v1.ValueSetMember{}
		for j, mf := range vd.fields {
			fm := m.Match[j]
			ex := fm.GetExact()
			if fm.FieldId != mf.Id || ex == nil {
				return errorf(codes.InvalidArgument, "value set %s member %d: field %d: want an exact match of field %s", vd.name, i, j, mf.Name)
			}
			c, err := fit(ex.Value, int(mf.Bitwidth), "value set "+vd.name+" field "+mf.Name)
			if err != nil {
				return err
			}
			// Fields are packed in whole bytes each, as the target
			// compares them (a value set of one field is the norm).
			val = append(val, padded(c, (int(mf.Bitwidth)+7)/8)...)
			cm.Match = append(cm.Match, &p4v1.FieldMatch{FieldId: mf.Id, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: c}}})
		}
		if len(val) != vd.width {
			return errorf(codes.Unimplemented, "value set %s: fields of %d bytes where the target holds %d", vd.name, len(val), vd.width)
		}
		values = append(values, val)
		canon.Members = append(canon.Members, cm)
	}
	if err := p.sw.SetValueSet(vd.name, values); err != nil {
		return errorf(codes.Internal, "%v", err)
	}
	p.st.valueSets[vd.id] = canon
	return nil
}

func (p *pipeline) readValueSets(f *p4v1.ValueSetEntry, out func(*p4v1.Entity) error) error {
	ids := sortedIDs(p.valueSets)
	if f.ValueSetId != 0 {
		if p.valueSets[f.ValueSetId] == nil {
			return unknownID("value set", f.ValueSetId)
		}
		ids = []uint32{f.ValueSetId}
	}
	for _, id := range ids {
		v := p.st.valueSets[id]
		if v == nil {
			v = &p4v1.ValueSetEntry{ValueSetId: id}
		}
		if err := out(&p4v1.Entity{Entity: &p4v1.Entity_ValueSetEntry{ValueSetEntry: proto.Clone(v).(*p4v1.ValueSetEntry)}}); err != nil {
			return err
		}
	}
	return nil
}
