package main_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/teammem/teammem/internal/server/store"
	"github.com/teammem/teammem/internal/teammem"
)

func checksum(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}

// TestStockClientFlow drives the server as Claude Code's client does: pull
// (404, 200, 304), first push, delta push, 412 → hashes probe → retry.
func TestStockClientFlow(t *testing.T) {
	forEachDB(t, func(t *testing.T, dsn string) {
		s := startServer(t, dsn)
		a := newStock(t, s, "Acme/Widgets")
		if status, _ := a.pull(); status != 404 {
			t.Fatalf("pull of an unknown repo = %d, want 404", status)
		}
		local := map[string]string{"MEMORY.md": "- [Testing](testing.md) — how we test\n", "testing.md": "---\nname: testing\ntype: project\n---\nRun scripts/test.\n", "nested/deep/notes.md": "ünïcode ✓\n"}
		if r := a.push(local); r.Status != 200 || r.Body["filesUploaded"] != 3.0 {
			t.Fatalf("first push = %+v", r)
		}
		if status, _ := a.pull(); status != 304 {
			t.Fatalf("pull right after our own push = %d, want 304", status)
		}
		status, body := newStock(t, s, "Acme/Widgets").pull()
		if status != 200 || len(body.Content.Entries) != 3 || body.Content.Entries["nested/deep/notes.md"] != local["nested/deep/notes.md"] || body.Version != 1 {
			t.Fatalf("pull after push = %d %+v", status, body)
		}
		if body.Checksum != teammem.SpaceChecksum(body.Content.EntryChecksums) || body.Repo != "Acme/Widgets" || body.OrganizationID == "" {
			t.Fatalf("checksum %s is not the documented formula over %v", body.Checksum, body.Content.EntryChecksums)
		}
		// Delta push: only the changed key goes up; the others stay.
		local["testing.md"] += "Also run go vet.\n"
		if r := a.push(local); r.Status != 200 || r.Body["filesUploaded"] != 1.0 || r.Body["version"] != 2.0 {
			t.Fatalf("delta push = %+v", r)
		}
		// A no-op push writes nothing and keeps the version.
		st, _, b := a.do("PUT", a.url(false), map[string]any{"entries": map[string]string{"MEMORY.md": local["MEMORY.md"]}}, nil)
		if st != 200 || !strings.Contains(string(b), `"version":2`) || !strings.Contains(string(b), `"filesUploaded":0`) {
			t.Fatalf("no-op push = %d %s", st, b)
		}
		// A second client pushes in between: the first one's If-Match is stale.
		bob := newStock(t, s, "Acme/Widgets")
		bob.pull()
		if r := bob.push(map[string]string{"bob.md": "from bob"}); r.Status != 200 {
			t.Fatalf("bob push = %+v", r)
		}
		st, _, b = a.do("PUT", a.url(false), map[string]any{"entries": map[string]string{"x.md": "x"}}, map[string]string{"If-Match": `"` + a.known + `"`})
		if st != 412 || !strings.Contains(string(b), `"precondition_failed"`) || !strings.Contains(string(b), `"version":3`) {
			t.Fatalf("stale If-Match = %d %s", st, b)
		}
		local["alice.md"] = "from alice"
		if r := a.push(local); r.Status != 200 { // 412 → probe → retry inside push
			t.Fatalf("push after conflict = %+v", r)
		}
		_, body = newStock(t, s, "Acme/Widgets").pull()
		if body.Content.Entries["bob.md"] != "from bob" || body.Content.Entries["alice.md"] != "from alice" || len(body.Content.Entries) != 5 {
			t.Fatalf("after both pushes: %v", body.Content.Entries)
		}
	})
}

// TestStockClientCapsAndBatches covers learning max_entries from a 413 and
// a large push split into chained batches under 200 000 bytes.
func TestStockClientCapsAndBatches(t *testing.T) {
	forEachDB(t, func(t *testing.T, dsn string) {
		s := startServer(t, dsn, "TEAMMEM_DEFAULT_MAX_ENTRIES=150")
		c := newStock(t, s, "o/caps")
		local := map[string]string{}
		for i := range 160 {
			local[fmt.Sprintf("topic-%03d.md", i)] = fmt.Sprintf("memory %d\n", i)
		}
		r := c.push(local) // one batch: refused whole
		d := r.Body["error"].(map[string]any)["details"].(map[string]any)
		if r.Status != 413 || d["error_code"] != "team_memory_too_many_entries" || d["max_entries"] != 150.0 || d["received_entries"] != 160.0 {
			t.Fatalf("over-cap push = %+v", r)
		}
		if status, _ := c.pull(); status != 404 {
			t.Fatalf("a refused push wrote something: pull = %d", status)
		}
		// The learned cap truncates the next push; ~2 KB entries need several
		// batches under 200 000 bytes, each chained by If-Match.
		for k := range local {
			local[k] = strings.Repeat(k+" is a memory file line\n", 70)
		}
		r = c.push(local)
		if r.Status != 200 || r.Batches < 2 {
			t.Fatalf("capped push = %+v", r)
		}
		_, body := newStock(t, s, "o/caps").pull()
		if len(body.Content.Entries) != 150 || body.Version != int64(r.Batches) {
			t.Fatalf("after batches: %d entries, version %d, %d batches", len(body.Content.Entries), body.Version, r.Batches)
		}
		big := map[string]string{"huge.md": strings.Repeat("x", 250_001)}
		st, _, b := c.do("PUT", c.url(false), map[string]any{"entries": big}, nil)
		if st != 413 || !strings.Contains(string(b), "team_memory_entry_too_large") || !strings.Contains(string(b), "huge.md") {
			t.Fatalf("oversized entry = %d %s", st, b)
		}
	})
}

// TestStockClientSecretsSkipped pushes an entry with a token: it is not
// stored, the 200 names the rule, and the server's logs never hold it.
func TestStockClientSecretsSkipped(t *testing.T) {
	forEachDB(t, func(t *testing.T, dsn string) {
		s := startServer(t, dsn, "TEAMMEM_LOG_LEVEL=debug")
		c := newStock(t, s, "o/secrets")
		token := "ghp_" + strings.Repeat("aB3dE5fG7h", 3) + "iJ1kL2"
		r := c.push(map[string]string{"creds.md": "use token " + token + " for CI\n", "ok.md": "fine\n"})
		if r.Status != 200 || r.Body["filesUploaded"] != 1.0 {
			t.Fatalf("push = %+v", r)
		}
		skipped := r.Body["skippedSecrets"].([]any)
		if len(skipped) != 1 || skipped[0].(map[string]any)["path"] != "creds.md" || skipped[0].(map[string]any)["ruleId"] != "github-pat" {
			t.Fatalf("skippedSecrets = %v", skipped)
		}
		_, body := newStock(t, s, "o/secrets").pull()
		if _, ok := body.Content.Entries["creds.md"]; ok || len(body.Content.Entries) != 1 {
			t.Fatalf("secret entry stored: %v", body.Content.Entries)
		}
		if strings.Contains(s.logs.String(), token) {
			t.Fatal("the server log contains the secret")
		}
	})
}

// storedHeads describes every space head in the database at dsn, read
// past the server and its caches.
func storedHeads(t *testing.T, dsn string) string {
	t.Helper()
	st, err := store.Open(t.Context(), dsn)
	if err != nil {
		return "unknown: " + err.Error()
	}
	defer st.Close()
	spaces, err := st.SpaceList(t.Context())
	if err != nil {
		return "unknown: " + err.Error()
	}
	var out []string
	for _, sp := range spaces {
		out = append(out, fmt.Sprintf("space %d version %d %s", sp.ID, sp.Version, sp.Checksum))
	}
	return strings.Join(out, "; ")
}

// TestConcurrentStockPushers runs pushers against one repo at once: every
// acknowledged key is present and the checksum is the documented formula.
func TestConcurrentStockPushers(t *testing.T) {
	forEachDB(t, func(t *testing.T, dsn string) {
		s := startServer(t, dsn)
		const pushers, rounds = 6, 5
		var mu sync.Mutex
		acked := map[string]string{}
		var wg sync.WaitGroup
		for p := range pushers {
			wg.Go(func() {
				c := newStock(t, s, "o/busy")
				local := map[string]string{}
				for i := range rounds {
					key := fmt.Sprintf("p%d/note-%d.md", p, i)
					local[key] = fmt.Sprintf("pusher %d round %d\n", p, i)
					var r putResult
					for try := 0; try < 60; try++ { // the next edit retries, as the watcher would (many under a loaded CI machine)
						if r = c.push(local); r.Status == 200 {
							break
						}
					}
					if r.Status != 200 {
						c.probe()
						t.Errorf("pusher %d never got through: %+v; the server answers head %s, the database holds %s", p, r, c.known, storedHeads(t, dsn))
						return
					}
					mu.Lock()
					for k, v := range local {
						acked[k] = v
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		_, body := newStock(t, s, "o/busy").pull()
		for k, v := range acked {
			if body.Content.Entries[k] != v {
				t.Errorf("acknowledged %s missing or changed: %q", k, body.Content.Entries[k])
			}
		}
		sums := map[string]string{}
		for k, v := range body.Content.Entries {
			sums[k] = checksum(v)
		}
		if body.Checksum != teammem.SpaceChecksum(sums) || len(body.Content.Entries) != pushers*rounds {
			t.Fatalf("final checksum %s over %d entries does not match", body.Checksum, len(body.Content.Entries))
		}
	})
}
