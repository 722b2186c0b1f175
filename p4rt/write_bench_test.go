package p4rt

import (
	"os"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/p4rcm/p4rcm/v1model"
)

// BenchmarkPipelineWrite is the server's own work for one table entry,
// without gRPC: an INSERT into runtime.p4's big_t and the DELETE that
// makes room for the next, as the pipeline applies them.
func BenchmarkPipelineWrite(b *testing.B) {
	text, err := os.ReadFile("../p4/testdata/build/runtime.p4info.txtpb")
	if err != nil {
		b.Fatal(err)
	}
	info := &p4configv1.P4Info{}
	if err := (prototext.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(text, info); err != nil {
		b.Fatal(err)
	}
	js, err := os.ReadFile("../p4/testdata/build/runtime.json")
	if err != nil {
		b.Fatal(err)
	}
	p, err := newPipeline(info, js, nil, v1model.Config{})
	if err != nil {
		b.Fatal(err)
	}
	var bigT, fwd uint32
	for _, t := range info.Tables {
		if t.Preamble.Name == "IngressR.big_t" {
			bigT = t.Preamble.Id
		}
	}
	for _, a := range info.Actions {
		if a.Preamble.Name == "IngressR.forward_counted" {
			fwd = a.Preamble.Id
		}
	}
	const n = 1000
	var ins, del [n]*p4v1.Update
	for i := range n {
		te := &p4v1.TableEntry{TableId: bigT, Match: []*p4v1.FieldMatch{{FieldId: 1,
			FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: []byte{0, 0, byte(i >> 8), byte(i)}}}}},
			Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{ActionId: fwd,
				Params: []*p4v1.Action_Param{{ParamId: 1, Value: []byte{3}}}}}}}
		ins[i] = &p4v1.Update{Type: p4v1.Update_INSERT, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}}
		del[i] = &p4v1.Update{Type: p4v1.Update_DELETE, Entity: ins[i].Entity}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := i % n
		if err := p.write(ins[k]); err != nil {
			b.Fatal(err)
		}
		if err := p.write(del[k]); err != nil {
			b.Fatal(err)
		}
	}
}
