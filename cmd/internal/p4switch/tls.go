package p4switch

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"

	"google.golang.org/grpc/credentials"

	"github.com/p4rcm/p4rcm/p4rt"
)

// grpcSecurity are the P4Runtime server's TLS options, simple_switch_grpc's
// five (after "--"), and p4switch's policy.
type grpcSecurity struct {
	ssl        bool
	cacert     string
	cert       string
	key        string
	clientAuth bool
	policy     string
}

// check refuses what simple_switch_grpc refuses (TLS without a
// certificate and key) and, where it warns and goes on in plain text
// (certificate files or client auth without --grpc-server-ssl), refuses
// too: a switch its operator believes secured must not serve plain text.
func (g *grpcSecurity) check() error {
	switch {
	case !g.ssl && (g.cacert != "" || g.cert != "" || g.key != ""):
		return usage("after --: --grpc-server-cacert, --grpc-server-cert and --grpc-server-key need --grpc-server-ssl; without it P4Runtime would be served in plain text")
	case !g.ssl && g.clientAuth:
		return usage("after --: --grpc-server-with-client-auth needs --grpc-server-ssl (and --grpc-server-cacert)")
	case g.ssl && (g.cert == "" || g.key == ""):
		return usage("after --: --grpc-server-ssl needs --grpc-server-cert and --grpc-server-key, the switch's certificate and key")
	case g.clientAuth && g.cacert == "":
		return usage("after --: --grpc-server-with-client-auth needs --grpc-server-cacert, the CA that signs the controllers' certificates")
	case g.policy != "" && !g.clientAuth:
		return usage("after --: --grpc-server-policy names client certificates: it needs --grpc-server-ssl and --grpc-server-with-client-auth")
	}
	return nil
}

// credentials are the gRPC server's transport credentials, nil for plain
// text, and the policy, nil for none. Files that cannot be read or
// parsed are wrong starts, named by flag and path.
func (g *grpcSecurity) credentials() (credentials.TransportCredentials, *p4rt.Policy, error) {
	if !g.ssl {
		return nil, nil, nil
	}
	pair, err := tls.LoadX509KeyPair(g.cert, g.key)
	if err != nil {
		return nil, nil, usage("--grpc-server-cert %s, --grpc-server-key %s: %v", g.cert, g.key, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if g.cacert != "" {
		pem, err := os.ReadFile(g.cacert)
		if err != nil {
			return nil, nil, usage("--grpc-server-cacert: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, usage("--grpc-server-cacert %s: no PEM certificate in it", g.cacert)
		}
		// As simple_switch_grpc: the CA verifies clients only when they
		// are asked for a certificate (--grpc-server-with-client-auth).
		if g.clientAuth {
			cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
		}
	}
	var policy *p4rt.Policy
	if g.policy != "" {
		if policy, err = p4rt.LoadPolicy(g.policy); err != nil {
			return nil, nil, usage("--grpc-server-policy: %v", err)
		}
	}
	return credentials.NewTLS(cfg), policy, nil
}

// loopback reports whether a listening address is reachable from this
// host only.
func loopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// plainTextWarning is printed when P4Runtime is served in plain text
// beyond loopback: anyone who reaches the port can take the switch.
func plainTextWarning(addr net.Addr) string {
	return fmt.Sprintf("p4switch: warning: P4Runtime on %s in plain text, with no client authentication: anyone who reaches it can take the switch (see --grpc-server-ssl and --grpc-server-with-client-auth)\n", addr)
}
