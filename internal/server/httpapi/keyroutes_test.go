package httpapi

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/teammem"
)

// TestEntryRoutes checks which route of the table serves an entry path and
// which key it binds: a route's tail is matched from the end, so a key may
// hold slashes and segments named like a tail, and a key whose last segment
// is "history" reads as the history route (api/openapi.yaml).
func TestEntryRoutes(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := New(st, nil, Config{MaxBodyBytes: 1 << 20}, nil, telemetry.New())
	const space = "/v1/repos/{owner}/{name}/{scope}/entries"
	for _, tc := range []struct {
		method, path string
		pattern      string
		key, version string
	}{
		{"GET", "/v1/repos/a/b/team/entries/notes/x.md", space + "/*", "notes/x.md", ""},
		{"GET", "/v1/repos/a/b/team/entries/notes/x.md/history", space + "/{key}/history", "notes/x.md", ""},
		{"GET", "/v1/repos/a/b/team/entries/history", space + "/*", "history", ""},
		{"GET", "/v1/repos/a/b/team/entries/x/restore", space + "/*", "x/restore", ""},
		{"GET", "/v1/repos/a/b/team/entries/", space + "/*", "", ""},
		{"PUT", "/v1/repos/a/b/team/entries/notes/history", space + "/*", "notes/history", ""},
		{"DELETE", "/v1/repos/a/b/team/entries/notes/history", space + "/*", "notes/history", ""},
		{"POST", "/v1/repos/a/b/team/entries/notes/x.md/restore", space + "/{key}/restore", "notes/x.md", ""},
		{"POST", "/v1/repos/a/b/team/entries/a/history/2/redact/restore", space + "/{key}/restore", "a/history/2/redact", ""},
		{"POST", "/v1/repos/a/b/team/entries/notes/x.md/history/3/redact", space + "/{key}/history/{version}/redact", "notes/x.md", "3"},
		{"POST", "/v1/repos/a/b/team/entries/x/restore/history/3/redact", space + "/{key}/history/{version}/redact", "x/restore", "3"},
		{"POST", "/v1/repos/h%2Fa/b/team/entries/n%2Fx.md/restore", space + "/{key}/restore", "n%2Fx.md", ""},
		// A POST to any other entry path is routed, and answered 404.
		{"POST", "/v1/repos/a/b/team/entries/notes/x.md", space + "/*", "", ""},
		{"PATCH", "/v1/repos/a/b/team/entries/notes/x.md", "", "", ""},
	} {
		rctx := chi.NewRouteContext()
		got := s.router.Find(rctx, tc.method, tc.path)
		if got != tc.pattern {
			t.Errorf("%s %s: routed by %q, want %q", tc.method, tc.path, got, tc.pattern)
			continue
		}
		if got == "" {
			continue
		}
		if !s.routeLabels[got] {
			t.Errorf("%s %s: pattern %q is no metrics label", tc.method, tc.path, got)
		}
		if k := rctx.URLParam(keyParam); k != tc.key {
			t.Errorf("%s %s: key %q, want %q", tc.method, tc.path, k, tc.key)
		}
		if v := rctx.URLParam("version"); v != tc.version {
			t.Errorf("%s %s: version %q, want %q", tc.method, tc.path, v, tc.version)
		}
	}
}

// TestEntryRouteLabels checks the route label of requests to entry paths:
// each route's own, the entries' for a POST answered 404, and unmatched for
// a method no entry route serves (as chi labels any 405).
func TestEntryRouteLabels(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, err := st.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	user, err := st.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: "ada", Role: teammem.RoleOwner})
	if err != nil {
		t.Fatal(err)
	}
	key, prefix := teammem.NewKeyString()
	if _, err := st.KeyCreate(ctx, org.ID, teammem.KeyCreateParams{UserID: user.ID, Name: "k", Prefix: prefix, Hash: teammem.HashKey(key)}); err != nil {
		t.Fatal(err)
	}
	s := New(st, nil, Config{MaxBodyBytes: 1 << 20, Defaults: teammem.DefaultServerDefaults}, nil, telemetry.New())
	const space = "/v1/repos/{owner}/{name}/{scope}/entries"
	for _, tc := range []struct{ method, path, label string }{
		{"POST", "/v1/repos/a/b/team/entries/x.md", space + "/*"},
		{"PATCH", "/v1/repos/a/b/team/entries/x.md", telemetry.RouteUnmatched},
		{"OPTIONS", "/v1/repos/a/b/team/batch", telemetry.RouteUnmatched},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tc.method, tc.path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		s.Handler().ServeHTTP(rec, req)
		want := fmt.Sprintf(`teammem_http_requests_total{code="%d",method="%s",route="%s"} 1`, rec.Code, tc.method, tc.label)
		mrec := httptest.NewRecorder()
		s.MetricsHandler().ServeHTTP(mrec, httptest.NewRequest("GET", "/metrics", nil))
		if !strings.Contains(mrec.Body.String(), want) {
			t.Errorf("%s %s (%d): no %s", tc.method, tc.path, rec.Code, want)
		}
	}
}
