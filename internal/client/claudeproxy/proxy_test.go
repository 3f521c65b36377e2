package claudeproxy

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestCAMadeOnceWithPrivateKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proxy")
	ca, err := LoadCA(dir, InterceptHosts(nil))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, CAKeyName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v, want mode 0600", fi.Mode(), err)
	}
	first, _ := os.ReadFile(ca.CertPath)
	again, err := LoadCA(dir, InterceptHosts(nil))
	if err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(again.CertPath)
	if string(first) != string(second) || !again.cert.Equal(ca.cert) {
		t.Fatal("second LoadCA made a new CA")
	}
	if !strings.Contains(string(first), "BEGIN CERTIFICATE") {
		t.Fatalf("cert is not PEM: %q", first)
	}
	leaf, err := again.Leaf("api.anthropic.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Leaf.Verify(x509VerifyOptions(ca, "api.anthropic.com")); err != nil {
		t.Fatalf("leaf does not verify against the CA: %v", err)
	}
	if err := os.Chmod(filepath.Join(dir, CAKeyName), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCA(dir, InterceptHosts(nil)); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("a world-readable key was accepted: %v", err)
	}
}

// bundle is a proxy between a fake upstream and a fake teammem server,
// both on loopback, and a client that trusts only the proxy's CA.
type bundle struct {
	proxy    *Proxy
	proxyURL *url.URL
	client   *http.Client
	teammem  *recorder
	upstream *recorder
	routed   []Routed
	warned   []string
	mu       sync.Mutex
}

// testSecret is the run's secret of every bundle.
const testSecret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// recorder is a fake server remembering each request's path and
// credential headers.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []http.Header
	path []string
}

func (rc *recorder) record(r *http.Request) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.seen = append(rc.seen, r.Header.Clone())
	rc.path = append(rc.path, r.URL.RequestURI())
}

func (rc *recorder) last(t *testing.T) (string, http.Header) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.path) == 0 {
		t.Fatal("the server got no request")
	}
	return rc.path[len(rc.path)-1], rc.seen[len(rc.seen)-1]
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	rc := &recorder{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.record(r)
		h(w, r)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func setup(t *testing.T, mod func(*Config)) *bundle {
	t.Helper()
	b := &bundle{}
	b.teammem = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"served_by":"teammem","path":%q}`, r.URL.Path)
	})
	b.upstream = newRecorder(t, upstreamHandler)
	ca, err := LoadCA(t.TempDir(), InterceptHosts(nil))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{CA: ca, Server: b.teammem.srv.URL, Key: "tmk_test_key", Secret: testSecret, Legacy: true, Upstream: b.upstream.srv.URL,
		StorePaths: []string{"/v1/memory_stores/memstore_team", "/v1/memory_stores/memstore_me"}, LoopbackOnly: true,
		Log:  func(r Routed) { b.mu.Lock(); b.routed = append(b.routed, r); b.mu.Unlock() },
		Warn: func(s string) { b.mu.Lock(); b.warned = append(b.warned, s); b.mu.Unlock() }}
	if mod != nil {
		mod(&cfg)
	}
	b.proxy, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go b.proxy.Serve(ln) //nolint:errcheck
	t.Cleanup(func() { b.proxy.Close() })
	b.proxyURL = &url.URL{Scheme: "http", Host: ln.Addr().String(), User: url.UserPassword(ProxyUser, testSecret)}
	b.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(b.proxyURL),
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}, DisableCompression: true}}
	return b
}

// upstreamHandler is the fake Anthropic API: /sse streams events, each
// only after the client acknowledged the previous one through /ack (which
// a buffering proxy would deadlock on); anything else echoes.
var acks = make(chan struct{}, 8)

func upstreamHandler(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/sse":
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "event: n\ndata: %d\n\n", i)
			w.(http.Flusher).Flush()
			if i < 2 {
				<-acks
			}
		}
	case "/ack":
		acks <- struct{}{}
	default:
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Upstream", "yes")
		fmt.Fprintf(w, "upstream %s %s auth=%q body=%q", r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), body)
	}
}

func (b *bundle) do(t *testing.T, method, target, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("X-Api-Key", "sk-ant-api-should-not-reach-teammem")
	res, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(out)
}

func TestStorePathsGoToTeammemWithTheKey(t *testing.T) {
	b := setup(t, nil)
	status, body := b.do(t, "POST", "https://api.anthropic.com/v1/memory_stores/memstore_team/memories", "Bearer sk-ant-oat01-claude-login", `{"path":"/a.md"}`)
	if status != 200 || !strings.Contains(body, `"served_by":"teammem"`) {
		t.Fatalf("got %d %s", status, body)
	}
	p, h := b.teammem.last(t)
	if p != "/v1/memory_stores/memstore_team/memories" || h.Get("Authorization") != "Bearer tmk_test_key" || h.Get("X-Api-Key") != "" {
		t.Fatalf("teammem got %s with Authorization %q, x-api-key %q", p, h.Get("Authorization"), h.Get("X-Api-Key"))
	}
	for _, v := range h {
		if strings.Contains(strings.Join(v, ","), "sk-ant") {
			t.Fatalf("a Claude credential reached teammem: %v", h)
		}
	}
	// The query survives; a sibling store that is not ours goes upstream.
	b.do(t, "DELETE", "https://api.anthropic.com/v1/memory_stores/memstore_me/memories/mem_1?expected_content_sha256=ab", "Bearer x", "")
	if p, _ := b.teammem.last(t); p != "/v1/memory_stores/memstore_me/memories/mem_1?expected_content_sha256=ab" {
		t.Fatalf("teammem got %s", p)
	}
	_, body = b.do(t, "GET", "https://api.anthropic.com/v1/memory_stores/memstore_teamX/memories", "Bearer keep-me", "")
	if !strings.HasPrefix(body, `upstream GET /v1/memory_stores/memstore_teamX/memories auth="Bearer keep-me"`) {
		t.Fatalf("a foreign store path was not passed through unchanged: %s", body)
	}
	status, _ = b.do(t, "GET", "https://api.anthropic.com/v1/memory_stores/memstore_team/../memstore_x/memories", "", "")
	if status != 400 {
		t.Fatalf("a dot-segment store path got %d", status)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.routed) < 2 || b.routed[0].String() != "POST /v1/memory_stores/memstore_team/memories → 200" {
		t.Fatalf("routed log: %v", b.routed)
	}
}

func TestPassThroughUnchangedAndStreamed(t *testing.T) {
	b := setup(t, nil)
	status, body := b.do(t, "POST", "https://api.anthropic.com/v1/messages?beta=true", "Bearer sk-ant-oat01-login", "hello")
	if status != 200 || body != `upstream POST /v1/messages?beta=true auth="Bearer sk-ant-oat01-login" body="hello"` {
		t.Fatalf("got %d %q", status, body)
	}
	if _, h := b.upstream.last(t); h.Get("X-Api-Key") != "sk-ant-api-should-not-reach-teammem" {
		t.Fatalf("upstream lost x-api-key: %v", h)
	}
	res, err := b.client.Get("https://api.anthropic.com/v1/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", res.Header.Get("Content-Type"))
	}
	rd := bufio.NewReader(res.Body)
	for i := range 3 {
		var event []string
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
			if line == "\n" {
				break
			}
			event = append(event, strings.TrimSpace(line))
		}
		if want := fmt.Sprintf("data: %d", i); len(event) != 2 || event[1] != want {
			t.Fatalf("event %d: %q", i, event)
		}
		if i < 2 { // the next event is sent only now: a buffered stream would hang here
			if _, err := http.Get(b.upstream.srv.URL + "/ack"); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.routed) != 0 {
		t.Fatalf("pass-through requests were logged: %v", b.routed)
	}
}

func TestConnectToOtherHostTunnelled(t *testing.T) {
	b := setup(t, nil)
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		c, err := echo.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c) //nolint:errcheck
	}()
	c, err := net.Dial("tcp", b.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: %s\r\n\r\n", echo.Addr(), echo.Addr(), basicAuth(ProxyUser, testSecret))
	rd := bufio.NewReader(c)
	res, err := http.ReadResponse(rd, nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", res, err)
	}
	raw := "\x16\x03\x01 not TLS, not HTTP: raw bytes\n"
	io.WriteString(c, raw) //nolint:errcheck
	got := make([]byte, len(raw))
	if _, err := io.ReadFull(rd, got); err != nil || string(got) != raw {
		t.Fatalf("tunnel echoed %q, %v", got, err)
	}
}

func TestLoopbackOnlyRefusesOtherHosts(t *testing.T) {
	b := setup(t, func(c *Config) { c.Upstream = DefaultUpstream })
	for _, target := range []string{"192.0.2.1:443", "example.com:443"} {
		c, err := net.Dial("tcp", b.proxyURL.Host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: %s\r\n\r\n", target, target, basicAuth(ProxyUser, testSecret))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err != nil || res.StatusCode != http.StatusBadGateway {
			t.Fatalf("CONNECT %s under loopback-only: %v %v", target, res, err)
		}
	}
	// The real upstream is not loopback either: pass-through fails, store paths still work.
	if status, _ := b.do(t, "GET", "https://api.anthropic.com/api/claude_code/policy_limits", "", ""); status != http.StatusBadGateway {
		t.Fatalf("pass-through to the real API under loopback-only: %d", status)
	}
	if status, _ := b.do(t, "GET", "https://api.anthropic.com/v1/memory_stores/memstore_team/memories", "", ""); status != 200 {
		t.Fatalf("store path under loopback-only: %d", status)
	}
	if !isLoopback("[::1]:1") || !isLoopback("localhost:1") || isLoopback("127.0.0.1.nip.io:1") {
		t.Fatal("isLoopback")
	}
}

func TestLegacyEndpointGetsTheKey(t *testing.T) {
	b := setup(t, nil)
	req, _ := http.NewRequest("PUT", LegacyURL(b.proxyURL.Host, testSecret)+LegacyPath+"?repo=acme%2Fwidgets", strings.NewReader(`{"entries":{}}`))
	req.Header.Set("Authorization", "Bearer sk-ant-oat01-legacy-login")
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	p, h := b.teammem.last(t)
	if res.StatusCode != 200 || p != LegacyPath+"?repo=acme%2Fwidgets" || h.Get("Authorization") != "Bearer tmk_test_key" {
		t.Fatalf("legacy: %d, teammem got %s with %q", res.StatusCode, p, h.Get("Authorization"))
	}
	res, err = http.Get(LegacyURL(b.proxyURL.Host, testSecret) + "/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 403 {
		t.Fatalf("other origin-form path: %d", res.StatusCode)
	}
}

func x509VerifyOptions(ca *CA, host string) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: ca.Pool(), DNSName: host}
}
