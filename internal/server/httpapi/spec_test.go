package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// How chi route patterns and spec paths are compared:
//
//   - chi "{name}" and "{name:regexp}" are the spec's "{name}";
//   - chi's trailing wildcard "/*" is the spec's "/{key}" (catchAllParam):
//     entry keys contain slashes, which an OpenAPI path parameter cannot, so
//     the spec's parameter description has to say so;
//   - a spec path that goes on after "/{key}" (".../entries/{key}/history")
//     is a route of its own, spelled so by keyRoutes, and compared as it is;
//   - chi reports the "/" route of a r.Route("/x", ...) subrouter as "/x/"
//     although it serves "/x" too; the spec writes "/x".

// catchAllParam names the spec path parameter that stands for chi's "*".
const catchAllParam = "key"

// chiRegexParam matches a chi parameter with a regexp, "{id:[0-9]+}".
var chiRegexParam = regexp.MustCompile(`\{([^{}:]+):[^{}]*\}`)

// servedPath turns a chi route pattern into the spec path that documents it.
func servedPath(chiPattern string) string {
	p := chiRegexParam.ReplaceAllString(chiPattern, "{$1}")
	if strings.HasSuffix(p, "/*") {
		p = strings.TrimSuffix(p, "*") + "{" + catchAllParam + "}"
	}
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

func TestPathMapping(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/":                                   "/",
		"/healthz":                            "/healthz",
		"/api/claude_code/team_memory":        "/api/claude_code/team_memory",
		"/v1/repos/{owner}/{name}":            "/v1/repos/{owner}/{name}",
		"/v1/repos/{owner}/{name}/{scope}/":   "/v1/repos/{owner}/{name}/{scope}",
		"/v1/changes/{since:[0-9]+}":          "/v1/changes/{since}",
		"/v1/repos/{owner:[a-z]+}/{name:.+}":  "/v1/repos/{owner}/{name}",
		"/v1/r/{scope}/entries/*":             "/v1/r/{scope}/entries/{key}",
		"/v1/r/{scope}/entries/{key}/history": "/v1/r/{scope}/entries/{key}/history",
	} {
		if got := servedPath(in); got != want {
			t.Errorf("servedPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRoutesMatchSpec checks that the router serves exactly the operations
// api/openapi.yaml documents, by method and path template.
func TestRoutesMatchSpec(t *testing.T) {
	t.Parallel()
	doc := MustLoadSpec(t)
	srv := httpapi.New(MustOpenStore(t), nil, testConfig(), nil, nil)
	routes, err := srv.Routes()
	if err != nil {
		t.Fatalf("Routes: %v", err)
	}
	served := map[string]bool{}
	for _, r := range routes {
		served[r.Method+" "+servedPath(r.Path)] = true
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	if len(served) == 0 {
		t.Fatal("Routes returned no routes")
	}
	if missing := absent(served, documented); len(missing) > 0 {
		t.Errorf("served but not documented in api/openapi.yaml:\n\t%s", strings.Join(missing, "\n\t"))
	}
	if missing := absent(documented, served); len(missing) > 0 {
		t.Errorf("documented in api/openapi.yaml but not served:\n\t%s", strings.Join(missing, "\n\t"))
	}
}

// absent returns the keys of a missing from b, sorted.
func absent(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestSpecValidationIsStrict makes sure the validation the other tests rely
// on rejects what it should: undocumented fields and statuses, wrong values,
// also in schemas reached through a $ref with a description beside it and
// on entry paths, which route only through findRoute's rewrite.
func TestSpecValidationIsStrict(t *testing.T) {
	t.Parallel()
	b := setupSpec(t, testConfig(), nil)
	const head = `"scope":"personal","version":0,"entry_count":0,"total_bytes":0,"updated_at":"2025-01-31T09:12:45Z"`
	sum := `"` + teammem.EmptySpaceChecksum + `"`
	for name, tc := range map[string]struct {
		path   string
		status int
		body   string
	}{
		"extra field":             {"/healthz", 200, `{"status":"ok","extra":1}`},
		"wrong value":             {"/healthz", 200, `{"status":"fine"}`},
		"undocumented":            {"/healthz", 418, `{"status":"ok"}`},
		"nested extra field":      {"/v1/org/users", 200, `{"users":[{"handle":"a","role":"member","disabled":false,"created_at":"2025-01-31T09:12:45Z","id":7}]}`},
		"described ref":           {v1Repo, 200, `{"repo":"acme/widgets","created_at":"2025-01-31T09:12:45Z","team":{"checksum":` + sum + `,` + head + `},"personal":{` + head + `}}`},
		"entry path undocumented": {v1Team + "/entries/notes/a.md", 418, `{}`},
	} {
		req, _ := http.NewRequest(http.MethodGet, "http://localhost"+tc.path, nil)
		route, params, err := b.findRoute(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
			Status:                 tc.status,
			Header:                 http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"abc"}},
			Options:                &openapi3filter.Options{IncludeResponseStatus: true},
		}
		in.SetBodyBytes([]byte(tc.body))
		if err := openapi3filter.ValidateResponse(context.Background(), in); err == nil {
			t.Errorf("%s: validation passed, want an error", name)
		}
	}
}

// TestRoutingPath checks the rewrite findRoute routes entry paths with.
func TestRoutingPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ method, in, want string }{
		{"GET", "/healthz", "/healthz"},
		{"GET", "/v1/repos/a/b/team/entries/x.md", "/v1/repos/a/b/team/entries/x.md"},
		{"PUT", "/v1/repos/a/b/team/entries/notes/x.md", "/v1/repos/a/b/team/entries/notes%2Fx.md"},
		{"GET", "/v1/repos/h%2Fa/b/team/entries/n/x.md/history", "/v1/repos/h%2Fa/b/team/entries/n%2Fx.md/history"},
		{"PUT", "/v1/repos/a/b/team/entries/n/history", "/v1/repos/a/b/team/entries/n%2Fhistory"},
		{"POST", "/v1/repos/a/b/team/entries/n/x.md/restore", "/v1/repos/a/b/team/entries/n%2Fx.md/restore"},
		{"POST", "/v1/repos/a/b/team/entries/n/x.md/history/3/redact", "/v1/repos/a/b/team/entries/n%2Fx.md/history/3/redact"},
	} {
		if got := routingPath(tc.method, tc.in); got != tc.want {
			t.Errorf("routingPath(%s, %s) = %s, want %s", tc.method, tc.in, got, tc.want)
		}
	}
}

const teamMemory = "/api/claude_code/team_memory"

// repoPath is the team memory URL of repo, encoded as Claude Code does.
func repoPath(repo string) string { return teamMemory + "?repo=" + url.QueryEscape(repo) }

// putBody is a PUT body with the given entries.
func putBody(t *testing.T, entries map[string]string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"entries": entries})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fakeGitHubPAT returns a string the scanner's github-pat rule matches,
// assembled so that this file holds no token-shaped literal.
func fakeGitHubPAT() string {
	return "ghp" + "_" + strings.Repeat("x7Qm2Lk9", 4) + "Zp4R"
}

// errorDetails decodes an error body's details.
func errorDetails(t *testing.T, r reply) map[string]any {
	t.Helper()
	var body struct {
		Error struct {
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("decode error body %s: %v", r.Body, err)
	}
	return body.Error.Details
}

// putResult decodes a PUT's 200 body.
type putResult struct {
	Version        int64                   `json:"version"`
	Checksum       string                  `json:"checksum"`
	FilesUploaded  int                     `json:"filesUploaded"`
	SkippedSecrets []teammem.SkippedSecret `json:"skippedSecrets"`
}

func decode[T any](t *testing.T, r reply) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return v
}

// TestResponsesMatchSpec drives real requests through a real listener to
// every documented status that can be produced and validates each response
// (status, headers, body) against api/openapi.yaml.
func TestResponsesMatchSpec(t *testing.T) {
	t.Parallel()
	sc, err := secretscan.New()
	if err != nil {
		t.Fatalf("secret scanner: %v", err)
	}

	t.Run("operations", func(t *testing.T) {
		t.Parallel()
		b := setupSpec(t, testConfig(), nil)
		b.do(t, call{Method: http.MethodGet, Path: "/healthz", Want: 200})
		b.do(t, call{Method: http.MethodGet, Path: "/readyz", Want: 200})
		b.do(t, call{Method: http.MethodGet, Path: "/metrics", Header: map[string]string{"Authorization": "Bearer " + testMetricsToken}, Want: 200})
		b.do(t, call{Method: http.MethodGet, Path: "/metrics", Want: 401})
		r := b.do(t, call{Method: http.MethodGet, Path: "/healthz", Header: map[string]string{"X-Request-Id": "trace-1.2_3"}, Want: 200})
		if got := r.Header.Get("X-Request-Id"); got != "trace-1.2_3" {
			t.Errorf("X-Request-Id = %q, want the client's id echoed", got)
		}
	})

	t.Run("team memory", func(t *testing.T) {
		t.Parallel()
		b := setupSpec(t, testConfig(), secretscan.NewOrgScanner(sc))
		testTeamMemory(t, b)
	})

	t.Run("caps", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig()
		cfg.Defaults.MaxEntries = 2
		cfg.Defaults.MaxEntryBytes = 64
		cfg.MaxBodyBytes = 1024
		b := setupSpec(t, cfg, nil)
		repo := repoPath("acme/caps")
		cases := []struct {
			name, errorCode string
			entries         map[string]string
		}{
			{"too many entries", "team_memory_too_many_entries", map[string]string{"a.md": "a", "b.md": "b", "c.md": "c"}},
			{"entry too large", "team_memory_entry_too_large", map[string]string{"big.md": strings.Repeat("x", 100)}},
			{"body too large", "request_too_large", map[string]string{"a.md": strings.Repeat("x", 40), "pad.md": strings.Repeat("y", 2000)}},
		}
		for _, c := range cases {
			r := b.do(t, call{Method: http.MethodPut, Path: repo, Key: b.owner, Body: putBody(t, c.entries), Want: 413})
			if got := errorDetails(t, r)["error_code"]; got != c.errorCode {
				t.Errorf("%s: error_code %v, want %s", c.name, got, c.errorCode)
			}
		}
		// Nothing was written by any of them.
		b.do(t, call{Method: http.MethodGet, Path: repo, Key: b.owner, Want: 404})
	})

	t.Run("secret rejected", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig()
		cfg.Defaults.SecretPolicy = teammem.SecretPolicyReject
		b := setupSpec(t, cfg, secretscan.NewOrgScanner(sc))
		repo := repoPath("acme/secrets")
		r := b.do(t, call{Method: http.MethodPut, Path: repo, Key: b.owner, Want: 422, Body: putBody(t, map[string]string{
			"clean.md": "nothing to see\n", "notes/token.md": "deploy with\n" + fakeGitHubPAT() + "\n"})})
		found, _ := errorDetails(t, r)["skippedSecrets"].([]any)
		if len(found) != 1 || !strings.Contains(string(r.Body), `"path":"notes/token.md"`) {
			t.Errorf("skippedSecrets = %v, want one finding in notes/token.md", found)
		}
		if strings.Contains(string(r.Body), fakeGitHubPAT()) {
			t.Error("the 422 body echoes the secret")
		}
		b.do(t, call{Method: http.MethodGet, Path: repo, Key: b.owner, Want: 404})
	})

	t.Run("rate limited", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig()
		cfg.WriteRate, cfg.WriteBurst = 0.001, 1 // one write, then a long wait
		b := setupSpec(t, cfg, nil)
		repo := repoPath("acme/busy")
		b.do(t, call{Method: http.MethodPut, Path: repo, Key: b.owner, Body: putBody(t, map[string]string{"a.md": "a"}), Want: 200})
		r := b.do(t, call{Method: http.MethodPut, Path: repo, Key: b.owner, Body: putBody(t, map[string]string{"b.md": "b"}), Want: 429})
		if r.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	})

	t.Run("database down", func(t *testing.T) {
		t.Parallel()
		b := setupSpec(t, testConfig(), nil)
		b.store.Close()
		b.do(t, call{Method: http.MethodGet, Path: "/readyz", Want: 503})
		b.do(t, call{Method: http.MethodGet, Path: repoPath("acme/widgets"), Key: b.owner, Want: 500})
		b.do(t, call{Method: http.MethodPut, Path: repoPath("acme/widgets"), Key: b.owner, Want: 500,
			Body: putBody(t, map[string]string{"a.md": "a"})})
	})
}

// testTeamMemory walks the Claude Code endpoint through the statuses a stock
// client meets, in the order it would meet them.
func testTeamMemory(t *testing.T, b *specBundle) {
	ctx := context.Background()
	_, viewer := MustUserKey(t, b.store, b.org, "viewer", teammem.RoleViewer)
	gone, goneKey := MustUserKey(t, b.store, b.org, "gone", teammem.RoleMember)
	disabled := true
	if _, err := b.store.UserUpdate(ctx, b.org.ID, gone.ID, teammem.UserUpdateParams{Disabled: &disabled}); err != nil {
		t.Fatal(err)
	}
	manual := false
	closed := MustOrg(t, b.store, "closed", teammem.OrgSettings{AutoCreateRepos: &manual})
	_, closedKey := MustUserKey(t, b.store, closed, "owner", teammem.RoleOwner)

	const get, put = http.MethodGet, http.MethodPut
	repo := repoPath("acme/widgets")
	entries := map[string]string{"MEMORY.md": "- [Build](build.md): how to build\n", "build.md": "Run `make test`.\n"}
	withSecret := map[string]string{"notes/token.md": "token: " + fakeGitHubPAT() + "\n"}
	for k, v := range entries {
		withSecret[k] = v
	}

	// Errors before anything exists.
	b.do(t, call{Method: get, Path: repo, Want: 401})
	b.do(t, call{Method: put, Path: repo, Body: putBody(t, entries), Want: 401})
	b.do(t, call{Method: get, Path: repo, Key: "tmk_unknown_key_000000000000000000000000", Want: 401})
	b.do(t, call{Method: get, Path: repo, Key: goneKey, Want: 403})
	b.do(t, call{Method: get, Path: teamMemory, Key: b.owner, Want: 400})
	b.do(t, call{Method: get, Path: repoPath("not-a-slug"), Key: b.owner, Want: 400})
	b.do(t, call{Method: get, Path: repo + "&view=everything", Key: b.owner, Want: 400})
	b.do(t, call{Method: get, Path: repo, Key: b.owner, Want: 404})
	b.do(t, call{Method: get, Path: repo + "&view=hashes", Key: b.owner, Want: 404})
	b.do(t, call{Method: put, Path: repo, Key: viewer, Body: putBody(t, entries), Want: 403})
	b.do(t, call{Method: put, Path: repo, Key: b.owner, Body: `{"entries":`, Want: 400})
	r := b.do(t, call{Method: put, Path: repo, Key: b.owner, Body: putBody(t, map[string]string{"/etc/passwd": "x"}), Want: 400})
	if got := errorDetails(t, r)["reason"]; got != "absolute path" {
		t.Errorf("invalid key reason %v, want absolute path", got)
	}
	b.do(t, call{Method: put, Path: repoPath("acme/closed"), Key: closedKey, Body: putBody(t, entries), Want: 404})

	// First push, as a bearer token; the secret is skipped (policy skip).
	bearer := map[string]string{"Authorization": "Bearer " + b.owner}
	first := decode[putResult](t, b.do(t, call{Method: put, Path: repo, Header: bearer, Body: putBody(t, withSecret), Want: 200}))
	if first.FilesUploaded != 2 || len(first.SkippedSecrets) != 1 || first.SkippedSecrets[0].Path != "notes/token.md" {
		t.Errorf("first push = %+v, want 2 files uploaded and notes/token.md skipped", first)
	}
	noop := decode[putResult](t, b.do(t, call{Method: put, Path: repo, Key: b.owner, Body: putBody(t, entries), Want: 200}))
	if noop.Version != first.Version || noop.FilesUploaded != 0 {
		t.Errorf("re-push of the same entries = %+v, want a no-op at version %d", noop, first.Version)
	}

	// Pulls.
	full := b.do(t, call{Method: get, Path: repo, Key: b.owner, Want: 200})
	if got, want := full.Header.Get("ETag"), `"`+first.Checksum+`"`; got != want {
		t.Errorf("ETag = %s, want %s", got, want)
	}
	b.do(t, call{Method: get, Path: repo, Key: b.owner, Header: map[string]string{"If-None-Match": `"` + first.Checksum + `"`}, Want: 304})
	b.do(t, call{Method: get, Path: repo, Key: b.owner, Header: map[string]string{"If-None-Match": first.Checksum}, Want: 304})
	b.do(t, call{Method: get, Path: repo + "&view=hashes", Key: b.owner, Header: map[string]string{"If-None-Match": first.Checksum}, Want: 200})
	b.do(t, call{Method: get, Path: repo, Key: viewer, Want: 200})

	// Optimistic locking.
	stale := map[string]string{"If-Match": `"` + teammem.EmptySpaceChecksum + `"`}
	r = b.do(t, call{Method: put, Path: repo, Key: b.owner, Header: stale, Body: putBody(t, map[string]string{"new.md": "new\n"}), Want: 412})
	if got := errorDetails(t, r)["checksum"]; got != first.Checksum {
		t.Errorf("412 details checksum %v, want the current %s", got, first.Checksum)
	}
	current := map[string]string{"If-Match": `"` + first.Checksum + `"`}
	next := decode[putResult](t, b.do(t, call{Method: put, Path: repo, Key: b.owner, Header: current,
		Body: putBody(t, map[string]string{"new.md": "new\n"}), Want: 200}))
	if next.Version != first.Version+1 || next.FilesUploaded != 1 {
		t.Errorf("push with the current If-Match = %+v, want version %d and 1 file", next, first.Version+1)
	}
}

// TestV1ResponsesMatchSpec drives the /v1 routes through their documented
// statuses on a real listener and validates every response against
// api/openapi.yaml, as TestResponsesMatchSpec does for the others.
func TestV1ResponsesMatchSpec(t *testing.T) {
	t.Parallel()
	sc, err := secretscan.New()
	if err != nil {
		t.Fatalf("secret scanner: %v", err)
	}
	withAdmin := testConfig()
	withAdmin.AdminKey = specAdminKey
	for name, run := range map[string]func(*testing.T, *specBundle, v1Callers){
		"entries": testV1Entries, "spaces": testV1Spaces, "org": testV1Org, "telemetry and admin": testV1TelemetryAdmin,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, k := setupV1(t, withAdmin, secretscan.NewOrgScanner(sc))
			run(t, b, k)
		})
	}

	t.Run("every operation", func(t *testing.T) {
		t.Parallel()
		b, k := setupV1(t, withAdmin, nil)
		gone, goneKey := MustUserKey(t, b.store, b.org, "gone", teammem.RoleMember)
		disabled := true
		if _, err := b.store.UserUpdate(context.Background(), b.org.ID, gone.ID, teammem.UserUpdateParams{Disabled: &disabled}); err != nil {
			t.Fatal(err)
		}
		sweep(t, b, v1KeyedCalls(), "", 401)
		sweep(t, b, v1AdminCalls(), "", 401)
		sweep(t, b, v1KeyedCalls(), goneKey, 403)
		sweep(t, b, v1AdminCalls(), k.owner, 403)
		sweep(t, b, v1SpaceCalls(v1Personal), k.viewer, 403)
		sweep(t, b, append(v1SpaceCalls("/v1/repos/bad%20owner/widgets/team"),
			call{Method: http.MethodGet, Path: "/v1/repos/bad%20owner/widgets"}), k.member, 400)
		var unknown []call // reads, and writes that need an existing entry
		for _, c := range v1SpaceCalls("/v1/repos/acme/unknown/personal") {
			if c.Method == http.MethodGet || strings.Contains(c.Path, "/entries/") && c.Method != http.MethodPut {
				unknown = append(unknown, c)
			}
		}
		sweep(t, b, unknown, k.member, 404)
	})

	t.Run("limits", func(t *testing.T) {
		t.Parallel()
		cfg := withAdmin
		cfg.Defaults.MaxEntries, cfg.Defaults.MaxEntryBytes, cfg.MaxBodyBytes = 2, 64, 1024
		b, k := setupV1(t, cfg, nil)
		oversized := func(calls []call) (out []call) { // every call with a body, its body over the limit
			for _, c := range calls {
				if c.Body != "" {
					c.Body = `{"pad":"` + strings.Repeat("x", 2000) + `"}`
					out = append(out, c)
				}
			}
			return out
		}
		sweep(t, b, oversized(v1KeyedCalls()), k.member, 413)
		sweep(t, b, oversized(v1AdminCalls()), specAdminKey, 413)
		tooLarge := func(c call, errorCode string) {
			t.Helper()
			if c.Key == "" {
				c.Key = k.member
			}
			c.Want = 413
			if got := errorDetails(t, b.do(t, c))["error_code"]; got != errorCode {
				t.Errorf("%s %s: error_code %v, want %s", c.Method, c.Path, got, errorCode)
			}
		}
		tooLarge(call{Method: http.MethodPut, Path: v1Team + "/entries/big.md", Body: strings.Repeat("x", 100), Header: markdown}, "team_memory_entry_too_large")
		tooLarge(call{Method: http.MethodPut, Path: v1Team + "/entries/huge.md", Body: strings.Repeat("x", 2000), Header: markdown}, "request_too_large")
		tooLarge(call{Method: http.MethodPost, Path: v1Team + "/batch",
			Body: `{"upserts":[{"key":"a.md","content":"a"},{"key":"b.md","content":"b"},{"key":"c.md","content":"c"}]}`}, "team_memory_too_many_entries")
		// Restoring a deleted entry into a full space.
		b.do(t, call{Method: http.MethodPost, Path: v1Team + "/batch", Key: k.member, Body: `{"upserts":[{"key":"a.md","content":"a"},{"key":"b.md","content":"b"}]}`, Want: 200})
		b.do(t, call{Method: http.MethodPost, Path: v1Team + "/batch", Key: k.member, Body: `{"upserts":[{"key":"c.md","content":"c"}],"deletes":[{"key":"a.md"}]}`, Want: 200})
		tooLarge(call{Method: http.MethodPost, Path: v1Team + "/entries/a.md/restore", Key: k.admin, Body: `{"version":1}`}, "team_memory_too_many_entries")
	})

	t.Run("rate limited", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig()
		cfg.WriteRate, cfg.WriteBurst = 0.001, 1 // one write per key, then a long wait
		b, k := setupV1(t, cfg, nil)
		b.do(t, call{Method: http.MethodPut, Path: v1Team + "/entries/a.md", Key: k.member, Body: "a", Header: markdown, Want: 200})
		for _, c := range []call{
			{Method: http.MethodPut, Path: v1Team + "/entries/a.md", Body: "b", Header: markdown},
			{Method: http.MethodDelete, Path: v1Team + "/entries/a.md"},
			{Method: http.MethodPost, Path: v1Team + "/batch", Body: `{"deletes":[{"key":"a.md"}]}`},
			{Method: http.MethodDelete, Path: v1Personal},
		} {
			c.Key, c.Want = k.member, 429
			if r := b.do(t, c); r.Header.Get("Retry-After") == "" {
				t.Errorf("%s %s: 429 without Retry-After", c.Method, c.Path)
			}
		}
		restore := call{Method: http.MethodPost, Path: v1Team + "/entries/a.md/restore", Key: k.admin, Body: `{"version":1}`, Want: 200}
		b.do(t, restore)
		restore.Want = 429
		b.do(t, restore)
		sweep(t, b, v1AdminCalls(), specAdminKey, 403) // no admin key configured
	})

	t.Run("secret rejected", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig()
		cfg.Defaults.SecretPolicy = teammem.SecretPolicyReject
		b, k := setupV1(t, cfg, secretscan.NewOrgScanner(sc))
		secret := "deploy with " + fakeGitHubPAT() + "\n"
		b.do(t, call{Method: http.MethodPut, Path: v1Team + "/entries/token.md", Key: k.member, Body: secret, Header: markdown, Want: 422})
		body, _ := json.Marshal(map[string]any{"upserts": []map[string]string{{"key": "token.md", "content": secret}}})
		r := b.do(t, call{Method: http.MethodPost, Path: v1Team + "/batch", Key: k.member, Body: string(body), Want: 422})
		if strings.Contains(string(r.Body), fakeGitHubPAT()) {
			t.Error("the 422 body echoes the secret")
		}
		// A version stored while the rule was allowed is scanned again when restored.
		allow := func(rules string) {
			b.do(t, call{Method: http.MethodPatch, Path: "/v1/org", Key: k.owner, Body: `{"secret_allowlist":{"rule_ids":[` + rules + `]}}`, Want: 200})
		}
		allow(`"github-pat"`)
		b.do(t, call{Method: http.MethodPut, Path: v1Team + "/entries/token.md", Key: k.member, Body: secret, Header: markdown, Want: 200})
		b.do(t, call{Method: http.MethodPut, Path: v1Team + "/entries/token.md", Key: k.member, Body: "rotated\n", Header: markdown, Want: 200})
		allow("")
		b.do(t, call{Method: http.MethodPost, Path: v1Team + "/entries/token.md/restore", Key: k.admin, Body: `{"version":1}`, Want: 422})
	})

	t.Run("database down", func(t *testing.T) {
		t.Parallel()
		b, k := setupV1(t, withAdmin, nil)
		b.store.Close()
		sweep(t, b, v1KeyedCalls(), k.member, 500)
		sweep(t, b, v1AdminCalls(), specAdminKey, 500)
	})
}

// testV1Entries walks one entry through its life: create-only, optimistic
// writes, secrets, conditional reads, history, delete and restore.
func testV1Entries(t *testing.T, b *specBundle, k v1Callers) {
	const get, put, del, post = http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPost
	entry := v1Team + "/entries/notes/build.md"
	b.do(t, call{Method: get, Path: entry, Key: k.member, Want: 404})
	b.do(t, call{Method: put, Path: entry, Body: "x", Header: markdown, Want: 401})
	b.do(t, call{Method: put, Path: entry, Key: k.viewer, Body: "x", Header: markdown, Want: 403})
	b.do(t, call{Method: put, Path: entry, Key: k.readOnly, Body: "x", Header: markdown, Want: 403})
	r := b.do(t, call{Method: put, Path: v1Team + "/entries/..%2Fescape.md", Key: k.member, Body: "x", Header: markdown, Want: 400})
	if got := errorDetails(t, r)["reason"]; got == nil {
		t.Error("400 for an invalid key without details.reason")
	}

	// Create-only, then optimistic writes with the entry's ETag.
	create := hdr("Content-Type", "text/markdown", "If-None-Match", "*")
	first := b.do(t, call{Method: put, Path: entry, Key: k.member, Body: "Run make.\n", Header: create, Want: 200})
	if got, want := first.Header.Get("ETag"), `"`+teammem.EntryChecksum("Run make.\n")+`"`; got != want {
		t.Errorf("ETag = %s, want %s", got, want)
	}
	r = b.do(t, call{Method: put, Path: entry, Key: k.member, Body: "again\n", Header: create, Want: 412})
	if got := errorDetails(t, r)["content"]; got != "Run make.\n" {
		t.Errorf("412 details.content = %v, want the current content", got)
	}
	stale := hdr("Content-Type", "text/markdown", "If-Match", `"`+teammem.EntryChecksum("other")+`"`)
	b.do(t, call{Method: put, Path: entry, Key: k.member, Body: "lost\n", Header: stale, Want: 412})
	current := hdr("Content-Type", "text/plain; charset=utf-8", "If-Match", first.Header.Get("ETag"))
	second := b.do(t, call{Method: put, Path: entry, Key: k.member, Body: "Run `make test`.\n", Header: current, Want: 200})
	b.do(t, call{Method: put, Path: v1Team + "/entries/empty.md", Key: k.member, Want: 200})
	r = b.do(t, call{Method: put, Path: v1Team + "/entries/token.md", Key: k.member, Want: 200,
		Body: "token: " + fakeGitHubPAT() + "\n", Header: hdr("Content-Type", "application/octet-stream")})
	if res := decode[struct{ SkippedSecrets []teammem.SkippedSecret }](t, r); len(res.SkippedSecrets) != 1 || r.Header.Get("ETag") != "" {
		t.Errorf("PUT of a secret = %s (ETag %q), want it skipped without an ETag", r.Body, r.Header.Get("ETag"))
	}

	// Reads.
	got := b.do(t, call{Method: get, Path: entry, Key: k.viewer, Want: 200})
	if string(got.Body) != "Run `make test`.\n" || got.Header.Get("ETag") != second.Header.Get("ETag") {
		t.Errorf("GET = %q with ETag %s, want the second write", got.Body, got.Header.Get("ETag"))
	}
	b.do(t, call{Method: get, Path: entry, Key: k.viewer, Header: hdr("If-None-Match", got.Header.Get("ETag")), Want: 304})
	b.do(t, call{Method: get, Path: v1Personal + "/entries/notes/build.md", Key: k.viewer, Want: 403})
	b.do(t, call{Method: get, Path: v1Team + "/entries/notes/none.md/history", Key: k.member, Want: 404})

	// Delete, history and restore.
	b.do(t, call{Method: del, Path: entry, Key: k.member, Header: hdr("If-Match", first.Header.Get("ETag")), Want: 412})
	b.do(t, call{Method: del, Path: entry, Key: k.member, Want: 204})
	b.do(t, call{Method: del, Path: entry, Key: k.member, Want: 404})
	history := decode[struct {
		Versions []teammem.EntryVersion `json:"versions"`
	}](t, b.do(t, call{Method: get, Path: entry + "/history", Key: k.viewer, Want: 200}))
	if len(history.Versions) != 3 || history.Versions[0].Op != teammem.OpDelete {
		t.Fatalf("history = %+v, want write, write, delete", history.Versions)
	}
	restore := func(key string, version int64, want int) {
		t.Helper()
		b.do(t, call{Method: post, Path: entry + "/restore", Key: key, Body: fmt.Sprintf(`{"version":%d}`, version), Want: want})
	}
	restore(k.member, 1, 403)
	restore(k.admin, history.Versions[0].Version, 400)
	restore(k.admin, 999, 404)
	restore(k.admin, history.Versions[2].Version, 200)

	// Redaction: never the live content (the restore made the first write's
	// content live again), never a deletion; then no restore.
	redact := func(key string, version int64, want int) reply {
		t.Helper()
		return b.do(t, call{Method: post, Path: fmt.Sprintf("%s/history/%d/redact", entry, version), Key: key, Want: want})
	}
	redact(k.admin, history.Versions[2].Version, 409)
	redact(k.member, history.Versions[1].Version, 403)
	redact(k.admin, history.Versions[0].Version, 400)
	redact(k.admin, 999, 404)
	red := decode[struct {
		Key      string               `json:"key"`
		Redacted teammem.EntryVersion `json:"redacted"`
	}](t, redact(k.admin, history.Versions[1].Version, 200))
	if red.Key != "notes/build.md" || !red.Redacted.Redacted() || red.Redacted.RedactedBy != "admin" || red.Redacted.Checksum != "" {
		t.Errorf("redaction answered %+v", red)
	}
	redact(k.owner, history.Versions[1].Version, 200) // again: nothing changes
	restore(k.admin, history.Versions[1].Version, 410)
	b.do(t, call{Method: get, Path: entry + "/history", Key: k.viewer, Want: 200})

	// A repo on another host: its owner segment is "host%2Fowner".
	hosted := "/v1/repos/gitlab.example.com%2Facme/widgets/personal/entries/deep/dir/a.md"
	b.do(t, call{Method: put, Path: hosted, Key: k.member, Body: "a\n", Header: markdown, Want: 200})
	b.do(t, call{Method: get, Path: hosted, Key: k.member, Want: 200})
	b.do(t, call{Method: get, Path: hosted + "/history", Key: k.member, Want: 200})
	b.do(t, call{Method: put, Path: hosted, Key: k.member, Body: "b\n", Header: markdown, Want: 200})
	b.do(t, call{Method: post, Path: hosted + "/history/1/redact", Key: k.member, Want: 200})
}

// testV1Spaces covers repos and spaces: heads, snapshots, batches, changes,
// MEMORY.md, export, events and deleting a space.
func testV1Spaces(t *testing.T, b *specBundle, k v1Callers) {
	const get, post, del = http.MethodGet, http.MethodPost, http.MethodDelete
	b.do(t, call{Method: get, Path: v1Repo, Key: k.member, Want: 404})
	b.do(t, call{Method: get, Path: v1Team, Key: k.member, Want: 404})
	b.do(t, call{Method: get, Path: "/v1/repos/bad%20owner/widgets", Key: k.member, Want: 400})
	b.do(t, call{Method: get, Path: v1Team + "/changes?since=0", Key: k.member, Want: 404})
	b.do(t, call{Method: get, Path: v1Repo + "/events", Key: k.member, Stream: true, Want: 200})
	b.do(t, call{Method: get, Path: v1Repo + "/events", Stream: true, Want: 401})
	b.do(t, call{Method: get, Path: "/v1/repos/bad%20owner/widgets/events", Key: k.member, Stream: true, Want: 400})

	// Batches.
	b.do(t, call{Method: post, Path: v1Team + "/batch", Key: k.member, Want: 200, Body: `{"upserts":[
		{"key":"MEMORY.md","content":"- [Build](build.md): how to build\n"},
		{"key":"build.md","content":"---\nname: Build\ndescription: how to build\ntype: project\n---\nRun make.\n","base":""},
		{"key":"old.md","content":"old\n","base":null}]}`})
	r := b.do(t, call{Method: post, Path: v1Team + "/batch", Key: k.member, Want: 409,
		Body: `{"upserts":[{"key":"build.md","content":"mine\n","base":"` + teammem.EmptySpaceChecksum + `"}],"deletes":[{"key":"old.md","base":""}]}`})
	if c, _ := errorDetails(t, r)["conflicts"].([]any); len(c) != 2 {
		t.Errorf("409 conflicts = %v, want both keys", c)
	}
	b.do(t, call{Method: post, Path: v1Team + "/batch", Key: k.member, Want: 412,
		Body: `{"deletes":[{"key":"old.md"}],"if_match":"` + teammem.EmptySpaceChecksum + `"}`})
	b.do(t, call{Method: post, Path: v1Team + "/batch", Key: k.member, Body: `{}`, Want: 400})
	b.do(t, call{Method: post, Path: v1Team + "/batch", Key: k.viewer, Body: `{"deletes":[{"key":"old.md"}]}`, Want: 403})
	b.do(t, call{Method: post, Path: v1Team + "/batch", Key: k.member, Body: `{"deletes":[{"key":"old.md"}]}`, Want: 200})

	// Search.
	b.do(t, call{Method: get, Path: "/v1/search?q=make&limit=1", Key: k.member, Want: 200})
	b.do(t, call{Method: get, Path: "/v1/search?q=make&scope=personal", Key: k.viewer, Want: 403})
	b.do(t, call{Method: get, Path: "/v1/search?q=", Key: k.member, Want: 400})
	b.do(t, call{Method: get, Path: "/v1/search?q=make&repo=acme/nothing", Key: k.member, Want: 404})

	// Heads and snapshots.
	b.do(t, call{Method: get, Path: "/v1/repos", Key: k.viewer, Want: 200})
	b.do(t, call{Method: get, Path: v1Repo, Key: k.member, Want: 200})
	b.do(t, call{Method: get, Path: v1Repo, Key: k.viewer, Want: 200})
	snap := b.do(t, call{Method: get, Path: v1Team, Key: k.viewer, Want: 200})
	for _, view := range []string{"?view=hashes", "?view=head"} {
		b.do(t, call{Method: get, Path: v1Team + view, Key: k.viewer, Want: 200})
	}
	b.do(t, call{Method: get, Path: v1Team + "?view=hashes", Key: k.viewer, Header: hdr("If-None-Match", snap.Header.Get("ETag")), Want: 304})
	b.do(t, call{Method: get, Path: v1Team + "?view=everything", Key: k.viewer, Want: 400})
	b.do(t, call{Method: get, Path: v1Repo + "/nope", Key: k.viewer, Want: 404})
	b.do(t, call{Method: get, Path: v1Personal, Key: k.viewer, Want: 403})
	b.do(t, call{Method: get, Path: v1Personal, Key: k.member, Want: 200})

	// Changes, MEMORY.md, export.
	b.do(t, call{Method: get, Path: v1Team + "/changes?since=0", Key: k.viewer, Want: 200})
	b.do(t, call{Method: get, Path: v1Team + "/changes?since=99", Key: k.viewer, Want: 410})
	b.do(t, call{Method: get, Path: v1Team + "/changes?since=latest", Key: k.viewer, Want: 400})
	if r := b.do(t, call{Method: get, Path: v1Team + "/MEMORY.md", Key: k.viewer, Want: 200}); r.Header.Get("X-Teammem-Index") != "stored" {
		t.Errorf("X-Teammem-Index = %q, want stored", r.Header.Get("X-Teammem-Index"))
	}
	b.do(t, call{Method: get, Path: v1Personal + "/MEMORY.md", Key: k.member, Want: 200})
	b.do(t, call{Method: get, Path: v1Team + "/export", Key: k.viewer, Want: 200})
	b.do(t, call{Method: get, Path: v1Repo + "/events", Key: k.viewer, Header: hdr("Last-Event-ID", "t0.p0"), Stream: true, Want: 200})

	// Deleting whole spaces.
	b.do(t, call{Method: del, Path: v1Team, Key: k.member, Want: 403})
	b.do(t, call{Method: del, Path: v1Team, Key: k.admin, Header: hdr("If-Match", teammem.EmptySpaceChecksum), Want: 412})
	b.do(t, call{Method: del, Path: v1Team, Key: k.admin, Header: hdr("If-Match", snap.Header.Get("ETag")), Want: 200})
	b.do(t, call{Method: del, Path: v1Personal, Key: k.member, Want: 200})
	b.do(t, call{Method: get, Path: v1Team, Key: k.member, Want: 200}) // empty now
	b.do(t, call{Method: del, Path: v1Team + "?purge=everything", Key: k.admin, Want: 400})
	b.do(t, call{Method: del, Path: v1Team + "?purge=history", Key: k.member, Want: 403})
	b.do(t, call{Method: del, Path: v1Team + "?purge=history", Key: k.admin, Want: 200})
	b.do(t, call{Method: get, Path: v1Team + "/entries/build.md/history", Key: k.member, Want: 404})
}

// testV1Org covers the org admin plane: me, settings, users, keys, audit.
func testV1Org(t *testing.T, b *specBundle, k v1Callers) {
	const get, post, patch, del = http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	ctx := context.Background()
	b.do(t, call{Method: get, Path: "/v1/me", Key: k.readOnly, Want: 200})
	if r := b.do(t, call{Method: get, Path: "/v1/me", Want: 401}); r.Header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	gone, goneKey := MustUserKey(t, b.store, b.org, "gone", teammem.RoleMember)
	disabled := true
	if _, err := b.store.UserUpdate(ctx, b.org.ID, gone.ID, teammem.UserUpdateParams{Disabled: &disabled}); err != nil {
		t.Fatal(err)
	}
	b.do(t, call{Method: get, Path: "/v1/me", Key: goneKey, Want: 403})

	// Settings.
	b.do(t, call{Method: get, Path: "/v1/org", Key: k.viewer, Want: 200})
	b.do(t, call{Method: patch, Path: "/v1/org", Key: k.member, Body: `{"max_entries":10}`, Want: 403})
	if r := b.do(t, call{Method: patch, Path: "/v1/org", Key: k.admin, Body: `{"max_entry_bytes":999999999}`, Want: 400}); errorDetails(t, r)["server_max_entry_bytes"] == nil {
		t.Errorf("400 for max_entry_bytes = %s, want the server's cap in details", r.Body)
	}
	b.do(t, call{Method: patch, Path: "/v1/org", Key: k.admin, Body: `{"colour":"red"}`, Want: 400})
	b.do(t, call{Method: patch, Path: "/v1/org", Key: k.admin, Want: 200, Body: `{"name":"Acme","max_entries":100,"max_entry_bytes":null,
		"secret_policy":"skip","secret_allowlist":{"rule_ids":["generic-api-key"],"regexes":["EXAMPLE[0-9]+"]},"auto_create_repos":false}`})
	b.do(t, call{Method: post, Path: "/v1/repos/acme/new/team/batch", Key: k.member, Body: `{"upserts":[{"key":"a.md","content":"a"}]}`, Want: 404})
	b.do(t, call{Method: http.MethodPut, Path: "/v1/repos/acme/new/team/entries/a.md", Key: k.member, Body: "a", Header: markdown, Want: 404})
	b.do(t, call{Method: del, Path: "/v1/repos/acme/new/team", Key: k.admin, Want: 404})
	b.do(t, call{Method: patch, Path: "/v1/org", Key: k.owner, Body: `{"max_entries":0,"secret_policy":"","auto_create_repos":true}`, Want: 200})

	// Users.
	b.do(t, call{Method: get, Path: "/v1/org/users", Key: k.admin, Want: 200})
	b.do(t, call{Method: get, Path: "/v1/org/users", Key: k.member, Want: 403})
	b.do(t, call{Method: post, Path: "/v1/org/users", Key: k.admin, Body: `{"handle":"alice","role":"member"}`, Want: 201})
	b.do(t, call{Method: post, Path: "/v1/org/users", Key: k.admin, Body: `{"handle":"alice","role":"viewer"}`, Want: 409})
	b.do(t, call{Method: post, Path: "/v1/org/users", Key: k.admin, Body: `{"handle":"-alice","role":"member"}`, Want: 400})
	b.do(t, call{Method: post, Path: "/v1/org/users", Key: k.admin, Body: `{"handle":"boss","role":"owner"}`, Want: 403})
	b.do(t, call{Method: patch, Path: "/v1/org/users/alice", Key: k.admin, Body: `{"role":"viewer","disabled":false}`, Want: 200})
	b.do(t, call{Method: patch, Path: "/v1/org/users/alice", Key: k.admin, Body: `{}`, Want: 200})
	b.do(t, call{Method: patch, Path: "/v1/org/users/nobody", Key: k.admin, Body: `{"disabled":true}`, Want: 404})
	b.do(t, call{Method: patch, Path: "/v1/org/users/alice", Key: k.admin, Body: `{"role":"wizard"}`, Want: 400})
	b.do(t, call{Method: patch, Path: "/v1/org/users/owner", Key: k.admin, Body: `{"disabled":true}`, Want: 403})
	b.do(t, call{Method: patch, Path: "/v1/org/users/owner", Key: k.owner, Body: `{"role":"admin"}`, Want: 409})

	// Keys.
	b.do(t, call{Method: get, Path: "/v1/org/keys", Key: k.member, Want: 200})
	b.do(t, call{Method: get, Path: "/v1/org/keys", Key: k.readOnly, Want: 200})
	own := decode[struct{ ID string }](t, b.do(t, call{Method: post, Path: "/v1/org/keys", Key: k.member, Body: `{"name":"laptop"}`, Want: 201}))
	alices := decode[struct{ ID string }](t, b.do(t, call{Method: post, Path: "/v1/org/keys", Key: k.admin, Want: 201,
		Body: `{"user":"alice","name":"ci","read_only":true,"expires_at":"2099-01-02T15:04:05Z"}`}))
	b.do(t, call{Method: get, Path: "/v1/org/keys", Key: k.owner, Want: 200})
	b.do(t, call{Method: post, Path: "/v1/org/keys", Key: k.admin, Body: `{"user":"nobody","name":"x"}`, Want: 404})
	b.do(t, call{Method: post, Path: "/v1/org/keys", Key: k.member, Body: `{"name":"x","expires_at":"yesterday"}`, Want: 400})
	b.do(t, call{Method: post, Path: "/v1/org/keys", Key: k.readOnly, Body: `{"name":"x"}`, Want: 403})
	b.do(t, call{Method: del, Path: "/v1/org/keys/" + alices.ID, Key: k.member, Want: 403})
	b.do(t, call{Method: del, Path: "/v1/org/keys/" + own.ID, Key: k.member, Want: 200})
	b.do(t, call{Method: del, Path: "/v1/org/keys/" + own.ID, Key: k.member, Want: 200})
	b.do(t, call{Method: del, Path: "/v1/org/keys/no-such-key", Key: k.member, Want: 404})

	// Audit.
	b.do(t, call{Method: get, Path: "/v1/org/audit", Key: k.owner, Want: 200})
	page := decode[struct {
		NextBefore *int64 `json:"next_before"`
	}](t, b.do(t, call{Method: get, Path: "/v1/org/audit?limit=1&action=key.create", Key: k.owner, Want: 200}))
	if page.NextBefore == nil {
		t.Fatal("a full audit page has no next_before")
	}
	b.do(t, call{Method: get, Path: fmt.Sprintf("/v1/org/audit?before=%d&actor=admin&repo=acme/widgets", *page.NextBefore), Key: k.owner, Want: 200})
	b.do(t, call{Method: get, Path: "/v1/org/audit?actor=nobody", Key: k.admin, Want: 200})
	b.do(t, call{Method: get, Path: "/v1/org/audit?limit=0", Key: k.owner, Want: 400})
	b.do(t, call{Method: get, Path: "/v1/org/audit", Key: k.member, Want: 403})
}

// testV1TelemetryAdmin covers client telemetry and the server admin routes.
func testV1TelemetryAdmin(t *testing.T, b *specBundle, k v1Callers) {
	const get, post, patch = http.MethodGet, http.MethodPost, http.MethodPatch
	events := `{"events":[
		{"name":"tengu_team_mem_sync_started","fields":{"initial_pull_success":true,"initial_files_pulled":3}},
		{"name":"tengu_team_mem_sync_push","fields":{"success":false,"status":413,"error_code":"team_memory_too_many_entries","server_max_entries":500,"errorType":null}},
		{"name":"tengu_team_mem_push_suppressed","fields":{"reason":"http_413"}},
		{"name":"teammem_dream_run","fields":{"outcome":"dry_run","files_touched":4}}]}`
	r := b.do(t, call{Method: post, Path: "/v1/telemetry/events", Key: k.readOnly, Body: events, Want: 202})
	if got := decode[struct{ Accepted, Dropped int }](t, r); got.Accepted != 4 || got.Dropped != 0 {
		t.Errorf("telemetry result = %+v, want 4 accepted", got)
	}
	r = b.do(t, call{Method: post, Path: "/v1/telemetry/events", Key: k.viewer, OffSpec: true, Want: 202,
		Body: `{"events":[{"name":"tengu_team_mem_sync_pull","fields":{"success":true,"path":"team/a.md"}}]}`})
	if got := decode[struct{ Accepted, Dropped int }](t, r); got.Dropped != 1 {
		t.Errorf("telemetry result = %+v, want the event off the allowlist dropped", got)
	}
	b.do(t, call{Method: post, Path: "/v1/telemetry/events", Key: k.viewer, Body: `{}`, Want: 400})
	many := `{"events":[` + strings.TrimSuffix(strings.Repeat(`{"name":"teammem_dream_skipped","fields":{"reason":"lock"}},`, 101), ",") + `]}`
	if r := b.do(t, call{Method: post, Path: "/v1/telemetry/events", Key: k.viewer, Body: many, Want: 400}); errorDetails(t, r)["max_events"] == nil {
		t.Errorf("400 for 101 events = %s, want details.max_events", r.Body)
	}
	b.do(t, call{Method: post, Path: "/v1/telemetry/events", Key: k.viewer, Body: `{"events":[],"pad":"` + strings.Repeat("x", 70<<10) + `"}`, Want: 413})

	// Server administration.
	b.do(t, call{Method: get, Path: "/v1/admin/orgs", Key: specAdminKey, Want: 200})
	b.do(t, call{Method: get, Path: "/v1/admin/orgs", Want: 401})
	b.do(t, call{Method: get, Path: "/v1/admin/orgs", Key: k.owner, Want: 403})
	created := decode[struct {
		OwnerKey string `json:"owner_key"`
	}](t, b.do(t, call{Method: post, Path: "/v1/admin/orgs", Key: specAdminKey, Body: `{"slug":"globex","name":"Globex"}`, Want: 201}))
	b.do(t, call{Method: post, Path: "/v1/admin/orgs", Header: hdr("Authorization", "Bearer "+specAdminKey), Body: `{"slug":"globex"}`, Want: 409})
	b.do(t, call{Method: post, Path: "/v1/admin/orgs", Key: specAdminKey, Body: `{"slug":"Not A Slug"}`, Want: 400})
	b.do(t, call{Method: patch, Path: "/v1/admin/orgs/globex", Key: specAdminKey, Body: `{"name":""}`, Want: 400})
	b.do(t, call{Method: patch, Path: "/v1/admin/orgs/nobody", Key: specAdminKey, Body: `{"disabled":true}`, Want: 404})
	b.do(t, call{Method: get, Path: "/v1/me", Key: created.OwnerKey, Want: 200})
	b.do(t, call{Method: patch, Path: "/v1/admin/orgs/globex", Key: specAdminKey, Body: `{"disabled":true}`, Want: 200})
	b.do(t, call{Method: get, Path: "/v1/me", Key: created.OwnerKey, Want: 403})
}
