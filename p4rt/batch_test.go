package p4rt

import (
	"os"
	"reflect"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/p4rcm/p4rcm/v1model"
)

// runtimePipeline is a pipeline holding runtime.p4, and its P4Info's
// IDs by name.
func runtimePipeline(tb testing.TB) (*pipeline, func(string) uint32) {
	tb.Helper()
	text, err := os.ReadFile("../p4/testdata/build/runtime.p4info.txtpb")
	if err != nil {
		tb.Fatal(err)
	}
	info := &p4configv1.P4Info{}
	if err := (prototext.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(text, info); err != nil {
		tb.Fatal(err)
	}
	js, err := os.ReadFile("../p4/testdata/build/runtime.json")
	if err != nil {
		tb.Fatal(err)
	}
	p, err := newPipeline(info, js, nil, v1model.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	ids := map[string]uint32{}
	for _, t := range info.Tables {
		ids[t.Preamble.Name] = t.Preamble.Id
	}
	for _, a := range info.Actions {
		ids[a.Preamble.Name] = a.Preamble.Id
	}
	return p, func(name string) uint32 {
		if ids[name] == 0 {
			tb.Fatalf("no %s in the P4Info", name)
		}
		return ids[name]
	}
}

// A large batch, whose table entries are prepared on another goroutine
// ahead of their turn (writeBatch), applies as its updates one by one:
// the same error for each, the same entries read back, the same
// entries in the target.
func TestWriteBatchAsOneByOne(t *testing.T) {
	batch, id := runtimePipeline(t)
	single, _ := runtimePipeline(t)
	bigT, metered, prof := id("IngressR.big_t"), id("IngressR.metered_t"), id("IngressR.prof_t")
	fwd, colour := id("IngressR.forward_counted"), id("IngressR.colour")
	exactM := func(fid uint32, v ...byte) *p4v1.FieldMatch {
		return &p4v1.FieldMatch{FieldId: fid, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: v}}}
	}
	act := func(aid uint32, params ...[]byte) *p4v1.TableAction {
		a := &p4v1.Action{ActionId: aid}
		for i, v := range params {
			a.Params = append(a.Params, &p4v1.Action_Param{ParamId: uint32(i + 1), Value: v})
		}
		return &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
	}
	up := func(typ p4v1.Update_Type, te *p4v1.TableEntry) *p4v1.Update {
		return &p4v1.Update{Type: typ, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}}
	}
	var us []*p4v1.Update
	for k := range 150 {
		kb := byte(k)
		te := &p4v1.TableEntry{TableId: bigT, Match: []*p4v1.FieldMatch{exactM(1, 0, 0, 0, kb)}, Action: act(fwd, []byte{0, kb})}
		if k%2 == 0 {
			te.Match = []*p4v1.FieldMatch{exactM(1, kb)} // canonical as given
			te.Action = act(fwd, []byte{kb})
		}
		if k%7 == 0 {
			te.Metadata = []byte{kb, 1}
		}
		if k%5 == 0 {
			setControllerMetadata(te, uint64(k))
		}
		if k%11 == 0 {
			te.CounterData = &p4v1.CounterData{PacketCount: int64(k), ByteCount: int64(k) * 60}
		}
		us = append(us, up(p4v1.Update_INSERT, te))
		switch {
		case k%10 == 0:
			us = append(us, up(p4v1.Update_INSERT, te)) // ALREADY_EXISTS
		case k%9 == 0:
			m := proto.Clone(te).(*p4v1.TableEntry)
			m.Action = act(fwd, []byte{1, 0})
			us = append(us, up(p4v1.Update_MODIFY, m))
		case k%13 == 0:
			us = append(us, up(p4v1.Update_DELETE, &p4v1.TableEntry{TableId: bigT, Match: te.Match}),
				up(p4v1.Update_DELETE, &p4v1.TableEntry{TableId: bigT, Match: te.Match})) // NOT_FOUND
		}
	}
	// Deletes one after another, then every key again: each found or
	// not as it should.
	for k := 100; k < 140; k++ {
		us = append(us, up(p4v1.Update_DELETE, &p4v1.TableEntry{TableId: bigT, Match: []*p4v1.FieldMatch{exactM(1, byte(k))}}))
	}
	for k := range 150 {
		us = append(us, up(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: bigT, Match: []*p4v1.FieldMatch{exactM(1, byte(k))},
			Action: act(fwd, []byte{2})}))
	}
	// Enough more to go round writeBatch's room.
	for k := range 300 {
		m := []*p4v1.FieldMatch{exactM(1, 2, byte(k>>8), byte(k))}
		us = append(us, up(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: bigT, Match: m, Action: act(fwd, []byte{1})}))
		if k%3 == 0 {
			us = append(us, up(p4v1.Update_DELETE, &p4v1.TableEntry{TableId: bigT, Match: m}))
		}
	}
	key := func(v byte) []*p4v1.FieldMatch { return []*p4v1.FieldMatch{exactM(1, 1, v)} }
	bad := []*p4v1.TableEntry{
		{TableId: bigT, Match: []*p4v1.FieldMatch{exactM(2, 1)}, Action: act(fwd, []byte{1})},
		{TableId: bigT, Match: key(1), Action: act(colour)},
		{TableId: bigT, Match: key(2), Action: act(fwd, []byte{2, 0})},
		{TableId: bigT, Match: key(3)},
		{TableId: bigT, Match: key(4), Priority: 3, Action: act(fwd, []byte{1})},
		{TableId: bigT, Match: key(5), IdleTimeoutNs: 5, Action: act(fwd, []byte{1})},
		{TableId: bigT, Match: key(6), Action: act(fwd)},
		{TableId: bigT, Match: key(7), Action: act(fwd, []byte{1}), MeterConfig: &p4v1.MeterConfig{Cir: 1}},
		{TableId: 99, Match: key(8), Action: act(fwd, []byte{1})},
		{TableId: bigT, IsDefaultAction: true, Action: act(fwd, []byte{7})},
		{TableId: metered, Priority: 2, Action: act(colour), Match: []*p4v1.FieldMatch{{FieldId: 1,
			FieldMatchType: &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: []byte{6}, Mask: []byte{0xff}}}}},
			MeterConfig: &p4v1.MeterConfig{Cir: 1000, Cburst: 100, Pir: 2000, Pburst: 200}},
		{TableId: prof, Match: key(9), Action: &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileMemberId{ActionProfileMemberId: 4}}},
		{TableId: bigT, Match: key(10), Action: act(fwd, []byte{1}), MeterCounterData: &p4v1.MeterCounterData{}},
	}
	for _, te := range bad {
		us = append(us, up(p4v1.Update_INSERT, te), up(p4v1.Update_INSERT, te), up(p4v1.Update_MODIFY, te), up(p4v1.Update_DELETE, te))
	}
	us = append(us, nil, &p4v1.Update{Type: p4v1.Update_INSERT}, &p4v1.Update{Entity: us[0].Entity})
	if len(us) <= prepChunk*prepRing {
		t.Fatalf("%d updates: too few to go round writeBatch's room", len(us))
	}
	errs := make([]error, len(us))
	batch.writeBatch(us, errs)
	failures := 0
	for i, u := range us {
		want := single.write(u)
		if status.Convert(errs[i]).Proto().String() != status.Convert(want).Proto().String() {
			t.Errorf("update %d (%v): %v in a batch, %v alone", i, u, errs[i], want)
		}
		if want != nil {
			failures++
		}
	}
	if failures < 40 {
		t.Errorf("only %d updates failed: the batch tests too few errors", failures)
	}
	read := func(p *pipeline) []*p4v1.Entity {
		var out []*p4v1.Entity
		collect := func(e *p4v1.Entity) error { out = append(out, e); return nil }
		if err := p.readTables(&p4v1.TableEntry{CounterData: &p4v1.CounterData{}}, collect); err != nil {
			t.Fatal(err)
		}
		if err := p.readTables(&p4v1.TableEntry{IsDefaultAction: true}, collect); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got, want := read(batch), read(single)
	if len(got) != len(want) || len(got) < 100 {
		t.Fatalf("read back %d entities from the batch, %d one by one", len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("entity %d: %v from the batch, %v one by one", i, got[i], want[i])
		}
	}
	for _, name := range batch.sw.Tables() {
		g, _ := batch.sw.Entries(name)
		w, _ := single.sw.Entries(name)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("table %s: the target holds %v from the batch, %v one by one", name, g, w)
		}
	}
}
