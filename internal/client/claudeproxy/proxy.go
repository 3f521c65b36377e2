// Package claudeproxy is the loopback HTTPS proxy that lets a stock Claude
// Code (2.1.212 and later) sync its memory stores with a teammem server.
// Those builds send memory traffic to api.anthropic.com only (reference
// claude-code-memory-stores §0.5), so the proxy terminates CONNECT to that
// host with a per-user local CA, sends requests under teammem's store paths
// to the teammem server with the user's teammem key (any Claude.ai token is
// dropped first), and forwards everything else to the real upstream
// unchanged and unbuffered. CONNECT to any other host is a plain TCP
// tunnel. For 2.1.206 and earlier the same listener can serve
// TEAM_MEMORY_SYNC_URL over plain HTTP (Config.Legacy), forwarding
// /api/claude_code/team_memory to teammem with the key injected.
//
// A loopback listener is reachable by every local process and, through
// DNS rebinding, by web pages, so the proxy acts only for the processes it
// was started for: each run has a secret that only they are given. Every
// CONNECT must carry it as proxy credentials (HTTPS_PROXY's userinfo, sent
// as Proxy-Authorization; 407 otherwise), and the legacy endpoint lives
// under it as a path prefix (403 otherwise). A request carrying Origin or
// a Host that is not a loopback name is refused, and so is a path with
// dot segments, raw or percent-encoded.
//
// Invariants: nothing a pass-through request carries (body, headers,
// credentials) is logged or kept; the teammem key goes to the teammem
// server only, on requests that carried the run's secret; a Claude.ai
// credential never reaches teammem; the secret is never logged.
package claudeproxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"
)

// DefaultUpstream is where pass-through requests go.
const DefaultUpstream = "https://api.anthropic.com"

// LegacyPath is the prefix of the ≤2.1.206 team-memory endpoint
// (TEAM_MEMORY_SYNC_URL), served on the proxy's own plain-HTTP listener.
const LegacyPath = "/api/claude_code/team_memory"

// Config is what a Proxy needs.
type Config struct {
	CA *CA
	// Server is the teammem server's base URL; Key the user's teammem key.
	Server string
	Key    string
	// Secret is the run's credential (NewSecret): CONNECT must carry it as
	// the password of ProxyUser, legacy requests as their first path
	// segment. At least 32 characters.
	Secret string
	// Legacy serves TEAM_MEMORY_SYNC_URL (LegacyURL) on the listener; off,
	// the listener answers nothing but CONNECT.
	Legacy bool
	// StorePaths are the store path prefixes put in CLAUDE_MEMORY_STORES
	// ("/v1/memory_stores/memstore_…"): requests at or below one go to
	// teammem, every other one to Upstream.
	StorePaths []string
	// Upstream is the real API ("" = DefaultUpstream).
	Upstream string
	// InterceptHosts are the CONNECT hosts terminated with the CA (port
	// 443); nil means api.anthropic.com.
	InterceptHosts []string
	// LoopbackOnly makes every outgoing dial but one to 127.0.0.1, ::1 or
	// localhost fail without resolving anything, so that under test no
	// packet leaves the machine (TEAMMEM_PROXY_LOOPBACK_ONLY=1).
	LoopbackOnly bool
	// Log, when set, hears of each request sent to teammem: method, path
	// with query and status. Never headers or bodies, never pass-through
	// requests.
	Log func(Routed)
	// Warn, when set, hears one line for each kind of failure of the
	// proxy's own (upstream unreachable, teammem unreachable, hand-over
	// failed), the first time it happens: the cause, for the user's
	// terminal. Clients get the same cause in the error body.
	Warn func(string)
	// BeforeTeammem, when set, runs before the first request is sent to
	// teammem (the hand-over of `teammem proxy`); requests wait for it. It
	// runs again on the next request after it failed.
	BeforeTeammem func(context.Context) error
}

// Routed describes one request the proxy sent to teammem.
type Routed struct {
	// Via is "store" (a memory-store path) or "legacy" (TEAM_MEMORY_SYNC_URL).
	Via    string
	Method string
	Path   string // escaped path and query, as sent
	Status int    // 502 when teammem did not answer
}

// String is the line tests print: "POST /v1/…/memories → 200".
func (r Routed) String() string { return fmt.Sprintf("%s %s → %d", r.Method, r.Path, r.Status) }

// Proxy is the running proxy; it is an http.Handler for its listener.
type Proxy struct {
	cfg       Config
	intercept map[string]bool
	pass      *httputil.ReverseProxy
	teammem   *httputil.ReverseProxy
	server    *url.URL
	inner     *http.Server // serves the connections CONNECT terminated
	conns     *connListener
	outer     *http.Server
	tunnels   sync.WaitGroup

	warnMu sync.Mutex
	warned map[string]bool

	readyMu sync.Mutex
	ready   bool
}

// New checks cfg and builds the proxy; Serve starts it.
func New(cfg Config) (*Proxy, error) {
	if cfg.CA == nil {
		return nil, errors.New("claudeproxy: no CA")
	}
	if cfg.Key == "" {
		return nil, errors.New("claudeproxy: no teammem key")
	}
	if len(cfg.Secret) < minSecretLen {
		return nil, errors.New("claudeproxy: the run's secret is missing or shorter than 32 characters")
	}
	server, err := url.Parse(cfg.Server)
	if err != nil || (server.Scheme != "http" && server.Scheme != "https") || server.Host == "" {
		return nil, fmt.Errorf("claudeproxy: teammem server %q is not an http(s) URL", cfg.Server)
	}
	up, err := url.Parse(cfg.Upstream)
	if cfg.Upstream == "" {
		up, err = url.Parse(DefaultUpstream)
	}
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return nil, fmt.Errorf("claudeproxy: upstream %q is not an http(s) URL", cfg.Upstream)
	}
	for _, sp := range cfg.StorePaths {
		if !strings.HasPrefix(sp, "/") || path.Clean(sp) != sp || sp == "/" {
			return nil, fmt.Errorf("claudeproxy: store path %q must be a clean absolute path", sp)
		}
	}
	p := &Proxy{cfg: cfg, server: server, intercept: map[string]bool{}, conns: newConnListener(), warned: map[string]bool{}}
	for _, h := range InterceptHosts(cfg.InterceptHosts) {
		p.intercept[strings.ToLower(h)] = true
	}
	p.pass = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = up.Scheme, up.Host
			pr.Out.URL.Path = singleJoin(up.Path, pr.In.URL.Path)
			pr.Out.URL.RawPath = ""
			pr.Out.Host = up.Host
		},
		Transport:     p.transport(),
		FlushInterval: -1, // SSE and every other stream flow as they come
		ErrorLog:      log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client went away: nobody to tell
			}
			p.fail(w, r, "upstream", fmt.Sprintf("cannot reach %s: %s", up.Host, cause(err)))
		},
	}
	p.teammem = &httputil.ReverseProxy{
		Rewrite:       p.toTeammem,
		Transport:     p.transport(),
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
		ModifyResponse: func(res *http.Response) error {
			p.logRouted(res.Request, res.StatusCode)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.logRouted(r, http.StatusBadGateway)
			if r.Context().Err() != nil {
				return
			}
			p.fail(w, r, "teammem", fmt.Sprintf("cannot reach the teammem server %s: %s", server.Host, cause(err)))
		},
	}
	p.inner = &http.Server{Handler: http.HandlerFunc(p.serveIntercepted), ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	p.outer = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	return p, nil
}

// singleJoin joins a base path and a request path with one slash.
func singleJoin(base, p string) string {
	if base == "" || base == "/" {
		return p
	}
	return strings.TrimSuffix(base, "/") + "/" + strings.TrimPrefix(p, "/")
}

// Serve answers on ln until Close.
func (p *Proxy) Serve(ln net.Listener) error {
	go p.inner.Serve(p.conns) //nolint:errcheck // ends with Close
	err := p.outer.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the listeners and every open connection and tunnel.
func (p *Proxy) Close() error {
	p.conns.Close()
	err := errors.Join(p.outer.Close(), p.inner.Close())
	p.tunnels.Wait()
	return err
}

// transport dials through the loopback check and never through a proxy
// of its own (the caller's HTTPS_PROXY is the proxy itself).
func (p *Proxy) transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           p.dial,
		ForceAttemptHTTP2:     true,
		DisableCompression:    true, // encodings pass through as the client asked
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   dialTimeout,
		ResponseHeaderTimeout: 0, // a model may think a long time before its first byte
	}
}

// dialTimeout bounds every dial the proxy makes.
const dialTimeout = 10 * time.Second

// ErrNotLoopback is what every dial to another host returns under
// LoopbackOnly.
var ErrNotLoopback = errors.New("teammem proxy: loopback-only mode refuses to dial a non-loopback address")

func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.cfg.LoopbackOnly && !isLoopback(addr) {
		return nil, fmt.Errorf("%w (%s)", ErrNotLoopback, addr)
	}
	// Loopback and a reachable API connect in milliseconds; an offline
	// machine should hear so in seconds, not after the SDK's retries.
	d := net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	return d.DialContext(ctx, network, addr)
}

// isLoopback reports whether addr (host:port) names a loopback address by
// itself, without a DNS lookup.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ServeHTTP answers the proxy's own listener: CONNECT with the run's
// credentials, and with Legacy the legacy endpoint under the run's secret
// in origin form. Plain-HTTP proxying is not offered.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Header.Get("Origin") != "":
		// Claude Code never sends Origin; a browser always does.
		writeError(w, http.StatusForbidden, "permission_error", "teammem proxy: requests from web pages are refused")
	case r.Method == http.MethodConnect:
		if !p.connectAuthorized(r) {
			w.Header().Set("Proxy-Authenticate", `Basic realm="teammem proxy"`)
			writeError(w, http.StatusProxyAuthRequired, "authentication_error",
				"teammem proxy: CONNECT needs this run's proxy credentials (the userinfo of the HTTPS_PROXY teammem set)")
			return
		}
		p.connect(w, r)
	case r.URL.IsAbs():
		writeError(w, http.StatusBadRequest, "invalid_request_error", "teammem proxy: plain-HTTP proxying is not offered; use HTTPS_PROXY")
	case !loopbackHost(r.Host):
		writeError(w, http.StatusForbidden, "permission_error", "teammem proxy: the Host header must name a loopback address")
	case !p.cfg.Legacy:
		writeError(w, http.StatusNotFound, "not_found_error", "teammem proxy: only CONNECT is served here (start with --legacy for TEAM_MEMORY_SYNC_URL)")
	default:
		p.serveLegacy(w, r)
	}
}

// serveLegacy answers an origin-form request under TEAM_MEMORY_SYNC_URL:
// the run's secret, then the legacy endpoint, with a clean path.
func (p *Proxy) serveLegacy(w http.ResponseWriter, r *http.Request) {
	rest, ok := p.legacyRoute(r.URL.Path)
	switch {
	case !safePath(r.RequestURI):
		writeError(w, http.StatusBadRequest, "invalid_request_error", "teammem proxy: a path with dot segments or encoded separators is refused")
	case !ok:
		writeError(w, http.StatusForbidden, "permission_error", "teammem proxy: the legacy endpoint is served only under this run's TEAM_MEMORY_SYNC_URL")
	default:
		out := r.Clone(withVia(r.Context(), "legacy"))
		out.URL.Path, out.URL.RawPath = rest, ""
		p.toServer(w, out)
	}
}

// serveIntercepted answers a request that came through a terminated
// CONNECT (whose credentials were checked).
func (p *Proxy) serveIntercepted(w http.ResponseWriter, r *http.Request) {
	// A path that reaches a store only once its dot segments are resolved
	// is refused too, never passed on.
	if p.isStorePath(r.URL.Path) || p.isStorePath(path.Clean(r.URL.Path)) {
		if !safePath(r.RequestURI) {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "teammem proxy: a memory-store path must be clean")
			return
		}
		if r.Header.Get("Origin") != "" {
			writeError(w, http.StatusForbidden, "permission_error", "teammem proxy: requests from web pages are refused")
			return
		}
		p.toServer(w, r.WithContext(withVia(r.Context(), "store")))
		return
	}
	p.pass.ServeHTTP(w, r)
}

// toServer sends r to teammem, after the hand-over when one is pending.
func (p *Proxy) toServer(w http.ResponseWriter, r *http.Request) {
	if err := p.handOver(r.Context()); err != nil {
		p.logRouted(r, http.StatusServiceUnavailable)
		p.failStatus(w, http.StatusServiceUnavailable, "handover", "the hand-over to Claude Code's sync failed: "+oneLine(err.Error()))
		return
	}
	p.teammem.ServeHTTP(w, r)
}

// handOver runs BeforeTeammem once successfully; requests wait for it.
func (p *Proxy) handOver(ctx context.Context) error {
	if p.cfg.BeforeTeammem == nil {
		return nil
	}
	p.readyMu.Lock()
	defer p.readyMu.Unlock()
	if p.ready {
		return nil
	}
	if err := p.cfg.BeforeTeammem(ctx); err != nil {
		return err
	}
	p.ready = true
	return nil
}

// isStorePath reports whether a request path lies at or under one of the
// configured store paths (segment-wise: /…/memstore_a is not under
// /…/memstore_ab).
func (p *Proxy) isStorePath(reqPath string) bool {
	for _, sp := range p.cfg.StorePaths {
		if reqPath == sp || strings.HasPrefix(reqPath, sp+"/") {
			return true
		}
	}
	return false
}

// credentialHeaders are removed from every request sent to teammem before
// the teammem key is set: they carry Claude.ai or Anthropic credentials.
var credentialHeaders = []string{"Authorization", "X-Api-Key", "Cookie", "Proxy-Authorization", "X-Ccr-Affinity-Key", "X-Organization-Uuid"}

// toTeammem points a request at the teammem server with the user's key.
func (p *Proxy) toTeammem(pr *httputil.ProxyRequest) {
	pr.Out.URL.Scheme, pr.Out.URL.Host = p.server.Scheme, p.server.Host
	pr.Out.URL.Path = singleJoin(p.server.Path, pr.In.URL.Path)
	pr.Out.URL.RawPath = ""
	pr.Out.Host = p.server.Host
	for _, h := range credentialHeaders {
		pr.Out.Header.Del(h)
	}
	pr.Out.Header.Set("Authorization", "Bearer "+p.cfg.Key)
}

func (p *Proxy) logRouted(r *http.Request, status int) {
	if p.cfg.Log == nil {
		return
	}
	via, _ := r.Context().Value(viaKey{}).(string)
	p.cfg.Log(Routed{Via: via, Method: r.Method, Path: r.URL.EscapedPath() + query(r.URL), Status: status})
}

func query(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	return "?" + u.RawQuery
}

type viaKey struct{}

func withVia(ctx context.Context, via string) context.Context {
	return context.WithValue(ctx, viaKey{}, via)
}

// InterceptHosts returns the hosts a proxy with these configured hosts
// terminates (nil: api.anthropic.com), lower-cased; LoadCA constrains the
// CA to the same names.
func InterceptHosts(hosts []string) []string {
	if hosts == nil {
		hosts = []string{"api.anthropic.com"}
	}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = strings.ToLower(h)
	}
	return out
}

// connect terminates CONNECT to an intercepted host and tunnels the rest.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "teammem proxy: CONNECT needs host:port")
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "teammem proxy: cannot take over the connection", http.StatusInternalServerError)
		return
	}
	intercept := p.intercept[strings.ToLower(host)] && port == "443"
	var upstream net.Conn
	if !intercept {
		if upstream, err = p.dial(r.Context(), "tcp", r.Host); err != nil {
			p.fail(w, r, "tunnel "+r.Host, fmt.Sprintf("cannot reach %s: %s", r.Host, cause(err)))
			return
		}
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		if upstream != nil {
			upstream.Close()
		}
		return
	}
	client := &bufferedConn{Conn: conn, r: brw.Reader}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		if upstream != nil {
			upstream.Close()
		}
		return
	}
	if !intercept {
		p.tunnel(client, upstream)
		return
	}
	name := strings.ToLower(host)
	tc := tls.Server(client, &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return p.cfg.CA.Leaf(name)
		},
	})
	if !p.conns.push(tc) {
		tc.Close()
	}
}
