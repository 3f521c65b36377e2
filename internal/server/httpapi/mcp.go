package httpapi

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// Remote MCP (issue 25): /mcp serves the Streamable HTTP transport of the
// official Go SDK. Tools, resources and notifications are teammem's own
// (mcp_tools.go, mcp_resources.go); this file holds the transport side:
// authentication with a teammem key, the session bookkeeping the SDK does
// not do (one key per session, one repo per session, a bound number of
// sessions per key, shutdown) and the protected-resource metadata.

// MCP session bounds; the SDK reaps a session idle past mcpIdle, and
// mcpKeepAlive pings keep a live client's session open.
const (
	mcpIdle           = 30 * time.Minute
	mcpKeepAlive      = 30 * time.Second
	mcpSessionsPerKey = 16
	// mcpSessionHeader is the transport's session header (Streamable HTTP).
	mcpSessionHeader = "Mcp-Session-Id"
)

// mcpHub is the server's MCP side: one mcp.Server per (org, user), so that
// the SDK's resource subscriptions and list notifications, which it keeps
// per server, never reach another user's or another org's sessions (their
// URIs name a repo slug, which two orgs may share).
type mcpHub struct {
	s       *Server
	handler *mcp.StreamableHTTPHandler
	mu      sync.Mutex
	servers map[mcpUser]*mcpUserServer
	// sessions holds what teammem binds to each open session.
	sessions map[string]*mcpSession
	perKey   map[string]int
	closed   bool
}

// mcpUser names the principal an mcp.Server serves.
type mcpUser struct{ org, user int64 }

// mcpSession is what one open MCP session is bound to: the key that opened
// it and the repo of its URL ("" when each call names one).
type mcpSession struct {
	keyID string
	hash  [32]byte // of the key, which prune re-checks
	repo  string
}

func newMCPHub(s *Server) *mcpHub {
	h := &mcpHub{s: s, servers: map[mcpUser]*mcpUserServer{}, sessions: map[string]*mcpSession{}, perKey: map[string]int{}}
	h.handler = mcp.NewStreamableHTTPHandler(h.serverFor, &mcp.StreamableHTTPOptions{
		SessionTimeout:      mcpIdle,
		MaxRequestBodyBytes: s.cfg.MaxBodyBytes,
		// The caller is authenticated by key, not by being local: a Host
		// check would refuse the loopback deployments behind a proxy that
		// the rest of the API serves.
		DisableLocalhostProtection: true,
		Logger:                     s.log,
	})
	return h
}

// serverFor is the SDK's getServer: the caller's own mcp.Server (nil, a
// 400, for a request without one, which requireMCPKey never lets through).
func (h *mcpHub) serverFor(r *http.Request) *mcp.Server {
	p := principal(r)
	if p.User.ID == 0 {
		return nil
	}
	return h.userServer(p).srv
}

// userServer returns the mcp.Server of p's user, creating it when missing.
func (h *mcpHub) userServer(p teammem.Principal) *mcpUserServer {
	k := mcpUser{p.Org.ID, p.User.ID}
	h.mu.Lock()
	defer h.mu.Unlock()
	if us := h.servers[k]; us != nil {
		return us
	}
	us := newMCPUserServer(h, p.Org.ID, p.User.ID)
	h.servers[k] = us
	return us
}

// ServeHTTP serves /mcp after requireMCPKey: it keeps a session to the key
// and repo that opened it and bounds the sessions of a key.
func (h *mcpHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	repo := strings.TrimSpace(r.URL.Query().Get("repo"))
	if repo != "" {
		if err := teammem.ValidateRepoSlug(repo); err != nil {
			h.s.writeError(w, r, h.s.slugError(p.Org, repo, err))
			return
		}
	}
	id := r.Header.Get(mcpSessionHeader)
	if id != "" {
		h.mu.Lock()
		sess := h.sessions[id]
		h.mu.Unlock()
		switch {
		case sess == nil:
			// Unknown here: the SDK answers 404, as the transport says.
		case sess.keyID != p.Key.ID:
			// Another key on this key's session: no hijack, and nothing
			// said about the session.
			h.s.writeError(w, r, teammem.Errorf(teammem.ENotFound, "no such MCP session"))
			return
		case sess.repo != repo:
			h.s.writeError(w, r, teammem.Errorf(teammem.EInvalid, "this MCP session is bound to repo %q: use the URL it was opened with", sess.repo))
			return
		}
		h.handler.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		h.handler.ServeHTTP(w, r) // the SDK's own 400 for a GET or DELETE without a session
		return
	}
	if !h.reserve(p.Key.ID) {
		h.s.writeError(w, r, teammem.Errorf(teammem.ERateLimited, "this key holds %d open MCP sessions already: end one (DELETE /mcp) or wait for an idle one to expire", mcpSessionsPerKey))
		return
	}
	// The binding is made as the SDK's answer goes out, not after: the
	// client may use its new session before this handler returns.
	hash := keyHash(apiKeyFrom(r))
	ow := &mcpOpenWriter{ResponseWriter: w, open: func(id string) { h.bind(id, p, hash, repo) }}
	h.handler.ServeHTTP(ow, r)
	h.opened(w.Header().Get(mcpSessionHeader), p)
}

// bind records what the session id (a sessionless POST's answer names it)
// is bound to.
func (h *mcpHub) bind(id string, p teammem.Principal, hash [32]byte, repo string) {
	if id == "" {
		return
	}
	h.mu.Lock()
	h.sessions[id] = &mcpSession{keyID: p.Key.ID, hash: hash, repo: repo}
	h.mu.Unlock()
}

// prune ends each session of us whose key is no longer valid (revoked,
// expired, deleted, or its user gone). Watchers run it before every change
// they announce, through the key cache, which an auth change on any
// replica empties, and every StreamRecheck from the database, past a lost
// invalidation: a revoked key hears of no change after its revocation, as
// on an event stream, and its session ends.
func (h *mcpHub) prune(ctx context.Context, us *mcpUserServer, fresh bool) {
	for ss := range us.srv.Sessions() {
		h.mu.Lock()
		sess := h.sessions[ss.ID()]
		h.mu.Unlock()
		if sess == nil {
			continue // still opening: its key was checked a moment ago
		}
		_, err := h.s.lookupKey(ctx, sess.hash, h.s.now(), fresh)
		switch code := teammem.ErrorCode(err); {
		case err == nil:
		case code == teammem.EUnauthorized || code == teammem.EForbidden:
			_ = ss.Close()
		case ctx.Err() == nil:
			h.s.log.WarnContext(ctx, "re-checking an MCP session's key failed", "error", err.Error())
		}
	}
}

// mcpOpenWriter calls open with the session id the SDK's answer carries,
// once, just before its status goes out.
type mcpOpenWriter struct {
	http.ResponseWriter
	open func(id string)
	done bool
}

func (o *mcpOpenWriter) opening() {
	if !o.done {
		o.done = true
		o.open(o.Header().Get(mcpSessionHeader))
	}
}

func (o *mcpOpenWriter) WriteHeader(code int) {
	o.opening()
	o.ResponseWriter.WriteHeader(code)
}

func (o *mcpOpenWriter) Write(b []byte) (int, error) {
	o.opening()
	return o.ResponseWriter.Write(b)
}

func (o *mcpOpenWriter) Flush() {
	o.opening()
	_ = http.NewResponseController(o.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (o *mcpOpenWriter) Unwrap() http.ResponseWriter { return o.ResponseWriter }

// reserve takes one of keyID's session places, false when none is left or
// the server is shutting down.
func (h *mcpHub) reserve(keyID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.perKey[keyID] >= mcpSessionsPerKey {
		return false
	}
	h.perKey[keyID]++
	return true
}

// opened watches the session a sessionless POST opened (id "" when it
// opened none) and frees its place and binding when the session ends.
func (h *mcpHub) opened(id string, p teammem.Principal) {
	var ss *mcp.ServerSession
	if id != "" {
		for s := range h.userServer(p).srv.Sessions() {
			if s.ID() == id {
				ss = s
			}
		}
	}
	if ss == nil {
		h.mu.Lock()
		delete(h.sessions, id)
		h.perKey[p.Key.ID]--
		h.mu.Unlock()
		return
	}
	go func() {
		_ = ss.Wait()
		h.mu.Lock()
		delete(h.sessions, id)
		if h.perKey[p.Key.ID]--; h.perKey[p.Key.ID] <= 0 {
			delete(h.perKey, p.Key.ID)
		}
		h.mu.Unlock()
	}()
}

// sessionRepo is the repo session id is bound to ("" when none).
func (h *mcpHub) sessionRepo(id string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sess := h.sessions[id]; sess != nil {
		return sess.repo
	}
	return ""
}

// closeAll ends every session and refuses new ones: server shutdown.
func (h *mcpHub) closeAll() {
	h.mu.Lock()
	h.closed = true
	servers := make([]*mcpUserServer, 0, len(h.servers))
	for _, us := range h.servers {
		servers = append(servers, us)
	}
	h.mu.Unlock()
	for _, us := range servers {
		us.close()
	}
}

// requireMCPKey authenticates /mcp as requireKey does the /v1 routes, but
// answers a missing, unknown, revoked or expired key with the 401 the MCP
// authorization spec asks for: WWW-Authenticate naming the protected
// resource metadata, so that a client can discover how to sign in. The
// SDK's RequireBearerToken then carries the key's id as the session's user,
// which the SDK checks on every request of a session too.
func (s *Server) requireMCPKey(next http.Handler) http.Handler {
	bearer := auth.RequireBearerToken(func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		p := principal(r)
		// Expiration is the SDK's own check; the key's expiry and
		// revocation were checked by authenticate, on every request.
		return &auth.TokenInfo{UserID: p.Key.ID, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{mcpPrincipal: p}}, nil
	}, nil)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticate(r)
		if err != nil {
			if teammem.ErrorCode(err) == teammem.EUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.publicBase(r)+mcpMetadataPath+`"`)
				writeJSON(w, http.StatusUnauthorized, wire.ErrorBody{Error: wire.ErrorObject{Type: teammem.EUnauthorized, Message: teammem.ErrorMessage(err)}})
				return
			}
			s.fail(w, r, err, s.writeError)
			return
		}
		if c := reqContextOf(r.Context()); c != nil {
			c.caller = p
		}
		s.metrics.InitOrg(p.Org.Slug)
		if r.Header.Get("Authorization") == "" {
			// An x-api-key caller: the SDK reads the bearer header only.
			r.Header.Set("Authorization", "Bearer "+apiKeyFrom(r))
		}
		bearer.ServeHTTP(w, r)
	})
}

// mcpPrincipal keys the caller in auth.TokenInfo.Extra, where the tools
// find the principal of the request that carried their call.
const mcpPrincipal = "teammem.principal"

// mcpMetadataPath is where /mcp's protected resource metadata is served
// (RFC 9728: the well-known prefix before the resource's path).
const mcpMetadataPath = "/.well-known/oauth-protected-resource/mcp"

// publicBase is the server's URL as its clients reach it: TEAMMEM_PUBLIC_URL
// when set, else the request's own scheme and host.
func (s *Server) publicBase(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimSuffix(s.cfg.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// mcpMetadata serves the protected resource metadata of /mcp. It names no
// authorization server: teammem keys are minted in the console or by
// `teammem-server admin`, not by OAuth, and a fake one would only send
// clients into a flow that cannot succeed.
func (s *Server) mcpMetadata(w http.ResponseWriter, r *http.Request) {
	base := s.publicBase(r)
	auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               base + "/mcp",
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "teammem team memory (MCP)",
		ResourceDocumentation:  base + "/ui/keys",
	}).ServeHTTP(w, r)
}
