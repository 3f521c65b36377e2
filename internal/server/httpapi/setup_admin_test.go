package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// testAdminKey is the server admin key of the admin plane tests.
const testAdminKey = "adminkey-0123456789abcdefghijklmnopqrstu"

// adminBundle is a real server on a real listener with org "acme" holding
// one user per role (handle = role name), each with a key, and a read-only
// key of the admin.
type adminBundle struct {
	store *sqlite.DB
	srv   *httpapi.Server
	url   string
	org   teammem.Org
	users map[string]teammem.User // by handle
	keys  map[string]string       // API key by handle, plus "admin-ro"
}

// setupAdmin starts a server for one test.
func setupAdmin(t *testing.T) *adminBundle {
	t.Helper()
	st := MustOpenStore(t)
	b := &adminBundle{store: st, org: MustOrg(t, st, "acme", teammem.OrgSettings{}),
		users: map[string]teammem.User{}, keys: map[string]string{}}
	for _, role := range []teammem.Role{teammem.RoleOwner, teammem.RoleAdmin, teammem.RoleMember, teammem.RoleViewer} {
		u, key := MustUserKey(t, st, b.org, string(role), role)
		b.users[u.Handle], b.keys[u.Handle] = u, key
	}
	b.keys["admin-ro"] = MustExtraKey(t, st, b.org, b.users["admin"], true)
	b.srv = httpapi.New(st, nil, httpapi.Config{Defaults: teammem.DefaultServerDefaults, MaxBodyBytes: 4 << 20,
		TombstoneRetention: 720 * time.Hour, AdminKey: testAdminKey}, nil, nil)
	ts := httptest.NewServer(b.srv.Handler())
	t.Cleanup(ts.Close)
	b.url = ts.URL
	return b
}

// MustExtraKey creates another key of user, read-only when readOnly is set.
func MustExtraKey(tb testing.TB, st teammem.Store, org teammem.Org, user teammem.User, readOnly bool) string {
	tb.Helper()
	key, prefix := teammem.NewKeyString()
	if _, err := st.KeyCreate(context.Background(), org.ID, teammem.KeyCreateParams{UserID: user.ID, Name: "extra",
		Prefix: prefix, Hash: teammem.HashKey(key), ReadOnly: readOnly}); err != nil {
		tb.Fatalf("create key of %s: %v", user.Handle, err)
	}
	return key
}

// req sends a request with key (none when empty) and body (none when
// empty), checks the status and returns the body.
func (b *adminBundle) req(t *testing.T, method, path, key, body string, want int) []byte {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	r, err := http.NewRequest(method, b.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, resp.StatusCode, want, out)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusNoContent && ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	return out
}

// errorType returns the error type of an error body.
func errorType(t *testing.T, body []byte) string {
	t.Helper()
	return adminJSON[wire.ErrorBody](t, body).Error.Type
}

// adminJSON decodes a response body.
func adminJSON[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

// metricsText returns the server's metrics in the Prometheus text format.
func (b *adminBundle) metricsText(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	b.srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("metrics: status %d", rec.Code)
	}
	return rec.Body.String()
}

// Wire shapes the tests read.
type (
	wireOrg struct {
		Slug     string              `json:"slug"`
		Name     string              `json:"name"`
		Settings teammem.OrgSettings `json:"settings"`
		Disabled bool                `json:"disabled"`
	}
	wireLimits struct {
		MaxEntries      int    `json:"max_entries"`
		MaxEntryBytes   int    `json:"max_entry_bytes"`
		SecretPolicy    string `json:"secret_policy"`
		AutoCreateRepos bool   `json:"auto_create_repos"`
	}
	wireOrgResponse struct {
		Org    wireOrg    `json:"org"`
		Limits wireLimits `json:"limits"`
	}
	wireKey struct {
		ID        string     `json:"id"`
		User      string     `json:"user"`
		Name      string     `json:"name"`
		Prefix    string     `json:"prefix"`
		ReadOnly  bool       `json:"read_only"`
		ExpiresAt *time.Time `json:"expires_at"`
		RevokedAt *time.Time `json:"revoked_at"`
	}
	wireUser struct {
		Handle   string `json:"handle"`
		Role     string `json:"role"`
		Disabled bool   `json:"disabled"`
	}
)
