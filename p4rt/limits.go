package p4rt

import "time"

// Defaults of the limits on what clients may hold (Config's fields of
// the same names; 0 there takes these).
const (
	// DefaultMaxRecvMsgSize is the largest request the server takes:
	// PI's (simple_switch_grpc's) 256 MiB, where gRPC's own 4 MiB
	// refuses a pipeline of a few thousand table entries' worth of
	// JSON (rcm.json is 2.4 MB) or a large write batch.
	DefaultMaxRecvMsgSize = 256 << 20
	// DefaultMaxRequestBytes bounds the requests that may be received
	// at once, each Write or pipeline counted at the largest it may be:
	// two at a time at the default receive limit (twice the limit when
	// that is set).
	DefaultMaxRequestBytes = 2 * DefaultMaxRecvMsgSize

	// DefaultMaxStreams is how many StreamChannel streams (controllers)
	// the server keeps at once, as PI's server caps them, and
	// DefaultMaxStreamsPerIdentity how many of them one client identity
	// (by its certificate, under mutual TLS) may hold, so that one
	// controller's streams leave room for another's.
	DefaultMaxStreams            = 16
	DefaultMaxStreamsPerIdentity = DefaultMaxStreams / 2

	// DefaultMaxConnections is how many client connections the server
	// keeps once they are authenticated (their TLS handshake done, or
	// HTTP/2's preface read in plain text), and
	// DefaultMaxConnectionsPerIdentity how many of them one identity may
	// hold under mutual TLS.
	DefaultMaxConnections            = 64
	DefaultMaxConnectionsPerIdentity = DefaultMaxConnections / 4
	// DefaultMaxHandshakes is how many connections may be in their
	// handshake at once, DefaultMaxHandshakesPerAddr how many of them
	// from one peer address: past either, the new connection takes the
	// place of the oldest that has sent nothing yet (or the oldest) of
	// the address with most. They count against no cap of the
	// authenticated ones.
	DefaultMaxHandshakes        = 64
	DefaultMaxHandshakesPerAddr = 8
	// DefaultHandshakeTimeout is how long a connection has to finish
	// its handshake (TLS and HTTP/2's preface) before it is closed: a
	// handshake takes milliseconds, and gRPC's own 120 s let idle
	// sockets hold their place for minutes.
	DefaultHandshakeTimeout = 5 * time.Second
	// DefaultIdleTimeout is how long a connection may carry no RPC
	// before the server closes it (gRPC's GOAWAY, which a client's
	// gRPC takes as a cue to connect again when it next needs to).
	DefaultIdleTimeout = 10 * time.Second

	// DefaultKeepaliveTime is how long a client may stay silent before
	// the server pings it, and DefaultKeepaliveTimeout how long it then
	// waits for the answer before it drops the connection: a primary
	// whose process stops answering (SIGSTOP, a hung host, a cut cable)
	// loses its stream, and the role, within their sum after the last
	// frame it sent. gRPC pings no more often than once a second.
	DefaultKeepaliveTime    = time.Second
	DefaultKeepaliveTimeout = 2 * time.Second
	// DefaultBusyTimeout is how long a client that carries a request
	// (sending it, waiting for its answer, receiving it) may stay
	// silent after a ping: a controller pushing a large pipeline on a
	// loaded machine may not be scheduled for seconds, and is busy, not
	// frozen (liveness.go).
	DefaultBusyTimeout = 20 * time.Second
)

// limits are Config's limits with the defaults in place of zeros.
type limits struct {
	maxRecv                      int
	maxRequestBytes              int64
	maxStreams, streamsPerID     int
	maxConns, connsPerID         int
	maxHandshakes, handshakesPer int
	handshake, idle              time.Duration
	keepalive, keepaliveWait     time.Duration
	busy                         time.Duration
}

func or[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func (c *Config) limits() limits {
	l := limits{
		maxRecv:       or(c.MaxRecvMsgSize, DefaultMaxRecvMsgSize),
		maxStreams:    or(c.MaxStreams, DefaultMaxStreams),
		streamsPerID:  or(c.MaxStreamsPerIdentity, DefaultMaxStreamsPerIdentity),
		maxConns:      or(c.MaxConnections, DefaultMaxConnections),
		connsPerID:    or(c.MaxConnectionsPerIdentity, DefaultMaxConnectionsPerIdentity),
		maxHandshakes: or(c.MaxHandshakes, DefaultMaxHandshakes),
		handshakesPer: or(c.MaxHandshakesPerAddr, DefaultMaxHandshakesPerAddr),
		handshake:     or(c.HandshakeTimeout, DefaultHandshakeTimeout),
		idle:          or(c.IdleTimeout, DefaultIdleTimeout),
		keepalive:     or(c.KeepaliveTime, DefaultKeepaliveTime),
		keepaliveWait: or(c.KeepaliveTimeout, DefaultKeepaliveTimeout),
	}
	l.busy = max(or(c.BusyTimeout, DefaultBusyTimeout), l.keepaliveWait)
	// A request of the largest size must fit.
	l.maxRequestBytes = max(or(c.MaxRequestBytes, 2*int64(l.maxRecv)), int64(l.maxRecv))
	return l
}
