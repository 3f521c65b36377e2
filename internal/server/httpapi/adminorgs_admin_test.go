package httpapi_test

import (
	"net/http"
	"testing"
)

func TestServerAdminOrgs(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	create := `{"slug":"beta","name":"Beta Team"}`
	b.req(t, http.MethodPost, "/v1/admin/orgs", "", create, http.StatusUnauthorized)
	b.req(t, http.MethodPost, "/v1/admin/orgs", b.keys["owner"], create, http.StatusForbidden)
	b.req(t, http.MethodGet, "/v1/admin/orgs", b.keys["owner"], "", http.StatusForbidden)

	got := adminJSON[struct {
		Org      wireOrg `json:"org"`
		OwnerKey string  `json:"owner_key"`
	}](t, b.req(t, http.MethodPost, "/v1/admin/orgs", testAdminKey, create, http.StatusCreated))
	if got.Org.Slug != "beta" || got.Org.Name != "Beta Team" || got.Org.Disabled {
		t.Errorf("created org = %+v", got.Org)
	}
	me := adminJSON[struct {
		Org  wireOrg  `json:"org"`
		User wireUser `json:"user"`
	}](t, b.req(t, http.MethodGet, "/v1/me", got.OwnerKey, "", http.StatusOK))
	if me.Org.Slug != "beta" || me.User != (wireUser{Handle: "admin", Role: "owner"}) {
		t.Errorf("owner key belongs to %+v", me)
	}
	// The owner key runs the new org, and only it.
	b.req(t, http.MethodGet, "/v1/org/users", got.OwnerKey, "", http.StatusOK)
	b.req(t, http.MethodPost, "/v1/admin/orgs", testAdminKey, `{"slug":"gamma"}`, http.StatusCreated)

	for _, c := range []struct {
		body string
		want int
	}{
		{`{"slug":"beta"}`, http.StatusConflict},
		{`{"slug":"Bad Slug"}`, http.StatusBadRequest},
		{`{"slug":""}`, http.StatusBadRequest},
		{`{"slug":"ok","owner":"me"}`, http.StatusBadRequest},
		{`not json`, http.StatusBadRequest},
	} {
		b.req(t, http.MethodPost, "/v1/admin/orgs", testAdminKey, c.body, c.want)
	}

	list := adminJSON[struct {
		Orgs []wireOrg `json:"orgs"`
	}](t, b.req(t, http.MethodGet, "/v1/admin/orgs", testAdminKey, "", http.StatusOK))
	if len(list.Orgs) != 3 || list.Orgs[0].Slug != "acme" || list.Orgs[1].Slug != "beta" || list.Orgs[2].Name != "gamma" {
		t.Errorf("orgs = %+v", list.Orgs)
	}

	// Disabling shuts the org's keys out until it is enabled again.
	patched := adminJSON[struct {
		Org wireOrg `json:"org"`
	}](t, b.req(t, http.MethodPatch, "/v1/admin/orgs/beta", testAdminKey, `{"disabled":true,"name":"Beta"}`, http.StatusOK))
	if !patched.Org.Disabled || patched.Org.Name != "Beta" {
		t.Errorf("patched org = %+v", patched.Org)
	}
	b.req(t, http.MethodGet, "/v1/me", got.OwnerKey, "", http.StatusForbidden)
	b.req(t, http.MethodPatch, "/v1/admin/orgs/beta", testAdminKey, `{"disabled":false}`, http.StatusOK)
	b.req(t, http.MethodGet, "/v1/me", got.OwnerKey, "", http.StatusOK)

	b.req(t, http.MethodPatch, "/v1/admin/orgs/nope", testAdminKey, `{"disabled":true}`, http.StatusNotFound)
	b.req(t, http.MethodPatch, "/v1/admin/orgs/beta", testAdminKey, `{"slug":"b"}`, http.StatusBadRequest)
	b.req(t, http.MethodPatch, "/v1/admin/orgs/beta", b.keys["owner"], `{"disabled":true}`, http.StatusForbidden)
}
