package httpapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// historyOf returns the versions GET .../history lists for an entry.
func (e *v1Env) historyOf(t *testing.T, path, key string) []map[string]any {
	t.Helper()
	r := e.do("GET", path+"/history", key, nil)
	if r.Status == 404 {
		return nil
	}
	var h struct {
		Versions []map[string]any `json:"versions"`
	}
	if err := json.Unmarshal(r.want(t, 200).Body, &h); err != nil {
		t.Fatal(err)
	}
	return h.Versions
}

// auditOf returns the org's audit events with action, as the owner reads them.
func (e *v1Env) auditOf(t *testing.T, action string) []map[string]any {
	t.Helper()
	var page struct {
		Events []map[string]any `json:"events"`
	}
	r := e.do("GET", "/v1/org/audit?action="+action, e.keys[teammem.RoleOwner], nil).want(t, 200)
	if err := json.Unmarshal(r.Body, &page); err != nil {
		t.Fatal(err)
	}
	return page.Events
}

// TestV1RedactVersion redacts over a real listener: on the team space only
// admins and owners may, on the personal space its owner; the live content
// cannot be redacted, the redacted version is listed without content or
// checksum, cannot be restored, and the audit log records it without the
// content.
func TestV1RedactVersion(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		member, admin, viewer := e.keys[teammem.RoleMember], e.keys[teammem.RoleAdmin], e.keys[teammem.RoleViewer]
		const secret = "password: LEAKED-hunter2\n"
		entry := team + "/entries/notes/leak.md"
		e.do("PUT", entry, member, secret).want(t, 200)
		e.do("PUT", entry, member, "rotated\n").want(t, 200)
		redact := func(key, path string, version string, want int) resp {
			t.Helper()
			return e.do("POST", path+"/history/"+version+"/redact", key, nil).want(t, want)
		}
		redact(member, entry, "1", 403)
		redact(viewer, entry, "1", 403)
		redact(e.keys[teammem.RoleOwner], entry, "2", 409) // the live content
		redact(admin, entry, "7", 404)
		redact(admin, team+"/entries/never.md", "1", 404)
		redact(admin, "/v1/repos/acme/elsewhere/team/entries/notes/leak.md", "1", 404)
		got := redact(admin, entry, "1", 200).JSON(t)
		if v := got["redacted"].(map[string]any); got["key"] != "notes/leak.md" || v["redacted_by"] != "admin" || v["checksum"] != nil || v["size"] != 0.0 {
			t.Fatalf("redaction answered %s", got)
		}
		h := e.historyOf(t, entry, member)
		if len(h) != 2 || h[1]["redacted_at"] == nil || h[1]["checksum"] != nil || h[0]["redacted_at"] != nil || h[0]["checksum"] == nil {
			t.Fatalf("history after redaction = %v", h)
		}
		r := e.do("POST", entry+"/restore", admin, map[string]any{"version": 1}).want(t, 410)
		if !strings.Contains(string(r.Body), "redacted") {
			t.Fatalf("restore of a redacted version: %s", r.Body)
		}
		redact(admin, entry, "1", 200) // again: nothing to do
		events := e.auditOf(t, "version.redact")
		if len(events) != 1 || events[0]["target"] != "notes/leak.md" || events[0]["actor"] != "admin" {
			t.Fatalf("audit events = %v", events)
		}
		if b, _ := json.Marshal(events); strings.Contains(string(b), "LEAKED") {
			t.Fatalf("the audit log holds the content: %s", b)
		}

		// Personal memory: its author redacts it; nobody else can name it.
		mine := "/v1/repos/acme/widgets/personal/entries/me.md"
		e.do("PUT", mine, member, "my address\n").want(t, 200)
		e.do("PUT", mine, member, "moved\n").want(t, 200)
		redact(viewer, mine, "1", 403)
		redact(admin, mine, "1", 404) // the admin's own personal space has no such entry
		redact(e.keys[teammem.RoleMember], mine, "1", 200)
		if h := e.historyOf(t, mine, member); len(h) != 2 || h[1]["redacted_by"] != "member" {
			t.Fatalf("personal history after redaction = %v", h)
		}
	})
}

// TestV1DeleteSpacePurgesHistory deletes a space with ?purge=history: the
// entries become tombstones as without it, and no history is left.
func TestV1DeleteSpacePurgesHistory(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		member, admin := e.keys[teammem.RoleMember], e.keys[teammem.RoleAdmin]
		e.do("PUT", team+"/entries/a.md", member, "one").want(t, 200)
		e.do("PUT", team+"/entries/a.md", member, "two").want(t, 200)
		e.do("PUT", team+"/entries/b.md", member, "b").want(t, 200)
		notes := "/v1/sessions/" + sesn(ccNotes)
		putNotes := func() {
			e.do("PUT", notes+"/notes", member, map[string]string{"repo": "acme/widgets", "content": "we chose sqlite\n"}).want(t, 200)
			e.do("GET", notes, admin, nil).want(t, 200)
		}
		putNotes()
		e.do("DELETE", team+"?purge=history", member, nil).want(t, 403)
		e.do("DELETE", team+"?purge=all", admin, nil).want(t, 400)
		d := e.do("DELETE", team+"?purge=history", admin, nil).want(t, 200).JSON(t)
		if len(d["deleted"].([]any)) != 2 {
			t.Fatalf("space delete = %v", d)
		}
		if h := e.historyOf(t, team+"/entries/a.md", member); h != nil {
			t.Fatalf("history after the purge = %v", h)
		}
		// The session notes uploaded for the space went with its history.
		e.do("GET", notes, admin, nil).want(t, 404)
		putNotes()
		// The tombstone still keeps a stale copy out.
		r := e.do("POST", team+"/batch", member, map[string]any{"upserts": []map[string]any{{"key": "b.md", "content": "b"}}}).want(t, 200).JSON(t)
		if len(r["skippedTombstoned"].([]any)) != 1 {
			t.Fatalf("a stale copy after the purge = %v", r)
		}
		ev := e.auditOf(t, "space.delete")
		if len(ev) != 1 {
			t.Fatalf("audit = %v", ev)
		}
		if d := ev[0]["details"].(map[string]any); d["deleted"] != 2.0 {
			t.Fatalf("space.delete audit details = %v", d)
		}
		ev = e.auditOf(t, "space.history_purge")
		if len(ev) != 1 {
			t.Fatalf("audit = %v", ev)
		}
		if d := ev[0]["details"].(map[string]any); d["purge"] != "history" || d["versions"] != 5.0 {
			t.Fatalf("space.history_purge audit details = %v", d)
		}
		// The personal space: its owner purges it.
		e.do("PUT", "/v1/repos/acme/widgets/personal/entries/p.md", member, "p").want(t, 200)
		e.do("DELETE", "/v1/repos/acme/widgets/personal?purge=history", member, nil).want(t, 200)
		if h := e.historyOf(t, "/v1/repos/acme/widgets/personal/entries/p.md", member); h != nil {
			t.Fatalf("personal history after the purge = %v", h)
		}
		// The member's erasure of their history took the notes they uploaded.
		e.do("GET", notes, admin, nil).want(t, 404)
	})
}

// TestV1HistoryRetention sets an org's retention through PATCH /v1/org and
// lets the server's own sweep (Run sweeps at start) apply it.
func TestV1HistoryRetention(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		owner, member := e.keys[teammem.RoleOwner], e.keys[teammem.RoleMember]
		limits := func() map[string]any {
			return e.do("GET", "/v1/org", member, nil).want(t, 200).JSON(t)["limits"].(map[string]any)
		}
		if l := limits(); l["history_retention_days"] != 90.0 || l["history_max_versions"] != 100.0 {
			t.Fatalf("default limits = %v", l)
		}
		e.do("PATCH", "/v1/org", owner, map[string]any{"history_max_versions": -1}).want(t, 400)
		e.do("PATCH", "/v1/org", owner, map[string]any{"history_retention_days": 36501}).want(t, 400)
		e.do("PATCH", "/v1/org", member, map[string]any{"history_max_versions": 2}).want(t, 403)
		e.do("PATCH", "/v1/org", owner, map[string]any{"history_retention_days": 7, "history_max_versions": 2}).want(t, 200)
		if l := limits(); l["history_retention_days"] != 7.0 || l["history_max_versions"] != 2.0 {
			t.Fatalf("limits after PATCH = %v", l)
		}
		for _, c := range []string{"1", "2", "3", "4"} {
			e.do("PUT", team+"/entries/a.md", member, c).want(t, 200)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { e.srv.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
		// Wait for the sweep's effect; the deadline only bounds a failure.
		deadline := time.Now().Add(30 * time.Second)
		for len(e.historyOf(t, team+"/entries/a.md", member)) != 2 {
			if time.Now().After(deadline) {
				t.Fatalf("the sweep did not cap the history: %v", e.historyOf(t, team+"/entries/a.md", member))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if h := e.historyOf(t, team+"/entries/a.md", member); h[0]["version"] != 4.0 || h[1]["version"] != 3.0 {
			t.Fatalf("the sweep kept %v, want the two newest", h)
		}
		e.do("PATCH", "/v1/org", owner, map[string]any{"history_retention_days": 0, "history_max_versions": 0}).want(t, 200)
		if l := limits(); l["history_retention_days"] != 90.0 || l["history_max_versions"] != 100.0 {
			t.Fatalf("limits back to the defaults = %v", l)
		}
	})
}
