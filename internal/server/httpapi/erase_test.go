package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// TestErasureReachesProposals: a held write's content, in an approved, a
// rejected and a pending proposal, goes with the redaction of the version
// that holds it; GET /v1/proposals/{id} shows each as redacted, without
// the content, the pending one can no longer be approved (410), and a
// purge of the space's history erases the rest. Every exchange is
// validated against api/openapi.yaml.
func TestErasureReachesProposals(t *testing.T) {
	t.Parallel()
	b, k := setupV1(t, testConfig(), nil)
	const secret = "leaked personal data: ERASE-ME-77c1\n"
	b.do(t, call{Method: http.MethodPatch, Path: "/v1/org", Key: k.owner, Body: `{"team_writes":"review"}`, Want: 200})
	propose := func(key, content string) int64 {
		var held wire.HeldWrite
		mustJSON(t, b.do(t, call{Method: http.MethodPut, Path: v1Team + "/entries/" + key, Key: k.member, Body: content, Header: markdown, Want: 202}).Body, &held)
		return held.Proposal.ID
	}
	decide := func(id int64, verb string, want int) {
		b.do(t, call{Method: http.MethodPost, Path: fmt.Sprintf("/v1/proposals/%d/%s", id, verb), Key: k.admin, Want: want})
	}
	approved := propose("a.md", secret)
	decide(approved, "approve", 200)
	b.do(t, call{Method: http.MethodPut, Path: v1Team + "/entries/a.md", Key: k.admin, Body: "clean\n", Header: markdown, Want: 200})
	rejected := propose("a.md", secret)
	decide(rejected, "reject", 200)
	pending := propose("a.md", secret)
	other := propose("other.md", "not erased by the redaction\n")

	var hist struct {
		Versions []teammem.EntryVersion `json:"versions"`
	}
	mustJSON(t, b.do(t, call{Method: http.MethodGet, Path: v1Team + "/entries/a.md/history", Key: k.admin, Want: 200}).Body, &hist)
	v := hist.Versions[len(hist.Versions)-1].Version
	redact := v1Team + fmt.Sprintf("/entries/a.md/history/%d/redact", v)
	b.do(t, call{Method: http.MethodPost, Path: redact, Key: k.admin, Want: 200})
	b.do(t, call{Method: http.MethodPost, Path: redact, Key: k.admin, Want: 200}) // again: a no-op

	get := func(id int64) (teammem.Proposal, string) {
		r := b.do(t, call{Method: http.MethodGet, Path: fmt.Sprintf("/v1/proposals/%d", id), Key: k.admin, Want: 200})
		var p teammem.Proposal
		mustJSON(t, r.Body, &p)
		return p, string(r.Body)
	}
	for _, id := range []int64{approved, rejected, pending} {
		p, body := get(id)
		if strings.Contains(body, "ERASE-ME") || !p.Redacted || !p.Changes[0].Redacted || p.Changes[0].Content != "" {
			t.Errorf("proposal %d (%s) after the redaction: %s", id, p.Status, body)
		}
	}
	if p, body := get(other); p.Redacted || p.Changes[0].Content == "" {
		t.Errorf("a proposal of other content lost it: %s", body)
	}
	decide(pending, "approve", 410)
	if got := string(b.do(t, call{Method: http.MethodGet, Path: v1Team + "/entries/a.md", Key: k.admin, Want: 200}).Body); got != "clean\n" {
		t.Fatalf("a.md after the refused approval = %q", got)
	}
	decide(pending, "reject", 200)

	// A purge of the space's history erases every proposal of it.
	b.do(t, call{Method: http.MethodDelete, Path: v1Team + "?purge=history", Key: k.admin, Want: 200})
	if p, body := get(other); !p.Redacted || p.Changes[0].Content != "" {
		t.Errorf("a pending proposal after the purge of its space's history: %s", body)
	}
}

// TestMemoryStoreRedactErasesProposals: on both drivers, a write held for
// review through Claude Code's memory-service dialect, approved, then
// overwritten: the memory-store redaction of its version (POST
// …/memory_versions/{id}/redact) erases it from the proposal too, as the
// API and the raw proposals table show.
func TestMemoryStoreRedactErasesProposals(t *testing.T) {
	forRawDrivers(t, func(t *testing.T, st teammem.Store, raw rawDB) {
		e := newStoreEnv(t, st, teammem.OrgSettings{})
		owner, member, admin := e.keys[teammem.RoleOwner], e.keys[teammem.RoleMember], e.keys[teammem.RoleAdmin]
		p := storePath(t, e, member)
		m, secret := eraseMarker(t, 300)
		e.do("PATCH", "/v1/org", owner, map[string]any{"team_writes": "review"}).want(t, 200)
		e.do("POST", p+"/memories", member, map[string]any{"path": "/held.md", "content": secret,
			"precondition": map[string]any{"type": "not_exists"}}, cliHeaders...).want(t, 400)
		var list wire.ProposalList
		mustJSON(t, e.do("GET", "/v1/proposals?status=pending", admin, nil).want(t, 200).Body, &list)
		if len(list.Proposals) != 1 {
			t.Fatalf("%d pending proposals, want 1", len(list.Proposals))
		}
		id := itoa(int(list.Proposals[0].ID))
		e.do("POST", "/v1/proposals/"+id+"/approve", admin, nil).want(t, 200)
		e.do("PUT", "/v1/repos/acme/widgets/team/entries/held.md", admin, "nothing to see\n").want(t, 200)
		if !strings.Contains(strings.Join(raw.texts(t, `SELECT changes FROM proposals`), "\n"), m) {
			t.Fatal("the marker is in no proposal before the redaction: the search proves nothing")
		}
		mems := e.do("GET", p+"/memories?limit=100&path_prefix=%2F&depth=1&order_by=path&order=asc", admin, nil, cliHeaders...).want(t, 200).JSON(t)
		memID := ""
		for _, d := range mems["data"].([]any) {
			if d.(map[string]any)["path"] == "/held.md" {
				memID = d.(map[string]any)["id"].(string)
			}
		}
		vs := e.do("GET", p+"/memory_versions?beta=true&memory_id="+memID+"&operation=created", admin, nil).want(t, 200).JSON(t)
		ver := vs["data"].([]any)[0].(map[string]any)["id"].(string)
		e.do("POST", p+"/memory_versions/"+ver+"/redact?beta=true", admin, nil).want(t, 200)

		got := e.do("GET", "/v1/proposals/"+id, admin, nil).want(t, 200)
		var prop teammem.Proposal
		mustJSON(t, got.Body, &prop)
		if strings.Contains(string(got.Body), m) || !prop.Redacted || !prop.Changes[0].Redacted {
			t.Fatalf("the approved proposal after the memory-store redaction: %s", got.Body)
		}
		if strings.Contains(strings.Join(raw.texts(t, `SELECT changes FROM proposals`), "\n"), m) {
			t.Fatal("the proposals table still holds the redacted content")
		}
		if raw.files != nil {
			if f := raw.files(t, m); len(f) > 0 {
				t.Fatalf("the marker is still in %v", f)
			}
		}
	})
}
