package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// TestConsoleReviewQueue: the review queue shows each proposal with its
// author, repository, findings and diff against the current team entry;
// admins approve and reject through it, a stale proposal's approval is the
// API's conflict; a member sees their own proposals without controls, a
// viewer none, and both are refused (403) when they post a decision anyway.
func TestConsoleReviewQueue(t *testing.T) {
	t.Parallel()
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		owner, admin, member := e.keys[teammem.RoleOwner], e.keys[teammem.RoleAdmin], e.keys[teammem.RoleMember]
		team := "/v1/repos/acme/app/team/entries/"
		e.do("PUT", team+"a.md", admin, "line one\nline two\n").want(t, http.StatusOK)
		e.do("PUT", team+"c.md", admin, "c\n").want(t, http.StatusOK)
		e.do("PATCH", "/v1/org", owner, map[string]any{"team_writes": "review"}).want(t, http.StatusOK)
		held := func(key, content string) int64 {
			var h wire.HeldWrite
			mustJSON(t, e.do("PUT", team+key, member, content).want(t, http.StatusAccepted).Body, &h)
			return h.Proposal.ID
		}
		upd := held("a.md", "line one\nline 2, changed\n")
		bad := held("b.md", poisoned)
		stale := held("c.md", "c from member\n")
		e.do("PUT", team+"c.md", admin, "c moved on\n").want(t, http.StatusOK)

		// The member: their proposals, no controls.
		m := e.ui(t)
		m.signIn(member)
		page := string(m.get("/ui/review").want(t, http.StatusOK).Body)
		for _, want := range []string{fmt.Sprintf(`id="proposal-%d"`, upd), fmt.Sprintf(`id="proposal-%d"`, bad), "acme/app", "⚠ fetch-exec"} {
			if !strings.Contains(page, want) {
				t.Errorf("member's queue lacks %q", want)
			}
		}
		if strings.Contains(page, "/ui/review/approve") || !strings.Contains(page, `href="/ui/review"`) {
			t.Errorf("member's queue offers a decision or lacks its nav link")
		}
		m.post("/ui/review/approve", "csrf", m.csrf, "id", fmt.Sprint(upd)).want(t, http.StatusForbidden)

		// The viewer: no nav link, no proposals, refused.
		vw := e.ui(t)
		vw.signIn(e.keys[teammem.RoleViewer])
		vpage := string(vw.get("/ui/review").want(t, http.StatusOK).Body)
		if strings.Contains(vpage, `href="/ui/review"`) || strings.Contains(vpage, "proposal-") || !strings.Contains(vpage, "no-proposals") {
			t.Errorf("viewer's queue:\n%s", vpage)
		}
		vw.post("/ui/review/reject", "csrf", vw.csrf, "id", fmt.Sprint(upd)).want(t, http.StatusForbidden)

		// The admin: diffs, findings, staleness and the forms.
		a := e.ui(t)
		a.signIn(admin)
		apage := string(a.get("/ui/review").want(t, http.StatusOK).Body)
		for _, want := range []string{"line 2, changed", "line two", "by <strong class=\"author\">member</strong>", "new file",
			"approving will conflict", fmt.Sprintf(`id="approve-%d"`, upd), fmt.Sprintf(`id="reject-%d"`, bad), "agent-override"} {
			if !strings.Contains(apage, want) {
				t.Errorf("admin's queue lacks %q", want)
			}
		}
		a.post("/ui/review/approve", "csrf", a.csrf, "id", fmt.Sprint(upd), "note", "fine").want(t, http.StatusSeeOther)
		if got := string(e.do("GET", team+"a.md", member, nil).want(t, http.StatusOK).Body); got != "line one\nline 2, changed\n" {
			t.Fatalf("approved content = %q", got)
		}
		if loc := a.post("/ui/review/reject", "csrf", a.csrf, "id", fmt.Sprint(bad), "note", "injection").want(t, http.StatusSeeOther).Header.Get("Location"); loc != "/ui/review?done=rejected" {
			t.Fatalf("after a rejection the browser goes to %q", loc)
		}
		e.do("GET", team+"b.md", member, nil).want(t, http.StatusNotFound)
		r := a.post("/ui/review/approve", "csrf", a.csrf, "id", fmt.Sprint(stale))
		if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "was not applied") {
			t.Fatalf("stale approval = %d %s", r.Status, r.Body)
		}
		a.post("/ui/review/approve", "csrf", a.csrf, "id", "nope").want(t, http.StatusBadRequest)
		rejected := string(a.get("/ui/review?status=rejected").want(t, http.StatusOK).Body)
		if !strings.Contains(rejected, fmt.Sprintf(`id="proposal-%d"`, bad)) || !strings.Contains(rejected, "injection") || strings.Contains(rejected, "/ui/review/approve") {
			t.Fatalf("rejected list:\n%s", rejected)
		}
		if p := string(a.get("/ui/review").Body); strings.Contains(p, fmt.Sprintf(`id="proposal-%d"`, upd)) || !strings.Contains(p, fmt.Sprintf(`id="proposal-%d"`, stale)) {
			t.Fatalf("pending list after the decisions:\n%s", p)
		}
	})
}

// TestConsoleTrustSettingsAndBadges: the review and poisoning settings
// round-trip through the settings page (a bad line changes nothing); the
// entry page shows each version's provenance and findings, the space tree
// and MEMORY.md page the findings on live entries.
func TestConsoleTrustSettingsAndBadges(t *testing.T) {
	t.Parallel()
	e := newV1Env(t, MustOpenStore(t), nil)
	admin, member := e.keys[teammem.RoleAdmin], e.keys[teammem.RoleMember]
	e.do("PUT", "/v1/repos/acme/app/team/entries/setup.md", member, poisoned, sessionHdr, "0b7c1e9a-sess").want(t, http.StatusOK)
	e.do("PUT", "/v1/repos/acme/app/team/entries/ok.md", member, "fine\n").want(t, http.StatusOK)
	a := e.ui(t)
	a.signIn(admin)

	a.get("/ui/settings")
	a.post("/ui/settings", "csrf", a.csrf, "secret_policy", "", "team_writes", "review", "team_writes_repos", "acme/app direct\nacme/pay review\n",
		"poisoning", "reject").want(t, http.StatusSeeOther)
	org := e.do("GET", "/v1/org", admin, nil).want(t, http.StatusOK).JSON(t)
	set := org["org"].(map[string]any)["settings"].(map[string]any)
	repos, _ := set["team_writes_repos"].(map[string]any)
	if set["team_writes"] != "review" || set["poisoning"] != "reject" || repos["acme/app"] != "direct" || repos["acme/pay"] != "review" {
		t.Fatalf("settings = %v", set)
	}
	page := string(a.get("/ui/settings").want(t, http.StatusOK).Body)
	if !strings.Contains(page, "acme/app direct\nacme/pay review") || !strings.Contains(page, `<option value="reject" selected>`) {
		t.Fatalf("settings page does not show what was saved:\n%s", page)
	}
	for _, bad := range []string{"acme/app", "acme/app later", "no-slug review"} {
		r := a.post("/ui/settings", "csrf", a.csrf, "team_writes", "direct", "team_writes_repos", bad, "poisoning", "flag")
		if r.Status != http.StatusBadRequest {
			t.Fatalf("bad per-repo line %q = %d", bad, r.Status)
		}
	}
	if set := e.do("GET", "/v1/org", admin, nil).JSON(t)["org"].(map[string]any)["settings"].(map[string]any); set["team_writes"] != "review" {
		t.Fatalf("a refused save changed team_writes: %v", set)
	}

	entry := string(a.get("/ui/entry?repo=acme%2Fapp&key=setup.md").want(t, http.StatusOK).Body)
	for _, want := range []string{`id="entry-findings"`, "⚠ agent-override", "⚠ fetch-exec", "key member", "teammem /v1", "session 0b7c1e9a-sess"} {
		if !strings.Contains(entry, want) {
			t.Errorf("entry page lacks %q", want)
		}
	}
	if ok := string(a.get("/ui/entry?repo=acme%2Fapp&key=ok.md").Body); strings.Contains(ok, "entry-findings") {
		t.Errorf("a clean entry shows findings")
	}
	space := string(a.get("/ui/space?repo=acme%2Fapp").want(t, http.StatusOK).Body)
	if !strings.Contains(space, `id="space-findings"`) || strings.Count(space, "⚠ fetch-exec") != 1 {
		t.Errorf("space page badges:\n%s", space)
	}
	mem := string(a.get("/ui/memory?repo=acme%2Fapp").want(t, http.StatusOK).Body)
	if !strings.Contains(mem, `id="poison-findings"`) || !strings.Contains(mem, "setup.md:2") || !strings.Contains(mem, "fetch-exec") {
		t.Errorf("MEMORY.md page findings:\n%s", mem)
	}
}
