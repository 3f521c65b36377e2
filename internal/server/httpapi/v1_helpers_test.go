package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/server/store/postgres"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/testpg"
)

// forDrivers runs fn once on SQLite and once on Postgres.
func forDrivers(t *testing.T, fn func(t *testing.T, st teammem.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, MustOpenStore(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		db, err := postgres.Open(t.Context(), testpg.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fn(t, db)
	})
}

// v1Env is a server on a real listener with org "acme" and one user per role.
type v1Env struct {
	t     *testing.T
	st    teammem.Store
	srv   *httpapi.Server
	url   string
	org   teammem.Org
	keys  map[teammem.Role]string
	users map[teammem.Role]teammem.User
}

func newV1Env(t *testing.T, st teammem.Store, mutate func(*httpapi.Config)) *v1Env {
	t.Helper()
	cfg := testConfig()
	cfg.Heartbeat = 200 * time.Millisecond
	if mutate != nil {
		mutate(&cfg)
	}
	e := &v1Env{t: t, st: st, org: MustOrg(t, st, "acme", teammem.OrgSettings{}),
		keys: map[teammem.Role]string{}, users: map[teammem.Role]teammem.User{}}
	for _, r := range []teammem.Role{teammem.RoleOwner, teammem.RoleAdmin, teammem.RoleMember, teammem.RoleViewer} {
		e.users[r], e.keys[r] = MustUserKey(t, st, e.org, string(r), r)
	}
	e.srv = httpapi.New(st, nil, cfg, nil, nil)
	ts := httptest.NewServer(e.srv.Handler())
	t.Cleanup(ts.Close)
	e.url = ts.URL
	return e
}

// resp is a read response.
type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r resp) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, r.Body)
	}
	return m
}

// do sends a request with key; body may be a string (sent raw) or any value
// (sent as JSON). Headers come in name, value pairs.
func (e *v1Env) do(method, path, key string, body any, headers ...string) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// want fails the test unless r has the status.
func (r resp) want(t *testing.T, status int) resp {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}
