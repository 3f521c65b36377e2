package httpapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

type wireAuditPage struct {
	Events []struct {
		ID      int64          `json:"id"`
		Actor   string         `json:"actor"`
		Action  string         `json:"action"`
		Target  string         `json:"target"`
		Details map[string]any `json:"details"`
	} `json:"events"`
	NextBefore *int64 `json:"next_before"`
}

func TestAuditLog(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	b.req(t, http.MethodPatch, "/v1/org", b.keys["owner"], `{"max_entries":20}`, http.StatusOK)
	b.req(t, http.MethodPost, "/v1/org/users", b.keys["admin"], `{"handle":"dev","role":"member"}`, http.StatusCreated)
	b.req(t, http.MethodPatch, "/v1/org/users/dev", b.keys["admin"], `{"role":"viewer"}`, http.StatusOK)
	created := adminJSON[wireKeyCreated](t, b.req(t, http.MethodPost, "/v1/org/keys", b.keys["admin"],
		`{"name":"ci","user":"dev"}`, http.StatusCreated))
	b.req(t, http.MethodDelete, "/v1/org/keys/"+created.ID, b.keys["owner"], "", http.StatusOK)

	body := b.req(t, http.MethodGet, "/v1/org/audit", b.keys["admin-ro"], "", http.StatusOK)
	if strings.Contains(string(body), created.Key) {
		t.Error("the audit log holds a key")
	}
	page := adminJSON[wireAuditPage](t, body)
	var actions []string
	for _, e := range page.Events {
		actions = append(actions, e.Actor+":"+e.Action)
	}
	want := "owner:key.revoke admin:key.create admin:user.update admin:user.create owner:org.update"
	if strings.Join(actions, " ") != want || page.NextBefore != nil {
		t.Errorf("audit = %v (next %v), want %s and no next page", actions, page.NextBefore, want)
	}
	if e := page.Events[1]; e.Target != created.ID || e.Details["user"] != "dev" {
		t.Errorf("key.create event = %+v", e)
	}

	// Filters and paging.
	one := adminJSON[wireAuditPage](t, b.req(t, http.MethodGet, "/v1/org/audit?actor=admin&limit=2", b.keys["admin"], "", http.StatusOK))
	if len(one.Events) != 2 || one.Events[0].Action != "key.create" || one.NextBefore == nil {
		t.Fatalf("first page = %+v", one)
	}
	two := adminJSON[wireAuditPage](t, b.req(t, http.MethodGet, "/v1/org/audit?actor=admin&limit=2&before="+
		strconv.FormatInt(*one.NextBefore, 10), b.keys["admin"], "", http.StatusOK))
	if len(two.Events) != 1 || two.Events[0].Action != "user.create" || two.NextBefore != nil {
		t.Errorf("second page = %+v", two)
	}
	byAction := adminJSON[wireAuditPage](t, b.req(t, http.MethodGet, "/v1/org/audit?action=org.update", b.keys["admin"], "", http.StatusOK))
	if len(byAction.Events) != 1 || byAction.Events[0].Details["max_entries"] != float64(20) {
		t.Errorf("org.update events = %+v", byAction.Events)
	}
	nobody := b.req(t, http.MethodGet, "/v1/org/audit?actor=nobody", b.keys["admin"], "", http.StatusOK)
	if strings.TrimSpace(string(nobody)) != `{"events":[],"next_before":null}` {
		t.Errorf("unknown actor: %s", nobody)
	}

	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "before=0", "before=x", "actor=-x-", "repo=noslash"} {
		b.req(t, http.MethodGet, "/v1/org/audit?"+q, b.keys["admin"], "", http.StatusBadRequest)
	}
	b.req(t, http.MethodGet, "/v1/org/audit", b.keys["member"], "", http.StatusForbidden)
}
