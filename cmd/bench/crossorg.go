package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// The cross-org workload: can one org's writes stall another's? On SQLite
// every write of every org goes through one writer, so whatever a write
// does while it holds the lock (a secret scan of a large batch, say) every
// other org waits for. Org B sends small delta pushes at a fixed pace while
// org A, on the same server, sends nothing, then large batches, then pushes
// the server must refuse; org B's write latency under A's load against its
// latency alone is the answer. The requests speak only HTTP, so the
// workload runs as well against an older server (--bin-dir).

const (
	crossBConns       = 4                     // org B's pushers, each to its own repo
	crossBEvery       = 25 * time.Millisecond // each B pusher starts a push at most this often
	crossAConns       = 8                     // org A's concurrent clients
	crossBatchEntries = 16                    // upserts per large batch
	crossEntryBytes   = 240_000               // bytes of each, under the 250,000 default cap
	crossTinyEntries  = 100_000               // entries of the push refused on the entry cap
	crossOverEntries  = 18                    // 240 KB upserts of the batch over the 4 MiB body limit
	// crossMaxLead bounds the wait for org A's first answer before org
	// B's window opens.
	crossMaxLead = 30 * time.Second
	// crossHeadFormat starts each batch entry with a sequence number, so
	// every batch writes new content; its width is fixed, so the rest of
	// the entry is escaped once.
	crossHeadFormat = "batch entry %012d: "
)

// The kinds of org A's requests.
const (
	crossLarge = iota // a batch of 16 × 240 KB changed entries: 200
	crossTiny         // a PUT of 100,000 tiny entries, over the entry cap: 413
	crossOver         // a batch over the body limit: 413
)

// crossOrg is one server's cross-org run: the two orgs' keys and the
// requests org A sends, built once.
type crossOrg struct {
	host       string
	keyA, keyB string
	fB         *fixture     // org B's push content
	client     *http.Client // org A's requests (net/http: it copes with a server refusing a body it has not read)
	filler     string       // a batch entry's content before its head is written over
	tail       string       // JSON-escaped rest of a batch entry after its head
	tiny, over []byte       // org A's refused request bodies
	seq        atomic.Int64 // of batch entry heads
	// The writer lock times the server reported (Server-Timing) in the
	// current phase: org B's pushes' waits, org A's batches' holds.
	mu            sync.Mutex
	bWaits, aHeld []time.Duration
}

// lockTimes returns and resets the phase's lock times, sorted.
func (c *crossOrg) lockTimes() (bWaits, aHeld []time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	bWaits, aHeld = c.bWaits, c.aHeld
	c.bWaits, c.aHeld = nil, nil
	slices.Sort(bWaits)
	slices.Sort(aHeld)
	return bWaits, aHeld
}

// noteBWait records how long one of org B's pushes waited for the write
// lock behind other orgs: on a store whose lock every org shares (SQLite)
// the server says (lock-wait-others); otherwise its whole wait counts.
func (c *crossOrg) noteBWait(header string) {
	if _, ok := teammem.ParseServerTiming(header, "lock-wait-others"); ok {
		c.noteLock(header, "lock-wait-others", &c.bWaits)
		return
	}
	c.noteLock(header, "lock-wait", &c.bWaits)
}

// noteLock records a response's Server-Timing metric into *to.
func (c *crossOrg) noteLock(header, metric string, to *[]time.Duration) {
	if d, ok := teammem.ParseServerTiming(header, metric); ok {
		c.mu.Lock()
		*to = append(*to, d)
		c.mu.Unlock()
	}
}

// crossRepoA names the repo org A's client conn sends large batches to.
func crossRepoA(conn int) string { return fmt.Sprintf("acme/large-%d", conn) }

// crossReposA names every repo org A sends large batches to.
func crossReposA() []string {
	out := make([]string, crossAConns)
	for i := range out {
		out[i] = crossRepoA(i)
	}
	return out
}

// The repos of org A's refused pushes: 100,000 entries into crossTinyRepo,
// which holds one, and the batch over the body limit.
const (
	crossTinyRepo = "acme/tiny"
	crossOverRepo = "acme/over"
)

// batchPath is the /v1 batch endpoint of repo's team space.
func batchPath(repo string) string { return "/v1/repos/" + repo + "/team/batch" }

// setupCrossOrg creates orgs cross-a and cross-b through the server
// operators' plane, stores org B's push repos and builds org A's requests.
func setupCrossOrg(host string) (*crossOrg, error) {
	c := &crossOrg{host: host, fB: &fixture{host: host, filler: prose(999, entryBytes)},
		client: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: crossAConns, DisableCompression: true}}}
	for slug, key := range map[string]*string{"cross-a": &c.keyA, "cross-b": &c.keyB} {
		out, err := apiDo(host, benchAdminKey, http.MethodPost, "/v1/admin/orgs", map[string]string{"slug": slug}, http.StatusCreated)
		if err != nil {
			return nil, fmt.Errorf("create org %s: %w", slug, err)
		}
		var created struct {
			OwnerKey string `json:"owner_key"`
		}
		if err := json.Unmarshal(out, &created); err != nil || created.OwnerKey == "" {
			return nil, fmt.Errorf("create org %s: no owner key in %.200s", slug, out)
		}
		*key = created.OwnerKey
	}
	entries := memoryEntries(pullEntries)
	for conn := range crossBConns {
		if _, err := apiDo(host, c.keyB, http.MethodPut, teamMemoryPath(pushRepo(conn), false), map[string]any{"entries": entries}, http.StatusOK); err != nil {
			return nil, fmt.Errorf("store org B's %s: %w", pushRepo(conn), err)
		}
	}
	// Org A's spaces hold an entry before its load: a write into a space
	// never written is planned (and, before issue 11, was scanned) outside
	// any lock, so only writes into existing spaces show what the server
	// does under its lock.
	seed := map[string]any{"entries": map[string]string{"notes/seed.md": prose(5, entryBytes)}}
	for _, repo := range append(crossReposA(), crossTinyRepo) {
		if _, err := apiDo(host, c.keyA, http.MethodPut, teamMemoryPath(repo, false), seed, http.StatusOK); err != nil {
			return nil, fmt.Errorf("store org A's %s: %w", repo, err)
		}
	}
	filler := prose(7, crossEntryBytes)[:crossEntryBytes]
	c.filler, c.tail = filler, jsonEscape(filler[len(fmt.Sprintf(crossHeadFormat, 0)):])
	c.tiny = tinyPush(crossTinyEntries)
	c.over = batchBody(crossOverEntries, func(j int) string { return fmt.Sprintf("big/over-%02d.md", j) }, func(*bytes.Buffer) {}, jsonEscape(filler))
	return c, nil
}

// jsonEscape returns s as the inside of a JSON string.
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// batchBody returns a /v1 batch of n upserts named by key, each content
// written by head and then the escaped tail.
func batchBody(n int, key func(j int) string, head func(*bytes.Buffer), tail string) []byte {
	var b bytes.Buffer
	b.Grow(n * (len(tail) + 80))
	b.WriteString(`{"upserts":[`)
	for j := range n {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"key":%q,"content":"`, key(j))
		head(&b)
		b.WriteString(tail)
		b.WriteString(`"}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// tinyPush returns a Claude Code PUT body of n one-byte entries.
func tinyPush(n int) []byte {
	var b bytes.Buffer
	b.Grow(n * 20)
	b.WriteString(`{"entries":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"t/%06d.md":"x"`, i)
	}
	b.WriteString(`}}`)
	return b.Bytes()
}

// batch returns org A's seq-th large batch: 16 entries of new content, on
// keys that alternate between two sets of 16, so a space holds 32 at most
// (far under the entry cap) however long the load runs.
func (c *crossOrg) batch(seq int) []byte {
	set := (seq % 2) * crossBatchEntries
	return batchBody(crossBatchEntries, func(j int) string { return fmt.Sprintf("big/k-%02d.md", set+j) },
		func(b *bytes.Buffer) { fmt.Fprintf(b, crossHeadFormat, c.seq.Add(1)) }, c.tail)
}

// batchEntries returns the keys and contents of a large batch, raw, for
// the raw commit it is compared with.
func (c *crossOrg) batchEntries(seq int) map[string]string {
	set := (seq % 2) * crossBatchEntries
	m := make(map[string]string, crossBatchEntries)
	for j := range crossBatchEntries {
		head := fmt.Sprintf(crossHeadFormat, c.seq.Add(1))
		m[fmt.Sprintf("big/k-%02d.md", set+j)] = head + c.filler[len(head):]
	}
	return m
}

// large is org A's load of large batches, each client to its own repo.
func (c *crossOrg) large(ctx context.Context) op {
	return func(conn, seq int) (int, error) {
		return crossLarge, c.send(ctx, http.MethodPost, batchPath(crossRepoA(conn)), c.batch(seq), http.StatusOK)
	}
}

// refused is org A's load of pushes the server refuses: six of its eight
// clients send 100,000 tiny entries, two a batch over the body limit.
func (c *crossOrg) refused(ctx context.Context) op {
	return func(conn, _ int) (int, error) {
		if conn%4 == 3 {
			return crossOver, c.send(ctx, http.MethodPost, batchPath(crossOverRepo), c.over, http.StatusRequestEntityTooLarge)
		}
		return crossTiny, c.send(ctx, http.MethodPut, teamMemoryPath(crossTinyRepo, false), c.tiny, http.StatusRequestEntityTooLarge)
	}
}

// send sends one of org A's requests and checks its status.
func (c *crossOrg) send(ctx context.Context, method, path string, body []byte, want int) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.host+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.keyA)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s, want %d: %.200s", method, strings.SplitN(path, "?", 2)[0], resp.Status, want, msg)
	}
	if want == http.StatusOK {
		c.noteLock(resp.Header.Get("Server-Timing"), "lock-held", &c.aHeld)
	}
	return nil
}

// pushB is org B's push of one changed 2 KB entry into its conn-th repo.
func (c *crossOrg) pushB(conn, _ int) call {
	body, _ := json.Marshal(map[string]map[string]string{"entries": {pushKey: c.fB.pushContent(conn)}})
	return call{req: request("PUT", c.host, teamMemoryPath(pushRepo(conn), false), map[string]string{"Authorization": "Bearer " + c.keyB}, body), want: 200,
		seen: func(r response) { c.noteBWait(r.header["server-timing"]) }}
}

// phase measures org B's paced pushes for dur, alone when load is nil.
// Otherwise org A runs load first, and org B's window opens once A's first
// request was answered (its load is then in full swing: its requests go
// through the whole write path, commits included), or after crossMaxLead;
// A stops starting requests when B's window closes, and its requests in
// flight are waited for, so phases never overlap. Every request of either
// org that started is counted.
func (c *crossOrg) phase(ctx context.Context, dur time.Duration, load op) (b, a loadResult, err error) {
	// No warmup (runHTTP has dialled already): a push held up past the
	// whole window must count, not pass for a warmup.
	spec := loopSpec{conns: crossBConns, dur: dur, every: crossBEvery, tail: true}
	if load == nil {
		b, err = runHTTP(ctx, c.host, spec, c.pushB)
		return b, a, err
	}
	stop, first, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		a = driveUntil(ctx, crossAConns, 3, stop, first, load)
	}()
	select {
	case <-first:
	case <-time.After(crossMaxLead):
	case <-ctx.Done():
	}
	b, err = runHTTP(ctx, c.host, spec, c.pushB)
	close(stop)
	<-done
	return b, a, errors.Join(err, ctx.Err())
}

// runCrossOrg runs the cross-org workload on a fresh server per driver.
// --quick runs it on SQLite only, the driver with one writer for all orgs,
// unless --only names it: the full run and --only cross run both.
func (b *bench) runCrossOrg(ctx context.Context) error {
	ds, err := b.drivers(ctx, "cross")
	if err != nil {
		return err
	}
	for _, d := range ds {
		if d.name == "postgres" && b.opt.quick && b.opt.only == nil {
			b.rep.note("cross-org on postgres: not in --quick (add --only cross, or run in full)")
			continue
		}
		if err := b.crossOrgOn(ctx, d); err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
	}
	return nil
}

// crossOrgOn measures org B alone, under org A's large batches and under
// org A's refused pushes, on d.
func (b *bench) crossOrgOn(ctx context.Context, d *driver) error {
	srv, err := b.start(ctx, d)
	if err != nil {
		return err
	}
	defer func() {
		if err := srv.stop(); err != nil {
			b.rep.note("%s cross-org server stop: %v", d.name, err)
		}
	}()
	c, err := setupCrossOrg(srv.addr())
	if err != nil {
		return err
	}
	defer c.client.CloseIdleConnections()
	raw, err := b.rawBatchCommit(ctx, d, c)
	if err != nil {
		return fmt.Errorf("raw batch commit: %w", err)
	}
	// Each phase records how busy the server was (in cores) and how long
	// its requests waited for a database connection (on SQLite, mostly for
	// the one writer): org B slowed by a server short of CPU is not org B
	// waiting for a lock.
	phase := func(name string, load op) (bRes, aRes loadResult, err error) {
		key := d.prefix + "cross_org_" + name + "_"
		pool0, _ := scrapePool(srv)
		stop, cpu0, t0 := srv.profile("cross_"+name), srv.cpuSeconds(), time.Now()
		bRes, aRes, err = c.phase(ctx, b.opt.crossDur, load)
		stop()
		if err != nil {
			return bRes, aRes, err
		}
		if cpu := srv.cpuSeconds() - cpu0; cpu > 0 {
			b.rep.set(key+"server_cpu_cores", cpu/time.Since(t0).Seconds())
		}
		if pool1, perr := scrapePool(srv); perr == nil && pool0 != nil {
			b.rep.set(key+"db_waits", pool1["db_pool_waits"]-pool0["db_pool_waits"])
			b.rep.set(key+"db_wait_s", pool1["db_pool_wait_s"]-pool0["db_pool_wait_s"])
		}
		return bRes, aRes, nil
	}
	alone, _, err := phase("alone", nil)
	if err != nil {
		return fmt.Errorf("org B alone: %w", err)
	}
	c.lockTimes()
	large, aLarge, err := phase("large", c.large(ctx))
	if err != nil {
		return fmt.Errorf("under large batches: %w", err)
	}
	bWaits, aHeld := c.lockTimes()
	refused, aRefused, err := phase("refused", c.refused(ctx))
	if err != nil {
		return fmt.Errorf("under refused pushes: %w", err)
	}
	b.recordCrossOrg(d, raw, alone, large, refused, aLarge, aRefused)
	b.recordCrossOrgLocks(d, bWaits, aHeld)
	return nil
}

// recordCrossOrgLocks reports what the server said (Server-Timing) of the
// write lock under org A's large batches: how long org B's pushes waited
// for it while other orgs held it (on SQLite; on Postgres, where B's
// spaces' locks are B's own, their whole wait) against how long org A's
// batches held it. No write of another org should wait longer than the
// batch in progress holds the lock, so B's p99 wait over A's p99 hold
// stays at or under 1.
func (b *bench) recordCrossOrgLocks(d *driver, bWaits, aHeld []time.Duration) {
	p := d.prefix + "cross_org_"
	ms := func(ds []time.Duration, q float64) float64 {
		if len(ds) == 0 {
			return 0
		}
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))]) / float64(time.Millisecond)
	}
	if len(bWaits) == 0 || len(aHeld) == 0 {
		b.rep.note("%s cross-org: no Server-Timing in the responses (an older server?): no lock times", d.name)
		return
	}
	b.rep.set(p+"b_lock_wait_p50_ms", ms(bWaits, .5))
	b.rep.set(p+"b_lock_wait_max_ms", ms(bWaits, 1))
	b.rep.set(p+"a_lock_held_p50_ms", ms(aHeld, .5))
	b.rep.set(p+"a_lock_held_max_ms", ms(aHeld, 1))
	b.rep.single(fmt.Sprintf("cross-org org A's batch holding the write lock, p99 (%s)", d.name), p+"a_lock_held_p99_ms", ms(aHeld, .99), "ms", none)
	b.rep.compare(fmt.Sprintf("cross-org org B's p99 wait for the write lock behind other orgs / A's p99 hold (%s)", d.name),
		p+"lock_wait_held_ratio", ms(bWaits, .99), ms(aHeld, .99), "ms", atMost(1))
}

// rawBatchRounds is how many raw batch commits rawBatchCommit times, after
// rawBatchSeeds untimed ones.
const (
	rawBatchRounds = 5
	rawBatchSeeds  = 2
)

// rawBatch is the raw batch commit of one run: the honest baseline and,
// for comparison with earlier reports, the one this bench used before.
type rawBatch struct {
	ms, plainMS float64
}

// rawBatchCommit times the database work of one of org A's large batches,
// done raw on d (as the push baseline, on tables of its own), with nothing
// else running: lock the space row, upsert 16 × 240 KB entries and their
// history rows, bump the version (on Postgres, NOTIFY), commit. It is the
// "batch's own commit" no other org's write should wait longer than.
//
// It is timed as org A's batches run: in steady state, each batch
// overwriting the 16 entries written two batches before (rawBatchSeeds
// untimed batches first), and on SQLite with the store's pragmas, whose
// secure_delete zeroes what the overwritten entries free (the redaction
// guarantee needs it for every write, so any store keeping it pays it).
// The WAL is checkpointed between the batches, untimed: a checkpoint is
// not the batch's commit, and the store checkpoints off the writer's turn.
// It returns the median, in milliseconds, and on SQLite the former
// baseline (fresh inserts but for one overwrite, SQLite's default pragmas,
// checkpoints inside the commit) for comparison.
func (b *bench) rawBatchCommit(ctx context.Context, d *driver, c *crossOrg) (rawBatch, error) {
	var out rawBatch
	if d.name == "postgres" {
		r, err := openPGRaw(ctx, d.dsn, 1)
		if err != nil {
			return out, err
		}
		defer r.close()
		out.ms, err = timeRawBatches(c, rawBatchSeeds, rawBatchRounds, func(e map[string]string) error { return r.batch(ctx, 0, e) }, nil)
		return out, err
	}
	dir := filepath.Join(b.tmp, "cross")
	plain, err := openSQLiteRaw(ctx, dir, 1)
	if err != nil {
		return out, err
	}
	out.plainMS, err = timeRawBatches(c, 0, 3, func(e map[string]string) error { return plain.batch(ctx, 0, e) }, nil)
	plain.close()
	if err != nil {
		return out, err
	}
	r, err := openSQLiteRawFile(ctx, filepath.Join(dir, "raw-batch.db"), 1, storePragmas)
	if err != nil {
		return out, err
	}
	defer r.close()
	out.ms, err = timeRawBatches(c, rawBatchSeeds, rawBatchRounds, func(e map[string]string) error { return r.batch(ctx, 0, e) },
		func() error { _, err := r.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); return err })
	return out, err
}

// timeRawBatches commits seeds batches untimed, then times rounds more,
// calling between (when set) after each, untimed; it returns the median
// in milliseconds.
func timeRawBatches(c *crossOrg, seeds, rounds int, commit func(map[string]string) error, between func() error) (float64, error) {
	var ms []float64
	for seq := range seeds + rounds {
		entries := c.batchEntries(seq)
		t0 := time.Now()
		if err := commit(entries); err != nil {
			return 0, err
		}
		if seq >= seeds {
			ms = append(ms, float64(time.Since(t0))/float64(time.Millisecond))
		}
		if between != nil {
			if err := between(); err != nil {
				return 0, err
			}
		}
	}
	return median(ms), nil
}

// recordCrossOrg reports the three phases: org B's latencies in each, the
// rows comparing its p99 under org A's loads with its p99 alone, and what
// org A's requests took.
func (b *bench) recordCrossOrg(d *driver, raw rawBatch, alone, large, refused, aLarge, aRefused loadResult) {
	p := d.prefix + "cross_org_"
	for _, ph := range []struct {
		name string
		res  loadResult
	}{{"alone", alone}, {"large", large}, {"refused", refused}} {
		b.checkErrors(d, "cross-org org B "+ph.name, ph.res)
		b.rep.set(p+"b_"+ph.name+"_writes", ph.res.requests)
		b.rep.set(p+"b_"+ph.name+"_p50_ms", pct(ph.res.lat, .5))
		b.rep.set(p+"b_"+ph.name+"_p99_ms", pct(ph.res.lat, .99))
		b.rep.set(p+"b_"+ph.name+"_max_ms", pct(ph.res.lat, 1))
	}
	b.checkErrors(d, "cross-org org A large batches", aLarge)
	b.checkErrors(d, "cross-org org A refused pushes", aRefused)
	b.rep.compare(fmt.Sprintf("cross-org p99 write, org B under org A's large batches / alone (%s)", d.name),
		p+"large_p99_ratio", pct(large.lat, .99), pct(alone.lat, .99), "ms", none)
	b.rep.compare(fmt.Sprintf("cross-org p99 write, org B under org A's refused pushes / alone (%s)", d.name),
		p+"refused_p99_ratio", pct(refused.lat, .99), pct(alone.lat, .99), "ms", none)
	rawMS := raw.ms
	b.rep.single(fmt.Sprintf("cross-org raw commit of one 16 × 240 KB batch with history, alone, steady state (%s)", d.name), p+"raw_batch_commit_ms", rawMS, "ms", none)
	if raw.plainMS > 0 {
		b.rep.single(fmt.Sprintf("cross-org raw commit as measured before: fresh rows, default pragmas (%s)", d.name), p+"raw_batch_commit_plain_ms", raw.plainMS, "ms", none)
		b.rep.set(p+"large_wait_plain_commit_ratio", (pct(large.lat, .99)-pct(alone.lat, .99))/raw.plainMS)
	}
	b.rep.compare(fmt.Sprintf("cross-org org B's extra p99 under org A's batches / one raw batch commit (%s)", d.name),
		p+"large_wait_commit_ratio", pct(large.lat, .99)-pct(alone.lat, .99), rawMS, "ms", none)
	b.rep.set(p+"a_batches", aLarge.requests)
	b.rep.set(p+"a_batch_p99_ms", pct(aLarge.lat, .99))
	b.rep.single(fmt.Sprintf("cross-org org A's batch of 16 × 240 KB, p50 (%s)", d.name), p+"a_batch_p50_ms", pct(aLarge.lat, .5), "ms", none)
	b.rep.set(p+"a_refused", aRefused.requests)
	b.rep.set(p+"a_over_limit_p50_ms", pct(aRefused.byKind[crossOver], .5))
	b.rep.single(fmt.Sprintf("cross-org org A's refused 100,000-entry push, p50 (%s)", d.name), p+"a_tiny_p50_ms",
		pct(aRefused.byKind[crossTiny], .5), "ms", none)
	logf("%s cross-org: org B p50/p99/max alone %.1f/%.1f/%.1f ms, under large batches %.1f/%.1f/%.1f ms (%d batches, p50 %.0f ms), under refused pushes %.1f/%.1f/%.1f ms (%d refused)",
		d.name, pct(alone.lat, .5), pct(alone.lat, .99), pct(alone.lat, 1), pct(large.lat, .5), pct(large.lat, .99), pct(large.lat, 1),
		aLarge.requests, pct(aLarge.lat, .5), pct(refused.lat, .5), pct(refused.lat, .99), pct(refused.lat, 1), aRefused.requests)
}
