package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/teammem/teammem/internal/httpapi"
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/teammem"
)

// How chi route patterns and spec paths are compared:
//
//   - chi "{name}" and "{name:regexp}" are the spec's "{name}";
//   - chi's trailing wildcard "/*" is the spec's "/{key}" (catchAllParam):
//     entry keys contain slashes, which an OpenAPI path parameter cannot, so
//     the spec's parameter description has to say so;
//   - a spec path that goes on after "/{key}" (".../entries/{key}/history")
//     is served by the same wildcard route, whose handler dispatches on the
//     suffix, so it is compared without the suffix;
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

// documentedPath cuts a spec path after its catch-all parameter.
func documentedPath(specPath string) string {
	seg := "/{" + catchAllParam + "}"
	if i := strings.Index(specPath+"/", seg+"/"); i >= 0 {
		return specPath[:i+len(seg)]
	}
	return specPath
}

func TestPathMapping(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/":                                  "/",
		"/healthz":                           "/healthz",
		"/api/claude_code/team_memory":       "/api/claude_code/team_memory",
		"/v1/repos/{owner}/{name}":           "/v1/repos/{owner}/{name}",
		"/v1/repos/{owner}/{name}/{scope}/":  "/v1/repos/{owner}/{name}/{scope}",
		"/v1/changes/{since:[0-9]+}":         "/v1/changes/{since}",
		"/v1/repos/{owner:[a-z]+}/{name:.+}": "/v1/repos/{owner}/{name}",
		"/v1/r/{scope}/entries/*":            "/v1/r/{scope}/entries/{key}",
	} {
		if got := servedPath(in); got != want {
			t.Errorf("servedPath(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"/healthz":                            "/healthz",
		"/v1/org/keys/{id}":                   "/v1/org/keys/{id}",
		"/v1/r/{scope}/entries/{key}":         "/v1/r/{scope}/entries/{key}",
		"/v1/r/{scope}/entries/{key}/history": "/v1/r/{scope}/entries/{key}",
		"/v1/r/{scope}/entries/{keyword}":     "/v1/r/{scope}/entries/{keyword}",
	} {
		if got := documentedPath(in); got != want {
			t.Errorf("documentedPath(%q) = %q, want %q", in, got, want)
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
			documented[method+" "+documentedPath(path)] = true
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
// on rejects what it should: undocumented fields and statuses.
func TestSpecValidationIsStrict(t *testing.T) {
	t.Parallel()
	b := setupSpec(t, testConfig(), nil)
	req, _ := http.NewRequest(http.MethodGet, "http://localhost/healthz", nil)
	route, params, err := b.router.FindRoute(req)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		status int
		body   string
	}{
		"extra field":  {200, `{"status":"ok","extra":1}`},
		"wrong value":  {200, `{"status":"fine"}`},
		"undocumented": {418, `{"status":"ok"}`},
	} {
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
		b.do(t, call{Method: http.MethodGet, Path: "/metrics", Want: 200})
		r := b.do(t, call{Method: http.MethodGet, Path: "/healthz", Header: map[string]string{"X-Request-Id": "trace-1.2_3"}, Want: 200})
		if got := r.Header.Get("X-Request-Id"); got != "trace-1.2_3" {
			t.Errorf("X-Request-Id = %q, want the client's id echoed", got)
		}
	})

	t.Run("team memory", func(t *testing.T) {
		t.Parallel()
		b := setupSpec(t, testConfig(), httpapi.NewScanner(sc))
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
		b := setupSpec(t, cfg, httpapi.NewScanner(sc))
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
