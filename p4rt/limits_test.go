package p4rt_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/p4rcm/p4rcm/p4rt"
)

// padded is a program's JSON with n spaces before its last brace: the
// same program, n bytes longer.
func paddedJSON(js []byte, n int) []byte {
	i := bytes.LastIndexByte(js, '}')
	return append(append(append([]byte(nil), js[:i]...), bytes.Repeat([]byte{' '}, n)...), js[i:]...)
}

// Requests past gRPC's 4 MiB default: a pipeline of 6 MiB installs and
// reads back, a write batch of 5 MiB is applied; past a limit set
// lower, RESOURCE_EXHAUSTED.
func TestLargeMessages(t *testing.T) {
	r := newRig(t)
	big := program{r.p.info, paddedJSON(r.p.json, 6<<20)}
	setPipeline(t, r.c, r.ct, big, 2)
	got, err := r.c.GetForwardingPipelineConfig(context.Background(), &p4v1.GetForwardingPipelineConfigRequest{DeviceId: device},
		grpc.MaxCallRecvMsgSize(64<<20))
	if err != nil || !bytes.Equal(got.GetConfig().GetP4DeviceConfig(), big.json) {
		t.Fatalf("the 6 MiB pipeline read back: %v", err)
	}
	bigT, fwd := r.id("IngressR.big_t"), r.id("IngressR.forward_counted")
	var us []*p4v1.Update
	for i := range 1024 {
		us = append(us, ins(&p4v1.TableEntry{TableId: bigT, Match: []*p4v1.FieldMatch{exact(1, byte(i>>8), byte(i))},
			Action: action(fwd, []byte{3}), Metadata: bytes.Repeat([]byte{byte(i)}, 5<<10)}))
	}
	req := &p4v1.WriteRequest{DeviceId: device, ElectionId: r.ct.election, Updates: us}
	if n := proto.Size(req); n <= 4<<20 {
		t.Fatalf("the batch is %d bytes, not past 4 MiB", n)
	}
	if _, err := r.c.Write(context.Background(), req); err != nil {
		t.Fatalf("a batch of %d bytes: %v", proto.Size(req), err)
	}
	if n := len(r.read(&p4v1.TableEntry{TableId: bigT})); n != 1024 {
		t.Errorf("%d entries written, want 1024", n)
	}

	small, c, _ := serveWith(t, p4rt.Config{DeviceID: device, MaxRecvMsgSize: 5 << 20})
	_ = small
	ct := connect(t, c, 1)
	ct.arbitration()
	_, err = c.SetForwardingPipelineConfig(context.Background(), &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId: device, ElectionId: ct.election, Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config: &p4v1.ForwardingPipelineConfig{P4Info: big.info, P4DeviceConfig: big.json}})
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("6 MiB to a server taking 5: %v, want ResourceExhausted", err)
	}
}

// At most MaxStreams streams at once: one more ends RESOURCE_EXHAUSTED
// before it is heard; once one closes, a new one is taken.
func TestStreamCap(t *testing.T) {
	_, c, _ := serveWith(t, p4rt.Config{DeviceID: device, MaxStreams: 3})
	var open []*controller
	for i := range 3 {
		ct := connect(t, c, uint64(10+i))
		ct.arbitration()
		open = append(open, ct)
	}
	extra := connect(t, c, 20)
	if err := streamEnd(t, extra); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a fourth stream of 3: %v, want ResourceExhausted", err)
	}
	open[0].cancel()
	deadline := time.Now().Add(10 * time.Second)
	// The server frees the slot when it sees the stream's end.
	for {
		ct := connect(t, c, 21)
		if m, ok := <-ct.msgs; ok && m.GetArbitration() != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no stream taken after one of the 3 closed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
