package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// Go-level checks of the wire details the TypeScript SDK reads (issue 22),
// next to its own conformance run in memstores_tssdk_test.go.

// TestRequestIDHeader: every response names its id under both
// X-Request-Id and request-id, the client's own id when it sent one.
func TestRequestIDHeader(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), nil)
	for _, c := range []struct {
		name, path, id string
	}{
		{"store route", "/v1/memory_stores?beta=true", ""},
		{"unknown store", "/v1/memory_stores/memstore_nope?beta=true", "trace-1"},
		{"healthz", "/healthz", "trace-2"},
	} {
		var hs []string
		if c.id != "" {
			hs = []string{"X-Request-Id", c.id}
		}
		r := e.do(http.MethodGet, c.path, e.keys[teammem.RoleOwner], nil, hs...)
		x, rid := r.Header.Get("X-Request-Id"), r.Header.Get("request-id")
		if x == "" || rid != x || (c.id != "" && rid != c.id) {
			t.Errorf("%s: X-Request-Id %q, request-id %q (sent %q)", c.name, x, rid, c.id)
		}
	}
}

// TestStoreErrorRetryHints: every non-retryable refusal of the store
// routes says x-should-retry: false (the SDKs retry a 409 otherwise); a 429
// says nothing of the kind and carries Retry-After.
func TestStoreErrorRetryHints(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), nil)
	owner, viewer := e.keys[teammem.RoleOwner], e.keys[teammem.RoleViewer]
	id := e.do(http.MethodPost, "/v1/memory_stores?beta=true", owner, map[string]any{"name": "hints"}).want(t, 200).JSON(t)["id"].(string)
	mems := "/v1/memory_stores/" + id + "/memories?beta=true"
	e.do(http.MethodPost, mems, owner, map[string]any{"path": "/a.md", "content": "a"}).want(t, 200)
	for _, c := range []struct {
		name, method, path, key string
		body                    any
		status                  int
	}{
		{"400", http.MethodPost, mems, owner, map[string]any{"path": "bad", "content": "x"}, 400},
		{"401", http.MethodGet, "/v1/memory_stores?beta=true", "tm_wrong", nil, 401},
		{"403", http.MethodPost, "/v1/memory_stores?beta=true", viewer, map[string]any{"name": "no"}, 403},
		{"404", http.MethodGet, "/v1/memory_stores/memstore_nope?beta=true", owner, nil, 404},
		{"409", http.MethodPost, mems, owner, map[string]any{"path": "/a.md", "content": "again"}, 409},
	} {
		r := e.do(c.method, c.path, c.key, c.body).want(t, c.status)
		if got := r.Header.Get("x-should-retry"); got != "false" {
			t.Errorf("%s: x-should-retry = %q, want false", c.name, got)
		}
	}
	l := newV1Env(t, MustOpenStore(t), func(c *httpapi.Config) { c.WriteRate, c.WriteBurst = 0.0001, 2 }) // the store create spends one
	owner = l.keys[teammem.RoleOwner]
	id = l.do(http.MethodPost, "/v1/memory_stores?beta=true", owner, map[string]any{"name": "hints"}).want(t, 200).JSON(t)["id"].(string)
	mems = "/v1/memory_stores/" + id + "/memories?beta=true"
	l.do(http.MethodPost, mems, owner, map[string]any{"path": "/a.md", "content": "a"}).want(t, 200)
	r := l.do(http.MethodPost, mems, owner, map[string]any{"path": "/b.md", "content": "b"}).want(t, 429)
	if r.Header.Get("x-should-retry") == "false" || r.Header.Get("Retry-After") == "" {
		t.Errorf("429: x-should-retry %q, Retry-After %q", r.Header.Get("x-should-retry"), r.Header.Get("Retry-After"))
	}
}

// TestStoreConflictTypes: a 409 of the public API says which condition
// failed, memory_path_conflict_error naming the memory in the way (the
// one below a directory too) or memory_precondition_failed_error; Claude
// Code's dialect keeps its one conflict_error, with the same names.
func TestStoreConflictTypes(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), nil)
	key := e.keys[teammem.RoleOwner]
	id := e.do(http.MethodPost, "/v1/memory_stores?beta=true", key, map[string]any{"name": "conflicts"}).want(t, 200).JSON(t)["id"].(string)
	base := "/v1/memory_stores/" + id + "/memories"
	todo := e.do(http.MethodPost, base+"?beta=true", key, map[string]any{"path": "/notes/todo.md", "content": "t"}).want(t, 200).JSON(t)["id"].(string)
	stale := map[string]any{"content": "n", "precondition": map[string]any{"type": "content_sha256", "content_sha256": strings.Repeat("a", 64)}}
	for _, c := range []struct {
		name, method, path string
		body               any
		typ, cc            string // the public API's type, Claude Code's
		conflictingPath    string // "" when not checked
	}{
		{"taken path", http.MethodPost, base, map[string]any{"path": "/notes/todo.md", "content": "x"}, "memory_path_conflict_error", "conflict_error", "/notes/todo.md"},
		{"memory below", http.MethodPost, base, map[string]any{"path": "/notes", "content": "x"}, "memory_path_conflict_error", "conflict_error", "/notes/todo.md"},
		{"memory above", http.MethodPost, base, map[string]any{"path": "/notes/todo.md/x.md", "content": "x"}, "memory_path_conflict_error", "conflict_error", "/notes/todo.md"},
		{"stale update", http.MethodPost, base + "/" + todo, stale, "memory_precondition_failed_error", "conflict_error", ""},
		{"stale delete", http.MethodDelete, base + "/" + todo + "?expected_content_sha256=" + strings.Repeat("a", 64), nil, "memory_precondition_failed_error", "conflict_error", ""},
	} {
		for _, d := range []struct{ query, want string }{{"beta=true", c.typ}, {"", c.cc}} {
			p := c.path
			if d.query != "" {
				p += map[bool]string{true: "&", false: "?"}[strings.Contains(p, "?")] + d.query
			}
			ee := e.do(c.method, p, key, c.body).want(t, 409).JSON(t)["error"].(map[string]any)
			if ee["type"] != d.want {
				t.Errorf("%s (%q): type %v, want %s", c.name, d.query, ee["type"], d.want)
			}
			if c.conflictingPath != "" && (ee["conflicting_path"] != c.conflictingPath || ee["conflicting_memory_id"] != todo) {
				t.Errorf("%s (%q): conflicting %v %v, want %s %s", c.name, d.query, ee["conflicting_path"], ee["conflicting_memory_id"], c.conflictingPath, todo)
			}
		}
	}
}

// TestStoreStalePreconditionNoop: an update whose content_sha256
// precondition no longer holds succeeds, writing nothing, when the memory
// already has exactly the requested content and path; Claude Code's
// dialect keeps its 409.
func TestStoreStalePreconditionNoop(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		key := e.keys[teammem.RoleOwner]
		id := e.do(http.MethodPost, "/v1/memory_stores?beta=true", key, map[string]any{"name": "noop"}).want(t, 200).JSON(t)["id"].(string)
		base := "/v1/memory_stores/" + id + "/memories"
		m := e.do(http.MethodPost, base+"?beta=true", key, map[string]any{"path": "/n.md", "content": "old"}).want(t, 200).JSON(t)
		mem := base + "/" + m["id"].(string)
		cur := e.do(http.MethodPost, mem+"?beta=true", key, map[string]any{"content": "new"}).want(t, 200).JSON(t)
		stale := map[string]any{"type": "content_sha256", "content_sha256": m["content_sha256"]}
		e.do(http.MethodPost, mem, key, map[string]any{"content": "new", "precondition": stale}).want(t, 409)
		got := e.do(http.MethodPost, mem+"?beta=true", key, map[string]any{"content": "new", "path": "/n.md", "precondition": stale}).want(t, 200).JSON(t)
		if got["memory_version_id"] != cur["memory_version_id"] || got["content_sha256"] != cur["content_sha256"] {
			t.Errorf("no-op answered %v, want the current memory %v", got, cur)
		}
		e.do(http.MethodPost, mem+"?beta=true", key, map[string]any{"content": "newer", "precondition": stale}).want(t, 409)
		e.do(http.MethodPost, mem+"?beta=true", key, map[string]any{"content": "new", "path": "/m.md", "precondition": stale}).want(t, 409)
		vs := e.do(http.MethodGet, "/v1/memory_stores/"+id+"/memory_versions?beta=true", key, nil).want(t, 200).JSON(t)["data"].([]any)
		if len(vs) != 2 {
			t.Errorf("%d versions, want 2 (the no-op writes none)", len(vs))
		}
	})
}

// TestStoreWriteViewDefaults: a create or update of the public API answers
// in the basic view unless ?view=full; Claude Code's dialect keeps full.
func TestStoreWriteViewDefaults(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), nil)
	key := e.keys[teammem.RoleOwner]
	id := e.do(http.MethodPost, "/v1/memory_stores?beta=true", key, map[string]any{"name": "views"}).want(t, 200).JSON(t)["id"].(string)
	base := "/v1/memory_stores/" + id + "/memories"
	for _, c := range []struct {
		name, query string
		want        any
	}{{"public", "?beta=true", nil}, {"public full", "?beta=true&view=full", "c"}, {"claude code", "", "c"}} {
		m := e.do(http.MethodPost, base+c.query, key, map[string]any{"path": "/" + c.name + ".md", "content": "c"}).want(t, 200).JSON(t)
		if m["content"] != c.want || m["content_sha256"] != sha("c") {
			t.Errorf("%s create: content %v sha %v, want %v", c.name, m["content"], m["content_sha256"], c.want)
		}
		u := e.do(http.MethodPost, base+"/"+m["id"].(string)+c.query, key, map[string]any{"content": "c"}).want(t, 200).JSON(t)
		if u["content"] != c.want {
			t.Errorf("%s update: content %v, want %v", c.name, u["content"], c.want)
		}
	}
}

// TestArchivedStoreTakesDeletes: an archived store's memories can be read
// and deleted, its versions redacted and the store deleted, on both
// drivers; creates, updates and renames stay refused, with the message
// Claude Code maps to store_archived.
func TestArchivedStoreTakesDeletes(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		key := e.keys[teammem.RoleOwner]
		id := e.do(http.MethodPost, "/v1/memory_stores?beta=true", key, map[string]any{"name": "archived"}).want(t, 200).JSON(t)["id"].(string)
		base := "/v1/memory_stores/" + id
		a := e.do(http.MethodPost, base+"/memories?beta=true", key, map[string]any{"path": "/a.md", "content": "a"}).want(t, 200).JSON(t)["id"].(string)
		b := e.do(http.MethodPost, base+"/memories?beta=true", key, map[string]any{"path": "/b.md", "content": "b"}).want(t, 200).JSON(t)["id"].(string)
		e.do(http.MethodPost, base+"/archive?beta=true", key, nil).want(t, 200)
		for _, w := range []struct {
			name, method, path string
			body               any
		}{
			{"create", http.MethodPost, base + "/memories?beta=true", map[string]any{"path": "/c.md", "content": "c"}},
			{"update", http.MethodPost, base + "/memories/" + b + "?beta=true", map[string]any{"content": "x"}},
			{"rename", http.MethodPost, base + "/memories/" + b + "?beta=true", map[string]any{"path": "/moved.md"}},
		} {
			if _, msg := errMessage(t, e.do(w.method, w.path, key, w.body).want(t, 400)); msg != teammem.MsgArchived {
				t.Errorf("%s in an archived store: %q", w.name, msg)
			}
		}
		e.do(http.MethodGet, base+"/memories/"+a+"?beta=true", key, nil).want(t, 200)
		e.do(http.MethodDelete, base+"/memories/"+a+"?beta=true", key, nil).want(t, 200)
		e.do(http.MethodGet, base+"/memories/"+a+"?beta=true", key, nil).want(t, 404)
		if got := e.do(http.MethodGet, base+"/memories/"+b+"?beta=true", key, nil).want(t, 200).JSON(t); got["content"] != "b" {
			t.Errorf("the other memory after the delete: %v", got)
		}
		vs := e.do(http.MethodGet, base+"/memory_versions?beta=true&memory_id="+b, key, nil).want(t, 200).JSON(t)["data"].([]any)
		live := vs[0].(map[string]any)["id"].(string)
		// Redacting the live content is refused as a conflict that names no path.
		if typ, _ := errMessage(t, e.do(http.MethodPost, base+"/memory_versions/"+live+"/redact?beta=true", key, nil).want(t, 409)); typ != "conflict_error" {
			t.Errorf("redacting the live version: type %s, want conflict_error", typ)
		}
		e.do(http.MethodDelete, base+"/memories/"+b+"?beta=true", key, nil).want(t, 200)
		e.do(http.MethodPost, base+"/memory_versions/"+live+"/redact?beta=true", key, nil).want(t, 200)
		e.do(http.MethodDelete, base+"?beta=true", key, nil).want(t, 200)
	})
}

// TestStoreLengthsInCharacters: the documented limits of a store's name,
// description and metadata count characters, not bytes.
func TestStoreLengthsInCharacters(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), nil)
	key := e.keys[teammem.RoleOwner]
	w := func(n int) string { return strings.Repeat("€", n) } // three bytes each
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
	}{
		{"all at the limit", map[string]any{"name": w(255), "description": w(1024), "metadata": map[string]string{w(64): w(512)}}, 200},
		{"name over", map[string]any{"name": w(256)}, 400},
		{"description over", map[string]any{"name": "x", "description": w(1025)}, 400},
		{"metadata key over", map[string]any{"name": "x", "metadata": map[string]string{w(65): "v"}}, 400},
		{"metadata value over", map[string]any{"name": "x", "metadata": map[string]string{"k": w(513)}}, 400},
		{"empty name", map[string]any{"name": ""}, 400},
	} {
		if r := e.do(http.MethodPost, "/v1/memory_stores?beta=true", key, c.body); r.Status != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, r.Status, c.status, r.Body)
		}
	}
}

// TestActorIDsInAdminAPI: the actor ids of memory versions ("apikey_…",
// "user_…") are stable mappings of teammem's key and user ids, and the
// admin API takes them where it takes a key id or a user handle.
func TestActorIDsInAdminAPI(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		owner, member := e.keys[teammem.RoleOwner], e.keys[teammem.RoleMember]
		id := e.do(http.MethodPost, "/v1/memory_stores?beta=true", owner, map[string]any{"name": "actors"}).want(t, 200).JSON(t)["id"].(string)
		base := "/v1/memory_stores/" + id
		m := e.do(http.MethodPost, base+"/memories?beta=true", member, map[string]any{"path": "/a.md", "content": "a"}).want(t, 200).JSON(t)["id"].(string)
		e.do(http.MethodPost, base+"/memories/"+m+"?beta=true", member, map[string]any{"content": "b"}).want(t, 200)
		vs := e.do(http.MethodGet, base+"/memory_versions?beta=true&memory_id="+m, owner, nil).want(t, 200).JSON(t)["data"].([]any)
		first := vs[len(vs)-1].(map[string]any)
		keyID := first["created_by"].(map[string]any)["api_key_id"].(string)
		red := e.do(http.MethodPost, base+"/memory_versions/"+first["id"].(string)+"/redact?beta=true", owner, nil).want(t, 200).JSON(t)
		userID := red["redacted_by"].(map[string]any)["user_id"]
		if want := teammem.UserActorID(e.users[teammem.RoleOwner].ID); userID != want || !strings.HasPrefix(keyID, "apikey_") {
			t.Fatalf("actors: api_key_id %q, redacted_by.user_id %v (want %s)", keyID, userID, want)
		}
		// The same ids, read again, and as a filter.
		again := e.do(http.MethodGet, base+"/memory_versions?beta=true&api_key_id="+keyID, owner, nil).want(t, 200).JSON(t)["data"].([]any)
		if len(again) != 2 || again[1].(map[string]any)["created_by"].(map[string]any)["api_key_id"] != keyID {
			t.Fatalf("versions by %s: %v", keyID, again)
		}
		// The admin API: a user by its user_ id, a key revoked by its apikey_ id.
		u := e.do(http.MethodPatch, "/v1/org/users/"+teammem.UserActorID(e.users[teammem.RoleViewer].ID), owner, map[string]any{"disabled": false}).want(t, 200).JSON(t)
		if u["user"].(map[string]any)["handle"] != e.users[teammem.RoleViewer].Handle {
			t.Fatalf("user by actor id: %v", u)
		}
		e.do(http.MethodPatch, "/v1/org/users/user_999999", owner, map[string]any{"disabled": false}).want(t, 404)
		e.do(http.MethodDelete, "/v1/org/keys/"+keyID, owner, nil).want(t, 200)
		e.do(http.MethodGet, "/v1/memory_stores?beta=true", member, nil).want(t, 401)
	})
}

// TestStoreWorkspaceRefused: a request naming a workspace (the SDKs'
// workspace_id) is refused with a message that names it, and changes
// nothing; without the header the same request goes through.
func TestStoreWorkspaceRefused(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), nil)
	key := e.keys[teammem.RoleOwner]
	r := e.do(http.MethodPost, "/v1/memory_stores?beta=true", key, map[string]any{"name": "ws"}, "anthropic-workspace-id", "wrkspc_1").want(t, 400)
	if _, msg := errMessage(t, r); !strings.Contains(msg, "workspace_id") {
		t.Errorf("message %q does not name workspace_id", msg)
	}
	if n := len(e.do(http.MethodGet, "/v1/memory_stores?beta=true", key, nil).want(t, 200).JSON(t)["data"].([]any)); n != 0 {
		t.Errorf("%d stores after a refused create", n)
	}
	e.do(http.MethodPost, "/v1/memory_stores?beta=true", key, map[string]any{"name": "ws"}).want(t, 200)
}
