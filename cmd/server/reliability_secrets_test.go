package main_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/zricethezav/gitleaks/v8/config"
	_ "modernc.org/sqlite" // registers "sqlite" for reading the database file back

	"github.com/teammem/teammem/internal/server/store"
	"github.com/teammem/teammem/internal/testing/e2etest"
	"github.com/teammem/teammem/internal/testing/fixtures"
	"github.com/teammem/teammem/internal/testing/secrettest"
)

// secretSample is one true-positive secret sample and the token that stands
// for its secret.
type secretSample struct {
	where, ruleID, text string
	// token is the sample's longest run of [A-Za-z0-9_\-+/=.] of 16 bytes
	// or more: the secret itself or the run that holds it. "" when the
	// sample has none (e.g. a password of a few characters).
	token string
}

var tokenRE = regexp.MustCompile(`[A-Za-z0-9_\-+/=.]{16,}`)

// longestToken returns the longest match of tokenRE in s.
func longestToken(s string) string {
	best := ""
	for _, m := range tokenRE.FindAllString(s, -1) {
		if len(m) > len(best) {
			best = m
		}
	}
	return best
}

// testdataSecretSamples returns the repository's own true positives
// (internal/testing/secrettest), the same samples internal/secretscan's
// tests check the scanner finds.
func testdataSecretSamples() []secretSample {
	var out []secretSample
	for _, smp := range secrettest.TruePositives() {
		out = append(out, secretSample{where: smp.Where, ruleID: smp.RuleID, text: smp.Text, token: longestToken(smp.Text)})
	}
	return out
}

// fixtureSecretSamples reads the real-world true positives: tp.tsv
// (rule_id<TAB>sample, a header row) and tp_multiline.jsonl ({"rule_id",
// "sample"} per line). It skips t when the fixtures are absent.
func fixtureSecretSamples(t *testing.T) []secretSample {
	t.Helper()
	dir := filepath.Join(fixtures.Dir(t), "secrets")
	var out []secretSample
	tsv, err := os.ReadFile(filepath.Join(dir, "tp.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimRight(string(tsv), "\n"), "\n")[1:] {
		id, text, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("tp.tsv row %d: no tab", i+2)
		}
		out = append(out, secretSample{where: fmt.Sprintf("tp.tsv row %d", i+2), ruleID: id, text: text})
	}
	f, err := os.Open(filepath.Join(dir, "tp_multiline.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for row := 1; sc.Scan(); row++ {
		var rec struct {
			RuleID string `json:"rule_id"`
			Sample string `json:"sample"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("tp_multiline.jsonl row %d: %v", row, err)
		}
		out = append(out, secretSample{where: fmt.Sprintf("tp_multiline.jsonl row %d", row), ruleID: rec.RuleID, text: rec.Sample})
	}
	for i := range out {
		out[i].token = longestToken(out[i].text)
	}
	return out
}

var ruleIDRE = regexp.MustCompile(`(?m)^id = "([^"]+)"`)

// defaultRules lists the rule ids of gitleaks' default configuration, the
// server's rule set (internal/secretscan).
func defaultRules() map[string]bool {
	ids := map[string]bool{}
	for _, m := range ruleIDRE.FindAllStringSubmatch(config.DefaultConfig, -1) {
		ids[m[1]] = true
	}
	return ids
}

// TestReliabilitySecretsNeverStored pushes every true-positive secret sample
// of the repository's own set through the Claude Code PUT, the /v1 batch and
// the /v1 entry PUT: under the default skip policy, under an org that rejects,
// and under a server that rejects. Afterwards no sample's secret may appear in
// any row of any table, in the server logs (debug level), in /metrics or in
// the audit log.
func TestReliabilitySecretsNeverStored(t *testing.T) {
	checkSecretsNeverStored(t, testdataSecretSamples())
}

// TestReliabilitySecretsNeverStoredFixtures does the same with the
// real-world samples, when the fixtures are present.
func TestReliabilitySecretsNeverStoredFixtures(t *testing.T) {
	checkSecretsNeverStored(t, fixtureSecretSamples(t))
}

// checkSecretsNeverStored pushes all samples of a rule in gitleaks' default
// set, on every database, and looks for their secrets everywhere afterwards.
func checkSecretsNeverStored(t *testing.T, all []secretSample) {
	t.Helper()
	rules := defaultRules()
	var samples []secretSample
	for _, smp := range all {
		if !rules[smp.ruleID] {
			// Like internal/secretscan's own tests: a sample of a rule the
			// default set lacks is not a secret to the server.
			t.Logf("%s: rule %s is not in gitleaks' default set; left out", smp.where, smp.ruleID)
			continue
		}
		samples = append(samples, smp)
	}
	forEachDB(t, func(t *testing.T, dsn string) {
		var haystacks []haystack
		s := startServer(t, dsn, "TEAMMEM_LOG_LEVEL=debug")
		c := newRelClient(bootstrapKey)
		pushSecrets(t, s, c, samples, "acme/skip", false)
		patchPolicy(t, s, c, "reject")
		pushSecrets(t, s, c, samples, "acme/reject-org", true)
		patchPolicy(t, s, c, "") // back to the server default
		haystacks = append(haystacks, observeServer(t, s, c)...)
		s.stop(t)

		s = startServer(t, dsn, "TEAMMEM_LOG_LEVEL=debug", "TEAMMEM_SECRET_POLICY=reject")
		pushSecrets(t, s, c, samples, "acme/reject-server", true)
		haystacks = append(haystacks, observeServer(t, s, c)...)
		s.stop(t)
		rows := dumpDatabase(t, dsn)
		haystacks = append(haystacks, haystack{"database", rows})
		if !strings.Contains(rows, canary) {
			t.Fatalf("the dump lacks the canary stored with the clean entries: it would miss a stored secret too")
		}

		checked, leaks := 0, 0
		for _, smp := range samples {
			if smp.token == "" {
				continue
			}
			checked++
			for _, h := range haystacks {
				if strings.Contains(h.text, smp.token) {
					leaks++
					t.Errorf("%s (%s): its secret %q appears in the %s", smp.where, smp.ruleID, smp.token, h.name)
				}
			}
		}
		if checked < len(samples)*3/4 {
			t.Fatalf("only %d of %d samples have a token to look for", checked, len(samples))
		}
		t.Logf("%d samples × 3 APIs × 3 policies pushed; %d secrets looked for in %d bytes of database rows, logs, metrics and audit events: %d found",
			len(samples), checked, totalLen(haystacks), leaks)
	})
}

// canary is stored on purpose, to show that the database dump would reveal
// a stored token.
const canary = "canary-canary-canary-canary"

// haystack is text in which no secret may appear.
type haystack struct{ name, text string }

func totalLen(hs []haystack) int {
	n := 0
	for _, h := range hs {
		n += len(h.text)
	}
	return n
}

// patchPolicy sets the org's secret policy ("" for the server default).
func patchPolicy(t *testing.T, s *server, c *relClient, policy string) {
	t.Helper()
	if r := c.do("PATCH", s.URL+"/v1/org", map[string]any{"secret_policy": policy}); r.Status != 200 {
		t.Fatalf("PATCH /v1/org secret_policy=%q: %d %v %s", policy, r.Status, r.Err, r.Body)
	}
}

// pushSecrets sends every sample through the three write paths into repo,
// each batch with one clean entry, and checks the outcome: under skip the
// clean entries are stored and every sample is listed in skippedSecrets;
// under reject every request is refused with 422. No sample is stored.
func pushSecrets(t *testing.T, s *server, c *relClient, samples []secretSample, repo string, reject bool) {
	t.Helper()
	entries := map[string]string{"clean-stock.md": "nothing secret here: " + canary + "\n"}
	var ups []relUpsert
	ups = append(ups, relUpsert{Key: "clean-batch.md", Content: "nothing secret here either\n"})
	for i, smp := range samples {
		entries[fmt.Sprintf("stock/secret-%03d.md", i)] = smp.text
		ups = append(ups, relUpsert{Key: fmt.Sprintf("batch/secret-%03d.md", i), Content: smp.text})
	}
	checkWrite(t, "Claude Code PUT", c.stockPut(s.URL, repo, entries, ""), len(samples), reject)
	checkWrite(t, "/v1 batch", c.batch(s.URL, repo, ups), len(samples), reject)
	for i, smp := range samples {
		u := fmt.Sprintf("%s/v1/repos/%s/team/entries/entry/secret-%03d.md", s.URL, repo, i)
		r := c.do("PUT", u, []byte(smp.text), "Content-Type", "text/markdown")
		checkWrite(t, "/v1 entry PUT of "+smp.where, r, 1, reject)
		if !reject && r.Header.Get("ETag") != "" {
			t.Errorf("%s: the entry PUT of a skipped secret answered an ETag", smp.where)
		}
	}
	g := c.do("GET", s.URL+"/v1/repos/"+repo+"/team", nil)
	var snap snapshot
	_ = json.Unmarshal(g.Body, &snap)
	var keys []string
	for _, e := range snap.Entries {
		keys = append(keys, e.Key)
	}
	want := "[clean-batch.md clean-stock.md]"
	if reject {
		want = "[]"
	}
	if fmt.Sprint(keys) != want {
		t.Errorf("%s holds %v, want %s (%d %s)", repo, keys, want, g.Status, g.Body)
	}
}

// checkWrite checks one write's answer: 200 listing n skipped entries, or
// 422 secret_detected naming them.
func checkWrite(t *testing.T, what string, r relResp, n int, reject bool) {
	t.Helper()
	var body struct {
		SkippedSecrets []struct{ Path string } `json:"skippedSecrets"`
		Error          struct {
			Type    string `json:"type"`
			Details struct {
				SkippedSecrets []struct{ Path string } `json:"skippedSecrets"`
			} `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &body)
	skipped := body.SkippedSecrets
	wantStatus := 200
	if reject {
		wantStatus, skipped = 422, body.Error.Details.SkippedSecrets
	}
	paths := map[string]bool{}
	for _, f := range skipped {
		paths[f.Path] = true
	}
	if r.Err != nil || r.Status != wantStatus || len(paths) != n || (reject && body.Error.Type != "secret_detected") {
		t.Errorf("%s: %d %v, %d entries named in skippedSecrets, want %d and %d: %.300s", what, r.Status, r.Err, len(paths), wantStatus, n, r.Body)
	}
}

// observeServer collects what a server shows about itself: its logs, /metrics
// and every audit event.
func observeServer(t *testing.T, s *server, c *relClient) []haystack {
	t.Helper()
	metrics := e2etest.Scrape(t, s.URL)
	if !strings.Contains(metrics, "teammem_") {
		t.Fatalf("/metrics holds no teammem_ metric:\n%.500s", metrics)
	}
	var audit strings.Builder
	for before := ""; ; {
		r := c.do("GET", s.URL+"/v1/org/audit?limit=1000"+before, nil)
		if r.Status != 200 {
			t.Fatalf("audit = %d %s", r.Status, r.Body)
		}
		audit.Write(r.Body)
		var page struct {
			NextBefore *int64 `json:"next_before"`
		}
		_ = json.Unmarshal(r.Body, &page)
		if page.NextBefore == nil {
			break
		}
		before = fmt.Sprintf("&before=%d", *page.NextBefore)
	}
	if !strings.Contains(audit.String(), "secret") {
		t.Errorf("the audit log records no secret skip or rejection: %.500s", audit.String())
	}
	return []haystack{{"server log", s.logs.String()}, {"metrics", metrics}, {"audit log", audit.String()}}
}

// dumpDatabase returns every row of every table as text.
func dumpDatabase(t *testing.T, dsn string) string {
	t.Helper()
	driver, target, err := store.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if driver == "postgres" {
		return dumpPostgres(t, target)
	}
	return dumpSQLite(t, target)
}

func dumpSQLite(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables []string
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	var out strings.Builder
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				fmt.Fprintf(&out, "%v\t", v)
			}
			out.WriteString("\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	if !strings.Contains(out.String(), "clean-stock.md") {
		t.Fatal("the SQLite dump misses rows that were written")
	}
	return out.String()
}

func dumpPostgres(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name, string_agg(quote_ident(column_name) || '::text', ', ' ORDER BY ordinal_position)
		FROM information_schema.columns WHERE table_schema = current_schema() GROUP BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	queries := map[string]string{}
	for rows.Next() {
		var table, cols string
		if err := rows.Scan(&table, &cols); err != nil {
			t.Fatal(err)
		}
		queries[table] = "SELECT " + cols + " FROM " + pgx.Identifier{table}.Sanitize()
	}
	rows.Close()
	var out strings.Builder
	for _, q := range queries {
		rows, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				fmt.Fprintf(&out, "%v\t", v)
			}
			out.WriteString("\n")
		}
		rows.Close()
	}
	if !strings.Contains(out.String(), "clean-stock.md") {
		t.Fatal("the Postgres dump misses rows that were written")
	}
	return out.String()
}
