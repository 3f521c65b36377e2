package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/store"
	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// TestRawConn checks the load generator's HTTP framing on one keep-alive
// connection: 304s, Content-Length and chunked bodies, and a server that
// closes the connection after answering.
func TestRawConn(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", 1<<12) // 64 KB: net/http sends it chunked
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/304":
			w.Header().Set("ETag", `"x"`)
			w.WriteHeader(http.StatusNotModified)
		case "/small":
			io.WriteString(w, "hello")
		case "/chunked":
			for i := 0; i < len(big); i += 5000 {
				io.WriteString(w, big[i:min(i+5000, len(big))])
				w.(http.Flusher).Flush()
			}
		case "/close":
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	c, err := dialRaw(host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{{"/304", 304, ""}, {"/small", 200, "hello"}, {"/chunked", 200, big}, {"/close", 200, "bye"}, {"/small", 200, "hello"}, {"/304", 304, ""}} {
		resp, err := c.do(request("GET", host, tc.path, nil, nil), true)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if resp.status != tc.status || string(resp.body) != tc.body {
			t.Fatalf("%s: status %d, %d body bytes; want %d, %d", tc.path, resp.status, len(resp.body), tc.status, len(tc.body))
		}
	}
}

// TestGenerateConsistent fills a SQLite database and checks it as the
// server would: every head matches its entries (teammem.Fsck), a sampled
// repo's checksum is its team space's, and its generated key authenticates.
func TestGenerateConsistent(t *testing.T) {
	t.Parallel()
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "gen.db")
	spec := genSpec{orgs: 3, repos: 12, entries: 25, entryBytes: 300, samples: 4}
	res, _, err := generateInto(t.Context(), dsn, spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.orgs != 3 || res.repos != 12 || res.spaces != 24 || len(res.samples) != 4 {
		t.Fatalf("generated %+v", res)
	}
	if err := fsck(t.Context(), dsn, io.Discard); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := res.samples[1]
	p, err := st.KeyLookup(t.Context(), teammem.HashKey(s.key))
	if err != nil || p.User.Role != teammem.RoleOwner {
		t.Fatalf("key of %s: %+v, %v", s.slug, p, err)
	}
	repo, err := st.RepoGet(t.Context(), p.Org.ID, s.slug)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := st.SpaceGet(t.Context(), p.Org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
	if err != nil || sp.Checksum != s.checksum || sp.EntryCount != 24 { // 25 entries, one a tombstone
		t.Fatalf("team space of %s: %+v, %v; want checksum %s", s.slug, sp, err, s.checksum)
	}
	// The retention sweep finds the generated excess: every version past
	// the default 90 days (3 of the 25 entries of each team space, 1 of the
	// 2 of each personal space) and the crowded MEMORY.md's versions over
	// the cap of 100 (repo 0's: 120 older ones and its write).
	swept, _, err := sweepInto(t.Context(), dsn)
	if err != nil || swept.Versions != 12*3+12*1+21 || swept.Orgs != 3 {
		t.Fatalf("retention sweep of the generated database = %+v, %v", swept, err)
	}
	if err := fsck(t.Context(), dsn, io.Discard); err != nil {
		t.Fatal(err)
	}
	// A second run appends past the existing ids instead of colliding.
	if _, _, err := generateInto(t.Context(), dsn, genSpec{orgs: 1, repos: 2, entries: 3, entryBytes: 100}); err != nil {
		t.Fatalf("second generation: %v", err)
	}
	if err := fsck(t.Context(), dsn, io.Discard); err != nil {
		t.Fatal(err)
	}
}

// TestReportLastLine checks the output contract: the table, then one JSON
// object as the last line, with every ratio and the failed targets.
func TestReportLastLine(t *testing.T) {
	t.Parallel()
	r := newReport()
	r.compare("304 pull", "pull304_ratio", 700, 1000, "/s", atLeast(0.70))
	r.compare("push", "push_ratio", 100, 1000, "/s", atLeast(0.50))
	r.single("propagation", "propagation_p50_ms", 2100, "ms", below(3000))
	var out bytes.Buffer
	if err := r.print(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("last line is not JSON: %v\n%s", err, out.String())
	}
	if got["pull304_ratio"] != 0.7 || got["push_ratio"] != 0.1 || got["propagation_p50_ms"] != 2100.0 {
		t.Fatalf("values %v", got)
	}
	if failed, _ := got["targets_failed"].([]any); len(failed) != 1 || failed[0] != "push_ratio" {
		t.Fatalf("targets_failed = %v", got["targets_failed"])
	}
	if !strings.HasPrefix(lines[0], "workload") || !strings.Contains(out.String(), "NO") {
		t.Fatalf("table:\n%s", out.String())
	}
}

func TestParseOptions(t *testing.T) {
	t.Parallel()
	o, err := parseOptions([]string{"--quick", "--only", "http,scan,cross", "--server-env", "GOGC=50"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !o.want("http") || o.want("scale") || o.repos != 500 || o.rounds != 1 || len(o.serverEnv) != 1 ||
		o.syncDebounce != 20*time.Millisecond || o.debounce != 0 || !o.want("cross") || o.crossDur != time.Second {
		t.Fatalf("options %+v", o)
	}
	for _, bad := range [][]string{{"--only", "nope"}, {"--drivers", "mysql"}, {"--generate"}, {"extra"}, {"--server-env", "X"}} {
		if _, err := parseOptions(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestFixturesDir checks the bench finds the real-world fixtures the way the
// tests do, and that --fixtures overrides it.
func TestFixturesDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TEAMMEM_FIXTURES", dir)
	b := &bench{root: "."}
	if got, err := b.fixturesDir(); err != nil || got != dir {
		t.Errorf("TEAMMEM_FIXTURES: %q, %v; want %q", got, err, dir)
	}
	t.Setenv("TEAMMEM_FIXTURES", filepath.Join(dir, "nope"))
	if _, err := b.fixturesDir(); err == nil {
		t.Error("TEAMMEM_FIXTURES naming nothing: no error")
	}
	b.opt.fixtures = dir
	if got, err := b.fixturesDir(); err != nil || got != dir {
		t.Errorf("--fixtures: %q, %v; want %q", got, err, dir)
	}
	b.opt.fixtures = filepath.Join(dir, "nope")
	if _, err := b.fixturesDir(); err == nil {
		t.Error("--fixtures naming nothing: no error")
	}
}

// TestCrossOrgRequests checks the cross-org workload's plumbing on an
// in-process server: the orgs it creates through the admin plane, org A's
// large batch (stored, at its size, on the rotating keys), its two refused
// pushes and org B's push, each answered as the workload expects.
func TestCrossOrgRequests(t *testing.T) {
	t.Parallel()
	srv, err := startInproc(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "cross.db"), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	c, err := setupCrossOrg(srv.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.client.CloseIdleConnections()
	var batch struct {
		Upserts []struct{ Key, Content string }
	}
	if err := json.Unmarshal(c.batch(1), &batch); err != nil || len(batch.Upserts) != crossBatchEntries {
		t.Fatalf("batch: %d upserts, %v", len(batch.Upserts), err)
	}
	if u := batch.Upserts[0]; u.Key != "big/k-16.md" || len(u.Content) != crossEntryBytes {
		t.Fatalf("first upsert of batch 1: %q, %d bytes", u.Key, len(u.Content))
	}
	if len(c.over) <= 4<<20 {
		t.Fatalf("the over-limit batch is %d bytes, not over the 4 MiB limit", len(c.over))
	}
	large, refused := c.large(t.Context()), c.refused(t.Context())
	for _, tc := range []struct {
		name string
		run  func() (int, error)
		kind int
	}{
		{"large batch", func() (int, error) { return large(0, 0) }, crossLarge},
		{"100,000 entries", func() (int, error) { return refused(0, 0) }, crossTiny},
		{"over the body limit", func() (int, error) { return refused(3, 0) }, crossOver},
	} {
		if kind, err := tc.run(); err != nil || kind != tc.kind {
			t.Errorf("%s: kind %d, %v", tc.name, kind, err)
		}
	}
	conn, err := dialRaw(srv.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if resp, err := conn.do(c.pushB(1, 0).req, false); err != nil || resp.status != 200 {
		t.Fatalf("org B's push: %d, %v", resp.status, err)
	}
}

// TestSameRowsBaseline: the same-rows baseline writes into the store's own
// database, which the store then reads back as a push would have left it.
func TestSameRowsBaseline(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r, err := openSQLiteSameRows(ctx, dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := r.push(ctx, 1, fmt.Sprintf("pushed %d\n", i)); err != nil {
			t.Fatalf("push %d: %v", i, err)
		}
	}
	r.close()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "same-rows.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := st.EntryGet(ctx, r.org, r.spaces[1], pushKey)
	if err != nil || e.Content != "pushed 2\n" || e.Checksum != teammem.EntryChecksum(e.Content) {
		t.Fatalf("entry after three raw pushes: %+v, %v", e, err)
	}
}
