package p4rt

import (
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// bigWrite is a marshalled WriteRequest of n table entry inserts, with
// every other field of the request set and an unknown field between
// its updates.
func bigWrite(t testing.TB, n int) []byte {
	t.Helper()
	req := &p4v1.WriteRequest{DeviceId: 3, ElectionId: &p4v1.Uint128{High: 1, Low: 2}, Role: "r",
		Atomicity: p4v1.WriteRequest_ROLLBACK_ON_ERROR}
	for i := range n {
		req.Updates = append(req.Updates, &p4v1.Update{Type: p4v1.Update_INSERT, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{
			TableId: 7, Match: []*p4v1.FieldMatch{{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: []byte{0, 0, byte(i >> 8), byte(i)}}}}},
			Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{ActionId: 9, Params: []*p4v1.Action_Param{{ParamId: 1, Value: []byte{byte(i)}}}}}}}}}})
	}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	// An unknown field (number 99) half-way through the updates.
	var mid int
	for i := 0; i < n/2; i++ {
		_, _, l := protowire.ConsumeField(b[mid:])
		mid += l
	}
	unknown := protowire.AppendString(protowire.AppendTag(nil, 99, protowire.BytesType), "x")
	return append(append(append([]byte(nil), b[:mid]...), unknown...), b[mid:]...)
}

// decodeBoth decodes b with the codec and with proto.Unmarshal and
// fails unless they agree: the same request, or both an error.
func decodeBoth(t *testing.T, b []byte) {
	t.Helper()
	got, want := &p4v1.WriteRequest{}, &p4v1.WriteRequest{}
	gerr := newWriteCodec().Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, got)
	werr := proto.Unmarshal(b, want)
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("codec: %v; proto.Unmarshal: %v", gerr, werr)
	}
	if werr == nil && !proto.Equal(got, want) {
		t.Fatalf("the codec's request differs from proto.Unmarshal's")
	}
}

// The codec decodes a large write request, in parts, into what
// proto.Unmarshal makes of it, and refuses what it refuses with the
// same error.
func TestWriteCodec(t *testing.T) {
	for _, n := range []int{0, 1, parallelUpdates - 1, parallelUpdates, 1001} {
		b := bigWrite(t, n)
		decodeBoth(t, b)
		if n < 2 {
			continue
		}
		// The update after the unknown field: cut short inside it, and
		// with its first tag of wire type 7, which no field has.
		var at int
		for i := 0; i < n/2+1; i++ {
			_, _, l := protowire.ConsumeField(b[at:])
			at += l
		}
		decodeBoth(t, b[:at+4])
		bad := append([]byte(nil), b...)
		bad[at+2] = 0x0f
		decodeBoth(t, bad)
	}
	req := &p4v1.WriteRequest{}
	if err := newWriteCodec().Unmarshal(mem.BufferSlice{mem.SliceBuffer(bigWrite(t, 1001))}, req); err != nil || len(req.Updates) != 1001 ||
		req.Updates[1000].GetEntity().GetTableEntry().GetAction().GetAction().Params[0].Value[0] != byte(1000&0xff) {
		t.Fatalf("1001 updates: %v, %d decoded", err, len(req.Updates))
	}
}

// FuzzWriteCodec: whatever the bytes, the codec and proto.Unmarshal
// agree.
func FuzzWriteCodec(f *testing.F) {
	f.Add(bigWrite(f, parallelUpdates))
	f.Add(bigWrite(f, 3))
	f.Fuzz(func(t *testing.T, b []byte) { decodeBoth(t, b) })
}

// BenchmarkWriteCodec decodes a request of 1,000 updates: gRPC's
// protobuf codec against writeCodec, which decodes the updates in parts
// on every core.
func BenchmarkWriteCodec(b *testing.B) {
	data := mem.BufferSlice{mem.SliceBuffer(bigWrite(b, 1000))}
	for _, c := range []struct {
		name  string
		codec interface {
			Unmarshal(mem.BufferSlice, any) error
		}
	}{{"proto", newWriteCodec().base}, {"parts", newWriteCodec()}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.codec.Unmarshal(data, &p4v1.WriteRequest{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}
