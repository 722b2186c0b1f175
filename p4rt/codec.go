package p4rt

import (
	"runtime"
	"sync"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// writeCodec is gRPC's protobuf codec, except that a large
// WriteRequest's updates are decoded on every core at once. A batch of
// a thousand updates spends as long being decoded as being applied,
// one after the other on one core while the other waits: decoding it
// in parts takes that half of the wait down to a share per core. The
// request comes out exactly as proto.Unmarshal makes it (the same
// messages, the same order, the same unknown fields), and a request
// proto.Unmarshal refuses is refused with its error: nothing is
// applied from a request that does not decode in full.
type writeCodec struct{ base encoding.CodecV2 }

// parallelUpdates is the fewest updates worth decoding in parts: below
// it, starting the other goroutines costs about what they save.
const parallelUpdates = 64

// updatesField is WriteRequest.updates' field number.
var updatesField = (&p4v1.WriteRequest{}).ProtoReflect().Descriptor().Fields().ByName("updates").Number()

func newWriteCodec() writeCodec { return writeCodec{base: encoding.GetCodecV2("proto")} }

func (c writeCodec) Name() string                           { return c.base.Name() }
func (c writeCodec) Marshal(v any) (mem.BufferSlice, error) { return c.base.Marshal(v) }

func (c writeCodec) Unmarshal(data mem.BufferSlice, v any) error {
	req, ok := v.(*p4v1.WriteRequest)
	if !ok || runtime.GOMAXPROCS(0) < 2 || data.Len() < parallelUpdates*8 {
		return c.base.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free() // the messages hold copies of their bytes, not the buffer
	b := buf.ReadOnlyData()
	if decodeWrite(b, req) != nil {
		// Whatever the parts made of it, the request is what
		// proto.Unmarshal makes of it, its error included.
		proto.Reset(req)
		return proto.Unmarshal(b, req)
	}
	return nil
}

// decodeWrite decodes a WriteRequest: its updates in parts on as many
// goroutines as there are cores, the rest of it as one message.
func decodeWrite(b []byte, req *p4v1.WriteRequest) error {
	var updates [][]byte
	var rest []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		if num == updatesField && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			updates = append(updates, v)
		} else {
			// Another field, or updates with the wrong wire type,
			// which proto.Unmarshal keeps as an unknown field.
			rest = append(rest, b[:n+m]...)
		}
		b = b[n+m:]
	}
	if err := proto.Unmarshal(rest, req); err != nil {
		return err
	}
	req.Updates = make([]*p4v1.Update, len(updates))
	// An update is one level below the request: the same nesting limit
	// as decoding the request whole.
	opts := proto.UnmarshalOptions{RecursionLimit: protowire.DefaultRecursionLimit - 1}
	decode := func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			u := &p4v1.Update{}
			if err := opts.Unmarshal(updates[i], u); err != nil {
				return err
			}
			req.Updates[i] = u
		}
		return nil
	}
	k := runtime.GOMAXPROCS(0)
	if len(updates) < parallelUpdates || k < 2 {
		return decode(0, len(updates))
	}
	errs := make([]error, k)
	var wg sync.WaitGroup
	per := (len(updates) + k - 1) / k
	for w := 1; w < k; w++ {
		lo, hi := min(w*per, len(updates)), min((w+1)*per, len(updates))
		wg.Go(func() { errs[w] = decode(lo, hi) })
	}
	errs[0] = decode(0, min(per, len(updates)))
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
