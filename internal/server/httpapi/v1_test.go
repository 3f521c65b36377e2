package httpapi_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

const team = "/v1/repos/acme/widgets/team"

func TestV1EntryLifecycle(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		k := e.keys[teammem.RoleMember]
		e.do("GET", team+"/entries/notes/a.md", k, nil).want(t, 404)
		r := e.do("PUT", team+"/entries/notes/a.md", k, "first\n", "If-None-Match", "*").want(t, 200)
		sum := teammem.EntryChecksum("first\n")
		if r.Header.Get("ETag") != `"`+sum+`"` || r.JSON(t)["version"] != 1.0 {
			t.Fatalf("create: %s %s", r.Header, r.Body)
		}
		e.do("PUT", team+"/entries/notes/a.md", k, "again\n", "If-None-Match", "*").want(t, 412)
		g := e.do("GET", team+"/entries/notes/a.md", k, nil).want(t, 200)
		if string(g.Body) != "first\n" || g.Header.Get("ETag") != `"`+sum+`"` {
			t.Fatalf("get: %q %s", g.Body, g.Header)
		}
		e.do("GET", team+"/entries/notes/a.md", k, nil, "If-None-Match", `"`+sum+`"`).want(t, 304)
		stale := e.do("PUT", team+"/entries/notes/a.md", k, "x", "If-Match", `"sha256:stale"`).want(t, 412)
		if d := stale.JSON(t)["error"].(map[string]any)["details"].(map[string]any); d["checksum"] != sum || d["content"] != "first\n" {
			t.Fatalf("412 details = %v", d)
		}
		e.do("PUT", team+"/entries/notes/a.md", k, "second\n", "If-Match", `"`+sum+`"`).want(t, 200)
		e.do("DELETE", team+"/entries/notes/a.md", k, nil, "If-Match", `"`+sum+`"`).want(t, 412)
		e.do("DELETE", team+"/entries/notes/a.md", k, nil).want(t, 204)
		e.do("DELETE", team+"/entries/notes/a.md", k, nil).want(t, 404)
		e.do("GET", team+"/entries/notes/a.md", k, nil).want(t, 404)
		// History lists every change; an admin restores version 1.
		h := e.do("GET", team+"/entries/notes/a.md/history", k, nil).want(t, 200).JSON(t)["versions"].([]any)
		if len(h) != 3 || h[0].(map[string]any)["op"] != "delete" || h[2].(map[string]any)["author"] != "member" {
			t.Fatalf("history = %v", h)
		}
		e.do("POST", team+"/entries/notes/a.md/restore", k, map[string]any{"version": 1}).want(t, 403)
		e.do("POST", team+"/entries/notes/a.md/restore", e.keys[teammem.RoleAdmin], map[string]any{"version": 3}).want(t, 400)
		e.do("POST", team+"/entries/notes/a.md/restore", e.keys[teammem.RoleAdmin], map[string]any{"version": 1}).want(t, 200)
		if g := e.do("GET", team+"/entries/notes/a.md", k, nil).want(t, 200); string(g.Body) != "first\n" {
			t.Fatalf("after restore: %q", g.Body)
		}
		e.do("PUT", team+"/entries/..%2Fescape.md", k, "x").want(t, 400)
		e.do("PUT", team+"/entries/bad.md", k, "nul\x00byte").want(t, 400)
	})
}

// TestV1DeletionsStick deletes through /v1 and re-uploads the same content
// through both APIs: it stays deleted; different content recreates it.
func TestV1DeletionsStick(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		k := e.keys[teammem.RoleMember]
		cc := "/api/claude_code/team_memory?repo=acme/widgets"
		e.do("PUT", cc, k, map[string]any{"entries": map[string]string{"old.md": "stale", "keep.md": "keep"}}).want(t, 200)
		e.do("DELETE", team+"/entries/old.md", k, nil).want(t, 204)
		r := e.do("PUT", cc, k, map[string]any{"entries": map[string]string{"old.md": "stale", "keep.md": "keep"}}).want(t, 200).JSON(t)
		if r["filesUploaded"] != 0.0 || len(r["skippedTombstoned"].([]any)) != 1 {
			t.Fatalf("stock re-upload = %v", r)
		}
		b := e.do("POST", team+"/batch", k, map[string]any{"upserts": []map[string]any{{"key": "old.md", "content": "stale"}}}).want(t, 200).JSON(t)
		if len(b["written"].([]any)) != 0 || len(b["skippedTombstoned"].([]any)) != 1 {
			t.Fatalf("v1 re-upload = %v", b)
		}
		e.do("GET", team+"/entries/old.md", k, nil).want(t, 404)
		e.do("PUT", cc, k, map[string]any{"entries": map[string]string{"old.md": "fresh"}}).want(t, 200)
		if g := e.do("GET", team+"/entries/old.md", k, nil).want(t, 200); string(g.Body) != "fresh" {
			t.Fatalf("recreated = %q", g.Body)
		}
		// Deleting through the stock API is not possible; a space delete
		// by an admin tombstones everything at once.
		e.do("DELETE", team, k, nil).want(t, 403)
		d := e.do("DELETE", team, e.keys[teammem.RoleAdmin], nil).want(t, 200).JSON(t)
		if len(d["deleted"].([]any)) != 2 || d["entry_count"] != 0.0 {
			t.Fatalf("space delete = %v", d)
		}
		e.do("GET", cc, k, nil).want(t, 404)
	})
}

// TestV1BatchConflict: two clients edit one key from the same base; the
// second gets 409 with the current content and nothing is written.
func TestV1BatchConflict(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		a, b := e.keys[teammem.RoleMember], e.keys[teammem.RoleOwner]
		e.do("POST", team+"/batch", a, map[string]any{"upserts": []map[string]any{{"key": "x.md", "content": "base\n", "base": ""}}}).want(t, 200)
		base := teammem.EntryChecksum("base\n")
		e.do("POST", team+"/batch", a, map[string]any{"upserts": []map[string]any{{"key": "x.md", "content": "alice\n", "base": base}}}).want(t, 200)
		r := e.do("POST", team+"/batch", b, map[string]any{
			"upserts": []map[string]any{{"key": "x.md", "content": "bob\n", "base": base}, {"key": "new.md", "content": "n", "base": nil}},
			"deletes": []map[string]any{{"key": "gone.md", "base": teammem.EntryChecksum("?")}},
		}).want(t, 409)
		c := r.JSON(t)["error"].(map[string]any)["details"].(map[string]any)["conflicts"].([]any)
		if len(c) != 2 || c[0].(map[string]any)["content"] != "alice\n" || c[0].(map[string]any)["checksum"] != teammem.EntryChecksum("alice\n") {
			t.Fatalf("conflicts = %v", c)
		}
		e.do("GET", team+"/entries/new.md", a, nil).want(t, 404)
		snap := e.do("GET", team, a, nil).want(t, 200).JSON(t)
		if snap["version"] != 2.0 || len(snap["entries"].([]any)) != 1 {
			t.Fatalf("snapshot = %v", snap)
		}
		e.do("POST", team+"/batch", b, map[string]any{"upserts": []map[string]any{}}).want(t, 400)
		e.do("POST", team+"/batch", b, `{"upserts": [{"key": "a.md"}]}`).want(t, 400)
	})
}

func TestV1ChangesAndSnapshots(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		k := e.keys[teammem.RoleMember]
		empty := e.do("GET", team, k, nil)
		if empty.Status != 404 {
			t.Fatalf("snapshot of a missing repo = %d", empty.Status)
		}
		e.do("POST", team+"/batch", k, map[string]any{"upserts": []map[string]any{{"key": "a.md", "content": "1"}, {"key": "b.md", "content": "1"}}}).want(t, 200)
		e.do("PUT", team+"/entries/a.md", k, "2").want(t, 200)
		e.do("DELETE", team+"/entries/b.md", k, nil).want(t, 204)
		ch := e.do("GET", team+"/changes?since=1", k, nil).want(t, 200).JSON(t)
		list := ch["changes"].([]any)
		if ch["version"] != 3.0 || len(list) != 2 || list[0].(map[string]any)["content"] != "2" || list[1].(map[string]any)["op"] != "delete" {
			t.Fatalf("changes = %v", ch)
		}
		e.do("GET", team+"/changes?since=9", k, nil).want(t, 410)
		e.do("GET", team+"/changes?since=-1", k, nil).want(t, 400)
		head := e.do("GET", team+"?view=head", k, nil).want(t, 200)
		if _, ok := head.JSON(t)["entries"]; ok {
			t.Fatalf("view=head has entries: %s", head.Body)
		}
		e.do("GET", team, k, nil, "If-None-Match", head.Header.Get("ETag")).want(t, 304)
		hashes := e.do("GET", team+"?view=hashes", k, nil).want(t, 200).JSON(t)["entries"].([]any)
		if len(hashes) != 1 || hashes[0].(map[string]any)["content"] != nil {
			t.Fatalf("hashes = %v", hashes)
		}
		if _, err := st.TombstonesPurge(context.Background(), time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		gone := e.do("GET", team+"/changes?since=1", k, nil).want(t, 410)
		if !strings.Contains(string(gone.Body), `"gone"`) {
			t.Fatalf("410 body = %s", gone.Body)
		}
		e.do("GET", team+"/changes?since=3", k, nil).want(t, 200)
	})
}

func TestV1PersonalSpacesArePrivate(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		personal := "/v1/repos/acme/widgets/personal"
		e.do("PUT", personal+"/entries/me.md", e.keys[teammem.RoleMember], "member's own").want(t, 200)
		e.do("GET", personal+"/entries/me.md", e.keys[teammem.RoleAdmin], nil).want(t, 404)
		e.do("GET", personal+"/entries/me.md", e.keys[teammem.RoleOwner], nil).want(t, 404)
		e.do("GET", personal, e.keys[teammem.RoleViewer], nil).want(t, 403)
		if g := e.do("GET", personal+"/entries/me.md", e.keys[teammem.RoleMember], nil).want(t, 200); string(g.Body) != "member's own" {
			t.Fatalf("own personal entry = %q", g.Body)
		}
		if snap := e.do("GET", team, e.keys[teammem.RoleMember], nil).want(t, 200).JSON(t); snap["entry_count"] != 0.0 {
			t.Fatalf("personal write reached the team space: %v", snap)
		}
	})
}

func TestV1Export(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), nil)
	k := e.keys[teammem.RoleMember]
	e.do("POST", team+"/batch", k, map[string]any{"upserts": []map[string]any{{"key": "MEMORY.md", "content": "- [a](dir/a.md)\n"}, {"key": "dir/a.md", "content": "A"}}}).want(t, 200)
	r := e.do("GET", team+"/export", k, nil).want(t, 200)
	gz, err := gzip.NewReader(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name] = string(b)
	}
	if len(files) != 2 || files["dir/a.md"] != "A" {
		t.Fatalf("export = %v", files)
	}
}

func TestV1RateLimit(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), func(c *httpapi.Config) { c.WriteRate, c.WriteBurst = 0.5, 2 })
	k := e.keys[teammem.RoleMember]
	e.do("PUT", team+"/entries/a.md", k, "1").want(t, 200)
	e.do("PUT", "/api/claude_code/team_memory?repo=acme/widgets", k, map[string]any{"entries": map[string]string{"b.md": "2"}}).want(t, 200)
	r := e.do("PUT", team+"/entries/c.md", k, "3").want(t, 429)
	if r.Header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After: %s", r.Header)
	}
	e.do("PUT", team+"/entries/c.md", e.keys[teammem.RoleOwner], "3").want(t, 200) // another key has its own bucket
	e.do("GET", team+"/entries/a.md", k, nil).want(t, 200)                         // reads are not limited
	metrics := e.do("GET", "/metrics", testMetricsToken, nil).want(t, 200)
	if !strings.Contains(string(metrics.Body), `teammem_pushes_suppressed_total{org="acme",reason="rate_limited"} 1`) {
		t.Fatalf("rate limited push not counted:\n%s", metrics.Body)
	}
}

// TestV1Events streams a repo's events: a write is announced, personal events
// reach only their owner, and Last-Event-ID resumes with a catch-up event.
func TestV1Events(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		member, admin := e.keys[teammem.RoleMember], e.keys[teammem.RoleAdmin]
		events := e.stream(t, admin, "")
		if ev := events.next(t); ev.id != "t0.p0" {
			t.Fatalf("first id = %+v", ev)
		}
		e.do("PUT", team+"/entries/a.md", member, "1").want(t, 200)
		ev := events.next(t)
		if ev.event != "change" || !strings.Contains(ev.data, `"scope":"team"`) || !strings.Contains(ev.data, `"version":1`) || ev.id != "t1.p0" {
			t.Fatalf("event = %+v", ev)
		}
		e.do("PUT", "/v1/repos/acme/widgets/personal/entries/p.md", member, "mine").want(t, 200)
		e.do("PUT", team+"/entries/b.md", member, "2").want(t, 200)
		if ev := events.next(t); !strings.Contains(ev.data, `"version":2`) || strings.Contains(ev.data, "personal") {
			t.Fatalf("the admin saw %+v", ev)
		}
		resumed := e.stream(t, member, "t1.p0")
		got := resumed.next(t).data + resumed.next(t).data
		if !strings.Contains(got, `"scope":"team","version":2`) || !strings.Contains(got, `"scope":"personal","version":1`) {
			t.Fatalf("catch-up = %s", got)
		}
		e.do("GET", "/v1/repos/acme/widgets/events", "", nil).want(t, 401)
	})
}

type sse struct{ id, event, data string }

type sseStream struct {
	ch chan sse
}

// stream opens an event stream and parses it in the background.
func (e *v1Env) stream(t *testing.T, key, lastID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/v1/repos/acme/widgets/events", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header)
	}
	s := &sseStream{ch: make(chan sse, 16)}
	go func() {
		defer close(s.ch) // the stream ended
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		var cur sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur != (sse{}) {
					s.ch <- cur
				}
				cur = sse{}
			case strings.HasPrefix(line, "id: "):
				cur.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				cur.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				cur.data = line[6:]
			}
		}
	}()
	return s
}

func (s *sseStream) next(t *testing.T) sse {
	t.Helper()
	select {
	case ev := <-s.ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
		return sse{}
	}
}

func TestV1Index(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), nil)
	k := e.keys[teammem.RoleMember]
	e.do("POST", team+"/batch", k, map[string]any{"upserts": []map[string]any{
		{"key": "testing.md", "content": "---\nname: Testing\ndescription: how we test\ntype: project\n---\nbody\n"},
		{"key": "me.md", "content": "---\nname: Me\nmetadata:\n  type: user\n---\n"},
	}}).want(t, 200)
	r := e.do("GET", team+"/MEMORY.md", k, nil).want(t, 200)
	if r.Header.Get("X-Teammem-Index") != "rendered" || !strings.Contains(string(r.Body), "- [Testing](testing.md) — how we test") ||
		!strings.Contains(string(r.Body), "[Me](me.md)") {
		t.Fatalf("rendered index:\n%s", r.Body)
	}
	long := strings.Repeat("- [x](x.md) — a line\n", 250)
	e.do("PUT", team+"/entries/MEMORY.md", k, long).want(t, 200)
	r = e.do("GET", team+"/MEMORY.md", k, nil).want(t, 200)
	if r.Header.Get("X-Teammem-Index") != "stored" || strings.Count(string(r.Body), "- [x](x.md)") != 200 ||
		!strings.Contains(string(r.Body), "> WARNING: MEMORY.md is 250 lines (limit: 200)") {
		t.Fatalf("truncated index:\n%s", r.Body)
	}
}

func TestHeadAnswersLikeGet(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), nil)
	k := e.keys[teammem.RoleMember]
	e.do("PUT", team+"/entries/a.md", k, "hello").want(t, 200)
	get := e.do("GET", team+"/entries/a.md", k, nil).want(t, 200)
	head := e.do("HEAD", team+"/entries/a.md", k, nil).want(t, 200)
	if len(head.Body) != 0 || head.Header.Get("ETag") != get.Header.Get("ETag") || head.Header.Get("Content-Length") != "5" {
		t.Fatalf("HEAD = %v %q", head.Header, head.Body)
	}
	e.do("HEAD", "/healthz", "", nil).want(t, 200)
	e.do("HEAD", team+"/entries/missing.md", k, nil).want(t, 404)
}

// TestMethodNotAllowedNamesTheAllowedOnes: a 405 carries the Allow header
// of RFC 9110, from the router's own table.
func TestMethodNotAllowedNamesTheAllowedOnes(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		k := e.keys[teammem.RoleMember]
		for path, want := range map[string]string{
			"/api/claude_code/team_memory?repo=o/r": "GET, HEAD, PUT",
			// POST is routed on every entry path: it restores when the path
			// ends in /restore and is a 404 otherwise.
			team + "/entries/notes/a.md": "GET, HEAD, PUT, POST, DELETE",
			team + "/batch":              "POST",
			"/healthz":                   "GET, HEAD",
		} {
			r := e.do("PATCH", path, k, "{}").want(t, 405)
			if got := r.Header.Get("Allow"); got != want {
				t.Errorf("PATCH %s: Allow = %q, want %q", path, got, want)
			}
		}
	})
}
