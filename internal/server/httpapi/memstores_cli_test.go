package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// newStoreEnv is newV1Env with the real secret scanner.
func newStoreEnv(t *testing.T, st teammem.Store, settings teammem.OrgSettings) *v1Env {
	t.Helper()
	return newStoreEnvWith(t, st, settings, nil)
}

// newStoreEnvWith is newStoreEnv with the config mutate changes.
func newStoreEnvWith(t *testing.T, st teammem.Store, settings teammem.OrgSettings, mutate func(*httpapi.Config)) *v1Env {
	t.Helper()
	cfg := testConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	sc, err := secretscan.New()
	if err != nil {
		t.Fatal(err)
	}
	e := &v1Env{t: t, st: st, org: MustOrg(t, st, "acme", settings), keys: map[teammem.Role]string{}, users: map[teammem.Role]teammem.User{}}
	for _, r := range []teammem.Role{teammem.RoleOwner, teammem.RoleAdmin, teammem.RoleMember, teammem.RoleViewer} {
		e.users[r], e.keys[r] = MustUserKey(t, st, e.org, string(r), r)
	}
	e.srv = httpapi.New(st, secretscan.NewOrgScanner(sc), cfg, nil, nil)
	ts := httptest.NewServer(e.srv.Handler())
	t.Cleanup(ts.Close)
	e.url = ts.URL
	return e
}

// cliHeaders are what Claude Code's memory client sends (reference §3).
var cliHeaders = []string{"Accept", "application/json, text/plain, */*", "User-Agent", "claude-cli/2.1.332 (external, sdk-cli)"}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// storePath makes the repo's team store through the contract endpoint and
// returns its path.
func storePath(t *testing.T, e *v1Env, key string) string {
	t.Helper()
	r := e.do("POST", "/v1/repos/acme/widgets/team/memory_store", key, nil).want(t, 200).JSON(t)
	if r["repo"] != "acme/widgets" || r["scope"] != "team" || r["type"] != "memory_store" || r["name"] != "acme/widgets" {
		t.Fatalf("memory_store = %v", r)
	}
	p, _ := r["path"].(string)
	if p != "/v1/memory_stores/"+r["id"].(string) || !strings.HasPrefix(r["id"].(string), "memstore_") {
		t.Fatalf("path %q, id %v", p, r["id"])
	}
	snap := e.do("GET", "/v1/repos/acme/widgets/team?view=head", key, nil).want(t, 200).JSON(t)
	if snap["memory_store_id"] != r["id"] {
		t.Fatalf("snapshot memory_store_id = %v, want %v", snap["memory_store_id"], r["id"])
	}
	return p
}

// ndjson splits an export into its lines.
func ndjson(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func errMessage(t *testing.T, r resp) (string, string) {
	t.Helper()
	m := r.JSON(t)
	if m["type"] != "error" {
		t.Fatalf("not Anthropic's envelope: %s", r.Body)
	}
	e := m["error"].(map[string]any)
	return e["type"].(string), e["message"].(string)
}

// TestClaudeCodeMemoryDialect drives E1–E7 as Claude Code's client sends
// them, on both drivers, and checks the shapes and messages of reference
// §4.2 and §8.
func TestClaudeCodeMemoryDialect(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newStoreEnv(t, st, teammem.OrgSettings{})
		key := e.keys[teammem.RoleMember]
		p := storePath(t, e, key)

		// Empty store: E2 starts with the store line and ends with the trailer.
		lines := ndjson(t, e.do("GET", p+"/memories/export?view=basic", key, nil, cliHeaders...).want(t, 200).Body)
		if len(lines) != 2 || lines[0]["type"] != "store" || lines[0]["view"] != "basic" || lines[1]["type"] != "complete" || lines[1]["memory_count"] != 0.0 {
			t.Fatalf("empty export = %v", lines)
		}
		// E5 create with not_exists.
		c := e.do("POST", p+"/memories", key, map[string]any{"path": "/notes/local.md", "content": "hello\n",
			"precondition": map[string]any{"type": "not_exists"}}, cliHeaders...).want(t, 200).JSON(t)
		id, _ := c["id"].(string)
		if !teammem.ValidMemoryID(id) || c["path"] != "/notes/local.md" || c["content_sha256"] != sha("hello\n") {
			t.Fatalf("create = %v", c)
		}
		// A second create of the path: 409 naming the path and the id.
		r := e.do("POST", p+"/memories", key, map[string]any{"path": "/notes/local.md", "content": "other",
			"precondition": map[string]any{"type": "not_exists"}}, cliHeaders...).want(t, 409)
		ee := r.JSON(t)["error"].(map[string]any)
		if ee["conflicting_path"] != "/notes/local.md" || ee["conflicting_memory_id"] != id {
			t.Fatalf("409 body = %s", r.Body)
		}
		// File vs directory: the clash names the other path.
		r = e.do("POST", p+"/memories", key, map[string]any{"path": "/notes", "content": "x",
			"precondition": map[string]any{"type": "not_exists"}}, cliHeaders...).want(t, 409)
		if ee := r.JSON(t)["error"].(map[string]any); ee["conflicting_path"] == "/notes" || ee["conflicting_path"] == nil {
			t.Fatalf("file-vs-directory 409 = %s", r.Body)
		}
		// E4.
		g := e.do("GET", p+"/memories/"+id, key, nil, cliHeaders...).want(t, 200).JSON(t)
		if g["content"] != "hello\n" || g["updated_at"] == nil || g["content_sha256"] != sha("hello\n") {
			t.Fatalf("get = %v", g)
		}
		// E6 with a stale precondition → 409; with the right one → 200, same id.
		e.do("POST", p+"/memories/"+id, key, map[string]any{"content": "v2",
			"precondition": map[string]any{"type": "content_sha256", "content_sha256": sha("nope")}}, cliHeaders...).want(t, 409)
		u := e.do("POST", p+"/memories/"+id, key, map[string]any{"content": "v2",
			"precondition": map[string]any{"type": "content_sha256", "content_sha256": sha("hello\n")}}, cliHeaders...).want(t, 200).JSON(t)
		if u["id"] != id || u["content_sha256"] != sha("v2") {
			t.Fatalf("update = %v", u)
		}
		e.do("POST", p+"/memories", key, map[string]any{"path": "/top.md", "content": "top"}, cliHeaders...).want(t, 200)
		// E1: full export with contents.
		lines = ndjson(t, e.do("GET", p+"/memories/export", key, nil, cliHeaders...).want(t, 200).Body)
		if len(lines) != 4 || lines[3]["type"] != "complete" || lines[3]["memory_count"] != 2.0 {
			t.Fatalf("export = %v", lines)
		}
		for _, l := range lines[1:3] {
			if l["type"] != "memory" || l["content"] == nil || l["updated_at"] == nil || !teammem.ValidMemoryID(l["id"].(string)) {
				t.Fatalf("memory line = %v", l)
			}
		}
		// E3: paged list; E3': one directory level at the root.
		l := e.do("GET", p+"/memories?limit=1", key, nil, cliHeaders...).want(t, 200).JSON(t)
		if len(l["data"].([]any)) != 1 || l["next_page"] == nil {
			t.Fatalf("page 1 = %v", l)
		}
		l2 := e.do("GET", p+"/memories?limit=1&page="+url.QueryEscape(l["next_page"].(string)), key, nil, cliHeaders...).want(t, 200).JSON(t)
		if len(l2["data"].([]any)) != 1 || l2["next_page"] != nil {
			t.Fatalf("page 2 = %v", l2)
		}
		d := e.do("GET", p+"/memories?limit=100&path_prefix=%2F&depth=1&order_by=path&order=asc", key, nil, cliHeaders...).want(t, 200).JSON(t)
		items := d["data"].([]any)
		if len(items) != 2 || items[0].(map[string]any)["type"] != "memory_prefix" || items[0].(map[string]any)["path"] != "/notes/" ||
			items[1].(map[string]any)["path"] != "/top.md" {
			t.Fatalf("depth=1 = %s", jsonString(d))
		}
		// E7 with a stale sha → 409; then the right one.
		e.do("DELETE", p+"/memories/"+id+"?expected_content_sha256="+sha("hello\n"), key, nil, cliHeaders...).want(t, 409)
		e.do("DELETE", p+"/memories/"+id+"?expected_content_sha256="+sha("v2"), key, nil, cliHeaders...).want(t, 200)
		e.do("GET", p+"/memories/"+id, key, nil, cliHeaders...).want(t, 404)

		// Deletions that stick do not stop an explicit create: the path comes
		// back, as a new memory.
		c2 := e.do("POST", p+"/memories", key, map[string]any{"path": "/notes/local.md", "content": "v2",
			"precondition": map[string]any{"type": "not_exists"}}, cliHeaders...).want(t, 200).JSON(t)
		if c2["id"] == id {
			t.Fatalf("a re-created path kept the deleted memory's id")
		}

		// Refusals, with the exact messages the client maps.
		refusals := []struct {
			body map[string]any
			msg  string
		}{
			{map[string]any{"path": "/s.md", "content": "aws_access_key_id = AKIAQYLPMN5HHHFPZAM2\naws_secret_access_key = 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\n"}, teammem.MsgContentSecret},
			{map[string]any{"path": "/big.md", "content": strings.Repeat("x", 102401)}, "content must be at most 102400 bytes"},
			{map[string]any{"path": "/" + strings.Repeat("a/", 20) + "x.md", "content": "x"}, "path must be at most 20 segments deep"},
			{map[string]any{"path": "/" + strings.Repeat("a", 1030), "content": "x"}, "path must be at most 1024 bytes"},
			{map[string]any{"path": "/a/../b.md", "content": "x"}, "path must not contain . or .. segments"},
			{map[string]any{"path": "/a\u200bb.md", "content": "x"}, "path must not contain control or format characters"},
			{map[string]any{"path": "/e\u0301.md", "content": "x"}, "path must be NFC-normalized"},
		}
		for _, rf := range refusals {
			rf.body["precondition"] = map[string]any{"type": "not_exists"}
			r := e.do("POST", p+"/memories", key, rf.body, cliHeaders...).want(t, 400)
			if typ, msg := errMessage(t, r); typ != "invalid_request_error" || msg != rf.msg {
				t.Errorf("refusal of %v = %s %q, want %q", rf.body["path"], typ, msg, rf.msg)
			}
		}
		// Viewers read but cannot write; other tenants cannot see the store.
		e.do("GET", p+"/memories/export?view=basic", e.keys[teammem.RoleViewer], nil, cliHeaders...).want(t, 200)
		e.do("POST", p+"/memories", e.keys[teammem.RoleViewer], map[string]any{"path": "/v.md", "content": "v"}, cliHeaders...).want(t, 403)
		other := MustOrg(t, st, "other", teammem.OrgSettings{})
		_, okey := MustUserKey(t, st, other, "o", teammem.RoleOwner)
		e.do("GET", p+"/memories/export", okey, nil, cliHeaders...).want(t, 404)
		e.do("GET", p+"/memories", "", nil, cliHeaders...).want(t, 401)
	})
}

// TestClaudeCodeMemoryStoreFull checks the store-level refusal when the
// org's entry cap is reached.
func TestClaudeCodeMemoryStoreFull(t *testing.T) {
	st := MustOpenStore(t)
	e := newStoreEnv(t, st, teammem.OrgSettings{MaxEntries: 1})
	key := e.keys[teammem.RoleMember]
	p := storePath(t, e, key)
	e.do("POST", p+"/memories", key, map[string]any{"path": "/a.md", "content": "a"}, cliHeaders...).want(t, 200)
	r := e.do("POST", p+"/memories", key, map[string]any{"path": "/b.md", "content": "b"}, cliHeaders...).want(t, 400)
	if _, msg := errMessage(t, r); msg != teammem.MsgStoreFullCount {
		t.Fatalf("store full message = %q", msg)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
