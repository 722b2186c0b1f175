package p4rt_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/internal/pki"
	"github.com/p4rcm/p4rcm/p4rt"
	"github.com/p4rcm/p4rcm/switchproc"
)

// exactEntry is an entry of tables.p4's exact_t for key k.
func exactEntry(t testing.TB, p program, k byte) *p4v1.TableEntry {
	return &p4v1.TableEntry{TableId: id(t, p.info, "IngressT.exact_t"), Match: []*p4v1.FieldMatch{exact(1, k), exact(2, k)},
		Action: action(id(t, p.info, "IngressT.set_exact"), []byte{k})}
}

// streamEnd waits for a controller's stream to end and returns its
// status.
func streamEnd(t testing.TB, ct *controller) error {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case m, ok := <-ct.msgs:
			if !ok {
				_, err := ct.stream.Recv()
				return err
			}
			t.Logf("before the stream's end: %v", m)
		case <-deadline:
			ct.cancel()
			return errors.New("the stream is still open after 5 s")
		}
	}
}

// writePolicy writes a policy file naming writers.
func writePolicy(t testing.TB, writers ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, []byte(`{"writers": ["`+strings.Join(writers, `", "`)+`"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Under mutual TLS with a policy naming the controllers that may be
// primary, a client the CA vouches for but the policy does not name
// can neither take the role with the highest election ID there is (its
// stream ends PERMISSION_DENIED, the primary keeps the role and its
// writes) nor raise the ID the primary must beat; it may not follow as
// a backup either (no stream at all), it reads, and its write in the
// primary's name is refused. A controller named by a URI SAN (a SPIFFE ID) may be
// primary too.
func TestPolicy(t *testing.T) {
	p := loadProgram(t, "tables")
	l := newLab(t)
	policyFile := writePolicy(t, "cn:ctl-a", "uri:spiffe://fabric.example/ctl-b")
	policy, err := p4rt.LoadPolicy(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	_, addr := serveTLS(t, l, p4rt.Config{DeviceID: device, Policy: policy}, true)
	a, _ := dialTLS(t, addr, l.pool(), l.client(t, "ctl-a"))
	ca := connect(t, a, 1)
	if code, _ := ca.arbitration(); code != codes.OK {
		t.Fatalf("ctl-a, named by the policy: %v, want OK", code)
	}
	setPipeline(t, a, ca, p, 1)

	intruder, _ := dialTLS(t, addr, l.pool(), l.client(t, "intruder"))
	takeover := openStream(t, intruder)
	takeover.send(&p4v1.Uint128{High: math.MaxUint64, Low: math.MaxUint64})
	if err := streamEnd(t, takeover); status.Code(err) != codes.PermissionDenied {
		t.Errorf("an identity the policy does not name, election ID 2^128-1: %v, want PermissionDenied", err)
	} else {
		t.Logf("takeover refused: %v", status.Convert(err).Message())
	}
	if got := write(t, a, ca, ins(exactEntry(t, p, 1))); got[0] != codes.OK {
		t.Errorf("the primary's write after the attempt: %v, want OK", got)
	}
	// ctl-a's own ID, 2, still beats the highest seen: the intruder's
	// never counted.
	ca.arbitrate(2)
	if code, e := ca.arbitration(); code != codes.OK || e != 2 {
		t.Errorf("ctl-a moving to election ID 2: %v %d, want OK 2", code, e)
	}

	backup := openStream(t, intruder)
	backup.send(nil)
	if err := streamEnd(t, backup); status.Code(err) != codes.PermissionDenied {
		t.Errorf("the intruder as a backup without an ID: %v, want PermissionDenied (streams are the policy's controllers')", err)
	}
	if got := readAll(t, intruder, entity(&p4v1.TableEntry{TableId: id(t, p.info, "IngressT.exact_t")})); len(got) != 1 {
		t.Errorf("the intruder reads %d entries, want 1", len(got))
	}
	spoof := &controller{t: t, election: &p4v1.Uint128{Low: 2}}
	if got := write(t, intruder, spoof, ins(exactEntry(t, p, 2))); got[0] != codes.PermissionDenied {
		t.Errorf("the intruder writing with the primary's election ID: %v, want PermissionDenied", got)
	}

	b, _ := dialTLS(t, addr, l.pool(), l.client(t, "ctl-b", "spiffe://fabric.example/ctl-b"))
	cb := connect(t, b, 3)
	if code, _ := cb.arbitration(); code != codes.OK {
		t.Errorf("ctl-b, named by its URI SAN, with a higher ID: %v, want OK", code)
	}

	for body, want := range map[string]string{`{"writers": []}`: "no writers", `{"writer": ["x"]}`: "unknown field", `{"writers": [""]}`: "empty name"} {
		f := filepath.Join(t.TempDir(), "p.json")
		os.WriteFile(f, []byte(body), 0o644)
		if _, err := p4rt.LoadPolicy(f); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), f) {
			t.Errorf("policy %s: %v, want an error naming the file and %q", body, err, want)
		}
	}
}

// A policy entry says which kind of name it is and matches names of
// that kind only: under "dns:ctl.fabric.example", a certificate whose
// only name of that spelling is an e-mail address, a URI or its common
// name may not be primary; one with the DNS name may. An entry without a
// kind is refused, naming it.
func TestPolicyNameKinds(t *testing.T) {
	const name = "ctl.fabric.example"
	l := newLab(t)
	policy, err := p4rt.LoadPolicy(writePolicy(t, "dns:"+name))
	if err != nil {
		t.Fatal(err)
	}
	_, addr := serveTLS(t, l, p4rt.Config{DeviceID: device, Policy: policy}, true)
	for what, names := range map[string]pki.Names{
		"an e-mail address": {CommonName: "mail", Emails: []string{name}},
		"a URI":             {CommonName: "uri", URIs: []string{name}},
		"a common name":     {CommonName: name},
	} {
		c, _ := dialTLS(t, addr, l.pool(), l.issue(t, names))
		ct := openStream(t, c)
		ct.send(&p4v1.Uint128{Low: 9})
		if err := streamEnd(t, ct); status.Code(err) != codes.PermissionDenied {
			t.Errorf("%s spelt %s, under the policy's DNS name: %v, want PermissionDenied", what, name, err)
		}
	}
	c, _ := dialTLS(t, addr, l.pool(), l.issue(t, pki.Names{CommonName: "dns", Hosts: []string{strings.ToUpper(name)}}))
	if code, _ := connect(t, c, 1).arbitration(); code != codes.OK {
		t.Errorf("the DNS name (in capitals, as DNS names compare): %v, want OK", code)
	}

	for body, want := range map[string]string{
		`{"writers": ["` + name + `"]}`:      `writer "` + name + `" names no kind`,
		`{"writers": ["fqdn:` + name + `"]}`: `writer "fqdn:` + name + `" names no kind`,
		`{"writers": ["ip:not-an-address"]}`: "not a name of kind ip",
	} {
		f := filepath.Join(t.TempDir(), "p.json")
		os.WriteFile(f, []byte(body), 0o644)
		if _, err := p4rt.LoadPolicy(f); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("policy %s: %v, want an error saying %q", body, err, want)
		}
	}
}

// send sends an arbitration request with election (nil: none); as
// arbitrate, a stream the server has ended already is seen on msgs.
func (c *controller) send(election *p4v1.Uint128) {
	if err := c.stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
		Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: device, ElectionId: election}}}); err != nil && !errors.Is(err, io.EOF) {
		c.t.Fatal(err)
	}
}

// A write (or a pipeline change) carrying the primary's election ID is
// taken only over the primary's own connection: a backup on a
// connection of its own, and a client with no stream at all, that give
// the ID the arbitration notices announce are refused. Under mutual TLS
// a second connection with the primary's certificate may write for it.
func TestWritesTiedToPrimary(t *testing.T) {
	p := loadProgram(t, "tables")
	_, c, conn := serveWith(t, p4rt.Config{DeviceID: device})
	primary := connect(t, c, 10)
	primary.arbitration()
	setPipeline(t, c, primary, p, 1)
	other := plainClient(t, conn.Target())
	backup := connect(t, other, 5)
	if code, e := backup.arbitration(); code != codes.AlreadyExists || e != 10 {
		t.Fatalf("backup: %v %d", code, e)
	}
	spoofed := &controller{t: t, election: &p4v1.Uint128{Low: e10}}
	if got := write(t, other, spoofed, ins(exactEntry(t, p, 1))); got[0] != codes.PermissionDenied {
		t.Errorf("a backup writing with the primary's election ID from its own connection: %v, want PermissionDenied", got)
	}
	stranger := plainClient(t, conn.Target())
	if got := write(t, stranger, spoofed, ins(exactEntry(t, p, 1))); got[0] != codes.PermissionDenied {
		t.Errorf("a client with no stream writing with the primary's election ID: %v, want PermissionDenied", got)
	}
	if _, err := stranger.SetForwardingPipelineConfig(context.Background(), &p4v1.SetForwardingPipelineConfigRequest{DeviceId: device,
		ElectionId: spoofed.election, Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config: &p4v1.ForwardingPipelineConfig{P4Info: p.info, P4DeviceConfig: p.json}}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a pipeline set in the primary's name from another connection: %v, want PermissionDenied", err)
	}
	if got := write(t, c, primary, ins(exactEntry(t, p, 1))); got[0] != codes.OK {
		t.Errorf("the primary's own write: %v", got)
	}

	t.Run("mutual TLS", func(t *testing.T) {
		l := newLab(t)
		_, addr := serveTLS(t, l, p4rt.Config{DeviceID: device}, true)
		ctl := l.client(t, "ctl")
		a, _ := dialTLS(t, addr, l.pool(), ctl)
		ca := connect(t, a, 1)
		ca.arbitration()
		setPipeline(t, a, ca, p, 1)
		same, _ := dialTLS(t, addr, l.pool(), ctl)
		if got := write(t, same, ca, ins(exactEntry(t, p, 1))); got[0] != codes.OK {
			t.Errorf("the primary's certificate on a second connection: %v, want OK", got)
		}
		else_, _ := dialTLS(t, addr, l.pool(), l.client(t, "ctl"))
		if got := write(t, else_, ca, ins(exactEntry(t, p, 2))); got[0] != codes.OK {
			t.Errorf("another certificate with the same names: %v, want OK (the same identity)", got)
		}
		bob, _ := dialTLS(t, addr, l.pool(), l.client(t, "bob"))
		if got := write(t, bob, ca, ins(exactEntry(t, p, 3))); got[0] != codes.PermissionDenied {
			t.Errorf("another identity in the primary's name: %v, want PermissionDenied", got)
		}
	})
}

const e10 = 10

// The same through a p4switch process started with simple_switch_grpc's
// TLS flags and a policy: the controller it names is primary and
// writes; another the CA signed cannot take over with the highest ID,
// and its write in the primary's name is refused.
func TestTargetProcessMutualTLS(t *testing.T) {
	bin, err := p4switchbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	l := newLab(t)
	dir := t.TempDir()
	sf, err := l.ca.WriteFiles(dir, "switch", l.server)
	if err != nil {
		t.Fatal(err)
	}
	free, err := switchproc.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	grpcPort, thrift := free[0], free[1]
	cfg := switchproc.Config{Name: "p4rt-tls", DeviceID: device, Target: switchproc.TargetGo, Binary: bin, ThriftPort: thrift,
		GRPCAddr: fmt.Sprintf("127.0.0.1:%d", grpcPort), LogDir: dir,
		TLS: &switchproc.ServerTLS{CACert: sf.CACert, Cert: sf.Cert, Key: sf.Key, ClientAuth: true, Policy: writePolicy(t, "cn:ctl")}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := switchproc.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sw.Stop() })
	p := loadProgram(t, "tables")
	c, _ := dialTLS(t, cfg.GRPCAddr, l.pool(), l.client(t, "ctl"))
	ct := connect(t, c, 1)
	if code, _ := ct.arbitration(); code != codes.OK {
		t.Fatalf("the policy's controller: %v", code)
	}
	setPipeline(t, c, ct, p, 1)
	intruder, _ := dialTLS(t, cfg.GRPCAddr, l.pool(), l.client(t, "intruder"))
	takeover := openStream(t, intruder)
	takeover.send(&p4v1.Uint128{High: math.MaxUint64, Low: math.MaxUint64})
	if err := streamEnd(t, takeover); status.Code(err) != codes.PermissionDenied {
		t.Errorf("takeover: %v, want PermissionDenied", err)
	}
	if got := write(t, intruder, ct, ins(exactEntry(t, p, 1))); got[0] != codes.PermissionDenied {
		t.Errorf("the intruder's write in the primary's name: %v, want PermissionDenied", got)
	}
	if got := write(t, c, ct, ins(exactEntry(t, p, 1))); got[0] != codes.OK {
		t.Errorf("the primary's write: %v", got)
	}
	if err := capabilities(plainClient(t, cfg.GRPCAddr)); err == nil {
		t.Error("a plain-text client was served")
	}
}
