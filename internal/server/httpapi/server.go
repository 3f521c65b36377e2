// Package httpapi is teammem's HTTP layer: the chi router with every route
// listed in one function, one file of handlers per resource, the auth
// middleware, and the single table from domain error codes to statuses.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/server/console"
	"github.com/teammem/teammem/internal/server/events"
	"github.com/teammem/teammem/internal/server/poison"
	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/teammem"
)

// Config holds the server's HTTP-level settings.
type Config struct {
	Defaults           teammem.ServerDefaults
	MaxBodyBytes       int64
	TombstoneRetention time.Duration
	// MetricsToken, when set, serves /metrics on the API listener too, to
	// requests that carry it as "Authorization: Bearer <token>". Empty
	// keeps the metrics off the API listener: they are for MetricsHandler
	// on a listener of their own.
	MetricsToken string
	// AdminKey authorises the server operators' /v1/admin routes; empty
	// disables them.
	AdminKey string
	// WriteRate and WriteBurst shape each API key's token bucket on
	// memory writes; a rate of 0 turns every write limit off.
	WriteRate  float64
	WriteBurst int
	// UserWrite and OrgWrite are the write buckets shared by every key of
	// one user and by every key of one org, so that minting keys buys no
	// extra writes. A zero Rate leaves that bucket out.
	UserWrite, OrgWrite RateLimit
	// Read, UserRead and OrgRead are the buckets, per key, user and org, of
	// every other authenticated request (see limitReads); a zero Read.Rate
	// turns every read limit off, a zero Rate of the others leaves that
	// bucket out.
	Read, UserRead, OrgRead RateLimit
	// MaxKeysPerUser caps a user's active (neither revoked nor expired)
	// keys; 0 means no cap.
	MaxKeysPerUser int
	// MaxStreamsPerKey caps the event streams one key holds open on this
	// replica; 0 means no cap.
	MaxStreamsPerKey int
	// MaxStoresPerOrg caps the memory stores an org creates through the
	// memory stores API (TEAMMEM_MAX_STORES_PER_ORG); 0 means
	// teammem.DefaultMaxStoresPerOrg.
	MaxStoresPerOrg int
	// StreamRecheck is how often an open event stream re-reads its key and
	// user from the database (30 s when 0).
	StreamRecheck time.Duration
	// Clock is the time of rate limits, key expiry and audit
	// deduplication; nil means time.Now. Tests set it.
	Clock func() time.Time
	// Events carries change notifications between replicas; nil means an
	// in-process broker (one server).
	Events events.Broker
	// Heartbeat is the interval of comments on idle event streams (15 s when 0).
	Heartbeat time.Duration
	// RequestTimeout bounds every request but event streams (30 s when 0).
	RequestTimeout time.Duration
	// PublicURL is the server's URL as browsers reach it
	// (TEAMMEM_PUBLIC_URL): when https, the console's cookies are Secure.
	PublicURL string
	// TrustedProxies are the peers whose X-Forwarded-For and
	// X-Forwarded-Proto the console believes (TEAMMEM_TRUSTED_PROXIES).
	TrustedProxies []netip.Prefix
	// SweepByJob leaves the retention sweep out of Run: the job queue
	// runs SweepRetention instead (cmd/server, internal/server/jobs), on
	// one replica at a time.
	SweepByJob bool
	// SignInLimit shapes the console's buckets of failed sign-ins per
	// client address and key prefix (console.DefaultSignInLimit when zero).
	SignInLimit console.SignInLimit
	// Dreams runs dreams (POST /v1/dreams); nil when the server has no
	// model, and every create then answers 400 saying how to configure one.
	Dreams DreamRunner
}

// Server serves the teammem API.
type Server struct {
	store   teammem.Store
	cfg     Config
	log     *slog.Logger
	metrics *telemetry.Metrics
	writer  *teammem.Writer
	// retention is the hourly sweep of tombstones and history (history.go).
	retention *teammem.Retention
	touch     keyToucher
	limiter   limits
	events    events.Broker
	router    chi.Router
	// routeLabels holds every route template, as chi reports a matched one:
	// the only route label values besides telemetry.RouteUnmatched.
	routeLabels map[string]bool
	cache       *cache
	index       *indexCache   // rendered MEMORY.md by space version
	streams     streamCounter // open event streams per key
	mcp         *mcpHub       // /mcp's sessions (mcp.go)
	audited     *auditDedup   // recently audited reads
	served      atomic.Int64  // requests begun, for trimWhenIdle
	// streamsDone is closed by CloseStreams to end every event stream.
	streamsDone chan struct{}
	closeOnce   sync.Once
}

// now is the server's clock (Config.Clock).
func (s *Server) now() time.Time { return s.cfg.Clock() }

// CloseStreams ends every open event stream (clients reconnect elsewhere);
// call it when shutdown begins, since streams never finish on their own.
// MCP sessions end with them.
func (s *Server) CloseStreams() {
	s.closeOnce.Do(func() {
		close(s.streamsDone)
		s.mcp.closeAll()
	})
}

// New returns a server on store. scanner may be nil (no secret scanning).
func New(store teammem.Store, scanner teammem.SecretScanner, cfg Config, log *slog.Logger, metrics *telemetry.Metrics) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if metrics == nil {
		metrics = telemetry.New()
	}
	metrics.KnowPoisonRules(poisonRuleIDs()...)
	if cfg.Events == nil {
		cfg.Events = events.NewLocal()
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 15 * time.Second
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.StreamRecheck <= 0 {
		cfg.StreamRecheck = 30 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	s := &Server{store: store, cfg: cfg, log: log, metrics: metrics, events: cfg.Events, streamsDone: make(chan struct{}), cache: newCache(store.HeadsCache()),
		limiter: limits{
			writes: newLimiter("writes", RateLimit{cfg.WriteRate, cfg.WriteBurst}, cfg.UserWrite, cfg.OrgWrite),
			reads:  newLimiter("reads", cfg.Read, cfg.UserRead, cfg.OrgRead),
		},
		index: newIndexCache(maxIndexCacheBytes), streams: streamCounter{open: map[string]int{}}, audited: newAuditDedup()}
	s.writer = &teammem.Writer{Store: store, Publisher: events.Spaces{Broker: cfg.Events, Log: log}, Scanner: scanner, Poison: poison.Checker{}, Defaults: cfg.Defaults, TombstoneRetention: cfg.TombstoneRetention}
	s.retention = &teammem.Retention{Store: store, Defaults: cfg.Defaults, TombstoneRetention: cfg.TombstoneRetention}
	s.mcp = newMCPHub(s)
	s.router = s.routes()
	s.routeLabels = routeLabels(s.router)
	s.initRouteMetrics()
	return s
}

// initRouteMetrics creates the request series of every API route and
// method at 0, labelled as the middleware labels a matched request, so that
// the request and latency panels have data before the first request.
func (s *Server) initRouteMetrics() {
	rs, _ := s.Routes() // the router's own walk: it cannot fail
	for _, r := range rs {
		route := r.Path
		if route != "/" {
			route = strings.TrimSuffix(route, "/")
		}
		s.metrics.InitRoute(route, r.Method)
	}
}

// poisonRuleIDs lists the poisoning check's rule ids, as the package
// exports them, for the metrics' series at 0.
func poisonRuleIDs() []string {
	var ids []string
	for _, r := range poison.Rules() {
		ids = append(ids, r.ID)
	}
	return ids
}

// Handler returns the root handler.
func (s *Server) Handler() http.Handler { return s.observe(headAsGet(s.router)) }

// headAsGet answers HEAD on every GET route: the request is routed as a GET
// and the body is dropped, so headers (ETag, Content-Length) are the GET's.
func headAsGet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		r2.Method = http.MethodGet
		next.ServeHTTP(headWriter{w}, r2)
	})
}

// headWriter drops the body of a response to HEAD.
type headWriter struct{ http.ResponseWriter }

func (h headWriter) Write(b []byte) (int, error) { return len(b), nil }

// allowedMethods lists the methods routes answers on req's path, for the
// Allow header of a 405.
func allowedMethods(routes chi.Routes, req *http.Request) string {
	path := req.URL.RawPath
	if path == "" {
		path = req.URL.Path
	}
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodPatch, http.MethodDelete} {
		if routes.Match(chi.NewRouteContext(), m, path) {
			allow = append(allow, m)
			if m == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
	}
	return strings.Join(allow, ", ")
}

// Route is one method and path template the router serves.
type Route struct{ Method, Path string }

// Routes lists the routes the router serves, for the spec parity test.
func (s *Server) Routes() ([]Route, error) {
	var out []Route
	err := chi.Walk(s.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if route == "/ui" || strings.HasPrefix(route, "/ui/") {
			return nil // the console's HTML pages are not API routes
		}
		out = append(out, Route{Method: method, Path: route})
		return nil
	})
	return out, err
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		s.log.WarnContext(ctx, "not ready", "error", err.Error())
		return teammem.Errorf(teammem.EUnavailable, "the database is not reachable or not migrated")
	}
	if sc, ok := s.writer.Scanner.(interface{ Ready() error }); ok {
		if err := sc.Ready(); err != nil {
			return teammem.Errorf(teammem.EUnavailable, "%v", err)
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}

// Run does the server's background work until ctx ends: applying other
// replicas' cache invalidations, flushing key last-use times and, unless
// Config.SweepByJob, the retention sweep (expired tombstones, history
// beyond each org's retention), at start and hourly. It flushes once more
// on exit.
func (s *Server) Run(ctx context.Context) {
	go s.watchInvalidations(ctx)
	go s.trimWhenIdle(ctx, 500*time.Millisecond)
	flush := time.NewTicker(30 * time.Second)
	defer flush.Stop()
	purge := time.NewTicker(time.Hour)
	defer purge.Stop()
	if s.cfg.SweepByJob {
		purge.Stop()
	}
	// The series first, so that the first scrape has them all: the sweep
	// of a large database can take a while.
	s.initOrgMetrics(ctx)
	if !s.cfg.SweepByJob {
		s.sweepRetention(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			s.flushKeyUse(context.WithoutCancel(ctx))
			return
		case <-flush.C:
			s.flushKeyUse(ctx)
			s.initOrgMetrics(ctx)
		case <-purge.C:
			s.sweepRetention(ctx)
		}
	}
}

// trimWhenIdle hands freed heap back to the operating system once the
// server falls idle after serving requests, so an idle replica's resident
// memory is what it holds live rather than the peak of its last burst (the
// Go runtime returns it too, but over minutes). It costs one garbage
// collection per quiet spell, never one while requests arrive.
func (s *Server) trimWhenIdle(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var last, trimmed int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n := s.served.Load(); n == last && n != trimmed {
			debug.FreeOSMemory()
			trimmed = n
		} else {
			last = n
		}
	}
}

// initOrgMetrics creates the per-org series of every org at 0 (see
// telemetry.InitOrg): at start, and then now and again for orgs created
// elsewhere (another replica, teammem-server admin), ahead of their first
// request, so that Prometheus counts that request's increments too.
func (s *Server) initOrgMetrics(ctx context.Context) {
	orgs, err := s.store.OrgList(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "listing orgs for their metrics failed", "error", err.Error())
		return
	}
	for _, o := range orgs {
		s.metrics.InitOrg(o.Slug)
	}
}

func (s *Server) flushKeyUse(ctx context.Context) {
	if used := s.touch.take(); len(used) > 0 {
		if err := s.store.KeysTouch(ctx, used); err != nil {
			s.log.WarnContext(ctx, "recording key use failed", "error", err.Error())
		}
	}
}
