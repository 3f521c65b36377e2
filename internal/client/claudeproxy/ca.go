package claudeproxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// File names of the local CA inside its directory. The certificate is what
// NODE_EXTRA_CA_CERTS names; the key never leaves the directory and is 0600.
const (
	CACertName = "ca.pem"
	CAKeyName  = "ca-key.pem"
)

// CA is the per-user certificate authority the proxy mints leaf
// certificates with. It is made once and trusted by nothing but the
// processes teammem starts (through NODE_EXTRA_CA_CERTS), so a leaf it signs
// for api.anthropic.com convinces only those. Its X.509 name constraints
// (critical) permit only the DNS names the proxy intercepts and no IP
// address, so even a stolen key signs nothing else those processes accept.
type CA struct {
	// CertPath is the PEM certificate on disk, for NODE_EXTRA_CA_CERTS.
	CertPath string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey

	mu     sync.Mutex
	leaves map[string]*tls.Certificate // by host, minted in memory only
}

// LoadCA reads the CA in dir, making it (and dir, 0700) when it does not
// exist yet. hosts are the names it may sign for (InterceptHosts). A key
// file readable by others is refused: the key can sign a certificate for
// any host the proxy's clients trust it for. A CA whose name constraints
// are not exactly hosts (one made before teammem set them) is replaced by
// a new one; sessions already running keep the old one in memory.
func LoadCA(dir string, hosts []string) (*CA, error) {
	ca, err := loadCA(dir, hosts)
	if errors.Is(err, errMismatch) {
		// Another process may be between writing the key and the
		// certificate of a replacement.
		time.Sleep(200 * time.Millisecond)
		ca, err = loadCA(dir, hosts)
	}
	if errors.Is(err, errUnconstrained) {
		return createCA(dir, hosts, true)
	}
	return ca, err
}

// errMismatch and errUnconstrained are loadCA's findings LoadCA acts on.
var (
	errMismatch      = errors.New("the key does not match the certificate")
	errUnconstrained = errors.New("the CA is not constrained to the intercepted hosts")
)

func loadCA(dir string, hosts []string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, CACertName), filepath.Join(dir, CAKeyName)
	certPEM, cerr := os.ReadFile(certPath)
	keyPEM, kerr := os.ReadFile(keyPath)
	switch {
	case errors.Is(cerr, fs.ErrNotExist) && errors.Is(kerr, fs.ErrNotExist):
		return createCA(dir, hosts, false)
	case cerr != nil:
		return nil, fmt.Errorf("local CA: %w", cerr)
	case kerr != nil:
		return nil, fmt.Errorf("local CA: %w", kerr)
	}
	if fi, err := os.Stat(keyPath); err != nil {
		return nil, fmt.Errorf("local CA: %w", err)
	} else if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("local CA key %s is readable by others (mode %v); chmod 600 it or remove both CA files to make a new one", keyPath, fi.Mode().Perm())
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("local CA in %s is not PEM; remove %s and %s to make a new one", dir, CACertName, CAKeyName)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("local CA certificate: %w", err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("local CA key: %w", err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("local CA in %s: %w; remove both files to make a new one", dir, errMismatch)
	}
	if !constrainedTo(cert, hosts) {
		return nil, errUnconstrained
	}
	return &CA{CertPath: certPath, cert: cert, key: key, leaves: map[string]*tls.Certificate{}}, nil
}

// constrainedTo reports whether cert's name constraints are critical,
// permit exactly hosts as DNS names and exclude every IP address.
func constrainedTo(cert *x509.Certificate, hosts []string) bool {
	if !cert.PermittedDNSDomainsCritical || len(cert.ExcludedIPRanges) != 2 || len(cert.PermittedIPRanges) != 0 {
		return false
	}
	got, want := slices.Clone(cert.PermittedDNSDomains), slices.Clone(hosts)
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(slices.Compact(got), slices.Compact(want))
}

// createCA makes a P-256 CA valid for ten years, constrained to hosts, and
// writes it. A first one is written with O_EXCL, the key (0600) first, so
// a concurrent first run fails instead of two processes trusting different
// CAs; a replacement goes through temporary files renamed over the old
// ones, the key first.
func createCA(dir string, hosts []string, replace bool) (*CA, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("local CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "teammem local proxy CA", Organization: []string{"teammem"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,

		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         slices.Clone(hosts),
		ExcludedIPRanges: []*net.IPNet{
			{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)},
			{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)},
		},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPath, keyPath := filepath.Join(dir, CACertName), filepath.Join(dir, CAKeyName)
	write := writeNew
	if replace {
		write = writeReplace
	}
	if err := write(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return nil, fmt.Errorf("local CA: %w", err)
	}
	if err := write(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, fmt.Errorf("local CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{CertPath: certPath, cert: cert, key: key, leaves: map[string]*tls.Certificate{}}, nil
}

func writeNew(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeReplace writes path through a fresh temporary file in its
// directory renamed over it.
func writeReplace(path string, b []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// Pool returns a pool holding only the CA, for clients in tests.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Leaf returns a certificate for host signed by the CA, minted on first use
// and kept in memory only (valid for a week; the key is never written).
func (ca *CA) Leaf(host string) (*tls.Certificate, error) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if c := ca.leaves[host]; c != nil && time.Until(c.Leaf.NotAfter) > time.Hour {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key, Leaf: leaf}
	ca.leaves[host] = c
	return c, nil
}
