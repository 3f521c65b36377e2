package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/server/store"
	"github.com/teammem/teammem/internal/teammem"
)

// The scale comparison: the same requests (cold 304 pulls, full pulls and
// pushes of sampled repos, one at a time) on a small database holding only
// the sampled repos and on a big generated one. Latency that grows with the
// database means a query that does not use an index.

// scaleKinds are the request kinds measured, in order: the 304s go first,
// while the server's caches are cold. The searches (GET /v1/search, every
// repo of the sample's org, or its repo alone) cycle through searchQueries.
var scaleKinds = []string{"pull304_cold", "pull_full", "push", "search_org", "search_repo"}

// searchQueries are the bench's searches: words of the generated text,
// which every entry holds many of (the worst case: every entry of the org
// matches and is ranked), pairs, prefixes and a word no entry holds.
var searchQueries = []string{"deploy", "cache timeout", "migr*", "flaky retry ci", "postgres", "nowhere-to-be-found", "lat* owner"}

// searchTargets are issue 25's: a search answers in p50 ≤ 50 ms and p99 ≤
// 200 ms on the big database.
var searchTargets = map[string]target{"p50": atMost(50), "p99": atMost(200)}

// generateInto migrates dsn through the store package, then fills it.
func generateInto(ctx context.Context, dsn string, spec genSpec) (genResult, time.Duration, error) {
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return genResult{}, 0, err
	}
	st.Close()
	driver, target, _ := store.Parse(dsn)
	var out sink
	if driver == "postgres" {
		out, err = openPGSink(ctx, target)
	} else {
		out, err = openSQLiteSink(target)
	}
	if err != nil {
		return genResult{}, 0, err
	}
	defer out.close()
	start := time.Now()
	res, err := generate(ctx, out, spec)
	return res, time.Since(start), err
}

// sweepInto runs the retention sweep on dsn in process, with the server's
// default retention, as a server does when it starts.
func sweepInto(ctx context.Context, dsn string) (teammem.SweepResult, time.Duration, error) {
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return teammem.SweepResult{}, 0, err
	}
	defer st.Close()
	r := &teammem.Retention{Store: st, Defaults: teammem.DefaultServerDefaults, TombstoneRetention: 720 * time.Hour}
	start := time.Now()
	res, err := r.Sweep(ctx)
	return res, time.Since(start), err
}

// runGenerate is --generate: fill one database and say how to use it.
func runGenerate(ctx context.Context, opt options, stdout io.Writer) error {
	spec := genSpec{orgs: opt.orgs, repos: opt.repos, entries: opt.entries, entryBytes: opt.genEntryBytes, samples: 1}
	res, took, err := generateInto(ctx, opt.databaseURL, spec)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "generated %d orgs, %d repos, %d spaces, %d entries (%d versions, %.0f MB of content) in %s\n",
		res.orgs, res.repos, res.spaces, res.entries, res.versions, float64(res.bytes)/(1<<20), took.Round(time.Millisecond))
	if len(res.samples) > 0 {
		s := res.samples[0]
		fmt.Fprintf(stdout, "e.g. repo %s, owner key %s\n", s.slug, s.key)
	}
	if opt.fsck {
		return fsck(ctx, opt.databaseURL, stdout)
	}
	return nil
}

// fsck checks every space of dsn with teammem.Fsck.
func fsck(ctx context.Context, dsn string, w io.Writer) error {
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	rep, err := teammem.Fsck(ctx, st)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "fsck: %d spaces, %d entries, %d problems\n", rep.Spaces, rep.Entries, len(rep.Problems))
	if len(rep.Problems) > 0 {
		return fmt.Errorf("generated database is inconsistent: %+v", rep.Problems[0])
	}
	return nil
}

// runScale measures both sizes on each driver. Both servers run at once
// and the requests alternate between them, so that a busy moment on the
// machine slows both sides alike.
func (b *bench) runScale(ctx context.Context) error {
	n := b.opt.scaleRequests
	big := genSpec{orgs: b.opt.orgs, repos: b.opt.repos, entries: b.opt.entries, entryBytes: b.opt.genEntryBytes, samples: n}
	small := big
	small.orgs, small.repos = 1, min(n, big.repos)
	for _, d := range b.scaleDrivers() {
		var pair [2]scaleSide
		for i, spec := range []genSpec{small, big} {
			side, err := b.scaleServe(ctx, d, scaleSizes[i], spec)
			if err != nil {
				stopSides(pair[:i])
				return fmt.Errorf("%s %s: %w", d.name, scaleSizes[i], err)
			}
			pair[i] = side
		}
		stop := pair[1].srv.profile("requests")
		lat, err := scaleLatency(ctx, pair, n)
		stop()
		stopSides(pair[:])
		if err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
		b.reportScale(d, lat)
	}
	return nil
}

// scaleSizes names the two databases of the scale comparison.
var scaleSizes = [2]string{"small", "big"}

// scaleSide is a generated database being served.
type scaleSide struct {
	srv     server
	samples []genSample
}

func stopSides(sides []scaleSide) {
	for _, s := range sides {
		if s.srv != nil {
			s.srv.stop()
		}
	}
}

// scaleDrivers returns the drivers to measure; scaleDSN makes their
// databases.
func (b *bench) scaleDrivers() []*driver {
	var ds []*driver
	if b.opt.drivers["sqlite"] {
		ds = append(ds, &driver{name: "sqlite"})
	}
	if b.pg != nil {
		ds = append(ds, &driver{name: "postgres", prefix: "pg_"})
	}
	return ds
}

// scaleDSN makes a fresh database for one size.
func (b *bench) scaleDSN(ctx context.Context, d *driver, size string) (string, error) {
	if d.name == "postgres" {
		return b.pg.create(ctx, "scale_"+size)
	}
	dir := filepath.Join(b.tmp, "scale-"+size)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return "sqlite://" + filepath.Join(dir, "teammem.db"), nil
}

// scaleServe generates one database and starts a server on it.
func (b *bench) scaleServe(ctx context.Context, d *driver, size string, spec genSpec) (scaleSide, error) {
	dsn, err := b.scaleDSN(ctx, d, size)
	if err != nil {
		return scaleSide{}, err
	}
	res, took, err := generateInto(ctx, dsn, spec)
	if err != nil {
		return scaleSide{}, err
	}
	logf("%s %s database: %d repos, %d entries, %d versions in %s", d.name, size, res.repos, res.entries, res.versions, took.Round(time.Millisecond))
	if size == "small" {
		if err := fsck(ctx, dsn, io.Discard); err != nil {
			return scaleSide{}, err
		}
	}
	// Both databases are swept before their servers start, so that neither
	// server's own sweep at start competes with the measurement.
	before := dbSizeMB(ctx, dsn)
	stored, content := storageMB(ctx, dsn)
	swept, sweepTook, err := sweepInto(ctx, dsn)
	if err != nil {
		return scaleSide{}, fmt.Errorf("retention sweep: %w", err)
	}
	after := dbSizeMB(ctx, dsn)
	logf("%s %s database: the retention sweep deleted %d versions in %d batches in %s: %.1f MB before, %.1f MB after",
		d.name, size, swept.Versions, swept.Batches, sweepTook.Round(time.Millisecond), before, after)
	if size == "big" {
		p := d.prefix + "scale_"
		b.rep.set(p+"orgs", res.orgs)
		b.rep.set(p+"repos", res.repos)
		b.rep.set(p+"entries", res.entries)
		b.rep.set(p+"versions", res.versions)
		b.rep.set(p+"gen_s", took.Seconds())
		b.rep.set(p+"db_mb", before)
		b.rep.set(p+"db_mb_swept", after)
		b.rep.compare(fmt.Sprintf("scale big db: teammem's tables in MB vs live content + retained history (%s)", d.name), p+"storage_ratio",
			stored, content, "MB", atMost(1.5))
		b.rep.compare(fmt.Sprintf("scale big db size in MB after a retention sweep vs before (%s)", d.name), p+"sweep_db_ratio",
			after, before, "MB", none)
		b.rep.single(fmt.Sprintf("scale retention sweep of the big db: versions deleted (%s)", d.name), p+"sweep_versions",
			float64(swept.Versions), "versions", none)
		b.rep.single(fmt.Sprintf("scale retention sweep of the big db (%s)", d.name), p+"sweep_s", sweepTook.Seconds(), "s", none)
		if d.name == "postgres" {
			b.rep.note("postgres: VACUUM after the sweep makes the freed space reusable but does not return it: the database keeps its size")
		}
	}
	if b.opt.profile != "" {
		srv, err := startInproc(ctx, dsn, b.opt.profile, d.prefix+"scale_"+size+"_")
		return scaleSide{srv: srv, samples: res.samples}, err
	}
	srv, err := startProc(ctx, b.bins.server, dsn, b.opt.serverEnv)
	if err != nil {
		return scaleSide{}, err
	}
	b.rep.set(d.prefix+"scale_"+size+"_startup_ms", float64(srv.startup)/float64(time.Millisecond))
	return scaleSide{srv: srv, samples: res.samples}, nil
}

// scaleLatency sends n requests of each kind to each side, one at a time,
// alternating sides and cycling through each side's samples, and returns
// each side's sorted latencies by kind.
func scaleLatency(ctx context.Context, pair [2]scaleSide, n int) ([2]map[string][]time.Duration, error) {
	var out [2]map[string][]time.Duration
	var conns [2]*rawConn
	for i, side := range pair {
		if len(side.samples) == 0 {
			return out, fmt.Errorf("no sampled repos")
		}
		c, err := dialRaw(side.srv.addr())
		if err != nil {
			return out, err
		}
		defer c.Close()
		conns[i], out[i] = c, map[string][]time.Duration{}
	}
	filler := prose(4242, entryBytes)
	for _, kind := range scaleKinds {
		for i := range n {
			for j, side := range pair {
				if err := ctx.Err(); err != nil {
					return out, err
				}
				s := side.samples[i%len(side.samples)]
				req, want := scaleRequest(conns[j].addr, kind, s, i, filler)
				t0 := time.Now()
				resp, err := conns[j].do(req, false)
				if err != nil {
					return out, err
				}
				if resp.status != want {
					return out, fmt.Errorf("%s of %s: status %d, want %d", kind, s.slug, resp.status, want)
				}
				out[j][kind] = append(out[j][kind], time.Since(t0))
			}
		}
		for j := range out {
			slices.Sort(out[j][kind])
		}
	}
	return out, nil
}

// scaleRequest builds the i-th request of a kind for sample s.
func scaleRequest(host, kind string, s genSample, i int, filler string) ([]byte, int) {
	auth := map[string]string{"Authorization": "Bearer " + s.key}
	path := "/api/claude_code/team_memory?repo=" + url.QueryEscape(s.slug)
	switch kind {
	case "pull304_cold":
		auth["If-None-Match"] = `"` + s.checksum + `"`
		return request("GET", host, path, auth, nil), 304
	case "push":
		body, _ := json.Marshal(map[string]map[string]string{"entries": {pushKey: fmt.Sprintf("push %d\n", i) + filler}})
		return request("PUT", host, path, auth, body), 200
	case "search_org", "search_repo":
		v := url.Values{"q": {searchQueries[i%len(searchQueries)]}}
		if kind == "search_repo" {
			v.Set("repo", s.slug)
		}
		return request("GET", host, "/v1/search?"+v.Encode(), auth, nil), 200
	}
	return request("GET", host, path, auth, nil), 200
}

// reportScale adds the p50 and p95 of each kind, big against small, and
// the p99 of the searches, whose p50 and p99 on the big database have
// targets.
func (b *bench) reportScale(d *driver, lat [2]map[string][]time.Duration) {
	for _, kind := range scaleKinds {
		search := strings.HasPrefix(kind, "search")
		for _, q := range []struct {
			name string
			q    float64
		}{{"p50", .5}, {"p95", .95}, {"p99", .99}} {
			if q.name == "p99" && !search {
				continue
			}
			key := d.prefix + "scale_" + kind + "_" + q.name
			small, big := pct(lat[0][kind], q.q), pct(lat[1][kind], q.q)
			b.rep.set(key+"_ms_small", small)
			b.rep.set(key+"_ms_big", big)
			b.rep.compare(fmt.Sprintf("scale %s %s ms, big db vs small (%s)", kind, q.name, d.name), key+"_ratio", big, small, "ms", none)
			if t, ok := searchTargets[q.name]; ok && search {
				b.rep.single(fmt.Sprintf("scale %s %s ms on the big db (%s)", kind, q.name, d.name), key+"_ms", big, "ms", t)
			}
		}
	}
}

// storageMB returns what teammem's tables and their indexes take (SQLite:
// the file and its WAL; Postgres: every relation of the schema, without
// the catalogs an empty database has too) and the bytes of content they
// hold, live and in history, both in MB (0 when unknown).
func storageMB(ctx context.Context, dsn string) (stored, content float64) {
	driver, target, err := store.Parse(dsn)
	if err != nil {
		return 0, 0
	}
	var n, c int64
	const contentSQL = `SELECT (SELECT coalesce(sum(%[1]s), 0) FROM entries) + (SELECT coalesce(sum(%[1]s), 0) FROM entry_versions)`
	if driver == "sqlite" {
		db, err := sql.Open("sqlite", "file:"+target+"?mode=ro")
		if err != nil {
			return 0, 0
		}
		defer db.Close()
		if db.QueryRowContext(ctx, fmt.Sprintf(contentSQL, "length(CAST(content AS BLOB))")).Scan(&c) != nil {
			return 0, 0
		}
		return dbSizeMB(ctx, dsn), float64(c) / (1 << 20)
	}
	conn, err := pgx.Connect(ctx, target)
	if err != nil {
		return 0, 0
	}
	defer conn.Close(ctx)
	if conn.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')`).Scan(&n) != nil ||
		conn.QueryRow(ctx, fmt.Sprintf(contentSQL, "octet_length(content)")).Scan(&c) != nil {
		return 0, 0
	}
	return float64(n) / (1 << 20), float64(c) / (1 << 20)
}

// dbSizeMB returns the size of a database (0 when unknown).
func dbSizeMB(ctx context.Context, dsn string) float64 {
	driver, target, err := store.Parse(dsn)
	if err != nil {
		return 0
	}
	if driver == "sqlite" {
		var n int64
		for _, suffix := range []string{"", "-wal"} {
			if fi, err := os.Stat(target + suffix); err == nil {
				n += fi.Size()
			}
		}
		return float64(n) / (1 << 20)
	}
	conn, err := pgx.Connect(ctx, target)
	if err != nil {
		return 0
	}
	defer conn.Close(ctx)
	var n int64
	if conn.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&n) != nil {
		return 0
	}
	return float64(n) / (1 << 20)
}
