package p4rt

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
)

// Defaults of the gRPC server NewGRPCServer builds.
const (
	// DefaultMaxRecvMsgSize is the largest request the server takes:
	// PI's (simple_switch_grpc's) 256 MiB, where gRPC's own 4 MiB
	// refuses a pipeline of a few thousand table entries' worth of
	// JSON (rcm.json is 2.4 MB) or a large write batch.
	DefaultMaxRecvMsgSize = 256 << 20
	// DefaultMaxStreams is how many StreamChannel streams (controllers)
	// the server keeps at once, as PI's server caps them.
	DefaultMaxStreams = 16
	// DefaultKeepaliveTime is how long a client may stay silent before
	// the server pings it, and DefaultKeepaliveTimeout how long it then
	// waits for the answer before it drops the connection: a primary
	// whose process stops answering (SIGSTOP, a hung host, a cut cable)
	// loses its stream, and the role, within their sum after the last
	// frame it sent. gRPC pings no more often than once a second.
	DefaultKeepaliveTime    = time.Second
	DefaultKeepaliveTimeout = 2 * time.Second
)

// NewGRPCServer returns a gRPC server serving this P4Runtime server,
// with the options it relies on: each connection tagged (a write is tied
// to the connection, or the client certificate, of the primary's
// stream), the receive limit, the cap on streams, and keepalive pings
// that drop a client which stops answering. extra adds options, the
// transport credentials (TLS) first among them.
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
	kt, kto := s.cfg.KeepaliveTime, s.cfg.KeepaliveTimeout
	if kt <= 0 {
		kt = DefaultKeepaliveTime
	}
	if kto <= 0 {
		kto = DefaultKeepaliveTimeout
	}
	size := s.cfg.MaxRecvMsgSize
	if size <= 0 {
		size = DefaultMaxRecvMsgSize
	}
	opts := []grpc.ServerOption{
		grpc.StatsHandler(&connTagger{local: local}),
		grpc.MaxRecvMsgSize(size),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: kt, Timeout: kto}),
		// Clients may ping too (p4runtime-shell's gRPC does when told
		// to), but not more often than the server would.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: min(kt, 5*time.Second), PermitWithoutStream: true}),
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
	p4v1.RegisterP4RuntimeServer(g, s)
	return g
}

// peerConn is one client connection, tagged when it opens; its
// address is what ties a write to a stream.
type peerConn struct {
	// identity is what the client's verified certificate says it is;
	// nil without mutual TLS.
	identity *Identity
	// local is a connection of the switch's own (NewLocalGRPCServer).
	local bool
}

type connKey struct{}

// connTagger is a stats.Handler that gives every connection its
// peerConn, which the RPCs served on it find in their context.
type connTagger struct{ local bool }

func (h *connTagger) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	pc := &peerConn{local: h.local}
	if p, ok := peer.FromContext(ctx); ok {
		pc.identity = identityOf(p.AuthInfo)
	}
	return context.WithValue(ctx, connKey{}, pc)
}
func (h *connTagger) HandleConn(context.Context, stats.ConnStats)                     {}
func (h *connTagger) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (h *connTagger) HandleRPC(context.Context, stats.RPCStats)                       {}

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

// DefaultMaxConnections is how many client connections CapConnections
// keeps open by default: room for every stream's connection, readers
// beside them, and connections still in their handshake.
const DefaultMaxConnections = 64

// CapConnections returns lis, closing at once each connection it accepts
// while n others are open: readers need no stream, so the cap on
// streams alone would leave connections, and each one's buffers and
// TLS handshake, without bound. A client refused so sees its connection
// closed before the server's first frame (gRPC's UNAVAILABLE) and may
// try again once one has closed.
func CapConnections(lis net.Listener, n int) net.Listener {
	return &capListener{Listener: lis, max: int64(n)}
}

type capListener struct {
	net.Listener
	open atomic.Int64
	max  int64
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			c.Close()
			continue
		}
		return &countedConn{Conn: c, l: l}, nil
	}
}

// countedConn gives its place back when closed, once.
type countedConn struct {
	net.Conn
	l    *capListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
