package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// TestV1BatchRecreates re-uploads deleted content through /v1 batch: naming
// the deletion (recreates) writes it as a new version; naming another
// deletion, or none, leaves it out as a stale copy; a negative value is
// refused and changes nothing. Under review the re-creation is held and its
// approval writes it.
func TestV1BatchRecreates(t *testing.T) {
	t.Parallel()
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		k := e.keys[teammem.RoleMember]
		batch := func(key, content string, recreates int64, want int) map[string]any {
			t.Helper()
			up := map[string]any{"key": key, "content": content, "base": ""}
			if recreates != 0 {
				up["recreates"] = recreates
			}
			return e.do("POST", team+"/batch", k, map[string]any{"upserts": []map[string]any{up}}).want(t, want).JSON(t)
		}
		batch("n2.md", "note 2\n", 0, http.StatusOK)
		del := e.do("POST", team+"/batch", k, map[string]any{"deletes": []map[string]any{{"key": "n2.md"}}}).want(t, http.StatusOK).JSON(t)
		deletedAt := int64(del["version"].(float64))

		if b := batch("n2.md", "note 2\n", 0, http.StatusOK); len(b["written"].([]any)) != 0 || len(b["skippedTombstoned"].([]any)) != 1 {
			t.Fatalf("re-upload without recreates = %v", b)
		}
		if b := batch("n2.md", "note 2\n", deletedAt-1, http.StatusOK); len(b["skippedTombstoned"].([]any)) != 1 {
			t.Fatalf("re-upload naming another deletion = %v", b)
		}
		batch("n2.md", "note 2\n", -1, http.StatusBadRequest)
		b := batch("n2.md", "note 2\n", deletedAt, http.StatusOK)
		if w := b["written"].([]any); len(w) != 1 || len(b["skippedTombstoned"].([]any)) != 0 || int64(b["version"].(float64)) != deletedAt+1 {
			t.Fatalf("re-creation = %v", b)
		}
		if g := e.do("GET", team+"/entries/n2.md", k, nil).want(t, http.StatusOK); string(g.Body) != "note 2\n" {
			t.Fatalf("re-created entry = %q", g.Body)
		}
		ch := e.do("GET", team+"/changes?since="+fmt.Sprint(deletedAt), k, nil).want(t, http.StatusOK).JSON(t)["changes"].([]any)
		if len(ch) != 1 || ch[0].(map[string]any)["op"] != "upsert" {
			t.Fatalf("changes since the deletion = %v", ch)
		}

		// Held for review: the proposal keeps the deletion it names.
		e.do("DELETE", team+"/entries/n2.md", k, nil).want(t, http.StatusNoContent)
		at := int64(e.do("GET", team+"?view=head", k, nil).want(t, http.StatusOK).JSON(t)["version"].(float64))
		e.do("PATCH", "/v1/org", e.keys[teammem.RoleOwner], map[string]any{"team_writes": "review"}).want(t, http.StatusOK)
		var h wire.HeldWrite
		up := map[string]any{"key": "n2.md", "content": "note 2\n", "base": "", "recreates": at}
		mustJSON(t, e.do("POST", team+"/batch", k, map[string]any{"upserts": []map[string]any{up}}).want(t, http.StatusAccepted).Body, &h)
		if len(h.Proposal.Changes) != 1 || h.Proposal.Changes[0].Recreates != at {
			t.Fatalf("held re-creation = %+v", h)
		}
		e.do("POST", fmt.Sprintf("/v1/proposals/%d/approve", h.Proposal.ID), e.keys[teammem.RoleAdmin], nil).want(t, http.StatusOK)
		if g := e.do("GET", team+"/entries/n2.md", k, nil).want(t, http.StatusOK); string(g.Body) != "note 2\n" {
			t.Fatalf("approved re-creation = %q", g.Body)
		}
	})
}
