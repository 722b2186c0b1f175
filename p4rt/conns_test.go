package p4rt_test

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4rcm/p4rcm/p4rt"
)

// silentSockets opens n TCP connections to addr that send nothing, as a
// local user without credentials can; they close with the test.
func silentSockets(t testing.TB, addr string, n int) []net.Conn {
	t.Helper()
	var out []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("silent socket %d: %v", len(out), err)
		}
		out = append(out, c)
	}
	t.Cleanup(func() {
		for _, c := range out {
			c.Close()
		}
	})
	return out
}

// closedWithin reports how many of cs the server has closed (a read
// ends) within d.
func closedWithin(cs []net.Conn, d time.Duration) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	deadline := time.Now().Add(d)
	for _, c := range cs {
		wg.Go(func() {
			c.SetReadDeadline(deadline)
			var b [64]byte
			for {
				_, err := c.Read(b[:])
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					return
				}
				if err != nil {
					mu.Lock()
					n++
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return n
}

// A hundred sockets that connect and send nothing (no TLS handshake, no
// HTTP/2 preface) count against no cap of the authenticated connections:
// they hold places among the connections in their handshake, at most
// MaxHandshakesPerAddr of one address (the rest displaced at once, the
// oldest first), and are closed after HandshakeTimeout. A controller
// connecting meanwhile is served at once: it arbitrates, sets a pipeline
// and writes within a second.
func TestSilentSocketsLockNoOneOut(t *testing.T) {
	cfg := p4rt.Config{DeviceID: device, HandshakeTimeout: 2 * time.Second}
	srv, _, conn := serveWith(t, cfg)
	silent := silentSockets(t, conn.Target(), 100)
	if n := closedWithin(silent, 500*time.Millisecond); n < 100-p4rt.DefaultMaxHandshakesPerAddr {
		t.Errorf("%d of 100 silent sockets displaced at once, want all but the %d one address may hold in their handshake", n, p4rt.DefaultMaxHandshakesPerAddr)
	}
	if pending, up := srv.Connections(); pending > p4rt.DefaultMaxHandshakesPerAddr || up != 0 {
		t.Errorf("with the silent sockets: %d connections in their handshake (want at most %d), %d authenticated (want 0)", pending, p4rt.DefaultMaxHandshakesPerAddr, up)
	}
	p := loadProgram(t, "tables")
	start := time.Now()
	c := plainClient(t, conn.Target())
	ct := connect(t, c, 1)
	if code, _ := ct.arbitration(); code != codes.OK {
		t.Fatalf("a controller beside 100 silent sockets: %v, want OK", code)
	}
	setPipeline(t, c, ct, p, 1)
	if got := write(t, c, ct, ins(exactEntry(t, p, 1))); got[0] != codes.OK {
		t.Fatalf("its write: %v", got)
	}
	took := time.Since(start)
	t.Logf("beside 100 silent sockets a controller arbitrated, set a pipeline and wrote in %v", took.Round(time.Millisecond))
	if took > time.Second {
		t.Errorf("the controller took %v, want within 1 s", took)
	}
	// The ones left are closed once their handshake's time is up.
	if n := closedWithin(silent, cfg.HandshakeTimeout+2*time.Second); n != 100 {
		t.Errorf("%d of 100 silent sockets closed %v after the handshake deadline, want all", n, 2*time.Second)
	}
}

// A connection that has done its handshake but carries no request is
// closed after IdleTimeout, giving its place back.
func TestIdleConnectionClosed(t *testing.T) {
	srv, c, _ := serveWith(t, p4rt.Config{DeviceID: device, IdleTimeout: time.Second})
	if err := capabilities(c); err != nil {
		t.Fatal(err)
	}
	if _, up := srv.Connections(); up != 1 {
		t.Fatalf("%d connections authenticated after a request, want 1", up)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, up := srv.Connections(); up == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an idle connection still open 5 s after the idle timeout of 1 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := capabilities(c); err != nil {
		t.Errorf("the client's next request, on a new connection: %v", err)
	}
}

// At most MaxConnections authenticated connections: one more is refused
// every request with RESOURCE_EXHAUSTED naming the cap (not closed
// unseen, which a client over TLS took for its certificate refused), and
// closed; once one closes, a new connection is served. Under mutual TLS
// one identity holds at most MaxConnectionsPerIdentity, and another is
// served beside it.
func TestConnectionCap(t *testing.T) {
	_, _, conn := serveWith(t, p4rt.Config{DeviceID: device, MaxConnections: 2})
	a := plainClientConn(t, conn.Target())
	b := plainClient(t, conn.Target())
	for _, c := range []p4v1.P4RuntimeClient{p4v1.NewP4RuntimeClient(a), b} {
		if err := capabilities(c); err != nil {
			t.Fatalf("one of the 2 connections: %v", err)
		}
	}
	third := plainClient(t, conn.Target())
	err := capabilities(third)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "at most 2 client connections") {
		t.Errorf("a third connection of 2: %v, want ResourceExhausted naming the cap", err)
	}
	a.Close()
	deadline := time.Now().Add(20 * time.Second)
	for capabilities(plainClient(t, conn.Target())) != nil {
		if time.Now().After(deadline) {
			t.Fatal("no connection served after one of the 2 closed")
		}
		time.Sleep(50 * time.Millisecond)
	}

	l := newLab(t)
	_, addr := serveTLS(t, l, p4rt.Config{DeviceID: device, MaxConnectionsPerIdentity: 2}, true)
	ctl := l.client(t, "ctl")
	for i := range 2 {
		c, _ := dialTLS(t, addr, l.pool(), ctl)
		if err := capabilities(c); err != nil {
			t.Fatalf("ctl's connection %d of 2: %v", i+1, err)
		}
	}
	c, _ := dialTLS(t, addr, l.pool(), ctl)
	if err := capabilities(c); status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "holds 2 connections") {
		t.Errorf("ctl's third connection of 2: %v, want ResourceExhausted naming the identity's cap", err)
	}
	other, _ := dialTLS(t, addr, l.pool(), l.client(t, "other"))
	if err := capabilities(other); err != nil {
		t.Errorf("another identity beside ctl's 2: %v", err)
	}
}

// Under a policy only the identities it names open streams: forty
// streams of a certificate the CA signed but the policy does not name
// (followers without an election ID) are refused at once with
// PERMISSION_DENIED, and the named controller still gets one, is
// primary and writes. The unnamed identity still reads.
func TestStreamsOnlyForListed(t *testing.T) {
	p := loadProgram(t, "tables")
	l := newLab(t)
	policy, err := p4rt.LoadPolicy(writePolicy(t, "cn:ctl"))
	if err != nil {
		t.Fatal(err)
	}
	_, addr := serveTLS(t, l, p4rt.Config{DeviceID: device, Policy: policy}, true)
	intruder, _ := dialTLS(t, addr, l.pool(), l.client(t, "intruder"))
	for i := range 40 {
		f := openStream(t, intruder)
		f.send(nil)
		if err := streamEnd(t, f); status.Code(err) != codes.PermissionDenied {
			t.Errorf("stream %d of 40 of an identity the policy does not name: %v, want PermissionDenied", i+1, err)
			break
		}
	}
	c, _ := dialTLS(t, addr, l.pool(), l.client(t, "ctl"))
	ct := connect(t, c, 1)
	if code, _ := ct.arbitration(); code != codes.OK {
		t.Fatalf("the named controller after the 40: %v, want OK", code)
	}
	setPipeline(t, c, ct, p, 1)
	if got := write(t, c, ct, ins(exactEntry(t, p, 1))); got[0] != codes.OK {
		t.Errorf("its write: %v", got)
	}
	if got := readAll(t, intruder, entity(&p4v1.TableEntry{TableId: id(t, p.info, "IngressT.exact_t")})); len(got) != 1 {
		t.Errorf("the unnamed identity reads %d entries, want 1", len(got))
	}
}

// One identity holds at most MaxStreamsPerIdentity streams: its next is
// RESOURCE_EXHAUSTED naming that cap, and another identity still gets
// one.
func TestStreamsPerIdentity(t *testing.T) {
	l := newLab(t)
	_, addr := serveTLS(t, l, p4rt.Config{DeviceID: device, MaxStreams: 6, MaxStreamsPerIdentity: 3}, true)
	a, _ := dialTLS(t, addr, l.pool(), l.client(t, "a"))
	for i := range 3 {
		if code, _ := connect(t, a, uint64(10+i)).arbitration(); code != codes.OK && code != codes.AlreadyExists {
			t.Fatalf("a's stream %d of 3: %v", i+1, code)
		}
	}
	extra := connect(t, a, 20)
	if err := streamEnd(t, extra); status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "holds 3 streams") {
		t.Errorf("a's fourth stream of 3: %v, want ResourceExhausted naming the identity's cap", err)
	}
	b, _ := dialTLS(t, addr, l.pool(), l.client(t, "b"))
	if code, _ := connect(t, b, 30).arbitration(); code != codes.OK {
		t.Errorf("b beside a's 3 streams: %v, want OK", code)
	}
}
