package p4rt_test

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Pipelines: a P4Info that does not describe the JSON is refused naming
// the object; VERIFY changes nothing; after VERIFY_AND_SAVE writes go to
// the saved pipeline, which COMMIT makes the switch's; each GetForwardingPipelineConfig response type returns
// its part; RECONCILE_AND_COMMIT keeps what controllers wrote, and
// refuses a pipeline that cannot hold it; VERIFY_AND_COMMIT starts afresh.
func TestPipelineConfigs(t *testing.T) {
	rt, tb := loadProgram(t, "runtime"), loadProgram(t, "tables")
	_, c := serve(t)
	ct := connect(t, c, 1)
	ct.arbitration()
	set := func(action p4v1.SetForwardingPipelineConfigRequest_Action, p *program, cookie uint64) error {
		req := &p4v1.SetForwardingPipelineConfigRequest{DeviceId: device, ElectionId: ct.election, Action: action}
		if p != nil {
			req.Config = &p4v1.ForwardingPipelineConfig{P4Info: p.info, P4DeviceConfig: p.json,
				Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: cookie}}
		}
		_, err := c.SetForwardingPipelineConfig(t.Context(), req)
		return err
	}
	if _, err := getPipeline(t, c, p4v1.GetForwardingPipelineConfigRequest_ALL); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("get with no pipeline: %v, want FailedPrecondition", err)
	}
	mismatch := program{tb.info, rt.json}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_VERIFY, &mismatch, 1); status.Code(err) != codes.InvalidArgument {
		t.Errorf("tables.p4's P4Info with runtime.p4's JSON: %v, want InvalidArgument", err)
	}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_VERIFY, &rt, 1); err != nil {
		t.Fatalf("VERIFY: %v", err)
	}
	if _, err := getPipeline(t, c, p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("VERIFY committed a pipeline: %v", err)
	}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_COMMIT, nil, 0); status.Code(err) != codes.NotFound {
		t.Errorf("COMMIT with nothing saved: %v, want NotFound", err)
	}
	// Saved over a committed tables.p4: writes refer to the saved
	// runtime.p4 at once, and COMMIT makes it and them the switch's.
	if err := set(p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, &tb, 1); err != nil {
		t.Fatal(err)
	}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_SAVE, &rt, 2); err != nil {
		t.Fatal(err)
	}
	bigT, fwd := id(t, rt.info, "IngressR.big_t"), id(t, rt.info, "IngressR.forward_counted")
	entry := &p4v1.TableEntry{TableId: bigT, Match: []*p4v1.FieldMatch{exact(1, 7)}, Action: action(fwd, []byte{3})}
	if got := write(t, c, ct, ins(entry)); got[0] != codes.OK {
		t.Fatalf("a write to the saved pipeline: %v", got)
	}
	if cfg, _ := getPipeline(t, c, p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY); cfg.GetCookie().GetCookie() != 1 {
		t.Errorf("before COMMIT the committed pipeline is cookie %v, want 1", cfg.GetCookie())
	}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_COMMIT, nil, 0); err != nil {
		t.Fatal(err)
	}
	for typ, want := range map[p4v1.GetForwardingPipelineConfigRequest_ResponseType][2]bool{
		p4v1.GetForwardingPipelineConfigRequest_ALL:                      {true, true},
		p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY:              {false, false},
		p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE:        {true, false},
		p4v1.GetForwardingPipelineConfigRequest_DEVICE_CONFIG_AND_COOKIE: {false, true},
	} {
		cfg, err := getPipeline(t, c, typ)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		if cfg.GetCookie().GetCookie() != 2 || (cfg.P4Info != nil) != want[0] || (cfg.P4DeviceConfig != nil) != want[1] {
			t.Errorf("%v: cookie %d, P4Info %t, device config %t; want 2, %t, %t", typ,
				cfg.GetCookie().GetCookie(), cfg.P4Info != nil, cfg.P4DeviceConfig != nil, want[0], want[1])
		}
		if want[0] && !proto.Equal(cfg.P4Info, rt.info) || want[1] && !bytes.Equal(cfg.P4DeviceConfig, rt.json) {
			t.Errorf("%v: the pipeline read back is not the one set", typ)
		}
	}

	if got := readAll(t, c, entity(&p4v1.TableEntry{TableId: bigT})); len(got) != 1 || !proto.Equal(got[0].GetTableEntry(), entry) {
		t.Errorf("after COMMIT big_t holds %v, want the entry written after VERIFY_AND_SAVE", got)
	}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT, &tb, 3); status.Code(err) != codes.InvalidArgument {
		t.Errorf("reconcile to a program without big_t: %v, want InvalidArgument", err)
	}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT, &rt, 4); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, c, entity(&p4v1.TableEntry{TableId: bigT})); len(got) != 1 || !proto.Equal(got[0].GetTableEntry(), entry) {
		t.Errorf("after RECONCILE_AND_COMMIT big_t holds %v, want %v", got, entry)
	}
	if cfg, _ := getPipeline(t, c, p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY); cfg.GetCookie().GetCookie() != 4 {
		t.Errorf("cookie after reconcile: %v, want 4", cfg.GetCookie())
	}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, &rt, 5); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, c, entity(&p4v1.TableEntry{TableId: bigT})); len(got) != 0 {
		t.Errorf("after VERIFY_AND_COMMIT big_t still holds %v", got)
	}
}

// A value set: the parser takes the data header only for EtherTypes in
// it; it reads back as written, and only MODIFY writes it.
func TestValueSets(t *testing.T) {
	r := newRig(t)
	frame := dataFrame(1, 7, 0, 0)
	if out := r.send(1, frame); len(out) != 0 {
		t.Errorf("with an empty value set the data frame went to %v; want dropped", ports(out))
	}
	r.allowData()
	if out := r.send(1, frame); !slices.Equal(ports(out), []int{2}) {
		t.Errorf("with %#x in the value set the frame went to %v, want [2]", dataType, ports(out))
	}
	vs := &p4v1.ValueSetEntry{ValueSetId: r.id("ParseR.data_types")}
	got := r.read(vs)
	if len(got) != 1 || len(got[0].GetValueSetEntry().Members) != 1 ||
		!proto.Equal(got[0].GetValueSetEntry().Members[0].Match[0], exact(1, dataType>>8, dataType&0xff)) {
		t.Errorf("value set read back: %v", got)
	}
	five := &p4v1.ValueSetEntry{ValueSetId: vs.ValueSetId}
	for i := range 5 {
		five.Members = append(five.Members, &p4v1.ValueSetMember{Match: []*p4v1.FieldMatch{exact(1, 0x90, byte(i))}})
	}
	if got := r.write(ins(vs), mod(five)); got[0] != codes.InvalidArgument || got[1] != codes.ResourceExhausted {
		t.Errorf("INSERT of a value set, 5 members in a set of 4: %v, want [InvalidArgument ResourceExhausted]", got)
	}
	r.mustWrite(mod(vs)) // empty
	if out := r.send(1, frame); len(out) != 0 {
		t.Errorf("after emptying the value set the frame went to %v", ports(out))
	}
}

// Action profiles: members and groups are written, read back and
// referred to by table entries; a member in use cannot go, a missing one
// cannot be referred to; a selector table's one-shot action set installs
// hidden members and a group that reads back as the set; frames follow
// what the entries say.
func TestActionProfiles(t *testing.T) {
	r := newRig(t)
	r.allowData()
	members, spread := r.id("IngressR.members"), r.id("IngressR.spread")
	profT, selT, fwd, drop := r.id("IngressR.prof_t"), r.id("IngressR.sel_t"), r.id("IngressR.forward"), r.id("IngressR.drop")
	fwdTo := func(port byte) *p4v1.Action {
		return &p4v1.Action{ActionId: fwd, Params: []*p4v1.Action_Param{{ParamId: 1, Value: []byte{port}}}}
	}
	m1 := &p4v1.ActionProfileMember{ActionProfileId: members, MemberId: 1, Action: fwdTo(5)}
	m2 := &p4v1.ActionProfileMember{ActionProfileId: members, MemberId: 2, Action: &p4v1.Action{ActionId: drop}}
	r.mustWrite(ins(m1), ins(m2))
	byMember := func(port byte, member uint32) *p4v1.TableEntry {
		return &p4v1.TableEntry{TableId: profT, Match: []*p4v1.FieldMatch{exact(1, 0, port)},
			Action: &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileMemberId{ActionProfileMemberId: member}}}
	}
	r.mustWrite(ins(byMember(1, 1)), ins(byMember(2, 2)))
	if out := r.send(1, dataFrame(1, 0, 1, 2)); !slices.Equal(ports(out), []int{5}) {
		t.Errorf("port field 1 (member 1, forward to 5): out %v", ports(out))
	}
	if out := r.send(1, dataFrame(1, 0, 2, 2)); len(out) != 0 {
		t.Errorf("port field 2 (member 2, drop): out %v", ports(out))
	}
	r.mustWrite(mod(&p4v1.ActionProfileMember{ActionProfileId: members, MemberId: 1, Action: fwdTo(6)}))
	if out := r.send(1, dataFrame(1, 0, 1, 2)); !slices.Equal(ports(out), []int{6}) {
		t.Errorf("member 1 modified to forward to 6: out %v", ports(out))
	}
	if got := r.write(del(m2), ins(byMember(3, 9)), ins(m1)); got[0] != codes.FailedPrecondition || got[1] != codes.NotFound || got[2] != codes.AlreadyExists {
		t.Errorf("delete a member in use, refer to a missing one, insert one twice: %v, want [FailedPrecondition NotFound AlreadyExists]", got)
	}
	if got := r.read(&p4v1.ActionProfileMember{ActionProfileId: members}); len(got) != 2 ||
		!proto.Equal(got[0].GetActionProfileMember().Action, fwdTo(6)) {
		t.Errorf("members read back: %v", got)
	}

	// A selector: a group of two members, frames spread over both.
	s1 := &p4v1.ActionProfileMember{ActionProfileId: spread, MemberId: 1, Action: fwdTo(7)}
	s2 := &p4v1.ActionProfileMember{ActionProfileId: spread, MemberId: 2, Action: fwdTo(8)}
	g := &p4v1.ActionProfileGroup{ActionProfileId: spread, GroupId: 1, MaxSize: 4,
		Members: []*p4v1.ActionProfileGroup_Member{{MemberId: 1, Weight: 1}, {MemberId: 2, Weight: 1}}}
	toGroup := &p4v1.TableEntry{TableId: selT, Match: []*p4v1.FieldMatch{lpm(1, 8, 10, 0, 0, 0)},
		Action: &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileGroupId{ActionProfileGroupId: 1}}}
	r.mustWrite(ins(s1), ins(s2), ins(g), ins(toGroup))
	spreadOver := func() map[int]int {
		seen := map[int]int{}
		for src := range byte(64) {
			for _, s := range r.send(1, dataFrame(src, 10<<24|uint32(src), 1000+uint16(src)*7, 3)) {
				seen[s.port]++
			}
		}
		return seen
	}
	if seen := spreadOver(); len(seen) != 2 || seen[7] == 0 || seen[8] == 0 {
		t.Errorf("64 flows over a group of members to 7 and 8 went to %v", seen)
	}
	if got := r.write(del(s1), del(g)); got[0] != codes.FailedPrecondition || got[1] != codes.FailedPrecondition {
		t.Errorf("delete a member of a group and a group in use: %v, want [FailedPrecondition FailedPrecondition]", got)
	}
	if got := r.read(&p4v1.ActionProfileGroup{ActionProfileId: spread}); len(got) != 1 || !proto.Equal(got[0].GetActionProfileGroup(), g) {
		t.Errorf("group read back %v, want %v", got, g)
	}

	// One-shot: the same table entry written with an action set instead.
	set := &p4v1.ActionProfileActionSet{ActionProfileActions: []*p4v1.ActionProfileAction{
		{Action: fwdTo(11), Weight: 1}, {Action: fwdTo(12), Weight: 1}}}
	oneShot := &p4v1.TableEntry{TableId: selT, Match: []*p4v1.FieldMatch{lpm(1, 8, 10, 0, 0, 0)},
		Action: &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileActionSet{ActionProfileActionSet: set}}}
	r.mustWrite(mod(oneShot))
	if seen := spreadOver(); len(seen) != 2 || seen[11] == 0 || seen[12] == 0 {
		t.Errorf("64 flows over a one-shot set to 11 and 12 went to %v", seen)
	}
	if got := r.read(&p4v1.TableEntry{TableId: selT}); len(got) != 1 || !proto.Equal(got[0].GetTableEntry(), oneShot) {
		t.Errorf("one-shot entry read back %v, want %v", got, oneShot)
	}
	if got := r.read(&p4v1.ActionProfileGroup{ActionProfileId: spread}); len(got) != 1 {
		t.Errorf("the one-shot's hidden group reads back: %v (want only the controller's group)", got)
	}
	r.mustWrite(del(g), del(s1), del(s2)) // no longer in use
}

// Counters, direct counters, meters, direct meters and registers: what
// frames do reads back; MODIFY sets cells, one or all; a cell past the
// end is OUT_OF_RANGE; INSERT of a cell is INVALID_ARGUMENT.
func TestExterns(t *testing.T) {
	r := newRig(t)
	r.allowData()
	frames := r.id("IngressR.port_frames")
	bigT, fwd := r.id("IngressR.big_t"), r.id("IngressR.forward_counted")

	for range 3 {
		r.send(1, dataFrame(1, 0, 0, 0))
	}
	got := r.read(&p4v1.CounterEntry{CounterId: frames, Index: &p4v1.Index{Index: 1}})
	if len(got) != 1 || got[0].GetCounterEntry().Data.PacketCount != 3 || got[0].GetCounterEntry().Data.ByteCount != 180 {
		t.Errorf("port_frames[1] after three 60-byte frames: %v", got)
	}
	if all := r.read(&p4v1.CounterEntry{CounterId: frames}); len(all) != 32 {
		t.Errorf("a wildcard read of port_frames gave %d cells, want 32", len(all))
	}
	r.mustWrite(mod(&p4v1.CounterEntry{CounterId: frames, Index: &p4v1.Index{Index: 1}, Data: &p4v1.CounterData{PacketCount: 100}}))
	r.send(1, dataFrame(1, 0, 0, 0))
	if got := r.read(&p4v1.CounterEntry{CounterId: frames, Index: &p4v1.Index{Index: 1}}); got[0].GetCounterEntry().Data.PacketCount != 101 {
		t.Errorf("port_frames[1] set to 100, one more frame: %v", got)
	}
	if got := r.write(mod(&p4v1.CounterEntry{CounterId: frames, Index: &p4v1.Index{Index: 32}}),
		ins(&p4v1.CounterEntry{CounterId: frames, Index: &p4v1.Index{Index: 1}})); got[0] != codes.OutOfRange || got[1] != codes.InvalidArgument {
		t.Errorf("counter cell 32 of 32, INSERT of a cell: %v, want [OutOfRange InvalidArgument]", got)
	}

	// Direct counter: per entry, read by the entry's key or all at once.
	key := func(k byte) *p4v1.TableEntry {
		return &p4v1.TableEntry{TableId: bigT, Match: []*p4v1.FieldMatch{exact(1, k)}}
	}
	for k := byte(1); k <= 2; k++ {
		e := key(k)
		e.Action = action(fwd, []byte{3})
		r.mustWrite(ins(e))
	}
	for range 2 {
		r.send(1, dataFrame(1, 2, 0, 1))
	}
	got = r.read(&p4v1.DirectCounterEntry{TableEntry: key(2)})
	if len(got) != 1 || got[0].GetDirectCounterEntry().Data.PacketCount != 2 {
		t.Errorf("big_hits of key 2 after two hits: %v", got)
	}
	if all := r.read(&p4v1.DirectCounterEntry{TableEntry: &p4v1.TableEntry{TableId: bigT}}); len(all) != 2 {
		t.Errorf("a wildcard read of big_hits gave %d entries, want 2", len(all))
	}
	r.mustWrite(mod(&p4v1.DirectCounterEntry{TableEntry: key(2), Data: &p4v1.CounterData{}}))
	if got := r.read(&p4v1.TableEntry{TableId: bigT, Match: key(2).Match, CounterData: &p4v1.CounterData{}}); got[0].GetTableEntry().GetCounterData().GetPacketCount() != 0 {
		t.Errorf("big_hits of key 2 after a reset, read with its entry: %v", got)
	}
	if got := r.write(mod(&p4v1.DirectCounterEntry{TableEntry: key(9)})); got[0] != codes.NotFound {
		t.Errorf("direct counter of a missing entry: %v, want NotFound", got[0])
	}

	// Meters: green until configured, then red past the burst.
	colours := func(frames int, port uint16) (direct, indirect []byte) {
		for range frames {
			out := r.send(1, dataFrame(1, 0, port, 4))
			if len(out) != 1 {
				t.Fatalf("meter frame out %v", ports(out))
			}
			d := data(t, out[0])
			direct, indirect = append(direct, d[offColorDirect]), append(indirect, d[offColorIndirect])
		}
		return
	}
	if _, ind := colours(3, 5); !bytes.Equal(ind, []byte{0, 0, 0}) {
		t.Errorf("an unconfigured meter coloured %v, want all green", ind)
	}
	meter := &p4v1.MeterEntry{MeterId: r.id("IngressR.port_meter"), Index: &p4v1.Index{Index: 5},
		Config: &p4v1.MeterConfig{Cir: 1, Cburst: 1, Pir: 1, Pburst: 1}}
	r.mustWrite(mod(meter))
	if _, ind := colours(3, 5); !bytes.Equal(ind, []byte{0, 2, 2}) {
		t.Errorf("a meter of 1 packet/s, burst 1, coloured %v, want green, red, red", ind)
	}
	if got := r.read(&p4v1.MeterEntry{MeterId: meter.MeterId, Index: &p4v1.Index{Index: 5}}); len(got) != 1 || !proto.Equal(got[0].GetMeterEntry().Config, meter.Config) {
		t.Errorf("meter read back %v, want %v", got, meter.Config)
	}
	metered := &p4v1.TableEntry{TableId: r.id("IngressR.metered_t"), Priority: 1,
		Match: []*p4v1.FieldMatch{ternary(1, []byte{6}, []byte{0xff})}, Action: action(r.id("IngressR.colour"))}
	r.mustWrite(ins(metered))
	dm := &p4v1.DirectMeterEntry{TableEntry: &p4v1.TableEntry{TableId: metered.TableId, Priority: 1, Match: metered.Match},
		Config: &p4v1.MeterConfig{Cir: 1, Cburst: 100, Pir: 1, Pburst: 100}}
	r.mustWrite(mod(dm))
	if dir, _ := colours(2, 6); !bytes.Equal(dir, []byte{0, 2}) {
		t.Errorf("a direct byte meter of burst 100 coloured two 60-byte frames %v, want green, red", dir)
	}
	if got := r.read(&p4v1.DirectMeterEntry{TableEntry: &p4v1.TableEntry{TableId: metered.TableId}}); len(got) != 1 || !proto.Equal(got[0].GetDirectMeterEntry().Config, dm.Config) {
		t.Errorf("direct meter read back %v, want %v", got, dm.Config)
	}

	// Registers: MODIFY and read by P4Runtime, written and read by frames.
	reg := r.id("IngressR.last_key")
	r.mustWrite(mod(&p4v1.RegisterEntry{RegisterId: reg, Index: &p4v1.Index{Index: 3}, Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{0, 0, 0x12, 0x34}}}}))
	got = r.read(&p4v1.RegisterEntry{RegisterId: reg, Index: &p4v1.Index{Index: 3}})
	if len(got) != 1 || !bytes.Equal(got[0].GetRegisterEntry().Data.GetBitstring(), []byte{0x12, 0x34}) {
		t.Errorf("register cell 3 set to 0x1234 reads back %v (canonical: 12 34)", got)
	}
	out := r.send(1, dataFrame(1, 0xabcd, 3, 5))
	if len(out) != 1 || binary.BigEndian.Uint32(data(t, out[0])[offReg:]) != 0xabcd {
		t.Fatalf("register frame: %v", out)
	}
	if got = r.read(&p4v1.RegisterEntry{RegisterId: reg, Index: &p4v1.Index{Index: 3}}); !bytes.Equal(got[0].GetRegisterEntry().Data.GetBitstring(), []byte{0xab, 0xcd}) {
		t.Errorf("register cell 3 after a frame wrote 0xabcd: %v", got)
	}
	if got := r.write(mod(&p4v1.RegisterEntry{RegisterId: reg, Index: &p4v1.Index{Index: 3}, Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{1, 0, 0, 0, 0}}}})); got[0] != codes.OutOfRange {
		t.Errorf("a 33-bit value in a 32-bit register: %v, want OutOfRange", got[0])
	}
}

// The packet replication engine: clone sessions and multicast groups
// written, read back, modified and deleted, and frames copied as they say.
func TestReplication(t *testing.T) {
	r := newRig(t)
	r.allowData()
	session := &p4v1.CloneSessionEntry{SessionId: 5, Replicas: []*p4v1.Replica{{EgressPort: 3, Instance: 1}}}
	group := &p4v1.MulticastGroupEntry{MulticastGroupId: 9, Replicas: []*p4v1.Replica{{EgressPort: 4, Instance: 1}, {EgressPort: 6, Instance: 2}}}
	r.mustWrite(ins(session), ins(group))
	out := r.send(1, dataFrame(1, 5, 0, 8))
	if !slices.Equal(ports(out), []int{2, 3}) && !slices.Equal(ports(out), []int{3, 2}) {
		t.Fatalf("cloned to session 5: out %v, want the original to 2 and a copy to 3", ports(out))
	}
	for _, s := range out {
		if copied := data(t, s)[offCopy]; copied != map[int]byte{2: 0, 3: 1}[s.port] {
			t.Errorf("frame to %d: copy mark %d", s.port, copied)
		}
	}
	out = r.send(1, dataFrame(1, 9, 0, 9))
	if got := ports(out); !slices.Equal(got, []int{4, 6}) {
		t.Errorf("multicast to group 9: out %v, want [4 6]", got)
	}
	if got := r.read(&p4v1.CloneSessionEntry{}); len(got) != 1 || !proto.Equal(got[0].GetPacketReplicationEngineEntry().GetCloneSessionEntry(), session) {
		t.Errorf("clone sessions read back %v, want %v", got, session)
	}
	if got := r.read(&p4v1.MulticastGroupEntry{MulticastGroupId: 9}); len(got) != 1 || !proto.Equal(got[0].GetPacketReplicationEngineEntry().GetMulticastGroupEntry(), group) {
		t.Errorf("multicast group read back %v, want %v", got, group)
	}
	group.Replicas = group.Replicas[:1]
	r.mustWrite(mod(group))
	if got := ports(r.send(1, dataFrame(1, 9, 0, 9))); !slices.Equal(got, []int{4}) {
		t.Errorf("group 9 cut to port 4: out %v", got)
	}
	if got := r.write(ins(group), del(&p4v1.MulticastGroupEntry{MulticastGroupId: 8}),
		ins(&p4v1.MulticastGroupEntry{MulticastGroupId: 1, Replicas: []*p4v1.Replica{{EgressPort: 511}}})); got[0] != codes.AlreadyExists || got[1] != codes.NotFound || got[2] != codes.InvalidArgument {
		t.Errorf("a group twice, a missing group, the drop port as a replica: %v, want [AlreadyExists NotFound InvalidArgument]", got)
	}
	r.mustWrite(del(session), del(group))
	if got := ports(r.send(1, dataFrame(1, 9, 0, 9))); len(got) != 0 {
		t.Errorf("group 9 deleted: out %v", got)
	}
	if got := r.read(&p4v1.CloneSessionEntry{}, &p4v1.MulticastGroupEntry{}); len(got) != 0 {
		t.Errorf("after deleting both: %v", got)
	}
}

// Packet I/O: a controller's packet-out leaves by the port its
// packet_out metadata names, the header gone; a frame the program sends
// to the CPU port arrives at the primary as a packet-in with the
// packet_in metadata unpacked, and not at a backup.
func TestPacketIO(t *testing.T) {
	r := newRig(t)
	r.allowData()
	backup := openStream(t, r.c)
	backup.send(nil) // no election ID: a backup
	if code, _ := backup.arbitration(); code != codes.AlreadyExists {
		t.Fatalf("second controller: %v, want AlreadyExists (backup)", code)
	}
	payload := dataFrame(1, 0, 0, 0)
	po := &p4v1.PacketOut{Payload: payload, Metadata: []*p4v1.PacketMetadata{
		{MetadataId: 1, Value: []byte{9}}, {MetadataId: 2, Value: []byte{0}}, {MetadataId: 3, Value: []byte{0xbe, 0xef}}}}
	r.mu.Lock()
	r.out = nil
	r.mu.Unlock()
	if err := r.ct.stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Packet{Packet: po}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		out := r.out
		r.mu.Unlock()
		if len(out) > 0 {
			if out[0].port != 9 || !bytes.Equal(out[0].frame, payload) {
				t.Errorf("packet-out to 9 left by %d as % x, want the payload unchanged", out[0].port, out[0].frame)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the packet-out never left the switch")
		}
		time.Sleep(5 * time.Millisecond)
	}
	bad := &p4v1.PacketOut{Payload: payload, Metadata: []*p4v1.PacketMetadata{{MetadataId: 1, Value: []byte{2, 0}}}}
	if err := r.ct.stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Packet{Packet: bad}}); err != nil {
		t.Fatal(err)
	}
	if m := r.ct.next(func(m *p4v1.StreamMessageResponse) bool { return m.GetError() != nil }, 5*time.Second); m == nil ||
		codes.Code(m.GetError().CanonicalCode) != codes.OutOfRange || m.GetError().GetPacketOut() == nil {
		t.Errorf("a 10-bit egress_port: stream error %v, want OutOfRange naming the packet-out", m)
	}

	r.send(7, dataFrame(1, 0, 0, 7))
	m := r.ct.next(func(m *p4v1.StreamMessageResponse) bool { return m.GetPacket() != nil }, 5*time.Second)
	if m == nil {
		t.Fatal("no packet-in")
	}
	in := m.GetPacket()
	wantMD := []*p4v1.PacketMetadata{{MetadataId: 1, Value: []byte{7}}, {MetadataId: 2, Value: []byte{0}}, {MetadataId: 3, Value: []byte{7}}}
	if len(in.Metadata) != len(wantMD) {
		t.Fatalf("packet-in metadata %v, want %v", in.Metadata, wantMD)
	}
	for i := range wantMD {
		if !proto.Equal(in.Metadata[i], wantMD[i]) {
			t.Errorf("packet-in metadata %d: %v, want %v", i, in.Metadata[i], wantMD[i])
		}
	}
	if len(in.Payload) != 60 || !bytes.Equal(in.Payload[:14], dataFrame(1, 0, 0, 7)[:14]) {
		t.Errorf("packet-in payload % x: want the frame without the packet_in header", in.Payload)
	}
	if m := backup.next(func(m *p4v1.StreamMessageResponse) bool { return m.GetPacket() != nil }, 200*time.Millisecond); m != nil {
		t.Errorf("a backup got a packet-in: %v", m)
	}
}

// Digests: nothing comes before a digest config; with max_list_size 2
// two frames make one list; an unacknowledged digest is not sent again
// within ack_timeout; max_timeout_ns sends a list that is not full; a
// backup gets none.
func TestDigestLists(t *testing.T) {
	r := newRig(t)
	r.allowData()
	learn := r.id("learn_t")
	backup := openStream(t, r.c)
	backup.send(nil)
	backup.arbitration()
	isDigest := func(m *p4v1.StreamMessageResponse) bool { return m.GetDigest() != nil }
	r.send(1, dataFrame(1, 0, 0, 6))
	if m := r.ct.next(isDigest, 200*time.Millisecond); m != nil {
		t.Fatalf("a digest list before any config: %v", m)
	}
	cfg := &p4v1.DigestEntry{DigestId: learn, Config: &p4v1.DigestEntry_Config{MaxTimeoutNs: int64(time.Hour), MaxListSize: 2, AckTimeoutNs: int64(time.Hour)}}
	r.mustWrite(ins(cfg))
	if got := r.read(&p4v1.DigestEntry{DigestId: learn}); len(got) != 1 || !proto.Equal(got[0].GetDigestEntry(), cfg) {
		t.Errorf("digest config read back %v, want %v", got, cfg)
	}
	r.send(1, dataFrame(1, 0, 0, 6))
	r.send(2, dataFrame(2, 0, 0, 6))
	m := r.ct.next(isDigest, 5*time.Second)
	if m == nil {
		t.Fatal("no digest list after two frames with max_list_size 2")
	}
	list := m.GetDigest()
	if list.DigestId != learn || len(list.Data) != 2 {
		t.Fatalf("digest list %v: want two of learn_t", list)
	}
	first := list.Data[0].GetStruct().GetMembers()
	if len(first) != 2 || !bytes.Equal(first[0].GetBitstring(), []byte{2, 0, 0, 0, 0, 1}) || !bytes.Equal(first[1].GetBitstring(), []byte{1}) {
		t.Errorf("first digest %v, want {02:00:00:00:00:01, port 1}", first)
	}
	// Not acknowledged: the same two are held back for the ack timeout.
	r.send(1, dataFrame(1, 0, 0, 6))
	r.send(2, dataFrame(2, 0, 0, 6))
	if m := r.ct.next(isDigest, 200*time.Millisecond); m != nil {
		t.Errorf("unacknowledged digests sent again: %v", m)
	}
	if err := r.ct.stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_DigestAck{
		DigestAck: &p4v1.DigestListAck{DigestId: learn, ListId: list.ListId}}}); err != nil {
		t.Fatal(err)
	}
	// Short lists go after max_timeout_ns.
	cfg.Config.MaxTimeoutNs, cfg.Config.MaxListSize = int64(50*time.Millisecond), 100
	r.mustWrite(mod(cfg))
	time.Sleep(50 * time.Millisecond) // the ack arrives on the stream
	r.send(1, dataFrame(1, 0, 0, 6))
	if m := r.ct.next(isDigest, 5*time.Second); m == nil || len(m.GetDigest().Data) != 1 {
		t.Errorf("one acknowledged digest with max_timeout_ns 50 ms: %v, want a list of one", m)
	}
	if m := backup.next(isDigest, 100*time.Millisecond); m != nil {
		t.Errorf("a backup got a digest list: %v", m)
	}
}
