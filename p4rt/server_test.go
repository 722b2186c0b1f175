package p4rt_test

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/p4rcm/p4rcm/p4rt"
	"github.com/p4rcm/p4rcm/v1model"
)

const device = 1

// program is a compiled test program of p4/testdata.
type program struct {
	info *p4configv1.P4Info
	json []byte
}

func loadProgram(t testing.TB, name string) program {
	t.Helper()
	p, err := readProgram(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readProgram is loadProgram for a test binary started as a helper
// process, which has no test to fail.
func readProgram(name string) (program, error) {
	text, err := os.ReadFile("../p4/testdata/build/" + name + ".p4info.txtpb")
	if err != nil {
		return program{}, err
	}
	info := &p4configv1.P4Info{}
	if err := (prototext.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(text, info); err != nil {
		return program{}, err
	}
	js, err := os.ReadFile("../p4/testdata/build/" + name + ".json")
	if err != nil {
		return program{}, err
	}
	return program{info, js}, nil
}

// serve starts a server with no pipeline on a loopback port.
func serve(t testing.TB) (*p4rt.Server, p4v1.P4RuntimeClient) {
	t.Helper()
	srv, c, _ := serveWith(t, p4rt.Config{DeviceID: device, Switch: v1model.Config{}})
	return srv, c
}

// controller is one controller's stream.
type controller struct {
	t        testing.TB
	stream   p4v1.P4Runtime_StreamChannelClient
	cancel   context.CancelFunc
	election *p4v1.Uint128
	msgs     chan *p4v1.StreamMessageResponse
}

func connect(t testing.TB, c p4v1.P4RuntimeClient, election uint64) *controller {
	t.Helper()
	ct := openStream(t, c)
	ct.arbitrate(election)
	return ct
}

// openStream opens a controller's stream and sends nothing on it.
func openStream(t testing.TB, c p4v1.P4RuntimeClient) *controller {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.StreamChannel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ct := &controller{t: t, stream: s, cancel: cancel,
		msgs: make(chan *p4v1.StreamMessageResponse, 100)}
	t.Cleanup(cancel)
	go func() {
		defer close(ct.msgs)
		for {
			m, err := s.Recv()
			if err != nil {
				return
			}
			ct.msgs <- m
		}
	}()
	return ct
}

func (c *controller) arbitrate(election uint64) {
	c.election = &p4v1.Uint128{Low: election}
	// io.EOF: the server has already ended the stream (a full server
	// refusing it, say), whose status Recv gives; the test sees the end
	// on msgs.
	if err := c.stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
		Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: device, ElectionId: c.election}}}); err != nil && !errors.Is(err, io.EOF) {
		c.t.Fatal(err)
	}
}

// arbitration waits for the next arbitration notice: its status code and
// the election ID it names.
func (c *controller) arbitration() (codes.Code, uint64) {
	c.t.Helper()
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				c.t.Fatal("stream ended")
			}
			if a := m.GetArbitration(); a != nil {
				return codes.Code(a.Status.Code), a.GetElectionId().GetLow()
			}
		case <-time.After(5 * time.Second):
			c.t.Fatal("no arbitration notice")
		}
	}
}

func setPipeline(t testing.TB, c p4v1.P4RuntimeClient, ct *controller, p program, cookie uint64) {
	t.Helper()
	_, err := c.SetForwardingPipelineConfig(context.Background(), &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId: device, ElectionId: ct.election, Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config: &p4v1.ForwardingPipelineConfig{P4Info: p.info, P4DeviceConfig: p.json, Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: cookie}}})
	if err != nil {
		t.Fatal(err)
	}
}

// primary connects to c as the primary controller (election ID 1) and
// sets p as the pipeline (cookie 1): where most tests start.
func primary(t testing.TB, c p4v1.P4RuntimeClient, p program) *controller {
	t.Helper()
	ct := connect(t, c, 1)
	ct.arbitration()
	setPipeline(t, c, ct, p, 1)
	return ct
}

// write sends updates and returns each one's code.
func write(t testing.TB, c p4v1.P4RuntimeClient, ct *controller, updates ...*p4v1.Update) []codes.Code {
	t.Helper()
	var out []codes.Code
	for _, st := range writeStatus(c, ct, updates...) {
		out = append(out, st.Code())
	}
	return out
}

// writeStatus sends updates and returns each one's status: the
// p4.v1.Error a batch that failed carries for it, or the RPC's status.
func writeStatus(c p4v1.P4RuntimeClient, ct *controller, updates ...*p4v1.Update) []*status.Status {
	_, err := c.Write(context.Background(), &p4v1.WriteRequest{DeviceId: device, ElectionId: ct.election, Updates: updates})
	out := make([]*status.Status, len(updates))
	st := status.Convert(err)
	for i := range out {
		out[i] = st
		if details := st.Details(); st.Code() == codes.Unknown && i < len(details) {
			if e, ok := details[i].(*p4v1.Error); ok {
				out[i] = status.New(codes.Code(e.CanonicalCode), e.Message)
			}
		}
	}
	return out
}

// readAll reads every table entry, default entry and PRE entry.
func readAll(t testing.TB, c p4v1.P4RuntimeClient, entities ...*p4v1.Entity) []*p4v1.Entity {
	t.Helper()
	if len(entities) == 0 {
		entities = []*p4v1.Entity{
			{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{}}},
			{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{IsDefaultAction: true}}},
			{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{
				Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: &p4v1.CloneSessionEntry{}}}}},
		}
	}
	rc, err := c.Read(context.Background(), &p4v1.ReadRequest{DeviceId: device, Entities: entities})
	if err != nil {
		t.Fatal(err)
	}
	var out []*p4v1.Entity
	for {
		r, err := rc.Recv()
		if err != nil {
			if status.Code(err) != codes.OK && err.Error() != "EOF" {
				t.Fatal(err)
			}
			return out
		}
		out = append(out, r.Entities...)
	}
}

func exact(fid uint32, v ...byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: fid, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: v}}}
}

func lpm(fid uint32, pl int32, v ...byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: fid, FieldMatchType: &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: v, PrefixLen: pl}}}
}

func ternary(fid uint32, v, m []byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: fid, FieldMatchType: &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: v, Mask: m}}}
}

func rng(fid uint32, lo, hi []byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: fid, FieldMatchType: &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: lo, High: hi}}}
}

func action(aid uint32, params ...[]byte) *p4v1.TableAction {
	a := &p4v1.Action{ActionId: aid}
	for i, p := range params {
		a.Params = append(a.Params, &p4v1.Action_Param{ParamId: uint32(i + 1), Value: p})
	}
	return &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
}

func update(typ p4v1.Update_Type, te *p4v1.TableEntry) *p4v1.Update {
	return &p4v1.Update{Type: typ, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}}
}

// badUpdate is an update the server must refuse, and the code it must
// refuse it with.
type badUpdate struct {
	name string
	u    *p4v1.Update
	want codes.Code
}

// tablesIDs are tables.p4's P4Info IDs the table tests use.
type tablesIDs struct {
	exactT, lpmT, ternT, rangeT, constT uint32
	setExact, setLPM, setTern, setRange uint32
}

// tablesCases are updates to tables.p4 that must hold and updates that
// must be refused, one for each rule of the spec's validation.
func tablesCases(t testing.TB, p program) (ids tablesIDs, good []*p4v1.Update, bad []badUpdate) {
	t.Helper()
	ids.exactT, ids.lpmT, ids.ternT, ids.rangeT, ids.constT = id(t, p.info, "IngressT.exact_t"), id(t, p.info, "IngressT.lpm_t"),
		id(t, p.info, "IngressT.tern_t"), id(t, p.info, "IngressT.range_t"), id(t, p.info, "IngressT.const_t")
	ids.setExact, ids.setLPM, ids.setTern, ids.setRange = id(t, p.info, "IngressT.set_exact"), id(t, p.info, "IngressT.set_lpm"),
		id(t, p.info, "IngressT.set_tern"), id(t, p.info, "IngressT.set_range")

	good = []*p4v1.Update{
		update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 17), exact(2, 0, 2)},
			Action: action(ids.setExact, []byte{0, 0, 0, 5})}),
		update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.lpmT, Match: []*p4v1.FieldMatch{lpm(1, 24, 10, 0, 1, 0)},
			Action: action(ids.setLPM, []byte{9})}),
		update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.ternT, Priority: 10,
			Match: []*p4v1.FieldMatch{ternary(1, []byte{10, 0, 0, 0}, []byte{255, 0, 0, 0})}, Action: action(ids.setTern, []byte{1})}),
		update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.rangeT, Priority: 1,
			Match: []*p4v1.FieldMatch{rng(1, []byte{1}, []byte{4, 0}), exact(2, 6)}, Action: action(ids.setRange, []byte{2})}),
	}
	bad = []badUpdate{
		{"duplicate", good[0], codes.AlreadyExists},
		{"unknown table", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: 99, Action: action(ids.setExact, []byte{1})}), codes.InvalidArgument},
		{"unknown field", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 1), exact(9, 1)}, Action: action(ids.setExact, []byte{1})}), codes.InvalidArgument},
		{"missing exact field", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 1)}, Action: action(ids.setExact, []byte{1})}), codes.InvalidArgument},
		{"value too wide", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 1, 0), exact(2, 1)}, Action: action(ids.setExact, []byte{1})}), codes.OutOfRange},
		{"empty value", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1), exact(2, 1)}, Action: action(ids.setExact, []byte{1})}), codes.OutOfRange},
		{"bits past the prefix", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.lpmT, Match: []*p4v1.FieldMatch{lpm(1, 8, 10, 0, 0, 1)}, Action: action(ids.setLPM, []byte{1})}), codes.InvalidArgument},
		{"prefix 0", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.lpmT, Match: []*p4v1.FieldMatch{lpm(1, 0, 0)}, Action: action(ids.setLPM, []byte{1})}), codes.InvalidArgument},
		{"prefix too long", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.lpmT, Match: []*p4v1.FieldMatch{lpm(1, 33, 10)}, Action: action(ids.setLPM, []byte{1})}), codes.InvalidArgument},
		{"value outside mask", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.ternT, Priority: 1, Match: []*p4v1.FieldMatch{ternary(1, []byte{1, 1}, []byte{1, 0})}, Action: action(ids.setTern, []byte{1})}), codes.InvalidArgument},
		{"no priority on ternary", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.ternT, Match: []*p4v1.FieldMatch{ternary(1, []byte{1}, []byte{1})}, Action: action(ids.setTern, []byte{1})}), codes.InvalidArgument},
		{"priority on exact", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT, Priority: 3, Match: []*p4v1.FieldMatch{exact(1, 3), exact(2, 3)}, Action: action(ids.setExact, []byte{1})}), codes.InvalidArgument},
		{"range low > high", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.rangeT, Priority: 1, Match: []*p4v1.FieldMatch{rng(1, []byte{9}, []byte{3}), exact(2, 6)}, Action: action(ids.setRange, []byte{1})}), codes.InvalidArgument},
		{"action not the table's", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 4), exact(2, 4)}, Action: action(ids.setLPM, []byte{1})}), codes.InvalidArgument},
		{"missing parameter", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 4), exact(2, 4)}, Action: action(ids.setExact)}), codes.InvalidArgument},
		{"extra parameter", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 4), exact(2, 4)}, Action: action(ids.setExact, []byte{1}, []byte{2})}), codes.InvalidArgument},
		{"parameter too wide", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 4), exact(2, 4)}, Action: action(ids.setExact, []byte{1, 0, 0, 0, 0})}), codes.OutOfRange},
		{"no action", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 4), exact(2, 4)}}), codes.InvalidArgument},
		{"modify missing", update(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 4), exact(2, 4)}, Action: action(ids.setExact, []byte{1})}), codes.NotFound},
		{"delete missing", update(p4v1.Update_DELETE, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 4), exact(2, 4)}}), codes.NotFound},
		{"insert into a const table", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.constT, Match: []*p4v1.FieldMatch{exact(1, 4)}, Action: action(ids.setExact, []byte{1})}), codes.PermissionDenied},
		{"insert a default", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT, IsDefaultAction: true, Action: action(ids.setExact, []byte{1})}), codes.InvalidArgument},
		{"const default", update(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: ids.constT, IsDefaultAction: true, Action: action(ids.setExact, []byte{1})}), codes.PermissionDenied},
	}
	return ids, good, bad
}

// Table entries over gRPC: what is written reads back the same, in
// canonical form (a padded value reads back short); MODIFY and DELETE
// find entries by key and priority; every invalid update gets the code
// the spec gives it, and none of them changes what a full read returns.
func TestTableEntries(t *testing.T) {
	p := loadProgram(t, "tables")
	_, c := serve(t)
	ct := connect(t, c, 1)
	if code, _ := ct.arbitration(); code != codes.OK {
		t.Fatalf("first controller: %v, want OK (primary)", code)
	}
	if got := write(t, c, ct, update(p4v1.Update_INSERT, &p4v1.TableEntry{})); got[0] != codes.FailedPrecondition {
		t.Errorf("write before a pipeline: %v, want FailedPrecondition", got[0])
	}
	setPipeline(t, c, ct, p, 7)
	ids, good, bad := tablesCases(t, p)
	for i, code := range write(t, c, ct, good...) {
		if code != codes.OK {
			t.Fatalf("update %d: %v", i, code)
		}
	}
	got := readAll(t, c, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: ids.exactT}}})
	want := &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 17), exact(2, 2)}, Action: action(ids.setExact, []byte{5})}
	if len(got) != 1 || !proto.Equal(got[0].GetTableEntry(), want) {
		t.Errorf("read back %v, want %v (canonical)", got, want)
	}

	before := readAll(t, c)
	for _, b := range bad {
		if got := write(t, c, ct, b.u); got[0] != b.want {
			t.Errorf("%s: %v, want %v", b.name, got[0], b.want)
		}
	}
	// In one batch: the good one applies, each bad one reports its own code.
	mixed := []*p4v1.Update{bad[0].u, update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: ids.exactT,
		Match: []*p4v1.FieldMatch{exact(1, 8), exact(2, 8)}, Action: action(ids.setExact, []byte{8})}), bad[4].u}
	if got := write(t, c, ct, mixed...); got[0] != codes.AlreadyExists || got[1] != codes.OK || got[2] != codes.OutOfRange {
		t.Errorf("mixed batch: %v, want [AlreadyExists OK OutOfRange]", got)
	}
	after := readAll(t, c)
	if len(after) != len(before)+1 {
		t.Errorf("a full read after the rejected updates has %d entities, %d before (+1 for the good one in the batch)", len(after), len(before))
	}
	for _, b := range before {
		found := false
		for _, a := range after {
			found = found || proto.Equal(a, b)
		}
		if !found {
			t.Errorf("entity changed or gone: %v", b)
		}
	}

	// MODIFY, then DELETE, by key.
	mod := update(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 17), exact(2, 2)}, Action: action(ids.setExact, []byte{6})})
	del := update(p4v1.Update_DELETE, &p4v1.TableEntry{TableId: ids.lpmT, Match: []*p4v1.FieldMatch{lpm(1, 24, 10, 0, 1, 0)}})
	if got := write(t, c, ct, mod, del); got[0] != codes.OK || got[1] != codes.OK {
		t.Fatalf("modify, delete: %v", got)
	}
	got = readAll(t, c, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: ids.exactT, Match: []*p4v1.FieldMatch{exact(1, 17), exact(2, 2)}}}})
	if len(got) != 1 || !proto.Equal(got[0].GetTableEntry().Action, action(ids.setExact, []byte{6})) {
		t.Errorf("after MODIFY: %v", got)
	}
	if got = readAll(t, c, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: ids.lpmT}}}); len(got) != 0 {
		t.Errorf("after DELETE: %v", got)
	}
	// The const table's entries read back; its default is its program's.
	got = readAll(t, c, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: ids.constT}}})
	if len(got) == 0 {
		t.Error("the const table's entries do not read back")
	}
}

// Arbitration between three controllers: the highest election ID is
// primary and the others hear ALREADY_EXISTS; a backup's write is
// PERMISSION_DENIED; when the primary leaves, the rest hear NOT_FOUND (no
// primary) until one comes back with an ID at least the highest seen; a
// duplicate election ID ends that stream with INVALID_ARGUMENT.
func TestArbitration(t *testing.T) {
	p := loadProgram(t, "tables")
	_, c := serve(t)
	a := connect(t, c, 10)
	if code, e := a.arbitration(); code != codes.OK || e != 10 {
		t.Fatalf("a: %v %d, want OK 10", code, e)
	}
	b := connect(t, c, 5)
	if code, e := b.arbitration(); code != codes.AlreadyExists || e != 10 {
		t.Fatalf("b: %v %d, want AlreadyExists 10", code, e)
	}
	setPipeline(t, c, a, p, 1)
	if got := write(t, c, b, update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: id(t, p.info, "IngressT.exact_t"),
		Match: []*p4v1.FieldMatch{exact(1, 1), exact(2, 1)}, Action: action(id(t, p.info, "IngressT.set_exact"), []byte{1})})); got[0] != codes.PermissionDenied {
		t.Errorf("backup's write: %v, want PermissionDenied", got[0])
	}
	cc := connect(t, c, 20)
	for _, x := range []*controller{cc, a, b} {
		code, e := x.arbitration()
		want := codes.AlreadyExists
		if x == cc {
			want = codes.OK
		}
		if code != want || e != 20 {
			t.Errorf("after c (20) joined: %v %d, want %v 20", code, e, want)
		}
	}
	cc.cancel() // the primary leaves
	for _, x := range []*controller{a, b} {
		if code, e := x.arbitration(); code != codes.NotFound || e != 20 {
			t.Errorf("after the primary left: %v %d, want NotFound 20", code, e)
		}
	}
	a.arbitrate(21)
	if code, _ := a.arbitration(); code != codes.OK {
		t.Errorf("a back with 21: %v, want OK", code)
	}
	if code, _ := b.arbitration(); code != codes.AlreadyExists {
		t.Errorf("b after a took over: %v, want AlreadyExists", code)
	}
	dup := connect(t, c, 5)
	for m := range dup.msgs {
		t.Errorf("a duplicate election ID got %v", m)
	}
	if _, err := dup.stream.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("duplicate election ID: %v, want InvalidArgument", err)
	}
}

// FuzzWrite throws arbitrary Write requests (bytes decoded as a
// WriteRequest, its device and election ID forced to the primary's) at
// a server holding entries, and a Read with the same entity as its
// filter: none may panic, and an update that fails changes nothing a
// full read returns.
func FuzzWrite(f *testing.F) {
	p := loadProgram(f, "tables")
	exactT, setExact := id(f, p.info, "IngressT.exact_t"), id(f, p.info, "IngressT.set_exact")
	seed := &p4v1.WriteRequest{Updates: []*p4v1.Update{update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: exactT,
		Match: []*p4v1.FieldMatch{exact(1, 3), exact(2, 3)}, Action: action(setExact, []byte{3})})}}
	b, _ := proto.Marshal(seed)
	f.Add(b)
	_, c := serve(f)
	ct := connect(f, c, 1)
	ct.arbitration()
	setPipeline(f, c, ct, p, 1)
	f.Fuzz(func(t *testing.T, data []byte) {
		req := &p4v1.WriteRequest{}
		if proto.Unmarshal(data, req) != nil || len(req.Updates) != 1 {
			return
		}
		req.DeviceId, req.ElectionId, req.Atomicity = device, ct.election, 0
		if e := req.Updates[0].Entity; e != nil {
			if rc, err := c.Read(context.Background(), &p4v1.ReadRequest{DeviceId: device, Entities: []*p4v1.Entity{e}}); err == nil {
				for err == nil {
					_, err = rc.Recv()
				}
			}
		}
		before := readAll(t, c)
		if _, err := c.Write(context.Background(), req); err == nil {
			return
		}
		after := readAll(t, c)
		if len(before) != len(after) {
			t.Fatalf("a failed write changed the entity count: %d -> %d (%v)", len(before), len(after), req)
		}
		for i := range before {
			if !proto.Equal(before[i], after[i]) {
				t.Fatalf("a failed write changed %v to %v (%v)", before[i], after[i], req)
			}
		}
	})
}

// A one-field exact table keeps a write's canonical match and action
// data in the stored entry's own allocation, and a DELETE checks its key
// in a room the pipeline reuses: entries written, modified and deleted
// with values at the full width read back canonical and each its own.
func TestOneFieldEntriesCanonical(t *testing.T) {
	p := loadProgram(t, "runtime")
	_, c := serve(t)
	ct := primary(t, c, p)
	bigT, fwd := id(t, p.info, "IngressR.big_t"), id(t, p.info, "IngressR.forward_counted")
	full := func(k byte) []*p4v1.FieldMatch { return []*p4v1.FieldMatch{exact(1, 0, 0, 0, k)} }
	write := func(us ...*p4v1.Update) error {
		_, err := c.Write(context.Background(), &p4v1.WriteRequest{DeviceId: device, ElectionId: ct.election, Updates: us})
		return err
	}
	var ins []*p4v1.Update
	for k := byte(1); k <= 4; k++ {
		ins = append(ins, update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: bigT, Match: full(k), Action: action(fwd, []byte{0, k})}))
	}
	if err := write(ins...); err != nil {
		t.Fatal(err)
	}
	if err := write(update(p4v1.Update_DELETE, &p4v1.TableEntry{TableId: bigT, Match: full(2)}),
		update(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: bigT, Match: full(3), Action: action(fwd, []byte{0, 9})}),
		update(p4v1.Update_DELETE, &p4v1.TableEntry{TableId: bigT, Match: full(4)})); err != nil {
		t.Fatal(err)
	}
	if err := write(update(p4v1.Update_DELETE, &p4v1.TableEntry{TableId: bigT, Match: full(2)})); status.Code(err) != codes.Unknown {
		t.Fatalf("deleting a deleted entry: %v, want a write failure", err)
	}
	got := readAll(t, c, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: bigT}}})
	want := []*p4v1.TableEntry{
		{TableId: bigT, Match: []*p4v1.FieldMatch{exact(1, 1)}, Action: action(fwd, []byte{1})},
		{TableId: bigT, Match: []*p4v1.FieldMatch{exact(1, 3)}, Action: action(fwd, []byte{9})},
	}
	if len(got) != len(want) {
		t.Fatalf("read %d entries, want %d: %v", len(got), len(want), got)
	}
	for i, e := range got {
		if !proto.Equal(e.GetTableEntry(), want[i]) {
			t.Errorf("entry %d: read %v, want %v", i, e.GetTableEntry(), want[i])
		}
	}
}

// A table holds as many entries as its size and refuses the next with
// RESOURCE_EXHAUSTED; a DELETE makes room again, and a table emptied
// takes its size again (runtime.p4's metered_t, 16 entries).
func TestTableSize(t *testing.T) {
	p := loadProgram(t, "runtime")
	_, c := serve(t)
	ct := primary(t, c, p)
	metered, colour := id(t, p.info, "IngressR.metered_t"), id(t, p.info, "IngressR.colour")
	entry := func(k int) *p4v1.TableEntry {
		return &p4v1.TableEntry{TableId: metered, Priority: 1,
			Match: []*p4v1.FieldMatch{ternary(1, []byte{byte(k)}, []byte{0xff})}, Action: action(colour)}
	}
	const size = 16
	fill := func(what string) {
		var us []*p4v1.Update
		for k := 1; k <= size+1; k++ {
			us = append(us, update(p4v1.Update_INSERT, entry(k)))
		}
		got := write(t, c, ct, us...)
		for k, code := range got {
			want := codes.OK
			if k == size {
				want = codes.ResourceExhausted
			}
			if code != want {
				t.Fatalf("%s: insert %d of %d into a table of %d: %v, want %v", what, k+1, size+1, size, code, want)
			}
		}
	}
	fill("first fill")
	if got := write(t, c, ct, update(p4v1.Update_DELETE, entry(3)), update(p4v1.Update_INSERT, entry(size+1)),
		update(p4v1.Update_INSERT, entry(size+2))); got[0] != codes.OK || got[1] != codes.OK || got[2] != codes.ResourceExhausted {
		t.Fatalf("delete one, insert two into a full table: %v, want [OK OK RESOURCE_EXHAUSTED]", got)
	}
	var del []*p4v1.Update
	for k := 1; k <= size+1; k++ {
		if k != 3 {
			del = append(del, update(p4v1.Update_DELETE, entry(k)))
		}
	}
	for k, code := range write(t, c, ct, del...) {
		if code != codes.OK {
			t.Fatalf("emptying the table: delete %d: %v", k, code)
		}
	}
	fill("after emptying")
}

// An election ID of 0 is no controller's, as Stratum holds: arbitrating
// with it ends the stream INVALID_ARGUMENT (it would otherwise be primary
// of a role no one has held), and a write or pipeline change carrying it
// is INVALID_ARGUMENT too. Without an election ID at all a controller
// follows as a backup, as the spec says.
func TestElectionZero(t *testing.T) {
	p := loadProgram(t, "tables")
	_, c := serve(t)
	zero := openStream(t, c)
	zero.send(&p4v1.Uint128{})
	if err := streamEnd(t, zero); status.Code(err) != codes.InvalidArgument {
		t.Errorf("arbitration with election ID 0: %v, want InvalidArgument", err)
	}
	none := openStream(t, c)
	none.send(nil)
	if code, _ := none.arbitration(); code != codes.NotFound {
		t.Errorf("arbitration without an election ID: %v, want NotFound (a backup, no primary)", code)
	}
	primary := connect(t, c, 1)
	if code, _ := primary.arbitration(); code != codes.OK {
		t.Fatalf("election ID 1: %v, want OK", code)
	}
	setPipeline(t, c, primary, p, 1)
	asZero := &controller{t: t, election: &p4v1.Uint128{}}
	if got := write(t, c, asZero, ins(exactEntry(t, p, 1))); got[0] != codes.InvalidArgument {
		t.Errorf("a write with election ID 0 from the primary's connection: %v, want InvalidArgument", got)
	}
	_, err := c.SetForwardingPipelineConfig(context.Background(), &p4v1.SetForwardingPipelineConfigRequest{DeviceId: device,
		ElectionId: &p4v1.Uint128{}, Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config: &p4v1.ForwardingPipelineConfig{P4Info: p.info, P4DeviceConfig: p.json}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("a pipeline with election ID 0: %v, want InvalidArgument", err)
	}
}
