// Package console is teammem's web console at /ui/: server-rendered pages
// (html/template, no script) for org admins and everyone else who wants to
// see what their agents load. It holds no business rules: every read and
// change goes through the /v1 API's own handlers, in process, as the
// signed-in key (Backend.Call), so the roles table, validation, the write
// path and the audit log are the API's. It adds only what a browser needs:
// sessions, CSRF tokens, security headers, and rendering (Markdown with raw
// HTML off, line diffs, the MEMORY.md cut).
package console

import (
	"context"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Backend is the console's way into the API, implemented by the HTTP
// server that mounts the console.
type Backend interface {
	// Principal resolves an API key's hash, read afresh from the database,
	// to its principal, with the API's refusals (unknown, revoked or
	// expired key; disabled user or org: EUnauthorized or EForbidden).
	Principal(ctx context.Context, keyHash []byte) (teammem.Principal, error)
	// Call makes one /v1 request as p, in process, through the API's router
	// and handlers, and returns the status, headers and body it answered.
	Call(ctx context.Context, p teammem.Principal, method, path string, body []byte) (int, http.Header, []byte)
	// Status is the HTTP status the API answers err with.
	Status(err error) int
}

// Config is what the console needs from the server.
type Config struct {
	Backend Backend
	// Store serves the reads the API has no route for, each after the
	// same teammem.Authorize as the API would ask: an old version's
	// content (diffs) and the audit event of a sign-in.
	Store teammem.Store
	// Sessions keeps sessions, login links and the overview aggregates.
	Sessions teammem.ConsoleStore
	// SessionTTL bounds a session (12 h when 0); a key that expires
	// sooner ends it sooner.
	SessionTTL time.Duration
	// PublicURL is the server's URL as browsers reach it
	// (TEAMMEM_PUBLIC_URL); when it is https every cookie is Secure, and a
	// form posted from its origin is same-origin. Empty: not known.
	PublicURL string
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// (for the sign-in throttle and audit) and whose X-Forwarded-Proto says
	// whether the request was https (TEAMMEM_TRUSTED_PROXIES).
	TrustedProxies Proxies
	// SignInLimit shapes the buckets of failed sign-ins per client address
	// and per key prefix (DefaultSignInLimit when zero).
	SignInLimit SignInLimit
	Clock       func() time.Time // nil: time.Now
	Log         *slog.Logger
}

// Console serves /ui/.
type Console struct {
	cfg    Config
	router chi.Router
	pages  map[string]*template.Template
	// throttle counts failed sign-ins per client address and key prefix.
	throttle *signInThrottle
	// publicOrigin is PublicURL's scheme://host, "" when not configured.
	publicOrigin string
}

// New returns the console; mount it at /ui.
func New(cfg Config) *Console {
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	c := &Console{cfg: cfg, pages: parsePages(), throttle: newSignInThrottle(cfg.SignInLimit)}
	if u, err := url.Parse(cfg.PublicURL); err == nil && u.Scheme != "" && u.Host != "" {
		c.publicOrigin = strings.ToLower(u.Scheme) + "://" + u.Host
	}
	c.router = c.routes()
	return c
}

// ServeHTTP serves a request under /ui.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secureHeaders(w.Header())
	c.router.ServeHTTP(w, r)
}

// routes lists every page of the console. GETs only read; every POST
// carries the session's CSRF token and goes to one /v1 call.
func (c *Console) routes() chi.Router {
	r := chi.NewRouter()
	static, _ := fs.Sub(staticFS, "static")
	r.Handle("/static/*", http.StripPrefix("/ui/static/", http.FileServer(http.FS(static))))
	r.Get("/login", c.getLogin)
	r.Post("/login", c.postLogin)
	r.Get("/link", c.getLink)
	r.Post("/link", c.postLink)
	r.Post("/logout", c.page(c.postLogout))
	r.Get("/", c.page(c.overview))
	r.Get("/space", c.page(c.space))
	r.Get("/entry", c.page(c.entry))
	r.Post("/entry/restore", c.page(c.restore))
	r.Post("/entry/redact", c.page(c.redact))
	r.Post("/entry/delete", c.page(c.deleteEntry))
	r.Get("/memory", c.page(c.memoryIndex))
	r.Get("/search", c.page(c.search))
	r.Get("/review", c.page(c.review))
	r.Post("/review/approve", c.page(c.decide("approve")))
	r.Post("/review/reject", c.page(c.decide("reject")))
	r.Get("/dreams", c.page(c.dreams))
	r.Get("/dream", c.page(c.dream))
	r.Post("/dream/apply", c.page(c.reviewDream("apply")))
	r.Post("/dream/discard", c.page(c.reviewDream("discard")))
	r.Get("/users", c.page(c.users))
	r.Post("/users", c.page(c.createUser))
	r.Post("/users/update", c.page(c.updateUser))
	r.Get("/keys", c.page(c.keys))
	r.Post("/keys", c.page(c.createKey))
	r.Post("/keys/revoke", c.page(c.revokeKey))
	r.Get("/audit", c.page(c.audit))
	r.Get("/settings", c.page(c.settings))
	r.Post("/settings", c.page(c.saveSettings))
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		c.renderError(w, r, nil, http.StatusNotFound, "No such page.")
	})
	return r
}

// contentSecurityPolicy allows nothing but the console's own stylesheet
// and images: no script at all, no frames, forms only to the console.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'"

// secureHeaders sets the headers of every console response.
func secureHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: under no-referrer browsers send
	// "Origin: null" with form posts, which sameOrigin must refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

func (c *Console) now() time.Time { return c.cfg.Clock() }

// Routes, Middlewares, Match and Find make the console a chi.Routes, so
// that the server's route walk (metrics labels) sees its pages.
func (c *Console) Routes() []chi.Route { return c.router.Routes() }

// Middlewares implements chi.Routes.
func (c *Console) Middlewares() chi.Middlewares { return c.router.Middlewares() }

// Match implements chi.Routes.
func (c *Console) Match(rctx *chi.Context, method, path string) bool {
	return c.router.Match(rctx, method, path)
}

// Find implements chi.Routes.
func (c *Console) Find(rctx *chi.Context, method, path string) string {
	return c.router.Find(rctx, method, path)
}
