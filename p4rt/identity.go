package p4rt

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"google.golang.org/grpc/credentials"
)

// Identity is who a client is, by its certificate, verified against the
// CA the server trusts (mutual TLS).
type Identity struct {
	// Subject is the certificate's subject, as "CN=ctl,O=ops".
	Subject string
	// Names are every name a policy may give for the client, each with
	// its kind (NameKinds): "subject:CN=ctl,O=ops", "cn:ctl",
	// "dns:ctl.example", "uri:spiffe://example/ctl", "ip:10.0.0.1",
	// "email:ops@example".
	Names []string
}

// NameKinds are the kinds of name a policy entry gives, each matching
// only the certificate's names of that kind: the subject as Go prints it,
// its common name, and the subject alternative names by type.
var NameKinds = []string{"subject", "cn", "dns", "uri", "ip", "email"}

func (id *Identity) String() string {
	if id == nil {
		return "no client certificate"
	}
	var others []string
	for _, n := range id.Names {
		if !strings.HasPrefix(n, "subject:") {
			others = append(others, n)
		}
	}
	return fmt.Sprintf("%q (%s)", id.Subject, strings.Join(others, ", "))
}

// key is the identity as one string, for counting what each holds; ""
// for none.
func (id *Identity) key() string {
	if id == nil {
		return ""
	}
	return strings.Join(id.Names, "\n")
}

// same reports whether a and b are the same identity: the same names.
func (id *Identity) same(b *Identity) bool {
	return id != nil && b != nil && slices.Equal(id.Names, b.Names)
}

// identityOf is the identity a TLS handshake verified, nil if none.
func identityOf(auth credentials.AuthInfo) *Identity {
	ti, ok := auth.(credentials.TLSInfo)
	if !ok || len(ti.State.VerifiedChains) == 0 || len(ti.State.VerifiedChains[0]) == 0 {
		return nil
	}
	return certIdentity(ti.State.VerifiedChains[0][0])
}

func certIdentity(c *x509.Certificate) *Identity {
	id := &Identity{Subject: c.Subject.String()}
	add := func(kind, n string) {
		if n == "" {
			return
		}
		if typed, ok := typedName(kind, n); ok && !slices.Contains(id.Names, typed) {
			id.Names = append(id.Names, typed)
		}
	}
	add("subject", id.Subject)
	add("cn", c.Subject.CommonName)
	for _, n := range c.DNSNames {
		add("dns", n)
	}
	for _, u := range c.URIs {
		add("uri", u.String())
	}
	for _, ip := range c.IPAddresses {
		add("ip", ip.String())
	}
	for _, e := range c.EmailAddresses {
		add("email", e)
	}
	return id
}

// typedName is "kind:name" in the form names of that kind are compared
// in: DNS names without case or a final dot, IP addresses canonical
// (::ffff:10.0.0.1 is 10.0.0.1), e-mail addresses with the domain in
// lower case; the others as written. ok is false for a name that is not
// of its kind (an IP entry that is no address).
func typedName(kind, n string) (string, bool) {
	switch kind {
	case "dns":
		n = strings.TrimSuffix(strings.ToLower(n), ".")
	case "ip":
		ip := net.ParseIP(n)
		if ip == nil {
			return "", false
		}
		n = ip.String()
	case "email":
		if at := strings.LastIndexByte(n, '@'); at >= 0 {
			n = n[:at] + strings.ToLower(n[at:])
		}
	}
	return kind + ":" + n, n != ""
}

// Policy says which client identities may be primary, and so write and
// set pipelines, and which may hold a StreamChannel at all: the others,
// authenticated by mutual TLS all the same, may only read. It is
// p4switch's --grpc-server-policy file:
//
//	{"writers": ["dns:controller.fabric.example", "uri:spiffe://fabric.example/ctl", "subject:CN=ctl-2,O=ops"]}
//
// Each entry names a client by one name of its certificate and says of
// which kind (NameKinds), so that it matches that kind only: a
// certificate whose only name is the e-mail address ops@example.com is
// not the DNS name ops@example.com, nor is a URI SAN a DNS name.
type Policy struct {
	// Path is the file the policy was read from, for messages.
	Path    string
	Writers []string `json:"writers"`
	// writers are the entries in the form identities' names take.
	writers []string
}

// LoadPolicy reads a policy file. An entry without a kind is refused,
// naming it: read as any kind it would let a certificate whose e-mail
// address or URI happens to spell a controller's DNS name be primary.
func LoadPolicy(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := &Policy{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("%s: %v (want {\"writers\": [\"KIND:NAME\", ...]})", path, err)
	}
	if len(p.Writers) == 0 {
		return nil, fmt.Errorf("%s: no writers: name the client identities that may be primary", path)
	}
	kinds := strings.Join(NameKinds, ":, ") + ":"
	for _, w := range p.Writers {
		if strings.TrimSpace(w) == "" {
			return nil, fmt.Errorf("%s: an empty name among the writers", path)
		}
		kind, name, ok := strings.Cut(w, ":")
		if !ok || !slices.Contains(NameKinds, kind) {
			return nil, fmt.Errorf("%s: writer %q names no kind of name: write it as one of %s, such as \"dns:%s\" for a DNS name or \"cn:%s\" for a common name", path, w, kinds, w, w)
		}
		typed, ok := typedName(kind, name)
		if !ok {
			return nil, fmt.Errorf("%s: writer %q: %q is not a name of kind %s", path, w, name, kind)
		}
		p.writers = append(p.writers, typed)
	}
	p.Path = path
	return p, nil
}

// mayWrite reports whether the client of pc may be primary.
func (p *Policy) mayWrite(pc *peerConn) bool {
	if p == nil || (pc != nil && pc.local) {
		return true
	}
	if pc == nil || pc.identity == nil {
		return false
	}
	for _, n := range pc.identity.Names {
		if slices.Contains(p.writers, n) {
			return true
		}
	}
	return false
}
