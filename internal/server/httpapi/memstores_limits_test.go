package httpapi_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// Issue 21 point 5: stores have owners and limits.

// TestHiddenStoreRepoUnreachable names an API store's hidden repo
// ("@memstore/<uid>") on every write path that takes a repo slug, each
// way it can be spelled (plain, percent-encoded, double-encoded, in other
// cases, as /v1 path segments), on both drivers: every write is refused
// with a clear 4xx, and neither the store nor the org's repos change. The
// store's own routes still write it, under its limits.
func TestHiddenStoreRepoUnreachable(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, func(c *httpapi.Config) { c.WriteRate = 0 })
		owner := e.keys[teammem.RoleOwner]
		store := e.do("POST", "/v1/memory_stores?beta=true", owner, map[string]any{"name": "agents"}).want(t, 200).JSON(t)
		id := store["id"].(string)
		uid := strings.TrimPrefix(id, teammem.StoreIDPrefix)
		slug := teammem.StoreRepoSlug(uid)
		big := strings.Repeat("x", teammem.MaxMemoryBytes+1) // over the store's limit, under the org's

		legacy := func(q string) string { return "/api/claude_code/team_memory?repo=" + q }
		put := `{"entries":{"smuggled.md":"` + big + `"}}`
		cases := []struct{ name, method, path, body string }{
			{"legacy PUT", "PUT", legacy(slug), put},
			{"legacy PUT, encoded", "PUT", legacy(url.QueryEscape(slug)), put},
			{"legacy PUT, %40 and %2F by hand", "PUT", legacy("%40memstore%2F" + uid), put},
			{"legacy PUT, double-encoded", "PUT", legacy("%2540memstore%252F" + uid), put},
			{"legacy PUT, upper-case prefix", "PUT", legacy("@MEMSTORE/" + uid), put},
			{"legacy PUT, upper-case uid", "PUT", legacy("@memstore/" + strings.ToUpper(uid)), put},
			{"legacy PUT, mixed case", "PUT", legacy("@MemStore/" + uid), put},
			{"/v1 entry", "PUT", "/v1/repos/@memstore/" + uid + "/team/entries/smuggled.md", big},
			{"/v1 entry, encoded owner", "PUT", "/v1/repos/%40memstore/" + uid + "/team/entries/smuggled.md", big},
			{"/v1 entry, double-encoded owner", "PUT", "/v1/repos/%2540memstore/" + uid + "/team/entries/smuggled.md", big},
			{"/v1 entry, upper-case owner", "PUT", "/v1/repos/@MEMSTORE/" + uid + "/team/entries/smuggled.md", big},
			{"/v1 batch", "POST", "/v1/repos/%40memstore/" + uid + "/team/batch", `{"upserts":[{"key":"smuggled.md","content":"x"}]}`},
			{"/v1 personal", "PUT", "/v1/repos/%40memstore/" + uid + "/personal/entries/smuggled.md", "x"},
			{"/v1 delete space", "DELETE", "/v1/repos/%40memstore/" + uid + "/team", ""},
			{"/v1 restore", "POST", "/v1/repos/%40memstore/" + uid + "/team/entries/a.md/restore", `{"version":1}`},
			{"/v1 memory_store", "POST", "/v1/repos/%40memstore/" + uid + "/team/memory_store", ""},
		}
		// One memory in the store, so that a delete or restore has
		// something to reach.
		e.do("POST", "/v1/memory_stores/"+id+"/memories?beta=true", owner, map[string]any{"path": "/a.md", "content": "kept"}).want(t, 200)
		reposBefore := string(e.do("GET", "/v1/repos", owner, nil).want(t, 200).Body)
		for _, c := range cases {
			var body any
			if c.body != "" {
				body = c.body
			}
			r := e.do(c.method, c.path, owner, body, "Content-Type", "application/json")
			if r.Status < 400 || r.Status >= 500 {
				t.Errorf("%s: HTTP %d, want a 4xx refusal: %.300s", c.name, r.Status, r.Body)
			}
		}
		lines := ndjson(t, e.do("GET", "/v1/memory_stores/"+id+"/memories/export", owner, nil).want(t, 200).Body)
		if len(lines) != 3 || lines[1]["path"] != "/a.md" || lines[1]["content"] != "kept" {
			var paths []any
			for _, l := range lines {
				paths = append(paths, l["path"])
			}
			t.Fatalf("the store after the attempts holds %d export lines, paths %v; want only /a.md", len(lines), paths)
		}
		if got := string(e.do("GET", "/v1/repos", owner, nil).want(t, 200).Body); got != reposBefore {
			t.Fatalf("the attempts created repos: %s, before %s", got, reposBefore)
		}
		// The store's limit holds on its own routes.
		r := e.do("POST", "/v1/memory_stores/"+id+"/memories?beta=true", owner, map[string]any{"path": "/big.md", "content": big}).want(t, 400)
		if _, msg := errMessage(t, r); msg != teammem.MsgContentTooLarge {
			t.Fatalf("an oversized memory through the store: %q", msg)
		}
	})
}

// TestMemoryStoreCap checks TEAMMEM_MAX_STORES_PER_ORG on both drivers: an
// org creates stores up to the cap; the next create is a 400 in
// Anthropic's envelope that names the limit, and creates nothing; another
// org has its own count; deleting a store frees its place.
func TestMemoryStoreCap(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, func(c *httpapi.Config) { c.MaxStoresPerOrg = 3; c.WriteRate = 0 })
		owner := e.keys[teammem.RoleOwner]
		other := MustOrg(t, st, "other", teammem.OrgSettings{})
		_, eve := MustUserKey(t, st, other, "eve", teammem.RoleOwner)
		create := func(key, name string) resp {
			return e.do("POST", "/v1/memory_stores?beta=true", key, map[string]any{"name": name})
		}
		var ids []string
		for _, n := range []string{"a", "b", "c"} {
			ids = append(ids, create(owner, n).want(t, 200).JSON(t)["id"].(string))
		}
		// Repo spaces are stores too, but not created through the API: no cap.
		e.do("POST", "/v1/repos/acme/widgets/team/memory_store", owner, nil).want(t, 200)
		r := create(owner, "d").want(t, 400)
		if typ, msg := errMessage(t, r); typ != "invalid_request_error" || !strings.Contains(msg, "limit of 3 memory stores") {
			t.Fatalf("over the cap: %s %q", typ, msg)
		}
		if d := r.JSON(t)["error"].(map[string]any); d["details"] != nil {
			if dd, _ := d["details"].(map[string]any); dd["error_code"] != "memory_store_limit_reached" {
				t.Fatalf("details = %v", dd)
			}
		}
		list := string(e.do("GET", "/v1/memory_stores?beta=true&include_archived=true&limit=100", owner, nil).want(t, 200).Body)
		if strings.Contains(list, `"name":"d"`) || strings.Count(list, `"type":"memory_store"`) != 4 {
			t.Fatalf("stores after the refusal: %s", list)
		}
		create(eve, "eve's").want(t, 200)
		// Archived stores still count; a deleted one does not.
		e.do("POST", "/v1/memory_stores/"+ids[0]+"/archive?beta=true", owner, nil).want(t, 200)
		create(owner, "d").want(t, 400)
		e.do("DELETE", "/v1/memory_stores/"+ids[1]+"?beta=true", owner, nil).want(t, 200)
		create(owner, "d").want(t, 200)
	})
}

// TestMemoryStoreCreateSpendsWriteTokens: creating a store takes a token
// of the key's write bucket, like a memory write (a key that may write 2
// times in a burst creates 2 stores, then gets 429 with Retry-After), and
// no read token.
func TestMemoryStoreCreateSpendsWriteTokens(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		clock := newTestClock()
		e := newV1Env(t, st, func(c *httpapi.Config) {
			c.WriteRate, c.WriteBurst = 1, 2
			c.Read = httpapi.RateLimit{Rate: 1, Burst: 2}
			c.Clock = clock.Now
		})
		key := e.keys[teammem.RoleMember]
		create := func(name string) resp {
			return e.do("POST", "/v1/memory_stores?beta=true", key, map[string]any{"name": name})
		}
		create("a").want(t, 200)
		create("b").want(t, 200)
		r := create("c").want(t, 429)
		if typ, _ := errMessage(t, r); typ != "rate_limit_error" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("the third create: %s, Retry-After %q", typ, r.Header.Get("Retry-After"))
		}
		// The creates took no read token: the read burst of 2 is whole.
		e.do("GET", "/v1/memory_stores?beta=true", key, nil).want(t, 200)
		e.do("GET", "/v1/memory_stores?beta=true", key, nil).want(t, 200)
		e.do("GET", "/v1/memory_stores?beta=true", key, nil).want(t, 429)
		clock.Add(2 * time.Second)
		create("c").want(t, 200)
	})
}
