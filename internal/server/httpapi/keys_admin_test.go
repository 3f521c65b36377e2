package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

type wireKeyCreated struct {
	ID     string  `json:"id"`
	Key    string  `json:"key"`
	APIKey wireKey `json:"api_key"`
}

func keyList(t *testing.T, b *adminBundle, key string) []wireKey {
	t.Helper()
	return adminJSON[struct {
		Keys []wireKey `json:"keys"`
	}](t, b.req(t, http.MethodGet, "/v1/org/keys", key, "", http.StatusOK)).Keys
}

func TestKeyList(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	if all := keyList(t, b, b.keys["admin"]); len(all) != 5 {
		t.Errorf("admin sees %d keys, want all 5", len(all))
	}
	for _, handle := range []string{"member", "viewer"} {
		own := keyList(t, b, b.keys[handle])
		if len(own) != 1 || own[0].User != handle {
			t.Errorf("%s sees %+v, want only their own key", handle, own)
		}
	}
	body := b.req(t, http.MethodGet, "/v1/org/keys", b.keys["owner"], "", http.StatusOK)
	for handle, key := range b.keys {
		if strings.Contains(string(body), key) {
			t.Errorf("the key list shows %s's key", handle)
		}
	}
}

func TestKeyCreate(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	got := adminJSON[wireKeyCreated](t, b.req(t, http.MethodPost, "/v1/org/keys", b.keys["member"],
		`{"name":"laptop","read_only":true,"expires_at":"`+soon+`"}`, http.StatusCreated))
	k := got.APIKey
	if got.ID != k.ID || !strings.HasPrefix(got.Key, "tmk_"+k.Prefix+"_") || k.User != "member" || k.Name != "laptop" ||
		!k.ReadOnly || k.ExpiresAt == nil || k.RevokedAt != nil {
		t.Errorf("created key = %+v", got)
	}
	// The new key works, read-only.
	b.req(t, http.MethodGet, "/v1/me", got.Key, "", http.StatusOK)
	b.req(t, http.MethodPost, "/v1/org/keys", got.Key, `{"name":"again"}`, http.StatusForbidden)

	for _, c := range []struct {
		key, body string
		want      int
	}{
		{"viewer", `{"name":"ci","user":"viewer"}`, http.StatusCreated},
		{"admin", `{"name":"ci","user":"member"}`, http.StatusCreated},
		{"owner", `{"name":"ci","user":"admin"}`, http.StatusCreated},
		{"member", `{"name":"ci","user":"viewer"}`, http.StatusForbidden},
		{"admin", `{"name":"ci","user":"owner"}`, http.StatusForbidden},
		{"admin-ro", `{"name":"ci"}`, http.StatusForbidden},
		{"admin", `{"name":"ci","user":"nobody"}`, http.StatusNotFound},
		{"member", `{"name":""}`, http.StatusBadRequest},
		{"member", `{"name":"ci","expires_at":"2001-01-01T00:00:00Z"}`, http.StatusBadRequest},
		{"member", `{"name":"ci","expires_at":"tomorrow"}`, http.StatusBadRequest},
		{"member", `{"name":"ci","scopes":["all"]}`, http.StatusBadRequest},
	} {
		b.req(t, http.MethodPost, "/v1/org/keys", b.keys[c.key], c.body, c.want)
	}
	// A key for a disabled user is refused.
	b.req(t, http.MethodPatch, "/v1/org/users/viewer", b.keys["admin"], `{"disabled":true}`, http.StatusOK)
	b.req(t, http.MethodPost, "/v1/org/keys", b.keys["admin"], `{"name":"ci","user":"viewer"}`, http.StatusBadRequest)
}

func TestKeyRevoke(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	idOf := func(name string) string { // the id of b.keys[name]
		for _, k := range keyList(t, b, b.keys["owner"]) {
			if k.Prefix == teammem.KeyPrefix(b.keys[name]) {
				return k.ID
			}
		}
		t.Fatalf("no key %s", name)
		return ""
	}
	other := MustOrg(t, b.store, "other", teammem.OrgSettings{})
	_, otherKey := MustUserKey(t, b.store, other, "owner", teammem.RoleOwner)
	otherID := keyList(t, b, otherKey)[0].ID

	b.req(t, http.MethodDelete, "/v1/org/keys/"+otherID, b.keys["owner"], "", http.StatusNotFound)
	b.req(t, http.MethodDelete, "/v1/org/keys/no-such-key", b.keys["owner"], "", http.StatusNotFound)
	b.req(t, http.MethodDelete, "/v1/org/keys/"+idOf("viewer"), b.keys["member"], "", http.StatusForbidden)
	b.req(t, http.MethodDelete, "/v1/org/keys/"+idOf("owner"), b.keys["admin"], "", http.StatusForbidden)
	b.req(t, http.MethodDelete, "/v1/org/keys/"+idOf("admin-ro"), b.keys["admin-ro"], "", http.StatusForbidden)

	// Own key: revoked, and then refused.
	type revoked struct {
		APIKey wireKey `json:"api_key"`
	}
	k := adminJSON[revoked](t, b.req(t, http.MethodDelete, "/v1/org/keys/"+idOf("member"), b.keys["member"], "", http.StatusOK)).APIKey
	if k.RevokedAt == nil || k.User != "member" {
		t.Errorf("revoked key = %+v", k)
	}
	b.req(t, http.MethodGet, "/v1/me", b.keys["member"], "", http.StatusUnauthorized)
	again := adminJSON[revoked](t, b.req(t, http.MethodDelete, "/v1/org/keys/"+k.ID, b.keys["owner"], "", http.StatusOK)).APIKey
	if again.RevokedAt == nil || !again.RevokedAt.Equal(*k.RevokedAt) {
		t.Errorf("revoking twice moved revoked_at from %v to %v", k.RevokedAt, again.RevokedAt)
	}

	// Another user's key, with keys.all and the right to manage their role.
	b.req(t, http.MethodDelete, "/v1/org/keys/"+idOf("viewer"), b.keys["admin"], "", http.StatusOK)
	b.req(t, http.MethodGet, "/v1/me", b.keys["viewer"], "", http.StatusUnauthorized)
	b.req(t, http.MethodGet, "/v1/me", otherKey, "", http.StatusOK)
}
