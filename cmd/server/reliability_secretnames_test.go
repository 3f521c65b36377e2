package main_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/testing/secrettest"
)

// TestReliabilitySecretNamesNeverStored runs the built server on every
// database and puts a secret in every kind of name a request carries
// (issue 21 point 6): a file's key on the Claude Code PUT, the /v1 batch,
// the /v1 entry PUT and both memory-store dialects' create and rename; a
// repo slug; a memory store's name, description and metadata; under skip
// and under reject. Afterwards no token appears in any row of any table,
// in the server log (debug level), in /metrics or in the audit log.
func TestReliabilitySecretNamesNeverStored(t *testing.T) {
	var tokens []string
	for _, rule := range []string{"github-pat", "aws-access-token", "npm-access-token", "gcp-api-key", "databricks-api-token"} {
		tokens = append(tokens, secrettest.Token(rule))
	}
	forEachDB(t, func(t *testing.T, dsn string) {
		s := startServer(t, dsn, "TEAMMEM_LOG_LEVEL=debug")
		c := newRelClient(bootstrapKey)
		store := c.do("POST", s.URL+"/v1/memory_stores?beta=true", map[string]any{"name": "agents"})
		if store.Status != 200 {
			t.Fatalf("create store: %d %s", store.Status, store.Body)
		}
		sid := string(store.Body)[strings.Index(string(store.Body), "memstore_"):]
		sid = sid[:strings.IndexByte(sid, '"')]
		mem := c.do("POST", s.URL+"/v1/memory_stores/"+sid+"/memories?beta=true", map[string]any{"path": "/plain.md", "content": canary + "\n"})
		if mem.Status != 200 {
			t.Fatalf("create memory: %d %s", mem.Status, mem.Body)
		}
		mid := string(mem.Body)[strings.Index(string(mem.Body), `"id":"mem_`)+6:]
		mid = mid[:strings.IndexByte(mid, '"')]
		for _, policy := range []string{"skip", "reject"} {
			patchPolicy(t, s, c, policy)
			for i, tok := range tokens {
				key := "notes/" + policy + "-" + tok + ".md"
				answers := []relResp{
					c.stockPut(s.URL, "acme/widgets", map[string]string{key: "x\n", "clean-stock.md": canary + "\n"}, ""),
					c.batch(s.URL, "acme/widgets", []relUpsert{{Key: key, Content: "x\n"}}),
					c.do("PUT", s.URL+"/v1/repos/acme/widgets/team/entries/"+url.PathEscape(key), []byte("x\n"), "Content-Type", "text/markdown"),
					c.do("GET", s.URL+"/v1/repos/acme/widgets/team/entries/"+url.PathEscape(key), nil),
					c.do("POST", s.URL+"/v1/memory_stores/"+sid+"/memories?beta=true", map[string]any{"path": "/" + key, "content": "x\n"}),
					c.do("POST", s.URL+"/v1/memory_stores/"+sid+"/memories", map[string]any{"path": "/" + key, "content": "x\n",
						"precondition": map[string]any{"type": "not_exists"}}, "User-Agent", "claude-cli/2.1.332 (external, sdk-cli)"),
					c.do("POST", s.URL+"/v1/memory_stores/"+sid+"/memories/"+mid+"?beta=true", map[string]any{"path": "/" + key}),
					c.stockPut(s.URL, "acme/"+tok, map[string]string{"a.md": "x\n"}, ""),
					c.do("PUT", s.URL+"/v1/repos/acme/"+tok+"/team/entries/a.md", []byte("x\n"), "Content-Type", "text/markdown"),
					c.do("POST", s.URL+"/v1/memory_stores?beta=true", map[string]any{"name": "n " + tok}),
					c.do("POST", s.URL+"/v1/memory_stores/"+sid+"?beta=true", map[string]any{"description": "d " + tok}),
					c.do("POST", s.URL+"/v1/memory_stores/"+sid+"?beta=true", map[string]any{"metadata": map[string]any{"k": tok}}),
				}
				for j, r := range answers {
					if r.Err != nil || strings.Contains(string(r.Body), tok) {
						t.Errorf("token %d, request %d: %v, the answer repeats the secret: %.300s", i, j, r.Err, r.Body)
					}
				}
			}
		}
		patchPolicy(t, s, c, "")
		haystacks := observeServer(t, s, c)
		s.stop(t)
		rows := dumpDatabase(t, dsn)
		if !strings.Contains(rows, canary) {
			t.Fatalf("the dump lacks the canary stored with the clean entries: it would miss a stored secret too")
		}
		haystacks = append(haystacks, haystack{"database", rows})
		for _, tok := range tokens {
			for _, h := range haystacks {
				if strings.Contains(h.text, tok) {
					t.Errorf("the secret %q appears in the %s", tok, h.name)
				}
			}
		}
		t.Logf("%d tokens × 12 requests × 2 policies; looked for in %d bytes of database rows, logs, metrics and audit events", len(tokens), totalLen(haystacks))
	})
}
