package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/teammem/teammem/api"
	"github.com/teammem/teammem/internal/httpapi"
	"github.com/teammem/teammem/internal/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// MustLoadSpec loads and validates api/openapi.yaml. Each caller gets its
// own document, so tests may adjust it (see closeComponentSchemas).
func MustLoadSpec(tb testing.TB) *openapi3.T {
	tb.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPI)
	if err != nil {
		tb.Fatalf("load api/openapi.yaml: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		tb.Fatalf("api/openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	return doc
}

// closeComponentSchemas forbids undocumented fields in responses. The
// published spec leaves objects open so that clients tolerate fields added
// later; the test closes every component schema that lists its properties
// and says nothing about others, so the server cannot send a field the spec
// does not describe. Schemas are closed with additionalProperties, which
// looks only at the schema's own properties, so each closed component must
// list all of its fields (none is assembled from allOf parts).
func closeComponentSchemas(doc *openapi3.T) {
	closed := false
	for _, ref := range doc.Components.Schemas {
		s := ref.Value
		if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			s.AdditionalProperties.Has = &closed
		}
	}
}

// testConfig is the server configuration of the spec tests: the built-in
// defaults, /metrics on the API listener.
func testConfig() httpapi.Config {
	return httpapi.Config{
		Defaults:           teammem.DefaultServerDefaults,
		MaxBodyBytes:       4 << 20,
		TombstoneRetention: 720 * time.Hour,
		MetricsOnMain:      true,
	}
}

// MustOpenStore opens a migrated SQLite store in a temporary directory.
func MustOpenStore(tb testing.TB) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "t.db"))
	if err != nil {
		tb.Fatalf("open sqlite store: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// MustOrg creates an org with the given settings.
func MustOrg(tb testing.TB, st teammem.Store, slug string, settings teammem.OrgSettings) teammem.Org {
	tb.Helper()
	org, err := st.OrgCreate(context.Background(), teammem.OrgCreateParams{Slug: slug, Name: slug, Settings: settings})
	if err != nil {
		tb.Fatalf("create org %s: %v", slug, err)
	}
	return org
}

// MustUserKey creates a user with role in org and returns the user and a
// fresh API key of theirs, as bootstrap does.
func MustUserKey(tb testing.TB, st teammem.Store, org teammem.Org, handle string, role teammem.Role) (teammem.User, string) {
	tb.Helper()
	ctx := context.Background()
	user, err := st.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: handle, Role: role})
	if err != nil {
		tb.Fatalf("create user %s: %v", handle, err)
	}
	key, prefix := teammem.NewKeyString()
	if _, err := st.KeyCreate(ctx, org.ID, teammem.KeyCreateParams{UserID: user.ID, Name: handle, Prefix: prefix,
		Hash: teammem.HashKey(key)}); err != nil {
		tb.Fatalf("create key of %s: %v", handle, err)
	}
	return user, key
}

// specBundle is a real server on a real listener and the spec its responses
// are validated against.
type specBundle struct {
	store  *sqlite.DB
	url    string
	router routers.Router
	org    teammem.Org
	owner  string // API key of an owner of org
}

// setupSpec starts a server with cfg and scanner (nil: no secret scanning)
// on a fresh store holding org "acme" with an owner.
func setupSpec(t *testing.T, cfg httpapi.Config, scanner teammem.SecretScanner) *specBundle {
	t.Helper()
	doc := MustLoadSpec(t)
	closeComponentSchemas(doc)
	// The spec's server URL is the default listen address; the test server
	// listens elsewhere, and a document without servers matches any host.
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatalf("spec router: %v", err)
	}
	st := MustOpenStore(t)
	org := MustOrg(t, st, "acme", teammem.OrgSettings{})
	_, owner := MustUserKey(t, st, org, "owner", teammem.RoleOwner)
	ts := httptest.NewServer(httpapi.New(st, scanner, cfg, nil, nil).Handler())
	t.Cleanup(ts.Close)
	return &specBundle{store: st, url: ts.URL, router: router, org: org, owner: owner}
}

// call is one request of a spec test.
type call struct {
	Method string
	Path   string // path and query, e.g. "/readyz"
	Key    string // sent as x-api-key unless empty
	Header map[string]string
	Body   string
	Want   int // the expected status
}

// reply is a response whose body was read and validated.
type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends c, checks the status, validates the response (status, headers,
// body) against the spec and, for requests the server accepted, the request
// too, so the spec never documents a request shape the server refuses.
func (b *specBundle) do(t *testing.T, c call) reply {
	t.Helper()
	req, err := http.NewRequest(c.Method, b.url+c.Path, bodyReader(c.Body))
	if err != nil {
		t.Fatal(err)
	}
	if c.Key != "" {
		req.Header.Set("x-api-key", c.Key)
	}
	if c.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.Header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.Method, c.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", c.Method, c.Path, err)
	}
	if resp.StatusCode != c.Want {
		t.Fatalf("%s %s: status %d, want %d; body %s", c.Method, c.Path, resp.StatusCode, c.Want, body)
	}
	b.validate(t, c, req, resp, body)
	return reply{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// validate checks one exchange against the spec.
func (b *specBundle) validate(t *testing.T, c call, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	ctx := context.Background()
	// The sent request's body is consumed; validate a copy.
	vreq := req.Clone(ctx)
	vreq.Body = io.NopCloser(bodyReader(c.Body))
	route, params, err := b.router.FindRoute(vreq)
	if err != nil {
		t.Fatalf("%s %s: not in the spec: %v", c.Method, c.Path, err)
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: opts}
	if resp.StatusCode < 400 {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			t.Errorf("%s %s: the server accepted a request the spec does not allow: %v", c.Method, c.Path, err)
		}
	}
	if resp.StatusCode == http.StatusNotModified {
		checkNotModified(t, c, route, resp)
		return
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
		Header: resp.Header, Options: opts}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("%s %s: %d response does not match the spec: %v\nbody: %s", c.Method, c.Path, resp.StatusCode, err, body)
	}
}

// checkNotModified does for a 304 what ValidateResponse skips: the status is
// documented and the required headers are present.
func checkNotModified(t *testing.T, c call, route *routers.Route, resp *http.Response) {
	t.Helper()
	ref := route.Operation.Responses.Status(resp.StatusCode)
	if ref == nil {
		t.Errorf("%s %s: status 304 is not documented", c.Method, c.Path)
		return
	}
	for name, h := range ref.Value.Headers {
		if h.Value.Required && resp.Header.Get(name) == "" {
			t.Errorf("%s %s: 304 lacks the required header %s", c.Method, c.Path, name)
		}
	}
}

func bodyReader(s string) io.Reader {
	if s == "" {
		return http.NoBody
	}
	return bytes.NewReader([]byte(s))
}
