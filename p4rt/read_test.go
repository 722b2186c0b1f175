package p4rt_test

import (
	"context"
	"io"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// readCode is a Read's code and how many entities it returned.
func readCode(c p4v1.P4RuntimeClient, ms ...proto.Message) (codes.Code, int) {
	var es []*p4v1.Entity
	for _, m := range ms {
		es = append(es, entity(m))
	}
	rc, err := c.Read(context.Background(), &p4v1.ReadRequest{DeviceId: device, Entities: es})
	n := 0
	for err == nil {
		var r *p4v1.ReadResponse
		if r, err = rc.Recv(); err == nil {
			n += len(r.Entities)
		}
	}
	if err == io.EOF {
		err = nil
	}
	return status.Code(err), n
}

// filterCase is a read and what it must return: a code and, if OK, a
// count of entities.
type filterCase struct {
	name string
	read proto.Message
	code codes.Code
	n    int
}

func checkReads(t *testing.T, c p4v1.P4RuntimeClient, cases []filterCase) {
	t.Helper()
	for _, k := range cases {
		code, n := readCode(c, k.read)
		if code != k.code || code == codes.OK && n != k.n {
			t.Errorf("%s: %v, %d entities; want %v, %d", k.name, code, n, k.code, k.n)
		}
	}
}

// Every filter of the spec's wildcard reads of table entries: table ID
// (0: all tables), match (exact; with priority 0 on a table with
// priorities, that match at any priority), action ID, priority,
// controller_metadata, metadata, is_default_action, each alone and
// together; and the reads the spec rules out.
func TestReadTableFilters(t *testing.T) {
	p := loadProgram(t, "tables")
	_, c := serve(t)
	ct := primary(t, c, p)
	exactT, ternT, constT := id(t, p.info, "IngressT.exact_t"), id(t, p.info, "IngressT.tern_t"), id(t, p.info, "IngressT.const_t")
	setExact, noAction := id(t, p.info, "IngressT.set_exact"), id(t, p.info, "NoAction")
	setTern, otherTern := id(t, p.info, "IngressT.set_tern"), id(t, p.info, "IngressT.other_tern")
	ex := func(k byte, a *p4v1.TableAction) *p4v1.TableEntry {
		return &p4v1.TableEntry{TableId: exactT, Match: []*p4v1.FieldMatch{exact(1, k), exact(2, k)}, Action: a}
	}
	tenNet := []*p4v1.FieldMatch{ternary(1, []byte{10, 0, 0, 0}, []byte{255, 0, 0, 0})}
	e1 := ex(1, action(setExact, []byte{1}))
	e1.Metadata = []byte("cookie-a")
	e2 := ex(2, action(noAction))
	e2.ControllerMetadata = 7 //lint:ignore SA1019 a filter the spec still lists
	e3 := ex(3, action(setExact, []byte{3}))
	tA := &p4v1.TableEntry{TableId: ternT, Match: tenNet, Priority: 10, Action: action(setTern, []byte{1})}
	tB := &p4v1.TableEntry{TableId: ternT, Match: tenNet, Priority: 20, Action: action(otherTern, []byte{2})}
	tC := &p4v1.TableEntry{TableId: ternT, Match: []*p4v1.FieldMatch{ternary(2, []byte{0, 80}, []byte{255, 255})}, Priority: 10, Action: action(setTern, []byte{3})}
	for i, code := range write(t, c, ct, ins(e1), ins(e2), ins(e3), ins(tA), ins(tB), ins(tC)) {
		if code != codes.OK {
			t.Fatalf("update %d: %v", i, code)
		}
	}
	//lint:ignore SA1019 as above
	if got := readAll(t, c, entity(&p4v1.TableEntry{TableId: exactT, ControllerMetadata: 7})); len(got) != 1 || !proto.Equal(got[0].GetTableEntry(), e2) {
		t.Errorf("controller_metadata read back: %v, want %v", got, e2)
	}
	withAction := func(te *p4v1.TableEntry, a uint32) *p4v1.TableEntry {
		te.Action = action(a)
		return te
	}
	member := &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileMemberId{ActionProfileMemberId: 1}}
	checkReads(t, c, []filterCase{
		{"table 0: every entry of every table, const ones too", &p4v1.TableEntry{}, codes.OK, 6 + 3},
		{"one table", &p4v1.TableEntry{TableId: exactT}, codes.OK, 3},
		{"a match: that entry", &p4v1.TableEntry{TableId: exactT, Match: e1.Match}, codes.OK, 1},
		{"a match no entry has", &p4v1.TableEntry{TableId: exactT, Match: ex(9, nil).Match}, codes.OK, 0},
		{"action ID", withAction(&p4v1.TableEntry{TableId: exactT}, setExact), codes.OK, 2},
		{"action ID NoAction", withAction(&p4v1.TableEntry{TableId: exactT}, noAction), codes.OK, 1},
		{"action ID with parameters: the parameters are no filter", &p4v1.TableEntry{TableId: exactT, Action: action(setExact, []byte{9})}, codes.OK, 2},
		{"action ID on every table", withAction(&p4v1.TableEntry{}, setTern), codes.OK, 2},
		{"priority, no match", &p4v1.TableEntry{TableId: ternT, Priority: 10}, codes.OK, 2},
		{"priority on every table", &p4v1.TableEntry{Priority: 10}, codes.OK, 2},
		{"priority on a table without priorities: nothing, no error", &p4v1.TableEntry{TableId: exactT, Priority: 10}, codes.OK, 0},
		{"a match, priority 0: that match at every priority", &p4v1.TableEntry{TableId: ternT, Match: tenNet}, codes.OK, 2},
		{"a match and a priority", &p4v1.TableEntry{TableId: ternT, Match: tenNet, Priority: 20}, codes.OK, 1},
		{"a match and an action ID", withAction(&p4v1.TableEntry{TableId: ternT, Match: tenNet}, otherTern), codes.OK, 1},
		{"priority and action ID", withAction(&p4v1.TableEntry{TableId: ternT, Priority: 10}, otherTern), codes.OK, 0},
		{"metadata", &p4v1.TableEntry{TableId: exactT, Metadata: []byte("cookie-a")}, codes.OK, 1},
		{"metadata nobody wrote", &p4v1.TableEntry{TableId: exactT, Metadata: []byte("x")}, codes.OK, 0},
		{"controller_metadata", &p4v1.TableEntry{TableId: exactT, ControllerMetadata: 7}, codes.OK, 1}, //lint:ignore SA1019 as above
		{"is_default_action", &p4v1.TableEntry{TableId: ternT, IsDefaultAction: true}, codes.OK, 1},
		{"is_default_action with an action ID it does not run", withAction(&p4v1.TableEntry{TableId: ternT, IsDefaultAction: true}, setTern), codes.OK, 0},
		{"is_default_action on every table", &p4v1.TableEntry{IsDefaultAction: true}, codes.OK, 7},
		{"const entries by priority", &p4v1.TableEntry{TableId: constT, Priority: 2}, codes.OK, 1},
		{"table 0 with a match", &p4v1.TableEntry{Match: e1.Match}, codes.InvalidArgument, 0},
		{"is_default_action with a match", &p4v1.TableEntry{TableId: exactT, Match: e1.Match, IsDefaultAction: true}, codes.InvalidArgument, 0},
		{"is_default_action with a priority", &p4v1.TableEntry{TableId: ternT, Priority: 1, IsDefaultAction: true}, codes.InvalidArgument, 0},
		{"action filter by member", &p4v1.TableEntry{TableId: exactT, Action: member}, codes.InvalidArgument, 0},
		{"an action ID the P4Info lacks", withAction(&p4v1.TableEntry{TableId: exactT}, 12345), codes.InvalidArgument, 0},
		{"a match that is no key of the table", &p4v1.TableEntry{TableId: exactT, Match: []*p4v1.FieldMatch{exact(1, 1)}}, codes.InvalidArgument, 0},
		{"an unknown table", &p4v1.TableEntry{TableId: 12345}, codes.InvalidArgument, 0},
	})
}

// The wildcard reads of the other entities, as the spec gives them: ID
// 0 for every instance, an index or member unset for every cell or
// member; a direct counter of an entry that does not exist is
// NOT_FOUND; a table of members and groups cannot be filtered by
// action ID.
func TestReadWildcards(t *testing.T) {
	r := newRig(t)
	info := r.p.info
	cells := func(sizes ...int64) (n int) {
		for _, s := range sizes {
			n += int(s)
		}
		return n
	}
	var counterCells, meterCells, registerCells []int64
	for _, c := range info.Counters {
		counterCells = append(counterCells, c.Size)
	}
	for _, m := range info.Meters {
		meterCells = append(meterCells, m.Size)
	}
	for _, g := range info.Registers {
		registerCells = append(registerCells, int64(g.Size))
	}
	members, spread, fwd := r.id("IngressR.members"), r.id("IngressR.spread"), r.id("IngressR.forward")
	bigT, fwdCounted, profT := r.id("IngressR.big_t"), r.id("IngressR.forward_counted"), r.id("IngressR.prof_t")
	mem := func(prof, id uint32) *p4v1.ActionProfileMember {
		return &p4v1.ActionProfileMember{ActionProfileId: prof, MemberId: id, Action: &p4v1.Action{ActionId: fwd, Params: []*p4v1.Action_Param{{ParamId: 1, Value: []byte{byte(id)}}}}}
	}
	r.mustWrite(ins(mem(members, 1)), ins(mem(members, 2)), ins(mem(spread, 1)),
		ins(&p4v1.ActionProfileGroup{ActionProfileId: spread, GroupId: 4, MaxSize: 2, Members: []*p4v1.ActionProfileGroup_Member{{MemberId: 1, Weight: 1}}}),
		ins(&p4v1.TableEntry{TableId: bigT, Match: []*p4v1.FieldMatch{exact(1, 7)}, Action: action(fwdCounted, []byte{3})}),
		ins(&p4v1.TableEntry{TableId: bigT, Match: []*p4v1.FieldMatch{exact(1, 8)}, Action: action(fwdCounted, []byte{3})}),
		ins(&p4v1.CloneSessionEntry{SessionId: 5, Replicas: []*p4v1.Replica{{EgressPort: 3, Instance: 1}}}),
		ins(&p4v1.MulticastGroupEntry{MulticastGroupId: 9, Replicas: []*p4v1.Replica{{EgressPort: 4, Instance: 1}}}),
		ins(&p4v1.DigestEntry{DigestId: r.id("learn_t"), Config: &p4v1.DigestEntry_Config{}}))
	counter := info.Counters[0].Preamble.Id
	checkReads(t, r.c, []filterCase{
		{"counter ID 0: every cell of every counter", &p4v1.CounterEntry{}, codes.OK, cells(counterCells...)},
		{"a counter, no index: its cells", &p4v1.CounterEntry{CounterId: counter}, codes.OK, int(info.Counters[0].Size)},
		{"a counter cell", &p4v1.CounterEntry{CounterId: counter, Index: &p4v1.Index{Index: 1}}, codes.OK, 1},
		{"meter ID 0", &p4v1.MeterEntry{}, codes.OK, cells(meterCells...)},
		{"register ID 0", &p4v1.RegisterEntry{}, codes.OK, cells(registerCells...)},
		{"members of every profile", &p4v1.ActionProfileMember{}, codes.OK, 3},
		{"members of one profile", &p4v1.ActionProfileMember{ActionProfileId: members}, codes.OK, 2},
		{"one member", &p4v1.ActionProfileMember{ActionProfileId: members, MemberId: 2}, codes.OK, 1},
		{"groups of every profile", &p4v1.ActionProfileGroup{}, codes.OK, 1},
		{"groups of one selector", &p4v1.ActionProfileGroup{ActionProfileId: spread}, codes.OK, 1},
		{"direct counters of every table", &p4v1.DirectCounterEntry{}, codes.OK, 2},
		{"direct counters of a table", &p4v1.DirectCounterEntry{TableEntry: &p4v1.TableEntry{TableId: bigT}}, codes.OK, 2},
		{"the direct counter of an entry", &p4v1.DirectCounterEntry{TableEntry: &p4v1.TableEntry{TableId: bigT, Match: []*p4v1.FieldMatch{exact(1, 7)}}}, codes.OK, 1},
		{"the direct counter of a missing entry", &p4v1.DirectCounterEntry{TableEntry: &p4v1.TableEntry{TableId: bigT, Match: []*p4v1.FieldMatch{exact(1, 99)}}}, codes.NotFound, 0},
		{"clone session 0: every session", &p4v1.CloneSessionEntry{}, codes.OK, 1},
		{"a clone session that does not exist", &p4v1.CloneSessionEntry{SessionId: 77}, codes.NotFound, 0},
		{"multicast group 0: every group", &p4v1.MulticastGroupEntry{}, codes.OK, 1},
		{"digest 0: every configured digest", &p4v1.DigestEntry{}, codes.OK, 1},
		{"value set 0: every value set", &p4v1.ValueSetEntry{}, codes.OK, len(info.ValueSets)},
		{"a table of members filtered by action ID", &p4v1.TableEntry{TableId: profT, Action: action(fwd)}, codes.InvalidArgument, 0},
	})
}

// The codes the spec gives SetForwardingPipelineConfig and Write that
// the server once answered otherwise: a role no controller arbitrated
// for is NOT_FOUND (it was PERMISSION_DENIED); COMMIT with a config is
// INVALID_ARGUMENT (it was OK); RECONCILE_AND_COMMIT without a config,
// with one that cannot be realized, or one that cannot keep the state,
// is INVALID_ARGUMENT (the last was FAILED_PRECONDITION).
func TestPipelineAndWriteCodes(t *testing.T) {
	rt, tb := loadProgram(t, "runtime"), loadProgram(t, "tables")
	_, c := serve(t)
	ct := connect(t, c, 1)
	ct.arbitration()
	set := func(action p4v1.SetForwardingPipelineConfigRequest_Action, p *program, role string) error {
		req := &p4v1.SetForwardingPipelineConfigRequest{DeviceId: device, ElectionId: ct.election, Action: action, Role: role}
		if p != nil {
			req.Config = &p4v1.ForwardingPipelineConfig{P4Info: p.info, P4DeviceConfig: p.json}
		}
		_, err := c.SetForwardingPipelineConfig(context.Background(), req)
		return err
	}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, &rt, "no-such-role"); status.Code(err) != codes.NotFound {
		t.Errorf("a pipeline in a role nobody arbitrated for: %v, want NotFound", err)
	}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, &rt, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(context.Background(), &p4v1.WriteRequest{DeviceId: device, ElectionId: ct.election, Role: "no-such-role",
		Updates: []*p4v1.Update{ins(&p4v1.CloneSessionEntry{SessionId: 1})}}); status.Code(err) != codes.NotFound {
		t.Errorf("a write in a role nobody arbitrated for: %v, want NotFound", err)
	}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_SAVE, &rt, ""); err != nil {
		t.Fatal(err)
	}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_COMMIT, &rt, ""); status.Code(err) != codes.InvalidArgument {
		t.Errorf("COMMIT with a config: %v, want InvalidArgument", err)
	}
	if err := set(p4v1.SetForwardingPipelineConfigRequest_COMMIT, nil, ""); err != nil {
		t.Errorf("COMMIT of the saved pipeline: %v", err)
	}
	if got := write(t, c, ct, ins(&p4v1.TableEntry{TableId: id(t, rt.info, "IngressR.big_t"), Match: []*p4v1.FieldMatch{exact(1, 7)},
		Action: action(id(t, rt.info, "IngressR.forward_counted"), []byte{3})})); got[0] != codes.OK {
		t.Fatal(got)
	}
	broken := program{rt.info, []byte("{")}
	for name, k := range map[string]struct {
		p    *program
		want codes.Code
	}{
		"no config":                           {nil, codes.InvalidArgument},
		"a config that cannot be realized":    {&broken, codes.InvalidArgument},
		"a config that cannot keep the state": {&tb, codes.InvalidArgument},
		"a config that keeps it":              {&rt, codes.OK},
	} {
		if err := set(p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT, k.p, ""); status.Code(err) != k.want {
			t.Errorf("RECONCILE_AND_COMMIT, %s: %v, want %v", name, err, k.want)
		}
	}
	// A role that was arbitrated for is known: a non-primary's write
	// there is PERMISSION_DENIED.
	other := openStream(t, c)
	other.stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
		Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: device, Role: &p4v1.Role{Name: "monitor"}, ElectionId: &p4v1.Uint128{Low: 3}}}})
	other.arbitration()
	if _, err := c.Write(context.Background(), &p4v1.WriteRequest{DeviceId: device, ElectionId: &p4v1.Uint128{Low: 2}, Role: "monitor",
		Updates: []*p4v1.Update{ins(&p4v1.CloneSessionEntry{SessionId: 1})}}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a write in a known role by a non-primary: %v, want PermissionDenied", err)
	}
}
