package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The HTTP workloads: each runs against the server and against a bare
// net/http handler serving the same bytes, in the same run, so the ratio
// says what teammem's own work (auth, lookups, encoding) costs.

const (
	pullRepo    = "acme/bench" // 100 × 2 KB entries, pulled
	pullEntries = 100
	entryBytes  = 2048
	pushKey     = "notes/push.md"
)

// pushRepo names the repo worker conn pushes to; each has pullEntries entries.
func pushRepo(conn int) string { return fmt.Sprintf("acme/push-%d", conn) }

// fixture is what the HTTP workloads send and compare with.
type fixture struct {
	host   string
	etag   string // of pullRepo
	full   []byte // GET body of pullRepo
	hashes []byte // GET ?view=hashes body of pullRepo
	filler string // 2 KB of text that pushes change the head of
}

// teamMemoryPath is the Claude Code endpoint for repo, its hashes view when
// hashes is set.
func teamMemoryPath(repo string, hashes bool) string {
	p := "/api/claude_code/team_memory?repo=" + url.QueryEscape(repo)
	if hashes {
		p += "&view=hashes"
	}
	return p
}

// memoryEntries returns the n entries the bench stores in a repo.
func memoryEntries(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[fmt.Sprintf("notes/topic-%03d.md", i)] = prose(uint64(i), entryBytes)
	}
	return m
}

// setupFixture stores pullEntries entries in pullRepo and in each push repo
// and fetches the bodies the baselines will serve.
func setupFixture(host string, pushRepos int) (*fixture, error) {
	f := &fixture{host: host, filler: prose(999, entryBytes)}
	entries := memoryEntries(pullEntries)
	for _, repo := range append([]string{pullRepo}, pushRepoList(pushRepos)...) {
		if _, err := httpDo(host, http.MethodPut, teamMemoryPath(repo, false), map[string]any{"entries": entries}); err != nil {
			return nil, fmt.Errorf("store %s: %w", repo, err)
		}
	}
	var err error
	if f.full, err = httpDo(host, http.MethodGet, teamMemoryPath(pullRepo, false), nil); err != nil {
		return nil, err
	}
	if f.hashes, err = httpDo(host, http.MethodGet, teamMemoryPath(pullRepo, true), nil); err != nil {
		return nil, err
	}
	var head struct{ Checksum string }
	if err := json.Unmarshal(f.full, &head); err != nil || head.Checksum == "" {
		return nil, fmt.Errorf("full pull body has no checksum: %v", err)
	}
	f.etag = `"` + head.Checksum + `"`
	return f, nil
}

// pushRepoList names the first n push repos.
func pushRepoList(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = pushRepo(i)
	}
	return out
}

// httpDo sends one JSON request with benchKey and returns the 200 body.
func httpDo(host, method, path string, body any) ([]byte, error) {
	return apiDo(host, benchKey, method, path, body, http.StatusOK)
}

// apiDo sends one JSON request with key and returns the body of the
// status it wants.
func apiDo(host, key, method, path string, body any, want int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+host+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %s: %.300s", method, path, resp.Status, out)
	}
	return out, err
}

// The requests, ready-made. The baseline's differ only in their path.
func (f *fixture) pull304(path string) []byte {
	return request("GET", f.host, path, map[string]string{"Authorization": "Bearer " + benchKey, "If-None-Match": f.etag}, nil)
}

func (f *fixture) pullFull(path string) []byte {
	return request("GET", f.host, path, map[string]string{"Authorization": "Bearer " + benchKey}, nil)
}

// push returns a PUT of pushKey to repo with content that differs from
// every earlier push, as an edited memory file does.
func (f *fixture) push(repo string, conn int) []byte {
	body, _ := json.Marshal(map[string]map[string]string{"entries": {pushKey: f.pushContent(conn)}})
	return request("PUT", f.host, teamMemoryPath(repo, false), map[string]string{"Authorization": "Bearer " + benchKey}, body)
}

// bare is the baseline: a plain net/http server answering from memory.
// It runs as a process of its own, as the server it is compared with does
// (the bench re-executes itself; see serveBareChild), so both sides pay the
// same scheduling between two runtimes on the machine's cores; with an
// in-process server (--profile) it runs in process too.
type bare struct {
	srv   *http.Server   // in process
	cmd   *exec.Cmd      // in a child process,
	stdin io.WriteCloser // which exits when this closes
	addr  string
}

// bareDirEnv names the directory of bodies a child process serves.
const bareDirEnv = "TEAMMEM_BENCH_BARE_DIR"

// bareHandler serves /304 (a 304 with etag), /full and /hashes (the
// pre-built bodies).
func bareHandler(etag string, full, hashes []byte) http.Handler {
	write := func(w http.ResponseWriter, b []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/304":
			w.Header().Set("ETag", etag)
			w.WriteHeader(http.StatusNotModified)
		case "/full":
			write(w, full)
		case "/hashes":
			write(w, hashes)
		default:
			http.NotFound(w, r)
		}
	})
}

// startBare starts the baseline on a free port: in a child process unless
// inProcess is set.
func startBare(f *fixture, dir string, inProcess bool) (*bare, error) {
	if inProcess {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		b := &bare{srv: &http.Server{Handler: bareHandler(f.etag, f.full, f.hashes), ReadHeaderTimeout: 10 * time.Second}, addr: ln.Addr().String()}
		go b.srv.Serve(ln)
		return b, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for name, body := range map[string][]byte{"etag": []byte(f.etag), "full": f.full, "hashes": f.hashes} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return nil, err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), bareDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	in, err := cmd.StdinPipe() // the child exits when the bench does
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("baseline server did not start: %w", err)
	}
	return &bare{cmd: cmd, stdin: in, addr: strings.TrimSpace(line)}, nil
}

func (b *bare) close() {
	if b.srv != nil {
		b.srv.Close()
		return
	}
	_ = b.stdin.Close()
	_ = b.cmd.Wait()
}

// serveBareChild is the child process of startBare: it serves the bodies
// in dir, prints its address on stdout and exits when stdin closes.
func serveBareChild(dir string) error {
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	etag, err := read("etag")
	if err != nil {
		return err
	}
	full, err := read("full")
	if err != nil {
		return err
	}
	hashes, err := read("hashes")
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: bareHandler(string(etag), full, hashes), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		srv.Close()
	}()
	fmt.Println(ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// same returns a next func that sends req on every call.
func same(req []byte, want int) func(conn, seq int) call {
	return func(int, int) call { return call{req: req, want: want} }
}

// runHTTPSuite measures every HTTP workload on srv and its baseline.
func (b *bench) runHTTPSuite(ctx context.Context, d *driver, srv server) error {
	f, err := setupFixture(srv.addr(), b.opt.pushConns)
	if err != nil {
		return err
	}
	bs, err := startBare(f, filepath.Join(b.tmp, "bare-"+d.name), b.opt.profile != "")
	if err != nil {
		return err
	}
	defer bs.close()
	spec := loopSpec{conns: b.opt.conns, warmup: b.opt.warmup, dur: b.opt.dur / 2}
	load := func(addr string, next func(conn, seq int) call) func() (loadResult, error) {
		return func() (loadResult, error) { return runHTTP(ctx, addr, spec, next) }
	}
	cases := []struct {
		name, key  string
		ours, base func() (loadResult, error)
		t          target
	}{
		{"304 pull", "pull304", load(srv.addr(), same(f.pull304(teamMemoryPath(pullRepo, false)), 304)),
			load(bs.addr, same(f.pull304("/304"), 304)), atLeast(0.70)},
		{"full pull 100×2KB", "pull_full", load(srv.addr(), same(f.pullFull(teamMemoryPath(pullRepo, false)), 200)),
			load(bs.addr, same(f.pullFull("/full"), 200)), atLeast(0.50)},
		{"hashes probe", "hashes", load(srv.addr(), same(f.pullFull(teamMemoryPath(pullRepo, true)), 200)),
			load(bs.addr, same(f.pullFull("/hashes"), 200)), none},
	}
	for _, c := range cases {
		if err := b.compareLoads(d, srv, c.name, c.key, c.ours, c.base, c.t); err != nil {
			return err
		}
	}
	if err := b.count304Queries(ctx, d, srv, cases[0].ours, spec.warmup+spec.dur); err != nil {
		return err
	}
	if err := b.runPush(ctx, d, srv, f); err != nil {
		return err
	}
	if err := b.runMixed(ctx, d, srv, f); err != nil {
		return err
	}
	b.recordPool(d, srv)
	return nil
}

// count304Queries runs the 304 workload once more between two readings of
// the server's teammem_db_queries_total, then lets the server idle as long
// and reads it again: the statements the pulls sent beyond the idle rate
// (the job queue's polling on Postgres), per 1,000 pulls. A 304 answered
// from memory sends none.
func (b *bench) count304Queries(ctx context.Context, d *driver, srv server, pulls func() (loadResult, error), idle time.Duration) error {
	read := func() (float64, error) {
		m, err := scrapePool(srv)
		if err != nil {
			return 0, err
		}
		v, ok := m["db_queries"]
		if !ok {
			return 0, fmt.Errorf("no teammem_db_queries_total in /metrics")
		}
		return v, nil
	}
	q0, err := read()
	if err != nil {
		b.rep.absent(fmt.Sprintf("304 pull: database statements per 1,000 pulls, idle rate subtracted (%s)", d.name), d.prefix+"pull304_db_queries_per_1000", err.Error())
		return nil
	}
	t0 := time.Now()
	res, err := pulls()
	if err != nil {
		return fmt.Errorf("304 pull, counting statements: %w", err)
	}
	took := time.Since(t0)
	q1, err := read()
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(max(idle, took)):
	}
	q2, err := read()
	if err != nil {
		return err
	}
	idleRate := (q2 - q1) / max(idle, took).Seconds()
	extra := max(0, (q1-q0)-idleRate*took.Seconds())
	b.rep.set(d.prefix+"pull304_db_queries", q1-q0)
	b.rep.set(d.prefix+"pull304_db_queries_idle", q2-q1)
	b.rep.single(fmt.Sprintf("304 pull: database statements per 1,000 pulls, idle rate subtracted (%s, %d pulls)", d.name, res.requests),
		d.prefix+"pull304_db_queries_per_1000", extra/float64(max(1, res.requests))*1000, "", atMost(1))
	return nil
}

// poolMetrics are the server's database pool metrics the bench records
// after the HTTP workloads, by JSON key suffix.
var poolMetrics = map[string]string{
	"teammem_db_max_connections":    "db_pool_max",
	"teammem_db_wait_count_total":   "db_pool_waits",
	"teammem_db_wait_seconds_total": "db_pool_wait_s",
	"teammem_db_queries_total":      "db_queries",
}

// recordPool scrapes the server's /metrics for its database pool: waits for
// a connection mean the pool, not the database, bounded throughput.
func (b *bench) recordPool(d *driver, srv server) {
	pool, err := scrapePool(srv)
	if err != nil {
		b.rep.note("%s /metrics: %v", d.name, err)
		return
	}
	for key, v := range pool {
		b.rep.set(d.prefix+key, v)
	}
}

// scrapePool reads the server's database pool metrics, by the JSON key
// suffixes of poolMetrics.
func scrapePool(srv server) (map[string]float64, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+srv.addr()+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+benchMetricsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s", resp.Status)
	}
	out := map[string]float64{}
	for line := range strings.SplitSeq(string(text), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if key, known := poolMetrics[name]; ok && known {
			if v, err := strconv.ParseFloat(value, 64); err == nil {
				out[key] = v
			}
		}
	}
	return out, nil
}

// compareLoads measures ours against the baseline in rounds ordered
// baseline, ours, ours, baseline (each half the duration), which cancels a
// machine getting steadily busier or quieter; the medians are compared.
// Only ours is profiled, in the first round, and its server CPU recorded.
func (b *bench) compareLoads(d *driver, srv server, name, key string, ours, base func() (loadResult, error), t target) error {
	var o, bl []float64
	for round := range b.opt.rounds {
		for i, isOurs := range []bool{false, true, true, false} {
			run := base
			if isOurs {
				run = ours
			}
			stop, cpu0, t0 := func() {}, srv.cpuSeconds(), time.Now()
			if round == 0 && i == 1 {
				stop = srv.profile(key)
			}
			res, err := run()
			stop()
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if !isOurs {
				b.checkErrors(d, name+" (baseline)", res)
				bl = append(bl, res.rps())
				continue
			}
			b.checkErrors(d, name, res)
			o = append(o, res.rps())
			if round == 0 && i == 1 {
				b.recordCPU(d, key, srv.cpuSeconds()-cpu0, time.Since(t0), res)
			}
		}
		logf("%s %s round %d: ours %.0f/s, baseline %.0f/s", d.name, name, round+1, median(o), median(bl))
	}
	b.rep.set(d.prefix+key+"_rps", median(o))
	b.rep.set(d.prefix+key+"_baseline_rps", median(bl))
	b.rep.compare(fmt.Sprintf("%s req/s (%s)", name, d.name), d.prefix+key+"_ratio", median(o), median(bl), "/s", t)
	return nil
}

// recordCPU stores how busy the server process was during a load (in
// cores) and its CPU time per request: a server far below the machine's
// cores while clients wait is blocked, not busy.
func (b *bench) recordCPU(d *driver, key string, cpu float64, wall time.Duration, res loadResult) {
	if cpu <= 0 || wall <= 0 {
		return
	}
	cores := cpu / wall.Seconds()
	b.rep.set(d.prefix+key+"_server_cpu_cores", cores)
	if rps := res.rps(); rps > 0 {
		b.rep.set(d.prefix+key+"_server_cpu_ms_per_req", cores/rps*1000)
	}
	logf("%s %s: server used %.2f cores, p50 %.2f ms", d.name, key, cores, pct(res.lat, .5))
}

// checkErrors notes a load whose requests failed or got unexpected statuses.
func (b *bench) checkErrors(d *driver, name string, r loadResult) {
	if r.errors > 0 {
		b.rep.note("%s %s: %d failed requests (first: %s)", d.name, name, r.errors, r.firstErr)
	}
}

// runMixed runs 16 clients doing 70 % 304 pulls, 20 % full pulls and 10 %
// pushes (to their own repos, so the pulls' ETag stays valid).
func (b *bench) runMixed(ctx context.Context, d *driver, srv server, f *fixture) error {
	kinds := []string{"pull304", "pull_full", "push"}
	r304, rFull := f.pull304(teamMemoryPath(pullRepo, false)), f.pullFull(teamMemoryPath(pullRepo, false))
	next := func(conn, seq int) call {
		switch x := (seq*7 + conn*3) % 10; {
		case x < 7:
			return call{kind: 0, req: r304, want: 304}
		case x < 9:
			return call{kind: 1, req: rFull, want: 200}
		default:
			return call{kind: 2, req: f.push(pushRepo(conn%b.opt.pushConns), conn), want: 200}
		}
	}
	spec := loopSpec{conns: 16, warmup: b.opt.warmup, dur: b.opt.dur, kinds: len(kinds)}
	stop, cpu0, t0 := srv.profile("mixed"), srv.cpuSeconds(), time.Now()
	res, err := runHTTP(ctx, srv.addr(), spec, next)
	stop()
	if err != nil {
		return fmt.Errorf("mixed: %w", err)
	}
	b.recordCPU(d, "mixed", srv.cpuSeconds()-cpu0, time.Since(t0), res)
	b.checkErrors(d, "mixed", res)
	p := d.prefix + "mixed_"
	b.rep.single(fmt.Sprintf("mixed 16 clients req/s (%s)", d.name), p+"rps", res.rps(), "/s", none)
	for _, q := range []struct {
		name string
		q    float64
	}{{"p50", .5}, {"p95", .95}, {"p99", .99}} {
		b.rep.single(fmt.Sprintf("mixed 16 clients %s (%s)", q.name, d.name), p+q.name+"_ms", pct(res.lat, q.q), "ms", none)
		for k, name := range kinds {
			b.rep.set(p+name+"_"+q.name+"_ms", pct(res.byKind[k], q.q))
		}
	}
	return nil
}
