package controlplane

import (
	"context"
	"math"
	"net"
	"sync"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/p4rcm/p4rcm/p4rt"
)

// offered records the election IDs controllers arbitrate with on a
// server: a stream interceptor reading what each stream receives.
type offered struct {
	mu  sync.Mutex
	ids []ElectionID
}

func (o *offered) intercept(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, &recordingStream{ServerStream: ss, o: o})
}

type recordingStream struct {
	grpc.ServerStream
	o *offered
}

func (r *recordingStream) RecvMsg(m any) error {
	err := r.ServerStream.RecvMsg(m)
	req, _ := m.(*p4v1.StreamMessageRequest)
	if a := req.GetArbitration(); err == nil && a.GetElectionId() != nil {
		r.o.mu.Lock()
		r.o.ids = append(r.o.ids, ElectionID{High: a.ElectionId.High, Low: a.ElectionId.Low})
		r.o.mu.Unlock()
	}
	return err
}

// A backup taking over when the primary that held 2^128-1 leaves asks
// with 2^128-1 (the highest seen, which it must reach), not with its own
// ID added to it round past the top: that came out below the highest
// seen, a backup again, told again there was no primary, and so on down
// through 0. Every ID the session offers is at least its own.
func TestTakeoverNeverWraps(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var o offered
	g := p4rt.New(p4rt.Config{DeviceID: 1}).NewGRPCServer(grpc.ChainStreamInterceptor(o.intercept))
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	addr := lis.Addr().String()

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	top, err := p4v1.NewP4RuntimeClient(conn).StreamChannel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := top.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{Arbitration: &p4v1.MasterArbitrationUpdate{
		DeviceId: 1, ElectionId: &p4v1.Uint128{High: math.MaxUint64, Low: math.MaxUint64}}}}); err != nil {
		t.Fatal(err)
	}
	if m, err := top.Recv(); err != nil || m.GetArbitration().GetStatus().GetCode() != 0 {
		t.Fatalf("the controller at 2^128-1: %v %v", m, err)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer dcancel()
	own := ElectionID{Low: 5}
	s, err := Dial(dctx, addr, 1, own)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Primary() {
		t.Fatal("primary beside the controller at 2^128-1")
	}
	cancel() // the primary leaves
	if err := s.WaitPrimary(dctx); err != nil {
		t.Fatalf("the backup taking over: %v", err)
	}
	if got, want := s.Election(), (ElectionID{High: math.MaxUint64, Low: math.MaxUint64}); got != want {
		t.Errorf("took over with %v, want %v", got, want)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range o.ids[1:] { // the first is the other controller's
		if id.High < own.High || id.High == own.High && id.Low < own.Low {
			t.Errorf("the session offered election ID %v, below its own %v (all offered: %v)", id, own, o.ids)
		}
	}
}

func TestTakeover(t *testing.T) {
	top := ElectionID{High: math.MaxUint64, Low: math.MaxUint64}
	for _, c := range []struct{ seen, own, want ElectionID }{
		{ElectionID{Low: 10}, ElectionID{Low: 5}, ElectionID{Low: 15}},
		{ElectionID{Low: math.MaxUint64}, ElectionID{Low: 1}, ElectionID{High: 1}},
		{ElectionID{High: math.MaxUint64, Low: 1}, ElectionID{Low: math.MaxUint64}, top},
		{top, ElectionID{Low: 1}, top},
		{ElectionID{High: 1}, ElectionID{High: math.MaxUint64}, top},
	} {
		if got := takeover(c.seen, c.own); got != c.want {
			t.Errorf("takeover(%v, %v) = %v, want %v", c.seen, c.own, got, c.want)
		}
	}
}
