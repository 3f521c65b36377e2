package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// TestConsoleShowsRedactedProposals: once the version holding a proposal's
// content is redacted, the review queue shows the change as redacted,
// without the content, and offers no approval, only the rejection.
func TestConsoleShowsRedactedProposals(t *testing.T) {
	t.Parallel()
	e := newV1Env(t, MustOpenStore(t), nil)
	owner, admin, member := e.keys[teammem.RoleOwner], e.keys[teammem.RoleAdmin], e.keys[teammem.RoleMember]
	team := "/v1/repos/acme/app/team/entries/"
	const secret = "leaked personal data: ERASE-ME-c0ns\n"
	e.do("PATCH", "/v1/org", owner, map[string]any{"team_writes": "review"}).want(t, http.StatusOK)
	held := func() int64 {
		var h wire.HeldWrite
		mustJSON(t, e.do("PUT", team+"a.md", member, secret).want(t, http.StatusAccepted).Body, &h)
		return h.Proposal.ID
	}
	first := held()
	e.do("POST", fmt.Sprintf("/v1/proposals/%d/approve", first), admin, nil).want(t, http.StatusOK)
	e.do("PUT", team+"a.md", admin, "clean\n").want(t, http.StatusOK)
	pending := held()

	a := e.ui(t)
	a.signIn(admin)
	if page := string(a.get("/ui/review").want(t, http.StatusOK).Body); !strings.Contains(page, "ERASE-ME-c0ns") || !strings.Contains(page, fmt.Sprintf(`id="approve-%d"`, pending)) {
		t.Fatalf("before the redaction the queue lacks the proposal's diff or its approval:\n%s", page)
	}
	e.do("POST", team+"a.md/history/1/redact", admin, nil).want(t, http.StatusOK)
	page := string(a.get("/ui/review").want(t, http.StatusOK).Body)
	if strings.Contains(page, "ERASE-ME") || !strings.Contains(page, "content redacted") || strings.Contains(page, fmt.Sprintf(`id="approve-%d"`, pending)) ||
		!strings.Contains(page, fmt.Sprintf(`id="reject-%d"`, pending)) {
		t.Fatalf("after the redaction the queue shows:\n%s", page)
	}
	all := string(a.get("/ui/review?status=").want(t, http.StatusOK).Body)
	if strings.Contains(all, "ERASE-ME") || strings.Count(all, "content redacted") != 2 {
		t.Fatalf("every proposal after the redaction:\n%s", all)
	}
	r := a.post("/ui/review/approve", "csrf", a.csrf, "id", fmt.Sprint(pending))
	if r.Status != http.StatusGone || !strings.Contains(string(r.Body), "redacted") {
		t.Fatalf("approving a redacted proposal = %d %s", r.Status, r.Body)
	}
	a.post("/ui/review/reject", "csrf", a.csrf, "id", fmt.Sprint(pending)).want(t, http.StatusSeeOther)
}
