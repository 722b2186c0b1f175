package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/internal/pki"
	"github.com/p4rcm/p4rcm/switchproc"
)

// tlsLab is a CA made for a test, the switch's files and a
// controller's ("ctl").
type tlsLab struct {
	ca        *pki.CA
	dir       string
	server    pki.Files
	ctl       pki.Files
	ctlFlags  []string
	strangers pki.Files // a controller whose certificate another CA signed
}

func newTLSLab(t *testing.T) *tlsLab {
	t.Helper()
	l := &tlsLab{dir: t.TempDir()}
	var err error
	if l.ca, err = pki.NewCA("p4ctl test CA"); err != nil {
		t.Fatal(err)
	}
	issue := func(ca *pki.CA, dir, name string, n pki.Names) pki.Files {
		leaf, err := ca.Issue(n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ca.WriteFiles(dir, name, leaf)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	l.server = issue(l.ca, l.dir, "switch", pki.Names{CommonName: "switch", Hosts: []string{"127.0.0.1"}})
	l.ctl = issue(l.ca, l.dir, "ctl", pki.Names{CommonName: "ctl"})
	other, err := pki.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	l.strangers = issue(other, t.TempDir(), "stranger", pki.Names{CommonName: "ctl"})
	l.ctlFlags = []string{"--ssl", "--cacert", l.ctl.CACert, "--cert", l.ctl.Cert, "--private-key", l.ctl.Key}
	return l
}

// startTLSTarget starts a switch serving P4Runtime over mutual TLS.
func startTLSTarget(t *testing.T, l *tlsLab) string {
	t.Helper()
	target, bin := p4switchbin.Choose(t)
	addr, thrift := freeSwitchAddr(t)
	sw, err := switchproc.Start(context.Background(), switchproc.Config{Name: "s1", GRPCAddr: addr, ThriftPort: thrift, LogDir: t.TempDir(),
		Target: target, Binary: bin, TLS: &switchproc.ServerTLS{CACert: l.server.CACert, Cert: l.server.Cert, Key: l.server.Key, ClientAuth: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Stop() })
	return addr
}

// The switch commands over mutual TLS with p4runtime-shell's flags: a
// pipeline set, an entry added and dumped; without --ssl, without a
// client certificate, with another CA's, the command fails saying why;
// the TLS flags without --ssl are wrong usage.
func TestSwitchCommandsOverTLS(t *testing.T) {
	l := newTLSLab(t)
	addr := startTLSTarget(t, l)
	with := func(args ...string) []string { return append(args, l.ctlFlags...) }
	ok(t, addr, with("pipeline", "set")...)
	ok(t, addr, with("table", "add", "ipv4_lpm", "dst_addr=10.0.1.0/24", "--action", route)...)
	if got := ok(t, addr, with("table", "dump", "ipv4_lpm")...); !strings.Contains(got, "10.0.1.0/24") {
		t.Errorf("dump over TLS: %s", got)
	}
	fails(t, addr, 1, []string{"give --ssl"}, "table", "dump", "ipv4_lpm", "--timeout", "2s")
	fails(t, addr, 1, []string{"requires a client certificate"}, "table", "dump", "ipv4_lpm", "--ssl", "--cacert", l.ctl.CACert)
	fails(t, addr, 1, []string{"not one its CA signed"}, "table", "dump", "ipv4_lpm",
		"--ssl", "--cacert", l.ctl.CACert, "--cert", l.strangers.Cert, "--private-key", l.strangers.Key)
	fails(t, addr, 1, []string{"not signed by a CA this controller trusts"}, "table", "dump", "ipv4_lpm",
		"--ssl", "--cacert", l.strangers.CACert, "--cert", l.ctl.Cert, "--private-key", l.ctl.Key)
	fails(t, addr, 2, []string{"--cacert makes no sense without --ssl"}, "table", "dump", "ipv4_lpm", "--cacert", l.ctl.CACert)
	fails(t, addr, 2, []string{"--cert and --private-key go together"}, "table", "dump", "ipv4_lpm", "--ssl", "--cert", l.ctl.Cert)
	fails(t, addr, 2, []string{"missing.pem"}, "table", "dump", "ipv4_lpm", "--ssl", "--cacert", filepath.Join(l.dir, "missing.pem"))
}

// fabric apply reaches each switch as its entry in the --switches file
// says: one over mutual TLS (paths relative to the file), one in plain
// text.
func TestFabricApplyOverTLS(t *testing.T) {
	l := newTLSLab(t)
	secure := startTLSTarget(t, l)
	plain, _ := startTarget(t)
	file := filepath.Join(l.dir, "switches.json")
	body := fmt.Sprintf(`{"s1": {"addr": %q, "device_id": 0, "ssl": true, "cacert": "ca.crt", "cert": "ctl.crt", "private_key": "ctl.key"},
 "s2": {"addr": %q, "device_id": 0}}`, secure, plain)
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := fabricApply(t, 0, "--topology", "../../mininet/dumbbell.json", "--switches", file)
	if !strings.Contains(out, "applied: 2 switches") {
		t.Errorf("fabric apply over TLS and plain text:\n%s", out)
	}
	bad := filepath.Join(l.dir, "bad.json")
	os.WriteFile(bad, []byte(fmt.Sprintf(`{"s1": {"addr": %q, "device_id": 0, "cacert": "ca.crt"}, "s2": {"addr": %q}}`, secure, plain)), 0o644)
	if out := fabricApply(t, 2, "--topology", "../../mininet/dumbbell.json", "--switches", bad); !strings.Contains(out, `need "ssl": true`) {
		t.Errorf("cacert without ssl in the file:\n%s", out)
	}
}
