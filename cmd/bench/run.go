package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// bench is one run: its options, where things are, and the report.
type bench struct {
	opt  options
	root string // module root
	tmp  string // scratch directory, removed at the end
	bins binaries
	pg   *pgAdmin // nil when Postgres is not used
	rep  *report
}

// driver is one database the server runs on.
type driver struct {
	name   string // "sqlite" or "postgres"
	prefix string // of JSON keys: "" for SQLite, "pg_" for Postgres
	dsn    string // the server's database
}

// run measures everything the options ask for and prints the report.
func run(ctx context.Context, opt options) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "teammem-bench-")
	if err != nil {
		return err
	}
	if opt.keep {
		logf("keeping %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	b := &bench{opt: opt, root: root, tmp: tmp, rep: newReport()}
	b.rep.set("quick", opt.quick)
	b.bins = buildAll(ctx, root, tmp, opt.binDir, opt.gitleaks)
	if b.bins.serverErr != nil && opt.profile == "" {
		return b.bins.serverErr
	}
	if opt.drivers["postgres"] {
		if b.pg, err = findPG(ctx, opt.pgURL); err != nil {
			b.rep.note("Postgres skipped: %v", err)
		} else {
			defer b.pg.dropAll()
		}
	}
	if err := b.runAll(ctx); err != nil {
		return err
	}
	b.rep.set("duration_s", time.Since(started).Seconds())
	return b.rep.print(os.Stdout)
}

// drivers returns the databases of this run, creating the Postgres one.
func (b *bench) drivers(ctx context.Context, what string) ([]*driver, error) {
	var ds []*driver
	if b.opt.drivers["sqlite"] {
		dir := filepath.Join(b.tmp, what)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		ds = append(ds, &driver{name: "sqlite", dsn: "sqlite://" + filepath.Join(dir, "teammem.db")})
	}
	if b.pg != nil {
		url, err := b.pg.create(ctx, what)
		if err != nil {
			return nil, err
		}
		ds = append(ds, &driver{name: "postgres", prefix: "pg_", dsn: url})
	}
	return ds, nil
}

// runAll runs each section in turn. The SQLite server of the HTTP section
// stays up for propagation, which needs a quiet server.
func (b *bench) runAll(ctx context.Context) error {
	var rss sync.WaitGroup
	keep, err := b.runServers(ctx, &rss)
	defer func() {
		rss.Wait()
		if keep != nil {
			keep.stop()
		}
	}()
	if err != nil {
		return err
	}
	if b.opt.want("scan") {
		b.runPoison()
		if err := b.runScan(ctx); err != nil {
			return fmt.Errorf("scan: %w", err)
		}
	}
	rss.Wait() // the SQLite server must be idle for its reading, and is
	if b.opt.want("prop") {
		if err := b.runPropagation(ctx, keep); err != nil {
			return fmt.Errorf("propagation: %w", err)
		}
	}
	if keep != nil {
		keep.stop()
		keep = nil
	}
	if b.opt.want("cross") {
		if err := b.runCrossOrg(ctx); err != nil {
			return fmt.Errorf("cross-org: %w", err)
		}
	}
	if b.opt.want("scale") {
		if err := b.runScale(ctx); err != nil {
			return fmt.Errorf("scale: %w", err)
		}
	}
	return ctx.Err()
}

// runServers starts the server on each driver and runs the HTTP workloads.
// Each server's RSS is read 2 s after its load, in the background, while the
// next section runs (the server under test is idle meanwhile); rss tracks
// those readings. It returns the SQLite server, still running.
func (b *bench) runServers(ctx context.Context, rss *sync.WaitGroup) (server, error) {
	ds, err := b.drivers(ctx, "main")
	if err != nil {
		return nil, err
	}
	var keep server
	for _, d := range ds {
		srv, err := b.serve(ctx, d)
		if err != nil {
			return keep, err
		}
		if b.opt.want("http") {
			if err := b.runHTTPSuite(ctx, d, srv); err != nil {
				srv.stop()
				return keep, fmt.Errorf("%s: %w", d.name, err)
			}
		}
		if b.opt.want("memstores") {
			if err := b.runMemStores(ctx, d, srv); err != nil {
				srv.stop()
				return keep, fmt.Errorf("%s memory stores: %w", d.name, err)
			}
		}
		if d.name == "sqlite" {
			keep = srv
			rss.Go(func() { b.idleRSS(ctx, d, srv) })
			continue
		}
		rss.Go(func() {
			b.idleRSS(ctx, d, srv)
			if err := srv.stop(); err != nil {
				b.rep.note("%s server stop: %v", d.name, err)
			}
		})
	}
	return keep, nil
}

// serve starts the server under test on d and records its startup time and
// resident memory right after startup.
func (b *bench) serve(ctx context.Context, d *driver) (server, error) {
	if b.opt.profile != "" {
		return b.start(ctx, d)
	}
	srv, err := startProc(ctx, b.bins.server, d.dsn, b.opt.serverEnv)
	if err != nil {
		return nil, err
	}
	t := none
	if d.name == "sqlite" {
		t = below(1000)
	}
	b.rep.single(fmt.Sprintf("startup to listening, fresh db (%s)", d.name), d.prefix+"startup_ms",
		float64(srv.startup)/float64(time.Millisecond), "ms", t)
	b.rep.single(fmt.Sprintf("startup to ready: secret rules compiled (%s)", d.name), d.prefix+"startup_ready_ms",
		float64(srv.ready)/float64(time.Millisecond), "ms", none)
	b.rep.set(d.prefix+"startup_rss_mb", srv.rssMB())
	return srv, nil
}

// start starts a server under test on d and records nothing: in process
// when profiling, else the server binary.
func (b *bench) start(ctx context.Context, d *driver) (server, error) {
	if b.opt.profile != "" {
		if err := os.MkdirAll(b.opt.profile, 0o755); err != nil {
			return nil, err
		}
		return startInproc(ctx, d.dsn, b.opt.profile, d.prefix)
	}
	return startProc(ctx, b.bins.server, d.dsn, b.opt.serverEnv)
}

// idleRSS records the server's RSS after the load, once it was idle 2 s.
func (b *bench) idleRSS(ctx context.Context, d *driver, srv server) {
	if b.opt.profile != "" {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(2 * time.Second):
	}
	what := "idle RSS 2 s after the HTTP workloads"
	if !b.opt.want("http") && b.opt.want("memstores") {
		what = "idle RSS 2 s after the memory store workloads"
	} else if !b.opt.want("http") {
		what = "idle RSS 2 s after startup (no load)"
	}
	b.rep.single(fmt.Sprintf("%s (%s)", what, d.name), d.prefix+"idle_rss_mb", srv.rssMB(), "MB", below(60))
	logf("%s idle RSS %.1f MB", d.name, srv.rssMB())
}
