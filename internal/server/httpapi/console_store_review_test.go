package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// TestConsoleReviewAPIStore: the review queue loads with writes held in a
// store made through the memory stores API (whose hidden repo no slug
// reaches): a memory write shows its diff against the store's current
// memory, a new one, a fields change and a store create their proposed
// content, the store is named by its id, and the admin approves and
// rejects them there.
func TestConsoleReviewAPIStore(t *testing.T) {
	t.Parallel()
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newStoreEnv(t, st, teammem.OrgSettings{})
		owner, admin, member := e.keys[teammem.RoleOwner], e.keys[teammem.RoleAdmin], e.keys[teammem.RoleMember]
		id := e.do("POST", "/v1/memory_stores?beta=true", owner, map[string]any{"name": "agents"}).want(t, 200).JSON(t)["id"].(string)
		base := "/v1/memory_stores/" + id
		e.do("POST", base+"/memories?beta=true", owner, map[string]any{"path": "/notes/a.md", "content": "line one\nline two\n"}).want(t, 200)
		e.do("PATCH", "/v1/org", owner, map[string]any{"team_writes": "review"}).want(t, 200)
		list := e.do("GET", base+"/memories?beta=true&view=basic", owner, nil).want(t, 200).JSON(t)
		memID := list["data"].([]any)[0].(map[string]any)["id"].(string)
		e.do("POST", base+"/memories/"+memID+"?beta=true", member, map[string]any{"content": "line one\nline 2, changed\n"}).want(t, 400)
		e.do("POST", base+"/memories?beta=true", member, map[string]any{"path": "/notes/new.md", "content": "fresh memory\n"}).want(t, 400)
		e.do("POST", base+"?beta=true", member, map[string]any{"name": "renamed agents"}).want(t, 400)
		e.do("POST", "/v1/memory_stores?beta=true", member, map[string]any{"name": "team notes"}).want(t, 400)

		var pl wire.ProposalList
		mustJSON(t, e.do("GET", "/v1/proposals?status=pending", admin, nil).want(t, 200).Body, &pl)
		ids := map[string]int64{}
		for _, p := range pl.Proposals {
			ids[p.Changes[0].Key+" "+string(p.Changes[0].Op)] = p.ID
		}
		upd, fresh, fields, create := ids["notes/a.md write"], ids["notes/new.md write"], ids[" store_fields"], ids[" store_create"]
		if len(ids) != 4 || upd == 0 || fresh == 0 || fields == 0 || create == 0 {
			t.Fatalf("pending proposals: %v", ids)
		}

		a := e.ui(t)
		a.signIn(admin)
		page := string(a.get("/ui/review").want(t, http.StatusOK).Body)
		for _, want := range []string{"line 2, changed", "line two", "fresh memory", "new file", "renamed agents", "the store's fields", "team notes", "a new memory store", id,
			fmt.Sprintf(`id="approve-%d"`, upd), fmt.Sprintf(`id="approve-%d"`, fields), fmt.Sprintf(`id="approve-%d"`, create), fmt.Sprintf(`id="reject-%d"`, fresh)} {
			if !strings.Contains(page, want) {
				t.Errorf("admin's queue lacks %q", want)
			}
		}
		if strings.Contains(page, "/ui/entry?repo=") || strings.Contains(page, "approving will conflict") {
			t.Errorf("the queue links the hidden repo or calls a fresh change stale:\n%s", page)
		}
		m := e.ui(t)
		m.signIn(member)
		if mp := string(m.get("/ui/review").want(t, http.StatusOK).Body); !strings.Contains(mp, "line 2, changed") {
			t.Errorf("member's queue lacks their held write")
		}

		a.post("/ui/review/approve", "csrf", a.csrf, "id", fmt.Sprint(upd), "note", "fine").want(t, http.StatusSeeOther)
		a.post("/ui/review/approve", "csrf", a.csrf, "id", fmt.Sprint(fields)).want(t, http.StatusSeeOther)
		a.post("/ui/review/approve", "csrf", a.csrf, "id", fmt.Sprint(create)).want(t, http.StatusSeeOther)
		a.post("/ui/review/reject", "csrf", a.csrf, "id", fmt.Sprint(fresh)).want(t, http.StatusSeeOther)
		got := e.do("GET", base+"/memories/"+memID+"?beta=true", member, nil).want(t, 200).JSON(t)
		if got["content"] != "line one\nline 2, changed\n" {
			t.Fatalf("approved memory = %v", got["content"])
		}
		if s := e.do("GET", base+"?beta=true", member, nil).want(t, 200).JSON(t); s["name"] != "renamed agents" {
			t.Fatalf("approved fields: name = %v", s["name"])
		}
		if l := string(e.do("GET", base+"/memories?beta=true", member, nil).want(t, 200).Body); strings.Contains(l, "new.md") {
			t.Fatalf("a rejected memory was written: %s", l)
		}
		if l := string(e.do("GET", "/v1/memory_stores?beta=true", owner, nil).want(t, 200).Body); !strings.Contains(l, "team notes") {
			t.Fatalf("the approved create made no store: %s", l)
		}
		after := string(a.get("/ui/review").want(t, http.StatusOK).Body)
		if !strings.Contains(after, "no-proposals") {
			t.Fatalf("proposals left pending:\n%s", after)
		}
	})
}
