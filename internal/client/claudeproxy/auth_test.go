package claudeproxy

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// raw sends one request exactly as written to the proxy's listener and
// returns the answer.
func (b *bundle) raw(t *testing.T, request string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", b.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", request, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

// teammemRequests is how many requests reached the fake teammem server.
func (b *bundle) teammemRequests() int {
	b.teammem.mu.Lock()
	defer b.teammem.mu.Unlock()
	return len(b.teammem.path)
}

// anthropicError checks body is Anthropic's error envelope and returns its
// message.
func anthropicError(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Type != "error" || e.Error.Message == "" {
		t.Fatalf("not Anthropic's error envelope: %q (%v)", body, err)
	}
	return e.Error.Message
}

// TestConnectNeedsTheRunsCredentials: CONNECT without the run's proxy
// credentials (none, a wrong password, another user) gets 407 with
// Proxy-Authenticate and reaches nothing; with them the personal store is
// served. The finding: any local process read the personal store
// through CONNECT.
func TestConnectNeedsTheRunsCredentials(t *testing.T) {
	b := setup(t, nil)
	for _, auth := range []string{"", basicAuth(ProxyUser, "wrong"), basicAuth("someone", testSecret),
		basicAuth(ProxyUser, testSecret[:len(testSecret)-1]), "Bearer " + testSecret} {
		hdr := ""
		if auth != "" {
			hdr = "Proxy-Authorization: " + auth + "\r\n"
		}
		res, body := b.raw(t, "CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443\r\n"+hdr+"\r\n")
		if res.StatusCode != http.StatusProxyAuthRequired || !strings.HasPrefix(res.Header.Get("Proxy-Authenticate"), "Basic ") {
			t.Fatalf("CONNECT with %q: %d %v", auth, res.StatusCode, res.Header)
		}
		anthropicError(t, body)
	}
	// A client that knows the proxy's address but not the secret.
	anon := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: b.proxyURL.Host}),
		TLSClientConfig: &tls.Config{RootCAs: b.proxy.cfg.CA.Pool()}}}
	if res, err := anon.Get("https://api.anthropic.com/v1/memory_stores/memstore_me/memories/export"); err == nil {
		res.Body.Close()
		t.Fatalf("CONNECT without credentials went through: %d", res.StatusCode)
	}
	if n := b.teammemRequests(); n != 0 {
		t.Fatalf("teammem got %d request(s) from unauthenticated CONNECTs", n)
	}
	if status, body := b.do(t, "GET", "https://api.anthropic.com/v1/memory_stores/memstore_me/memories/export", "", ""); status != 200 ||
		!strings.Contains(body, "teammem") {
		t.Fatalf("with the run's credentials: %d %s", status, body)
	}
}

// TestLegacyServedOnlyWithFlagAndSecret: without Legacy the listener
// serves no legacy endpoint (the plain curl read team memory and a
// PUT wrote); with it, only under the run's secret, to a loopback Host,
// without Origin.
func TestLegacyServedOnlyWithFlagAndSecret(t *testing.T) {
	get := "GET " + LegacyPath + "?repo=acme%2Fwidgets HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
	put := "PUT " + LegacyPath + "?repo=acme%2Fwidgets HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 14\r\n\r\n{\"entries\":{}}"
	off := setup(t, func(c *Config) { c.Legacy = false })
	for _, req := range []string{get, put,
		"GET /" + testSecret + LegacyPath + "?repo=acme%2Fwidgets HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"} {
		if res, body := off.raw(t, req); res.StatusCode != http.StatusNotFound {
			t.Fatalf("without Legacy %q: %d %s", req, res.StatusCode, body)
		}
	}
	if n := off.teammemRequests(); n != 0 {
		t.Fatalf("without Legacy teammem got %d request(s)", n)
	}

	b := setup(t, nil)
	legacy := "/" + testSecret + LegacyPath + "?repo=acme%2Fwidgets"
	refused := map[string]int{
		get: 403, put: 403,
		"GET /" + strings.Repeat("0", len(testSecret)) + LegacyPath + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n": 403,
		"GET /" + testSecret[:40] + LegacyPath + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n":                      403,
		"GET " + legacy + " HTTP/1.1\r\nHost: attacker.example\r\n\r\n":                                      403,
		"GET " + legacy + " HTTP/1.1\r\nHost: attacker.example:7477\r\n\r\n":                                 403,
		"GET " + legacy + " HTTP/1.1\r\nHost: 127.0.0.1.nip.io\r\n\r\n":                                      403,
		"GET " + legacy + " HTTP/1.1\r\nHost: localhost\r\nOrigin: http://attacker.example\r\n\r\n":          403,
		"GET " + legacy + " HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: null\r\n\r\n":                             403,
	}
	for req, want := range refused {
		res, body := b.raw(t, req)
		if res.StatusCode != want {
			t.Fatalf("%q: %d %s, want %d", req, res.StatusCode, body, want)
		}
		anthropicError(t, body)
	}
	if n := b.teammemRequests(); n != 0 {
		t.Fatalf("teammem got %d refused request(s)", n)
	}
	for _, host := range []string{"127.0.0.1", "localhost:7477", "[::1]:7477", "127.0.0.2"} {
		res, body := b.raw(t, "GET "+legacy+" HTTP/1.1\r\nHost: "+host+"\r\nAuthorization: Bearer sk-ant-oat01-x\r\n\r\n")
		p, h := b.teammem.last(t)
		if res.StatusCode != 200 || p != LegacyPath+"?repo=acme%2Fwidgets" || h.Get("Authorization") != "Bearer tmk_test_key" {
			t.Fatalf("Host %s: %d %s; teammem got %s with %q", host, res.StatusCode, body, p, h.Get("Authorization"))
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.routed {
		if r.Via != "legacy" || strings.Contains(r.String(), testSecret) {
			t.Fatalf("routed log %v: want via legacy, without the secret", r)
		}
	}
}

// TestDotSegmentsRefusedNeverForwarded: a path with "." or ".." segments,
// raw or percent-encoded (%2e, %2E, %2f, double encoding), under the
// legacy prefix or a store path, is refused and never reaches teammem.
func TestDotSegmentsRefusedNeverForwarded(t *testing.T) {
	b := setup(t, nil)
	pre := "/" + testSecret
	for _, p := range []string{
		LegacyPath + "/../../v1/memory_stores/memstore_x/memories", // as the issue found it
		LegacyPath + "/%2e%2e/%2e%2e/v1/orgs",
		pre + LegacyPath + "/../../v1/memory_stores/memstore_x/memories",
		pre + LegacyPath + "/..",
		pre + LegacyPath + "/%2e%2e/v1/orgs",
		pre + LegacyPath + "/%2E%2e/v1/orgs",
		pre + LegacyPath + "/.%2e/v1/orgs",
		pre + LegacyPath + "%2f..%2fv1%2forgs",
		pre + LegacyPath + "/%252e%252e/v1/orgs",
		pre + LegacyPath + "/.",
		pre + "/./api/claude_code/team_memory",
		pre + "/api/claude_code/../claude_code/team_memory",
		pre + LegacyPath + "//x",
		pre + LegacyPath + "/a\\..\\b",
	} {
		res, body := b.raw(t, "GET "+p+"?repo=acme%2Fwidgets HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		if res.StatusCode != 400 && res.StatusCode != 403 {
			t.Fatalf("%s: %d %s", p, res.StatusCode, body)
		}
	}
	for _, p := range []string{
		"/v1/memory_stores/memstore_team/../memstore_x/memories",
		"/v1/memory_stores/memstore_team/%2e%2e/memstore_x/memories",
		"/v1/memory_stores/memstore_team/.%2E/memstore_x/memories",
		"/v1/memory_stores/memstore_team/%2E/memories",
		"/v1/memory_stores/memstore_team/memories%2f..%2f..%2fx",
		"/v1/memory_stores/memstore_x/..%2fmemstore_team/memories",
		"/v1/memory_stores/memstore_team/%252e%252e/x",
	} {
		if status, body := b.do(t, "GET", "https://api.anthropic.com"+p, "", ""); status != 400 {
			t.Fatalf("%s: %d %s", p, status, body)
		}
	}
	if n := b.teammemRequests(); n != 0 {
		t.Fatalf("teammem got %d request(s) with dot segments", n)
	}
}

// TestOwnFailuresAnswerAndSayWhy: when the upstream or teammem does not
// answer, the client gets Anthropic's error envelope naming the cause (not
// an empty 502, which Claude Code retried for minutes and then blamed on
// status.claude.com), with x-should-retry: false, and Warn hears one line
// per cause however many requests failed.
func TestOwnFailuresAnswerAndSayWhy(t *testing.T) {
	// 127.0.0.3, not 127.0.0.1: the test servers bind 127.0.0.1:0 and may be
	// handed the port just closed, but nothing listens on 127.0.0.3.
	dead, err := net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + dead.Addr().String()
	dead.Close()
	b := setup(t, func(c *Config) { c.Upstream = deadURL; c.Server = deadURL })
	for range 3 {
		for _, target := range []string{"/v1/messages", "/v1/memory_stores/memstore_team/memories"} {
			status, body := b.do(t, "POST", "https://api.anthropic.com"+target, "", "{}")
			msg := anthropicError(t, body)
			if status != http.StatusBadGateway || !strings.Contains(msg, dead.Addr().String()) || !strings.Contains(msg, "refused") {
				t.Fatalf("%s: %d %q", target, status, msg)
			}
		}
	}
	res, err := b.client.Get("https://api.anthropic.com/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("X-Should-Retry") != "false" {
		t.Fatalf("no x-should-retry: false: %v", res.Header)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.warned) != 2 || !strings.Contains(b.warned[0], "cannot reach "+dead.Addr().String()) ||
		!strings.Contains(b.warned[1], "cannot reach the teammem server "+dead.Addr().String()) {
		t.Fatalf("want one line per cause, got %q", b.warned)
	}
	for _, w := range b.warned {
		if strings.Contains(w, "\n") || strings.Contains(w, testSecret) || strings.Contains(w, "tmk_test_key") {
			t.Fatalf("warning line %q", w)
		}
	}
}

// TestHandOverOnFirstTeammemRequest: BeforeTeammem runs when the first
// request for teammem arrives, not before and not for pass-through; a
// failure answers 503 in Anthropic's envelope and is retried next time.
func TestHandOverOnFirstTeammemRequest(t *testing.T) {
	var calls atomic.Int32
	fail := atomic.Bool{}
	fail.Store(true)
	b := setup(t, func(c *Config) {
		c.BeforeTeammem = func(context.Context) error {
			calls.Add(1)
			if fail.Load() {
				return errors.New("sync failed\nsecond line")
			}
			return nil
		}
	})
	if status, _ := b.do(t, "GET", "https://api.anthropic.com/v1/messages", "", ""); status != 200 || calls.Load() != 0 {
		t.Fatalf("pass-through: %d, hand-over ran %d time(s)", status, calls.Load())
	}
	status, body := b.do(t, "GET", "https://api.anthropic.com/v1/memory_stores/memstore_team/memories/export", "", "")
	if status != http.StatusServiceUnavailable || !strings.Contains(anthropicError(t, body), "sync failed") || b.teammemRequests() != 0 {
		t.Fatalf("failed hand-over: %d %s, teammem got %d", status, body, b.teammemRequests())
	}
	fail.Store(false)
	for range 2 {
		if status, _ := b.do(t, "GET", "https://api.anthropic.com/v1/memory_stores/memstore_team/memories/export", "", ""); status != 200 {
			t.Fatalf("after the hand-over: %d", status)
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("hand-over ran %d times, want 2 (one failure, one success)", calls.Load())
	}
}

// TestCAConstrainedToInterceptedHosts: the CA permits only the intercepted
// DNS names (critical) and no IP address, so a leaf its key signs for any
// other name does not verify; a CA made before the constraints is replaced.
func TestCAConstrainedToInterceptedHosts(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadCA(dir, InterceptHosts(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !ca.cert.PermittedDNSDomainsCritical || strings.Join(ca.cert.PermittedDNSDomains, ",") != "api.anthropic.com" || len(ca.cert.ExcludedIPRanges) != 2 {
		t.Fatalf("constraints: critical %v, permitted %v, excluded IPs %v", ca.cert.PermittedDNSDomainsCritical, ca.cert.PermittedDNSDomains, ca.cert.ExcludedIPRanges)
	}
	for host, ok := range map[string]bool{"api.anthropic.com": true, "evil.example": false, "anthropic.com": false, "127.0.0.1": false} {
		leaf, err := ca.Leaf(host)
		if err != nil {
			t.Fatal(err)
		}
		opts := x509VerifyOptions(ca, host)
		if _, err := leaf.Leaf.Verify(opts); (err == nil) != ok {
			t.Fatalf("leaf for %s: verify error %v, want ok=%v", host, err, ok)
		}
	}

	// An unconstrained CA as teammem made it before.
	old := filepath.Join(t.TempDir(), "proxy")
	writeUnconstrainedCA(t, old)
	before, _ := os.ReadFile(filepath.Join(old, CACertName))
	ca, err = LoadCA(old, InterceptHosts(nil))
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(old, CACertName))
	if string(before) == string(after) || !ca.cert.PermittedDNSDomainsCritical {
		t.Fatal("the unconstrained CA on disk was kept")
	}
	if fi, err := os.Stat(filepath.Join(old, CAKeyName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("replaced key: %v %v", fi.Mode(), err)
	}
	again, err := LoadCA(old, InterceptHosts(nil))
	if err != nil || !again.cert.Equal(ca.cert) {
		t.Fatalf("the replacement was not kept: %v", err)
	}
	if _, err := LoadCA(old, []string{"api.anthropic.com", "claude.ai"}); err != nil {
		t.Fatal(err) // other hosts: replaced again, for them
	}
}

func writeUnconstrainedCA(t *testing.T, dir string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "teammem local proxy CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		CAKeyName:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
		CACertName: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
