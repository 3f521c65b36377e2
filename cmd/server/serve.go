package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/server/events"
	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/server/jobs"
	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/teammem"
)

// Main is the running server: configuration, store, API and listeners.
// End-to-end tests drive the built binary; Main keeps the wiring in one place.
type Main struct {
	Config Config
	Log    *slog.Logger
	Stderr io.Writer

	store   teammem.Store
	events  events.Broker
	api     *httpapi.Server
	jobs    *jobs.Queue // started by Run, stopped before the store closes
	servers []*http.Server
	// Addr is the API listener's address once Open returned.
	Addr net.Addr
	// MetricsAddr is the metrics listener's address once Open returned; nil
	// when the configuration opens none.
	MetricsAddr net.Addr
}

// newLogger builds the JSON or text logger the configuration asks for.
func newLogger(c Config, w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.LogLevel))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// Open opens the database, bootstraps an empty one, builds the API and binds
// the listeners.
func (m *Main) Open(ctx context.Context) error {
	start := time.Now()
	// Compiling the secret rules takes a few hundred milliseconds: it runs
	// in the background, while the database opens and the server starts
	// listening. /readyz answers 503 until it is done and writes wait for it.
	sc := secretscan.NewOrgScannerAsync(secretscan.New)
	go func() {
		if err := sc.Wait(); err != nil {
			m.Log.Error("the secret scanner failed to build; every pushed entry is refused as unscannable", "error", err.Error())
			return
		}
		debug.FreeOSMemory() // the compilation's garbage
		m.Log.Info("secret scanner ready", "startup", time.Since(start).String())
	}()
	st, err := openStore(ctx, &m.Config, true, nil)
	if err != nil {
		return err
	}
	m.store = st
	if err := bootstrap(ctx, st, m.Config.BootstrapKey, m.Stderr); err != nil {
		return err
	}
	metrics := telemetry.New()
	if ps, ok := st.(teammem.PoolStatser); ok {
		metrics.RegisterPool(ps)
	}
	broker := events.For(st, m.Log) // replicas sharing a database announce each other's writes
	m.events = broker
	apiCfg := httpapi.Config{
		Defaults:           m.Config.defaults(),
		MaxBodyBytes:       m.Config.MaxBodyBytes,
		TombstoneRetention: m.Config.TombstoneRetention,
		MetricsToken:       m.Config.MetricsToken,
		AdminKey:           m.Config.AdminKey,
		Events:             broker,
		PublicURL:          m.Config.PublicURL,
		SweepByJob:         true, // m.jobs runs it, on the leader
	}
	// Validated with the rest of the configuration, so this cannot fail.
	apiCfg.TrustedProxies, _ = parseTrustedProxies(m.Config.TrustedProxies)
	m.Config.Limits.apply(&apiCfg)
	dreams := m.Config.Dream.runner(m.Config.Limits.MaxStoresPerOrg)
	if len(dreams.Models()) > 0 {
		apiCfg.Dreams = dreams // else POST /v1/dreams says how to configure a model
	}
	m.api = httpapi.New(st, sc, apiCfg, m.Log, metrics)
	if m.jobs, err = openJobs(ctx, st, m.api, apiCfg.Dreams, m.Log, m.Config); err != nil {
		return err
	}
	// The reaper runs without a model too: a dream left running by a
	// process that had one still has to end.
	if err = registerDreams(ctx, m.jobs, st, dreams, m.api, metrics.Dreams, m.Log); err != nil {
		m.jobs.Stop(ctx)
		return err
	}
	// Both listeners are bound before either serves: a metrics address
	// already in use stops the start instead of leaving a half-open server.
	ln, err := net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return err
	}
	var mln net.Listener
	if m.Config.metricsListener() {
		if mln, err = net.Listen("tcp", m.Config.MetricsAddr); err != nil {
			ln.Close()
			return fmt.Errorf("metrics listener (TEAMMEM_METRICS_ADDR=%s): %w; set another address, or %q for none", m.Config.MetricsAddr, err, MetricsOff)
		}
	}
	m.Addr = ln.Addr()
	m.serve(ln, m.api.Handler())
	if mln != nil {
		m.MetricsAddr = mln.Addr()
		m.serve(mln, m.api.MetricsHandler())
	}
	// Start-up garbage (rule compilation, migrations) would otherwise stay
	// resident until the next GC cycle's scavenge.
	debug.FreeOSMemory()
	attrs := []any{"addr", m.Addr.String()}
	if m.MetricsAddr != nil {
		attrs = append(attrs, "metrics_addr", m.MetricsAddr.String())
	}
	m.Log.Info("teammem-server listening", append(attrs, "config", m.Config.String(), "startup", time.Since(start).String())...)
	return nil
}

func (m *Main) serve(ln net.Listener, h http.Handler) {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      0, // server-sent event streams stay open; handlers bound their own work
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(m.Log.Handler(), slog.LevelWarn),
	}
	m.servers = append(m.servers, srv)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.Log.Error("listener failed", "error", err.Error())
		}
	}()
}

// Run serves until ctx ends, then shuts down gracefully: in-flight requests
// finish (up to the shutdown timeout) and background state is flushed.
func (m *Main) Run(ctx context.Context) error {
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { m.api.Run(bg) })
	wg.Go(func() { returnMemory(bg) })
	if err := m.jobs.Start(bg); err != nil {
		cancel()
		wg.Wait()
		return err
	}
	<-ctx.Done()
	m.Log.Info("shutting down")
	sctx, scancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
	defer scancel()
	var errs []error
	for _, srv := range m.servers {
		srv.SetKeepAlivesEnabled(false)
	}
	// Event streams never finish on their own: end them, then wait for the
	// ordinary requests still in flight.
	m.api.CloseStreams()
	for _, srv := range m.servers {
		errs = append(errs, srv.Shutdown(sctx))
	}
	// Running jobs finish, or are cancelled at the timeout and retried
	// later, before the store closes.
	errs = append(errs, m.jobs.Stop(sctx))
	cancel()
	wg.Wait()
	return errors.Join(errs...)
}

// returnMemory gives freed heap back to the OS every few minutes, so an
// idle server's resident size falls back after a burst of load.
func returnMemory(ctx context.Context) {
	t := time.NewTicker(2 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			debug.FreeOSMemory()
		}
	}
}

// Close releases the job queue and the database.
func (m *Main) Close() error {
	if m.jobs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
		m.jobs.Stop(ctx) // after Run's Stop, only closes
		cancel()
	}
	if m.events != nil {
		m.events.Close()
	}
	if m.store == nil {
		return nil
	}
	return m.store.Close()
}

// openJobs opens the job queue on st and registers the server's periodic
// jobs, on the leader: the retention sweep at start and hourly, the scrub
// job, and with a model (runner not nil) the nightly team dreams.
func openJobs(ctx context.Context, st teammem.Store, api *httpapi.Server, runner httpapi.DreamRunner, log *slog.Logger, c Config) (*jobs.Queue, error) {
	q, err := jobs.New(ctx, st, log, jobs.Config{DreamWorkers: c.DreamWorkers})
	if err != nil {
		return nil, err
	}
	if err := jobs.AddRetention(q, api); err != nil {
		q.Stop(ctx)
		return nil, err
	}
	if err := jobs.AddScrubs(q, st); err != nil {
		q.Stop(ctx)
		return nil, err
	}
	if err := addNightly(q, st, api, runner, c, log); err != nil {
		q.Stop(ctx)
		return nil, err
	}
	return q, nil
}

// addNightly registers the nightly team dreams on q, run by runner with
// its first allowed model and counted in api's dream metrics. A nil runner
// (a server without a model) leaves them out: the dreams API answers that
// no model is configured.
func addNightly(q *jobs.Queue, st teammem.Store, api *httpapi.Server, runner httpapi.DreamRunner, c Config, log *slog.Logger) error {
	if runner == nil {
		return nil
	}
	w, err := jobs.ParseWindow(c.DreamWindow)
	if err != nil {
		return fmt.Errorf("TEAMMEM_DREAM_WINDOW: %w", err)
	}
	return jobs.AddNightly(q, jobs.NewNightly(jobs.NightlyConfig{Store: st, Enqueuer: runner, Models: runner.Models(), Window: w,
		Created: api.DreamCreated, Log: log}))
}
