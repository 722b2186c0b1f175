package p4rt

import (
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// BenchmarkPipelineWrite is the server's own work for one table entry,
// without gRPC: an INSERT into runtime.p4's big_t and the DELETE that
// makes room for the next, as the pipeline applies them.
func BenchmarkPipelineWrite(b *testing.B) {
	p, id := runtimePipeline(b)
	bigT, fwd := id("IngressR.big_t"), id("IngressR.forward_counted")
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
