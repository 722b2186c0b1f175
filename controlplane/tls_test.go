package controlplane

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/internal/pki"
)

// A switch that ends the connection right after the handshake, without
// an alert (BMv2's gRPC refusing a client certificate, or its absence,
// under TLS 1.3), is told for what it most likely is: one that wants a
// client certificate its CA signed.
func TestCheckTLSClosedWithoutAlert(t *testing.T) {
	ca, err := pki.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue(pki.Names{CommonName: "switch", Hosts: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := leaf.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequestClientCert})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			// Closed under TLS, not with an alert: the raw socket.
			c.(*tls.Conn).NetConn().Close()
		}
	}()
	client, err := ca.Issue(pki.Names{CommonName: "controller"})
	if err != nil {
		t.Fatal(err)
	}
	clientPair, err := client.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		certs []tls.Certificate
		want  string
	}{
		{nil, "requires a client certificate signed by its CA (mutual TLS) does when none was given"},
		{[]tls.Certificate{clientPair}, "does when this controller's is not one its CA signed"},
	} {
		err := CheckTLS(ctx, ln.Addr().String(), &tls.Config{RootCAs: ca.Pool(), Certificates: tc.certs, MinVersion: tls.VersionTLS13})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d client certificates: %v, want %q", len(tc.certs), err, tc.want)
		}
	}
}

// A switch that closes connections before their TLS handshake is done
// (one at its limit of connections in their handshake) is tried again,
// and then told for what it is, without a word against the controller's
// certificate.
func TestCheckTLSClosedBeforeHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	ca, err := pki.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Issue(pki.Names{CommonName: "controller"})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := client.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = CheckTLS(ctx, ln.Addr().String(), &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{pair}})
	if err == nil || !strings.Contains(err.Error(), "before the TLS handshake was done") || strings.Contains(err.Error(), "certificate") {
		t.Errorf("a switch closing before the handshake: %v, want it told so, with no word of certificates", err)
	}
	if n := accepted.Load(); n < 2 {
		t.Errorf("%d tries, want more than one", n)
	}
}
