package p4rt

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// guard keeps count of a server's client connections so that none
// counts against the caps of authenticated connections before it is
// authenticated: a socket that connects and sends nothing (no TLS
// handshake, no HTTP/2 preface) costs a place among the connections in
// their handshake, which are bounded on their own, per peer address and
// in all, and closed after HandshakeTimeout, and which a newcomer
// displaces when they are full. A connection counts against
// MaxConnections (and, under mutual TLS, its identity's
// MaxConnectionsPerIdentity) once gRPC has its transport up: the
// certificate verified, HTTP/2's preface read.
type guard struct {
	lim limits
	// log reports what the guard closes.
	log func(msg string, c *guardedConn)

	mu sync.Mutex
	// conns are every connection the guarded listeners accepted and
	// that is not yet closed, by their addresses.
	conns map[connAddrs]*guardedConn
	// pending are the connections in their handshake, oldest first.
	pending []*guardedConn
	// up counts the authenticated connections, upBy those of each
	// identity (mutual TLS).
	up   int
	upBy map[string]int
	// listeners counts the guarded listeners open; stopWatch ends the
	// liveness check (liveness.go) when the last closes.
	listeners int
	stopWatch chan struct{}
}

// connAddrs names a TCP connection: its two ends.
type connAddrs struct{ local, remote string }

func newGuard(lim limits, log *slog.Logger) *guard {
	return &guard{lim: lim, conns: map[connAddrs]*guardedConn{}, upBy: map[string]int{},
		log: func(msg string, c *guardedConn) { log.Info(msg, "peer", c.addrs.remote) }}
}

// guardedConn is an accepted connection the guard keeps count of.
type guardedConn struct {
	net.Conn
	g     *guard
	addrs connAddrs
	host  string // the peer's address, without the port
	// heard says the peer has sent something: of two connections in
	// their handshake, one that has sent nothing goes first.
	heard atomic.Bool
	// Under g.mu: the connection's state and, once up, whose it is.
	pending, up, closed bool
	identity            string
	once                sync.Once

	// busy counts the connection's RPCs in progress other than
	// StreamChannel streams: requests being received or handled,
	// responses being sent (liveness).
	busy atomic.Int64
	// probeAt is, under g.mu, when the switch first sent something
	// after the peer last did (liveness); zero if the peer has
	// answered since.
	probeAt time.Time
}

func (c *guardedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.heard.Store(true)
	}
	return n, err
}

// Close gives the connection's place back, once.
func (c *guardedConn) Close() error {
	c.once.Do(func() { c.g.forget(c) })
	return c.Conn.Close()
}

// Listener returns lis with the server's limits on connections in
// their handshake, whose places the server's gRPC server (NewGRPCServer)
// counts as authenticated once their transport is up. Serve the gRPC
// server on it.
func (s *Server) Listener(lis net.Listener) net.Listener {
	s.guard.watching(1)
	return &guardedListener{Listener: lis, g: s.guard}
}

type guardedListener struct {
	net.Listener
	g    *guard
	once sync.Once
}

func (l *guardedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		if errors.Is(err, net.ErrClosed) {
			l.once.Do(func() { l.g.watching(-1) })
		}
		return nil, err
	}
	gc := &guardedConn{Conn: c, g: l.g, addrs: connAddrs{c.LocalAddr().String(), c.RemoteAddr().String()}}
	gc.host = gc.addrs.remote
	if h, _, err := net.SplitHostPort(gc.addrs.remote); err == nil {
		gc.host = h
	}
	if victim := l.g.admit(gc); victim != nil {
		victim.Close()
	}
	return gc, nil
}

// admit counts c among the connections in their handshake and returns
// the one it displaces, if any: the oldest of c's address when that
// address has its most, else, with all places taken, the oldest silent
// one (or the oldest) of the address that holds most. A client that
// completes its handshake at once is displaced only by that many
// newcomers within its handshake's milliseconds.
func (g *guard) admit(c *guardedConn) (victim *guardedConn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	per := map[string]int{}
	for _, p := range g.pending {
		per[p.host]++
	}
	switch {
	case per[c.host] >= g.lim.handshakesPer:
		victim = g.oldest(c.host)
	case len(g.pending) >= g.lim.maxHandshakes:
		most := ""
		for h, n := range per {
			if n > per[most] || n == per[most] && h < most {
				most = h
			}
		}
		victim = g.oldest(most)
	}
	if victim != nil {
		g.drop(victim)
	}
	c.pending = true
	g.pending = append(g.pending, c)
	g.conns[c.addrs] = c
	return victim
}

// oldest is the oldest connection of host in its handshake that has
// sent nothing, or the oldest of host if all have. Called with mu held.
func (g *guard) oldest(host string) *guardedConn {
	var first *guardedConn
	for _, p := range g.pending {
		if p.host != host {
			continue
		}
		if !p.heard.Load() {
			return p
		}
		if first == nil {
			first = p
		}
	}
	return first
}

// drop takes c out of the pending list. Called with mu held.
func (g *guard) drop(c *guardedConn) {
	for i, p := range g.pending {
		if p == c {
			g.pending = append(g.pending[:i], g.pending[i+1:]...)
			break
		}
	}
	c.pending = false
}

// forget takes a closed connection out of every count.
func (g *guard) forget(c *guardedConn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	if c.pending {
		g.drop(c)
	}
	if c.up {
		g.up--
		if c.identity != "" {
			if g.upBy[c.identity]--; g.upBy[c.identity] == 0 {
				delete(g.upBy, c.identity)
			}
		}
	}
	delete(g.conns, c.addrs)
}

// refuseAfter is how long a connection refused once its transport is up
// stays open: long enough for its client to read the refusal of its
// first request, which names the limit.
const refuseAfter = 2 * time.Second

// authenticated moves the connection between local and remote from the
// handshake to the authenticated connections, identity's under mutual
// TLS, and returns it, or why it may not stay: a connection past
// MaxConnections, or its identity's MaxConnectionsPerIdentity, is closed
// after refuseAfter, its requests refused meanwhile with the reason. A
// connection the guard does not know (from a listener it does not
// guard) passes.
func (g *guard) authenticated(local, remote net.Addr, identity *Identity) (*guardedConn, string) {
	if local == nil || remote == nil {
		return nil, ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.conns[connAddrs{local.String(), remote.String()}]
	if c == nil || c.closed || c.up {
		return nil, ""
	}
	if c.pending {
		g.drop(c)
	}
	why := ""
	key := identity.key()
	switch {
	case g.up >= g.lim.maxConns:
		why = fmt.Sprintf("this switch keeps at most %d client connections and all are open: close one (or start it with a higher --grpc-max-connections)", g.lim.maxConns)
	case key != "" && g.upBy[key] >= g.lim.connsPerID:
		why = fmt.Sprintf("client %s holds %d connections, the most one identity may (--grpc-max-connections-per-identity): close one", identity, g.lim.connsPerID)
	}
	if why != "" {
		time.AfterFunc(refuseAfter, func() { c.Close() })
		return nil, why
	}
	c.up, c.identity = true, key
	g.up++
	if key != "" {
		g.upBy[key]++
	}
	return c, ""
}

// Connections are how many client connections the server's guarded
// listeners hold: in their handshake, and authenticated.
func (s *Server) Connections() (handshaking, authenticated int) {
	g := s.guard
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending), g.up
}
