package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

func TestUserList(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	got := adminJSON[struct {
		Users []wireUser `json:"users"`
	}](t, b.req(t, http.MethodGet, "/v1/org/users", b.keys["admin-ro"], "", http.StatusOK))
	if len(got.Users) != 4 || got.Users[0] != (wireUser{Handle: "owner", Role: "owner"}) {
		t.Errorf("users = %+v, want the four role users, owner first", got.Users)
	}
	b.req(t, http.MethodGet, "/v1/org/users", b.keys["member"], "", http.StatusForbidden)
	b.req(t, http.MethodGet, "/v1/org/users", b.keys["viewer"], "", http.StatusForbidden)
}

func TestUserCreate(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	cases := []struct {
		key, body string
		want      int
	}{
		{"admin", `{"handle":"dev.one","role":"member"}`, http.StatusCreated},
		{"admin", `{"handle":"dev.one","role":"viewer"}`, http.StatusConflict},
		{"admin", `{"handle":"lead","role":"admin"}`, http.StatusForbidden},
		{"admin", `{"handle":"boss","role":"owner"}`, http.StatusForbidden},
		{"owner", `{"handle":"lead","role":"admin"}`, http.StatusCreated},
		{"owner", `{"handle":"-bad-","role":"member"}`, http.StatusBadRequest},
		{"owner", `{"handle":"good","role":"root"}`, http.StatusBadRequest},
		{"owner", `{"handle":"good"}`, http.StatusBadRequest},
		{"owner", `{"handle":"good","role":"member","admin":true}`, http.StatusBadRequest},
		{"admin-ro", `{"handle":"good","role":"member"}`, http.StatusForbidden},
		{"member", `{"handle":"good","role":"viewer"}`, http.StatusForbidden},
	}
	for _, c := range cases {
		body := b.req(t, http.MethodPost, "/v1/org/users", b.keys[c.key], c.body, c.want)
		if c.want == http.StatusCreated {
			u := adminJSON[struct {
				User wireUser `json:"user"`
			}](t, body).User
			if u.Handle == "" || u.Disabled {
				t.Errorf("%s %s: user %+v", c.key, c.body, u)
			}
		}
	}
	// A user of another org is a different user with the same handle.
	other := MustOrg(t, b.store, "other", teammem.OrgSettings{})
	MustUserKey(t, b.store, other, "twin", teammem.RoleMember)
	b.req(t, http.MethodPost, "/v1/org/users", b.keys["admin"], `{"handle":"twin","role":"member"}`, http.StatusCreated)
}

func TestUserPatch(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	other := MustOrg(t, b.store, "other", teammem.OrgSettings{})
	MustUserKey(t, b.store, other, "stranger", teammem.RoleMember)

	got := adminJSON[struct {
		User wireUser `json:"user"`
	}](t, b.req(t, http.MethodPatch, "/v1/org/users/member", b.keys["admin"], `{"role":"viewer"}`, http.StatusOK))
	if got.User != (wireUser{Handle: "member", Role: "viewer"}) {
		t.Errorf("demoted member = %+v", got.User)
	}
	for _, c := range []struct {
		key, path, body string
		want            int
	}{
		{"admin", "/v1/org/users/member", `{"role":"owner"}`, http.StatusForbidden},
		{"admin", "/v1/org/users/owner", `{"disabled":true}`, http.StatusForbidden},
		{"admin", "/v1/org/users/admin", `{"role":"member"}`, http.StatusForbidden},
		{"admin", "/v1/org/users/stranger", `{"disabled":true}`, http.StatusNotFound},
		{"admin", "/v1/org/users/nobody", `{"disabled":true}`, http.StatusNotFound},
		{"admin", "/v1/org/users/member", `{"role":"boss"}`, http.StatusBadRequest},
		{"admin", "/v1/org/users/member", `{"handle":"x"}`, http.StatusBadRequest},
		{"admin-ro", "/v1/org/users/member", `{"disabled":true}`, http.StatusForbidden},
		{"member", "/v1/org/users/viewer", `{"disabled":true}`, http.StatusForbidden},
		// The last active owner can neither leave the role nor be disabled.
		{"owner", "/v1/org/users/owner", `{"role":"admin"}`, http.StatusConflict},
		{"owner", "/v1/org/users/owner", `{"disabled":true}`, http.StatusConflict},
		{"owner", "/v1/org/users/owner", `{}`, http.StatusOK},
	} {
		b.req(t, http.MethodPatch, c.path, b.keys[c.key], c.body, c.want)
	}

	// Disabling a user shuts out their keys.
	b.req(t, http.MethodPatch, "/v1/org/users/member", b.keys["admin"], `{"disabled":true}`, http.StatusOK)
	b.req(t, http.MethodGet, "/v1/me", b.keys["member"], "", http.StatusForbidden)
	b.req(t, http.MethodPatch, "/v1/org/users/member", b.keys["admin"], `{"disabled":false}`, http.StatusOK)
	b.req(t, http.MethodGet, "/v1/me", b.keys["member"], "", http.StatusOK)

	// With a second active owner the first may step down.
	b.req(t, http.MethodPatch, "/v1/org/users/admin", b.keys["owner"], `{"role":"owner"}`, http.StatusOK)
	b.req(t, http.MethodPatch, "/v1/org/users/owner", b.keys["owner"], `{"role":"admin"}`, http.StatusOK)
	b.req(t, http.MethodPatch, "/v1/org/users/admin", b.keys["admin"], `{"disabled":true}`, http.StatusConflict)
}
