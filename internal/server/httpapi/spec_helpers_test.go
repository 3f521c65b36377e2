package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/teammem/teammem/api"
	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/server/store/sqlite"
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

// testMetricsToken is the metrics token of testConfig.
const testMetricsToken = "metrics-token-0123456789abcdefghijklmnop"

// testConfig is the server configuration of the spec tests: the built-in
// defaults, /metrics on the API listener for testMetricsToken.
func testConfig() httpapi.Config {
	return httpapi.Config{
		Defaults:           teammem.DefaultServerDefaults,
		MaxBodyBytes:       4 << 20,
		TombstoneRetention: 720 * time.Hour,
		MetricsToken:       testMetricsToken,
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
	Path   string            // path and query, e.g. "/readyz"
	Key    string            // sent as x-api-key unless empty
	Header map[string]string // Content-Type here overrides application/json
	Body   string
	Want   int // the expected status
	// Stream marks an endless response (server-sent events): a 200 is
	// checked by status, headers and content type, and its body not read.
	Stream bool
	// OffSpec marks a request that breaks the spec on purpose although the
	// server tolerates it (a telemetry event it drops): the request is not
	// validated, the response still is.
	OffSpec bool
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends a stream once its headers are checked
	req, err := http.NewRequestWithContext(ctx, c.Method, b.url+c.Path, bodyReader(c.Body))
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
	var body []byte
	if !c.Stream || resp.StatusCode != http.StatusOK {
		if body, err = io.ReadAll(resp.Body); err != nil {
			t.Fatalf("%s %s: read body: %v", c.Method, c.Path, err)
		}
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
	route, params, err := b.findRoute(vreq)
	if err != nil {
		t.Fatalf("%s %s: not in the spec: %v", c.Method, c.Path, err)
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: opts}
	if resp.StatusCode < 400 && !c.OffSpec {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			t.Errorf("%s %s: the server accepted a request the spec does not allow: %v", c.Method, c.Path, err)
		}
	}
	if resp.StatusCode == http.StatusNotModified {
		checkNotModified(t, c, route, resp)
		return
	}
	if c.Stream && resp.StatusCode == http.StatusOK {
		checkStreamType(t, c, route, resp)
		opts = &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: true}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
		Header: resp.Header, Options: opts}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("%s %s: %d response does not match the spec: %v\nbody: %s", c.Method, c.Path, resp.StatusCode, err, body)
	}
}

// findRoute finds the spec operation of req and its path parameters.
//
// kin-openapi's router matches a path parameter within one segment of the
// decoded path, but two parameters of the /v1 routes hold a "/": an entry
// key is sent with its slashes as they are (".../entries/notes/a.md"), and
// the owner of a repo on another host arrives escaped as "host%2Fowner"
// (which, decoded, could even match the wrong operation). So a request that
// does not route as it is, or whose path holds an escaped slash, is routed
// again on a rewritten path, for routing only: the escaped path with the
// entry key's slashes escaped as well (".../entries/notes%2Fa.md"), as the
// literal text of the path. The parameters found are then unescaped. The
// request validated is still the one that was sent.
func (b *specBundle) findRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	route, params, err := b.router.FindRoute(req)
	if err == nil && !strings.Contains(strings.ToUpper(req.URL.EscapedPath()), "%2F") {
		return route, params, nil
	}
	rreq := req.Clone(req.Context())
	rreq.URL = &url.URL{Path: routingPath(req.Method, req.URL.EscapedPath())}
	route, params, err = b.router.FindRoute(rreq)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range params {
		if params[k], err = url.PathUnescape(v); err != nil {
			return nil, nil, fmt.Errorf("path parameter %s: %w", k, err)
		}
	}
	return route, params, nil
}

// routingPath returns the escaped path p of a request with the slashes of
// an entry key escaped too. It strips the suffix the server reads as an
// operation, as the server does: "/history" of a GET, "/restore" or
// "/history/{version}/redact" of a POST.
func routingPath(method, p string) string {
	prefix, rest, ok := strings.Cut(p, "/entries/")
	if !ok || !strings.HasPrefix(prefix, "/v1/repos/") {
		return p
	}
	suffix := ""
	switch {
	case method == http.MethodGet && strings.HasSuffix(rest, "/history"):
		suffix = "/history"
	case method == http.MethodPost && strings.HasSuffix(rest, "/restore"):
		suffix = "/restore"
	case method == http.MethodPost && redactSuffix.MatchString(rest):
		suffix = redactSuffix.FindString(rest)
	}
	key := strings.TrimSuffix(rest, suffix)
	return prefix + "/entries/" + strings.ReplaceAll(key, "/", "%2F") + suffix
}

// redactSuffix is the operation suffix of a redaction.
var redactSuffix = regexp.MustCompile(`/history/[0-9]+/redact$`)

// checkStreamType does for an endless response what ValidateResponse
// cannot, its body being unread: the content type is documented.
func checkStreamType(t *testing.T, c call, route *routers.Route, resp *http.Response) {
	t.Helper()
	ref := route.Operation.Responses.Status(resp.StatusCode)
	if ref == nil || ref.Value.Content.Get(resp.Header.Get("Content-Type")) == nil {
		t.Errorf("%s %s: %d with content type %q is not documented", c.Method, c.Path, resp.StatusCode, resp.Header.Get("Content-Type"))
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

// specAdminKey is the server admin key of the spec tests that set one.
const specAdminKey = "spec-admin-key-0123456789abcdefghijklmnop"

// v1Callers are API keys of org "acme": one per role, and a read-only key
// of the member.
type v1Callers struct{ owner, admin, member, viewer, readOnly string }

// setupV1 starts a server as setupSpec does, with a user per role.
func setupV1(t *testing.T, cfg httpapi.Config, scanner teammem.SecretScanner) (*specBundle, v1Callers) {
	t.Helper()
	b := setupSpec(t, cfg, scanner)
	k := v1Callers{owner: b.owner}
	_, k.admin = MustUserKey(t, b.store, b.org, "admin", teammem.RoleAdmin)
	member, memberKey := MustUserKey(t, b.store, b.org, "member", teammem.RoleMember)
	k.member = memberKey
	_, k.viewer = MustUserKey(t, b.store, b.org, "viewer", teammem.RoleViewer)
	k.readOnly = MustExtraKey(t, b.store, b.org, member, true)
	return b, k
}

// hdr builds a header map from name, value pairs.
func hdr(kv ...string) map[string]string {
	h := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	return h
}

// The /v1 paths of the spec tests.
const (
	v1Repo     = "/v1/repos/acme/widgets"
	v1Team     = v1Repo + "/team"
	v1Personal = v1Repo + "/personal"
)

// markdown is the header of an entry PUT's raw body.
var markdown = hdr("Content-Type", "text/markdown")

// sweep sends each call with key and expects want.
func sweep(t *testing.T, b *specBundle, calls []call, key string, want int) {
	t.Helper()
	for _, c := range calls {
		c.Key, c.Want = key, want
		b.do(t, c)
	}
}

// v1SpaceCalls is one request per operation on the space at path, each
// one the server accepts from a member when the space holds notes/a.md.
func v1SpaceCalls(space string) []call {
	entry := space + "/entries/notes/a.md"
	return []call{
		{Method: http.MethodGet, Path: space},
		{Method: http.MethodDelete, Path: space},
		{Method: http.MethodPost, Path: space + "/batch", Body: `{"deletes":[{"key":"notes/a.md"}]}`},
		{Method: http.MethodGet, Path: space + "/changes?since=0"},
		{Method: http.MethodGet, Path: space + "/MEMORY.md"},
		{Method: http.MethodGet, Path: space + "/export"},
		{Method: http.MethodGet, Path: entry},
		{Method: http.MethodPut, Path: entry, Body: "a\n", Header: markdown},
		{Method: http.MethodDelete, Path: entry},
		{Method: http.MethodGet, Path: entry + "/history"},
		{Method: http.MethodPost, Path: entry + "/restore", Body: `{"version":1}`},
		{Method: http.MethodPost, Path: entry + "/history/1/redact"},
		{Method: http.MethodDelete, Path: space + "?purge=history"},
	}
}

// v1KeyedCalls is one request per operation that takes an API key.
func v1KeyedCalls() []call {
	const get, post, patch = http.MethodGet, http.MethodPost, http.MethodPatch
	return append(v1SpaceCalls(v1Personal),
		call{Method: get, Path: "/v1/me"},
		call{Method: get, Path: "/v1/repos"},
		call{Method: get, Path: "/v1/search?q=build"},
		call{Method: get, Path: v1Repo},
		call{Method: get, Path: v1Repo + "/events", Stream: true},
		call{Method: get, Path: "/v1/org"},
		call{Method: patch, Path: "/v1/org", Body: `{}`},
		call{Method: get, Path: "/v1/org/users"},
		call{Method: post, Path: "/v1/org/users", Body: `{"handle":"sweep","role":"viewer"}`},
		call{Method: patch, Path: "/v1/org/users/sweep", Body: `{}`},
		call{Method: get, Path: "/v1/org/keys"},
		call{Method: post, Path: "/v1/org/keys", Body: `{"name":"sweep"}`},
		call{Method: http.MethodDelete, Path: "/v1/org/keys/sweep"},
		call{Method: get, Path: "/v1/org/audit"},
		call{Method: post, Path: "/v1/telemetry/events", Body: `{"events":[]}`},
	)
}

// v1AdminCalls is one request per server admin operation.
func v1AdminCalls() []call {
	return []call{
		{Method: http.MethodGet, Path: "/v1/admin/orgs"},
		{Method: http.MethodPost, Path: "/v1/admin/orgs", Body: `{"slug":"sweep"}`},
		{Method: http.MethodPatch, Path: "/v1/admin/orgs/sweep", Body: `{}`},
	}
}
