package p4rt

import (
	"context"
	"sync"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/tap"
)

// Full method names of the RPCs the tap tells apart.
const (
	methodStreamChannel = "/p4.v1.P4Runtime/StreamChannel"
	methodWrite         = "/p4.v1.P4Runtime/Write"
	methodSetPipeline   = "/p4.v1.P4Runtime/SetForwardingPipelineConfig"
)

// tap judges each RPC on its headers, before gRPC reads a byte of its
// request or starts a handler: what it refuses costs the server the
// headers alone.
//
//   - A connection past the caps on authenticated connections is refused
//     every RPC, with the cap it is past, until it is closed.
//   - Under a policy, a StreamChannel is refused to an identity the
//     policy does not name: streams are for the controllers that may be
//     primary, and a client that may only read needs none, so followers
//     of no standing cannot take the places the controllers need.
//   - A Write or a pipeline change is refused unless it comes over a
//     connection that carries a primary's stream, or one authenticated
//     as a primary's identity: only those can pass the checks of its
//     body (Server.Write's, arbiter.mayWrite), so a request that would
//     be refused once read is refused before a byte of it is. Its
//     device, role and election ID are checked once it is read.
func (s *Server) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	pc := connOf(ctx)
	if pc == nil || pc.local {
		return ctx, nil
	}
	if pc.refused != "" {
		return nil, errorf(codes.ResourceExhausted, "%s", pc.refused)
	}
	switch info.FullMethodName {
	case methodStreamChannel:
		if !s.cfg.Policy.mayWrite(pc) {
			return nil, errorf(codes.PermissionDenied, "client %s may hold no stream under the policy %s, which names the controllers that may: it may read, which needs none",
				pc.identityText(), s.cfg.Policy.Path)
		}
	case methodWrite, methodSetPipeline:
		if !s.arb.holdsPrimary(pc) {
			return nil, errNotPrimaryConn
		}
	}
	return ctx, nil
}

// errNotPrimaryConn refuses a Write or a pipeline change at its headers.
var errNotPrimaryConn = errorf(codes.PermissionDenied, "not a primary controller: this connection carries no primary's stream, nor is it authenticated as a primary's identity (only the primary writes and sets pipelines, over its stream's connection or with its certificate)")

// serviceDesc is P4Runtime's service with Write and
// SetForwardingPipelineConfig served by handlers that read the request
// only once it is admitted (gated): gRPC's own handler for a unary RPC
// reads the request whole before any code of the server's runs.
func (s *Server) serviceDesc() *grpc.ServiceDesc {
	d := p4v1.P4Runtime_ServiceDesc
	d.Methods = nil
	for _, m := range p4v1.P4Runtime_ServiceDesc.Methods {
		switch m.MethodName {
		case "Write":
			d.Streams = append(d.Streams, grpc.StreamDesc{StreamName: m.MethodName, Handler: gated(s, s.Write)})
		case "SetForwardingPipelineConfig":
			d.Streams = append(d.Streams, grpc.StreamDesc{StreamName: m.MethodName, Handler: gated(s, s.SetForwardingPipelineConfig)})
		default:
			d.Methods = append(d.Methods, m)
		}
	}
	d.Streams = append(d.Streams, p4v1.P4Runtime_ServiceDesc.Streams...)
	return &d
}

// gated is the handler of a unary RPC whose request may be large (a
// Write, a pipeline): before reading the request it checks again that
// the connection may send it (the primary may have changed since its
// headers) and reserves the largest request there may be from the
// bytes of requests in flight (MaxRequestBytes), waiting for room. A
// request is therefore read only when it may be taken, and no more than
// MaxRequestBytes of requests are in memory at once, whatever comes.
func gated[Req any, Resp any](s *Server, handle func(context.Context, *Req) (Resp, error)) grpc.StreamHandler {
	return func(_ any, stream grpc.ServerStream) error {
		ctx := stream.Context()
		if pc := connOf(ctx); pc != nil && !s.arb.holdsPrimary(pc) {
			return errNotPrimaryConn
		}
		n := int64(s.lim.maxRecv)
		if err := s.inFlight.acquire(ctx, n); err != nil {
			return errorf(codes.Canceled, "waiting for room among the requests in flight: %v", err)
		}
		defer s.inFlight.release(n)
		req := new(Req)
		if err := stream.RecvMsg(req); err != nil {
			return err
		}
		resp, err := handle(ctx, req)
		if err != nil {
			return err
		}
		return stream.SendMsg(resp)
	}
}

// budget is a count of bytes that requests reserve before they are
// read and give back when done, waiting in turn for room.
type budget struct {
	mu      sync.Mutex
	free    int64
	waiting []*reservation
}

type reservation struct {
	n     int64
	ready chan struct{}
}

func newBudget(n int64) *budget { return &budget{free: n} }

// acquire reserves n bytes, waiting behind earlier reservations until
// there is room or ctx ends.
func (b *budget) acquire(ctx context.Context, n int64) error {
	b.mu.Lock()
	if len(b.waiting) == 0 && b.free >= n {
		b.free -= n
		b.mu.Unlock()
		return nil
	}
	r := &reservation{n: n, ready: make(chan struct{})}
	b.waiting = append(b.waiting, r)
	b.mu.Unlock()
	select {
	case <-r.ready:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		select {
		case <-r.ready: // granted meanwhile: give it back
			b.free += n
			b.grant()
		default:
			for i, w := range b.waiting {
				if w == r {
					b.waiting = append(b.waiting[:i], b.waiting[i+1:]...)
					break
				}
			}
			b.grant()
		}
		return ctx.Err()
	}
}

// release gives n bytes back.
func (b *budget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.free += n
	b.grant()
}

// grant hands the room there is to the waiting, in order. Called with
// mu held.
func (b *budget) grant() {
	for len(b.waiting) > 0 && b.free >= b.waiting[0].n {
		r := b.waiting[0]
		b.waiting = b.waiting[1:]
		b.free -= r.n
		close(r.ready)
	}
}
