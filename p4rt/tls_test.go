package p4rt_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/p4rcm/p4rcm/internal/pki"
	"github.com/p4rcm/p4rcm/p4rt"
	"github.com/p4rcm/p4rcm/v1model"
)

// lab is a CA made for one test, with a certificate for the switch at
// 127.0.0.1.
type lab struct {
	ca     *pki.CA
	server *pki.Leaf
}

func newLab(t testing.TB) *lab {
	t.Helper()
	ca, err := pki.NewCA("p4rt test CA")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Issue(pki.Names{CommonName: "switch", Hosts: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	return &lab{ca: ca, server: srv}
}

// client is a certificate for a controller called cn.
func (l *lab) client(t testing.TB, cn string, uris ...string) *pki.Leaf {
	t.Helper()
	return l.issue(t, pki.Names{CommonName: cn, URIs: uris})
}

// issue is a certificate with the names n.
func (l *lab) issue(t testing.TB, n pki.Names) *pki.Leaf {
	t.Helper()
	c, err := l.ca.Issue(n)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (l *lab) pool() *x509.CertPool { return l.ca.Pool() }

// serveTLS starts a server over TLS with the lab's certificate, asking
// clients for theirs (signed by the lab's CA) when clientAuth, and
// returns its address.
func serveTLS(t testing.TB, l *lab, cfg p4rt.Config, clientAuth bool) (*p4rt.Server, string) {
	t.Helper()
	pair, err := l.server.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{pair}}
	if clientAuth {
		tc.ClientCAs, tc.ClientAuth = l.pool(), tls.RequireAndVerifyClientCert
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := p4rt.New(cfg)
	g := srv.NewGRPCServer(grpc.Creds(credentials.NewTLS(tc)))
	go func() { _ = g.Serve(srv.Listener(lis)) }()
	t.Cleanup(g.Stop)
	return srv, lis.Addr().String()
}

// dialTLS is a client of addr trusting roots, presenting leaf (if any).
func dialTLS(t testing.TB, addr string, roots *x509.CertPool, leaf *pki.Leaf) (p4v1.P4RuntimeClient, *grpc.ClientConn) {
	t.Helper()
	tc := &tls.Config{RootCAs: roots}
	if leaf != nil {
		pair, err := leaf.TLSCertificate()
		if err != nil {
			t.Fatal(err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(tc)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return p4v1.NewP4RuntimeClient(conn), conn
}

// capabilities is the code of a Capabilities call, given a few seconds.
func capabilities(c p4v1.P4RuntimeClient) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Capabilities(ctx, &p4v1.CapabilitiesRequest{})
	return err
}

// P4Runtime over TLS, and over mutual TLS: a controller with a
// certificate the CA signed arbitrates, sets a pipeline and writes; one
// without a certificate, one whose certificate another CA signed, one
// that does not trust the switch's CA and one speaking plain text are
// all refused before any RPC is served.
func TestTLS(t *testing.T) {
	p := loadProgram(t, "tables")
	l := newLab(t)
	t.Run("server only", func(t *testing.T) {
		_, addr := serveTLS(t, l, p4rt.Config{DeviceID: device}, false)
		c, _ := dialTLS(t, addr, l.pool(), nil)
		if err := capabilities(c); err != nil {
			t.Fatalf("a TLS client: %v", err)
		}
		ct := connect(t, c, 1)
		if code, _ := ct.arbitration(); code != codes.OK {
			t.Fatalf("arbitration over TLS: %v", code)
		}
		setPipeline(t, c, ct, p, 1)
	})
	_, addr := serveTLS(t, l, p4rt.Config{DeviceID: device}, true)
	c, _ := dialTLS(t, addr, l.pool(), l.client(t, "ctl"))
	if err := capabilities(c); err != nil {
		t.Fatalf("a client with the CA's certificate: %v", err)
	}
	ct := connect(t, c, 1)
	if code, _ := ct.arbitration(); code != codes.OK {
		t.Fatalf("arbitration over mutual TLS: %v", code)
	}
	setPipeline(t, c, ct, p, 1)
	entry := &p4v1.TableEntry{TableId: id(t, p.info, "IngressT.exact_t"), Match: []*p4v1.FieldMatch{exact(1, 1), exact(2, 1)},
		Action: action(id(t, p.info, "IngressT.set_exact"), []byte{1})}
	if got := write(t, c, ct, ins(entry)); got[0] != codes.OK {
		t.Fatalf("a write over mutual TLS: %v", got)
	}

	other := newLab(t)
	for name, c := range map[string]p4v1.P4RuntimeClient{
		"no client certificate":        first(dialTLS(t, addr, l.pool(), nil)),
		"a certificate of another CA":  first(dialTLS(t, addr, l.pool(), other.client(t, "ctl"))),
		"the switch's CA not trusted":  first(dialTLS(t, addr, other.pool(), l.client(t, "ctl"))),
		"plain text to the TLS server": plainClient(t, addr),
	} {
		if err := capabilities(c); status.Code(err) != codes.Unavailable && status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("%s: %v, want the connection refused", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

func first(c p4v1.P4RuntimeClient, _ *grpc.ClientConn) p4v1.P4RuntimeClient { return c }

func plainClient(t testing.TB, addr string) p4v1.P4RuntimeClient {
	return p4v1.NewP4RuntimeClient(plainClientConn(t, addr))
}

// plainClientConn is plainClient's connection, which the test may close.
func plainClientConn(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// p4runtime-go-client, unchanged, over mutual TLS: it is only handed a
// gRPC connection with TLS credentials.
func TestGoClientOverTLS(t *testing.T) {
	p := loadProgram(t, "tables")
	l := newLab(t)
	_, addr := serveTLS(t, l, p4rt.Config{DeviceID: device, Switch: v1model.Config{}}, true)
	_, conn := dialTLS(t, addr, l.pool(), l.client(t, "go-client"))
	g := client.NewClient(p4v1.NewP4RuntimeClient(conn), device, &p4v1.Uint128{Low: 1})
	primary, msgs, stop, done := make(chan bool, 10), make(chan *p4v1.StreamMessageResponse, 10), make(chan struct{}), make(chan struct{})
	go func() { defer close(done); _ = g.Run(stop, primary, msgs) }()
	t.Cleanup(func() { close(stop); <-done })
	select {
	case ok := <-primary:
		if !ok {
			t.Fatal("not primary")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no arbitration over TLS")
	}
	info, err := prototext.Marshal(p.info)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := g.SetFwdPipeFromBytes(ctx, p.json, info, 7); err != nil {
		t.Fatal(err)
	}
	e := g.NewTableEntry("IngressT.exact_t", map[string]client.MatchInterface{
		"hdr.keys.proto": &client.ExactMatch{Value: []byte{1}}, "hdr.keys.flags": &client.ExactMatch{Value: []byte{2}}},
		g.NewTableActionDirect("IngressT.set_exact", [][]byte{{5}}), nil)
	if err := g.InsertTableEntry(ctx, e); err != nil {
		t.Fatal(err)
	}
	if got, err := g.ReadTableEntryWildcard(ctx, "IngressT.exact_t"); err != nil || len(got) != 1 {
		t.Errorf("read back over TLS: %v, %v", got, err)
	}
}
