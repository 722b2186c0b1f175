// Package pki makes certificate authorities and certificates for tests
// and for throwaway labs (p4ctl emulate --ssl): a CA, and leaves it signs
// for switches (server) and controllers (client). Keys are ECDSA P-256,
// made fresh each time: no key is ever committed or reused.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority.
type CA struct {
	Cert    *x509.Certificate
	CertPEM []byte
	key     *ecdsa.PrivateKey
}

// Leaf is a certificate the CA signed and its key, PEM-encoded.
type Leaf struct {
	CertPEM, KeyPEM []byte
}

// TLSCertificate is the leaf as crypto/tls takes it.
func (l *Leaf) TLSCertificate() (tls.Certificate, error) {
	return tls.X509KeyPair(l.CertPEM, l.KeyPEM)
}

// Pool is a pool holding the CA's certificate alone: what a client
// trusting the CA's switches, or a switch trusting its controllers,
// verifies against.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Names are what a leaf certificate says its holder is.
type Names struct {
	// CommonName is the subject's CN.
	CommonName string
	// Hosts become SANs: IP addresses as IP SANs, the rest as DNS names.
	Hosts []string
	// URIs become URI SANs (SPIFFE IDs, for instance).
	URIs []string
	// Emails become e-mail address SANs.
	Emails []string
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

// NewCA makes a CA named name, valid for a day.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: sn, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: key}, nil
}

// Issue signs a certificate for n, usable both to serve (a switch) and
// to connect (a controller).
func (ca *CA) Issue(n Names) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: sn, Subject: pkix.Name{CommonName: n.CommonName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	for _, h := range n.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	for _, u := range n.URIs {
		p, err := url.Parse(u)
		if err != nil {
			return nil, fmt.Errorf("URI SAN %q: %w", u, err)
		}
		tmpl.URIs = append(tmpl.URIs, p)
	}
	tmpl.EmailAddresses = n.Emails
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	kd, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Leaf{CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd})}, nil
}

// Files are where WriteFiles put a CA's certificate and a leaf.
type Files struct{ CACert, Cert, Key string }

// WriteFiles writes the CA's certificate and leaf in dir as ca.crt,
// NAME.crt and NAME.key (the key readable by its owner only).
func (ca *CA) WriteFiles(dir, name string, l *Leaf) (Files, error) {
	f := Files{CACert: filepath.Join(dir, "ca.crt"), Cert: filepath.Join(dir, name+".crt"), Key: filepath.Join(dir, name+".key")}
	if err := os.WriteFile(f.CACert, ca.CertPEM, 0o644); err != nil {
		return f, err
	}
	if err := os.WriteFile(f.Cert, l.CertPEM, 0o644); err != nil {
		return f, err
	}
	return f, os.WriteFile(f.Key, l.KeyPEM, 0o600)
}
