package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// CheckAddr checks a switch's P4Runtime address, HOST:PORT, before it is
// dialled: a missing port or one out of range is told as such, where
// gRPC would wait out its deadline and say only that nothing answered.
func CheckAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want HOST:PORT, such as 127.0.0.1:9559", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port %q is not a port number, 1 to 65535", addr, port)
	}
	return nil
}

// ErrNoListener is Reach's error for an address where nothing listens.
var ErrNoListener = errors.New("nothing listens there")

// Reach checks, before a session waits for a P4Runtime server at addr,
// that something listens there: a host that does not resolve and a port
// that refuses connections (ErrNoListener) are told at once, each for
// what it is, rather than after the session's whole deadline as "no
// answer". A port that takes connections passes, P4Runtime or not: the
// session finds out. Reach gives up, with ctx's error, when ctx ends.
func Reach(ctx context.Context, addr string) error {
	if err := CheckAddr(addr); err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(addr)
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		c.Close()
		return nil
	}
	var dns *net.DNSError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &dns):
		return fmt.Errorf("%s: host %q does not resolve (%s)", addr, host, dns.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%s: %w (connection refused): is the switch running, with its P4Runtime server on this port?", addr, ErrNoListener)
	}
	return fmt.Errorf("%s: %w", addr, err)
}
