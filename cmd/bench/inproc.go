package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/server/events"
	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/server/store"
	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/teammem"
)

// inprocServer is the API served from the bench's own process, wired as
// cmd/server wires it, so that --profile can take a CPU profile of each
// workload. Its numbers include the load generator's share of the process
// and are only for reading profiles, never for the ratios.
type inprocServer struct {
	dir      string // where profiles go
	prefix   string // driver prefix of profile names
	st       teammem.Store
	broker   events.Broker
	srv      *http.Server
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	hostport string
}

// startInproc opens dsn and serves the API on a free port.
func startInproc(ctx context.Context, dsn, dir, prefix string) (*inprocServer, error) {
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	s := &inprocServer{dir: dir, prefix: prefix, st: st}
	if err := bootstrapBench(ctx, st); err != nil {
		st.Close()
		return nil, err
	}
	sc, err := secretscan.New()
	if err != nil {
		st.Close()
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s.broker = events.For(st, log)
	api := httpapi.New(st, secretscan.NewOrgScanner(sc), httpapi.Config{Defaults: teammem.DefaultServerDefaults,
		MaxBodyBytes: 4 << 20, TombstoneRetention: 720 * time.Hour, MetricsToken: benchMetricsToken, AdminKey: benchAdminKey, Events: s.broker}, log, telemetry.New())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.broker.Close()
		st.Close()
		return nil, err
	}
	s.hostport = ln.Addr().String()
	s.srv = &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 10 * time.Second}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	s.wg.Go(func() { api.Run(bg) })
	s.wg.Go(func() { _ = s.srv.Serve(ln) })
	return s, nil
}

// bootstrapBench gives an empty database what cmd/server's bootstrap does
// with TEAMMEM_BOOTSTRAP_KEY: org "default", owner "admin", benchKey.
func bootstrapBench(ctx context.Context, st teammem.Store) error {
	if n, err := st.OrgCount(ctx); err != nil || n > 0 {
		return err
	}
	org, err := st.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "default", Name: "Default"})
	if err != nil {
		return err
	}
	user, err := st.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: "admin", Role: teammem.RoleOwner})
	if err != nil {
		return err
	}
	_, err = st.KeyCreate(ctx, org.ID, teammem.KeyCreateParams{UserID: user.ID, Name: "bench",
		Prefix: teammem.KeyPrefix(benchKey), Hash: teammem.HashKey(benchKey)})
	return err
}

func (s *inprocServer) addr() string { return s.hostport }

func (s *inprocServer) rssMB() float64 { return 0 } // the bench's own RSS would mislead

func (s *inprocServer) cpuSeconds() float64 { return 0 }

// profile writes a CPU profile of the whole process to dir/prefix+name.pprof.
func (s *inprocServer) profile(name string) func() {
	path := filepath.Join(s.dir, s.prefix+name+".pprof")
	f, err := os.Create(path)
	if err != nil {
		logf("profile %s: %v", path, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		logf("profile %s: %v", path, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		logf("wrote %s", path)
	}
}

func (s *inprocServer) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	s.cancel()
	s.wg.Wait()
	s.broker.Close()
	if cerr := s.st.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
	}
	return err
}
