package p4rt

import (
	"context"
	"errors"
	"runtime"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
)

// NewGRPCServer returns a gRPC server serving this P4Runtime server,
// with the options it relies on: each connection tagged (a write is tied
// to the connection, or the client certificate, of the primary's
// stream) and counted once authenticated (Listener), requests checked
// at their headers (tap), the receive limit, the handshake deadline,
// idle connections closed, and keepalive pings that drop a client which
// stops answering. extra adds options, the transport credentials (TLS)
// first among them.
func (s *Server) NewGRPCServer(extra ...grpc.ServerOption) *grpc.Server {
	return s.newGRPCServer(false, extra)
}

// NewLocalGRPCServer is NewGRPCServer for a listener only this process
// reaches (a Unix socket in a private directory): its clients are the
// switch itself, which the policy does not restrict.
func (s *Server) NewLocalGRPCServer(extra ...grpc.ServerOption) *grpc.Server {
	return s.newGRPCServer(true, extra)
}

func (s *Server) newGRPCServer(local bool, extra []grpc.ServerOption) *grpc.Server {
	l := s.lim
	opts := []grpc.ServerOption{
		grpc.StatsHandler(&connTagger{s: s, local: local}),
		grpc.InTapHandle(s.tap),
		grpc.MaxRecvMsgSize(l.maxRecv),
		// gRPC gives a connection 120 s for its handshake: a socket
		// that sends nothing held its place that long.
		grpc.ConnectionTimeout(l.handshake),
		// gRPC pings a client silent for KeepaliveTime, and drops it
		// when no answer comes within the timeout: the guard's own,
		// shorter, for one that carries no request (liveness.go), and
		// gRPC's as the backstop.
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: l.keepalive, Timeout: grpcKeepaliveTimeout(l), MaxConnectionIdle: l.idle}),
		// Clients may ping too (p4runtime-shell's gRPC does when told
		// to), but not more often than the server would.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: min(l.keepalive, 5*time.Second), PermitWithoutStream: true}),
		// RPCs run on a few long-lived goroutines instead of a new
		// one each, whose stack grew to a Write's depth once: a
		// profile of one update per request had 9% of p4switch's CPU
		// growing fresh stacks (morestack, copystack). A
		// StreamChannel holds its worker while it is open; with every
		// worker busy, gRPC runs the next RPC on a goroutine of its
		// own, so streams never queue a Write behind them.
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))),
		// Large write batches decoded on every core (writeCodec).
		grpc.ForceServerCodecV2(newWriteCodec()),
	}
	g := grpc.NewServer(append(opts, extra...)...)
	g.RegisterService(s.serviceDesc(), s)
	return g
}

// grpcKeepaliveTimeout is gRPC's keepalive timeout: BusyTimeout where
// the guard judges liveness itself, KeepaliveTimeout where it cannot.
func grpcKeepaliveTimeout(l limits) time.Duration {
	if tcpTimesWork {
		return l.busy
	}
	return l.keepaliveWait
}

// peerConn is one client connection, tagged when it opens; its
// address is what ties a write to a stream.
type peerConn struct {
	// identity is what the client's verified certificate says it is;
	// nil without mutual TLS.
	identity *Identity
	// local is a connection of the switch's own (NewLocalGRPCServer).
	local bool
	// refused says why the connection may not stay (the caps on
	// authenticated connections): its requests are refused with it
	// until it is closed.
	refused string
	// gc is the connection as the guard counts it; nil if it came on
	// a listener the guard does not watch.
	gc *guardedConn
}

type connKey struct{}

// connTagger is a stats.Handler that gives every connection its
// peerConn, which the RPCs served on it find in their context, and
// counts it among the authenticated connections: gRPC tags a
// connection once its transport is up, the TLS handshake done.
type connTagger struct {
	s     *Server
	local bool
}

func (h *connTagger) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	pc := &peerConn{local: h.local}
	if p, ok := peer.FromContext(ctx); ok {
		pc.identity = identityOf(p.AuthInfo)
	}
	if !h.local {
		pc.gc, pc.refused = h.s.guard.authenticated(info.LocalAddr, info.RemoteAddr, pc.identity)
	}
	return context.WithValue(ctx, connKey{}, pc)
}
func (h *connTagger) HandleConn(context.Context, stats.ConnStats) {}

type busyKey struct{}

// TagRPC marks the RPCs that make their connection busy: every one but
// a StreamChannel, which is open for the controller's life.
func (h *connTagger) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	if info.FullMethodName == methodStreamChannel {
		return ctx
	}
	return context.WithValue(ctx, busyKey{}, true)
}

// HandleRPC counts a connection's busy RPCs in progress, from their
// beginning to their end, for liveness.
func (h *connTagger) HandleRPC(ctx context.Context, st stats.RPCStats) {
	pc := connOf(ctx)
	if pc == nil || pc.gc == nil || ctx.Value(busyKey{}) == nil {
		return
	}
	switch st.(type) {
	case *stats.Begin:
		pc.gc.busy.Add(1)
	case *stats.End:
		pc.gc.busy.Add(-1)
	}
}

// connOf is the connection an RPC came on; nil on a gRPC server that
// NewGRPCServer did not build.
func connOf(ctx context.Context) *peerConn {
	pc, _ := ctx.Value(connKey{}).(*peerConn)
	return pc
}

// errNoConn is a write on a gRPC server NewGRPCServer did not build:
// with no connection to tie it to, it cannot be told from a spoofed one.
var errNoConn = errors.New("this gRPC server was not built by p4rt.NewGRPCServer: writes cannot be tied to a stream")

func (pc *peerConn) identityText() string {
	if pc == nil {
		return "with no connection tag"
	}
	return pc.identity.String()
}
