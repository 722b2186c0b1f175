package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// TLS says how a session secures its connection to a switch: P4Runtime
// over TLS, the switch's certificate verified, and the controller's own
// presented when the switch asks for one (mutual TLS). p4runtime-shell's
// --ssl, --cacert, --cert and --private-key say the same.
type TLS struct {
	// CACert is a PEM file of the CA that signed the switch's
	// certificate; empty: the system's roots.
	CACert string
	// Cert and Key are PEM files of the controller's certificate and
	// key, both or neither.
	Cert, Key string
}

// Config reads the files. Errors name the file.
func (t TLS) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CACert != "" {
		pem, err := os.ReadFile(t.CACert)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate in it", t.CACert)
		}
		cfg.RootCAs = pool
	}
	switch {
	case t.Cert != "" && t.Key != "":
		pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("%s and %s: %v", t.Cert, t.Key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case t.Cert != "" || t.Key != "":
		return nil, errors.New("a client certificate needs its key, and a key its certificate")
	}
	return cfg, nil
}

// WithTLS opens the session over TLS with cfg (from TLS.Config); without
// it, sessions speak plain text, as to BMv2 and p4switch by default.
func WithTLS(cfg *tls.Config) Option { return func(s *Session) { s.tls = cfg } }

// CheckTLS makes a TLS handshake with the switch at addr, so that what
// would otherwise show only as a switch that never answers is told at
// once, for what it is: a switch that serves plain text, a certificate
// signed by a CA cfg does not trust or issued for another name, a
// client certificate refused or missing, a switch that closes
// connections before their handshake is done (one at its limit of
// connections in their handshake), which it tries again within ctx.
func CheckTLS(ctx context.Context, addr string, cfg *tls.Config) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	c := cfg.Clone()
	if c.ServerName == "" {
		c.ServerName = host
	}
	c.NextProtos = []string{"h2"}
	for try := 1; ; try++ {
		err := handshake(ctx, addr, c)
		var early *closedEarly
		if !errors.As(err, &early) || try == handshakeTries {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(try) * 100 * time.Millisecond):
		}
	}
}

// handshakeTries is how many times CheckTLS tries a switch that closes
// connections before their handshake is done: one that displaces the
// oldest of its connections in their handshake when they are too many
// takes the next try unless a flood of them came within its
// milliseconds.
const handshakeTries = 4

// closedEarly is a connection the switch closed before the handshake
// was done: for want of room, not for anything this controller sent.
type closedEarly struct{ addr string }

func (e *closedEarly) Error() string {
	return fmt.Sprintf("%s: the switch closed the connection before the TLS handshake was done, %d times: a switch at its limit of connections in their handshake closes the oldest (is something holding many open?)",
		e.addr, handshakeTries)
}

// handshake is one try of CheckTLS.
func handshake(ctx context.Context, addr string, c *tls.Config) error {
	d := tls.Dialer{Config: c}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			return &closedEarly{addr}
		}
		return fmt.Errorf("%s: TLS: %s", addr, tlsWhy(err, len(c.Certificates) > 0))
	}
	// With TLS 1.3 the switch judges the client's certificate after
	// the client's side of the handshake is done: its verdict is the
	// first thing read. A gRPC server sends its settings at once.
	defer conn.Close()
	wait := time.Second
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl))
	}
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	var b [1]byte
	_, err = conn.Read(b[:])
	var ne net.Error
	if err == nil || errors.As(err, &ne) && ne.Timeout() {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%s: TLS: %s", addr, tlsWhy(err, len(c.Certificates) > 0))
}

// tlsWhy words a failed handshake, or a connection closed right after
// it; gaveCert says the controller offered a certificate of its own.
func tlsWhy(err error, gaveCert bool) string {
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var rec tls.RecordHeaderError
	msg := err.Error()
	switch {
	case errors.As(err, &rec):
		return "the switch does not speak TLS (it serves P4Runtime in plain text?)"
	case errors.As(err, &ua):
		return "the switch's certificate is not signed by a CA this controller trusts (" + msg + ")"
	case errors.As(err, &hn):
		return "the switch's certificate is not for this address (" + msg + ")"
	case strings.Contains(msg, "certificate required"):
		// Go's client sends no certificate the switch's CA did not sign.
		return "the switch requires a client certificate signed by its CA (mutual TLS): none was given, or not one its CA signed"
	case strings.Contains(msg, "bad certificate") || strings.Contains(msg, "unknown certificate authority"):
		return "the switch refused this controller's certificate (" + msg + ")"
	case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		// Once the handshake is done: BMv2's gRPC closes the
		// connection without an alert when it refuses the client's
		// certificate under TLS 1.3.
		if gaveCert {
			return "the switch closed the connection right after the handshake without saying why, as one that requires a client certificate signed by its CA (mutual TLS) does when this controller's is not one its CA signed"
		}
		return "the switch closed the connection right after the handshake without saying why, as one that requires a client certificate signed by its CA (mutual TLS) does when none was given"
	}
	return msg
}
