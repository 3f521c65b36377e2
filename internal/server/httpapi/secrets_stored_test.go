package httpapi_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/secrettest"
)

// newScanningEnv is newV1Env with the real secret scanner.
func newScanningEnv(t *testing.T, st teammem.Store) *v1Env {
	t.Helper()
	e := newV1Env(t, st, nil)
	sc, err := secretscan.New()
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httpapi.New(st, secretscan.NewOrgScanner(sc), testConfig(), nil, nil)
	ts := httptest.NewServer(e.srv.Handler())
	t.Cleanup(ts.Close)
	e.url = ts.URL
	return e
}

// wantSecretRefused checks r is a 400 invalid naming field and the label,
// and that the body does not hold the secret.
func wantSecretRefused(t *testing.T, r resp, field, label, secret string) {
	t.Helper()
	r.want(t, http.StatusBadRequest)
	body := string(r.Body)
	obj, _ := r.JSON(t)["error"].(map[string]any)
	d, _ := obj["details"].(map[string]any)
	if obj["type"] != teammem.EInvalid || d["field"] != field || d["label"] != label || !strings.Contains(body, label) {
		t.Errorf("refusal = %s, want invalid naming %s and %s", body, field, label)
	}
	if strings.Contains(body, secret) {
		t.Errorf("the refusal holds the secret: %s", body)
	}
}

// TestStoredIdentifiersRefuseSecrets: key names, the slug of a repo a write
// would create and the client name stored with entry versions are scanned
// like entry content, and one holding a secret is refused with invalid
// before anything is stored.
func TestStoredIdentifiersRefuseSecrets(t *testing.T) {
	ghp := secrettest.Token("github-pat")
	npm := secrettest.Token("npm-access-token")
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newScanningEnv(t, st)
		owner, member := e.keys[teammem.RoleOwner], e.keys[teammem.RoleMember]

		t.Run("key name", func(t *testing.T) {
			before := len(e.do("GET", "/v1/org/keys", owner, nil).want(t, 200).JSON(t)["keys"].([]any))
			wantSecretRefused(t, e.do("POST", "/v1/org/keys", owner, map[string]any{"name": "ci " + ghp}), "name", "GitHub PAT", ghp)
			if after := len(e.do("GET", "/v1/org/keys", owner, nil).want(t, 200).JSON(t)["keys"].([]any)); after != before {
				t.Errorf("%d keys after the refusal, %d before", after, before)
			}
			e.do("POST", "/v1/org/keys", owner, map[string]any{"name": "laptop"}).want(t, 201)
		})

		t.Run("repo slug", func(t *testing.T) {
			repo := "/v1/repos/acme/" + ghp
			wantSecretRefused(t, e.do("PUT", repo+"/team/entries/a.md", member, "hello\n"), "repo", "GitHub PAT", ghp)
			e.do("GET", repo, member, nil).want(t, 404)
			q := "/api/claude_code/team_memory?repo=" + url.QueryEscape("acme/"+ghp)
			wantSecretRefused(t, e.do("PUT", q, member, map[string]any{"entries": map[string]string{"a.md": "hello\n"}}),
				"repo", "GitHub PAT", ghp)
			e.do("GET", q, member, nil).want(t, 404)
			e.do("PUT", "/v1/repos/acme/widgets/team/entries/a.md", member, "hello\n").want(t, 200)
		})

		t.Run("client name", func(t *testing.T) {
			entry := "/v1/repos/acme/widgets/team/entries/b.md"
			wantSecretRefused(t, e.do("PUT", entry, member, "b\n", "X-Teammem-Client", "bot "+ghp), "client", "GitHub PAT", ghp)
			wantSecretRefused(t, e.do("PUT", entry, member, "b\n", "User-Agent", "bot/"+ghp), "client", "GitHub PAT", ghp)
			// What Claude Code's scanner sees as the token's end, a no-break
			// space, ends it here too.
			wantSecretRefused(t, e.do("PUT", entry, member, "b\n", "X-Teammem-Client", npm+"\u00a0bot"),
				"client", "NPM Access Token", npm)
			wantSecretRefused(t, e.do("PUT", "/api/claude_code/team_memory?repo=acme/widgets", member,
				map[string]any{"entries": map[string]string{"b.md": "b\n"}}, "X-Teammem-Client", ghp), "client", "GitHub PAT", ghp)
			e.do("GET", entry, member, nil).want(t, 404)
			e.do("PUT", entry, member, "b\n", "X-Teammem-Client", "teammem/1.0").want(t, 200)
		})

		t.Run("scanner unavailable", func(t *testing.T) {
			broken := secretscan.NewOrgScannerAsync(func() (*secretscan.Scanner, error) { return nil, errors.New("no rules") })
			ts := httptest.NewServer(httpapi.New(st, broken, testConfig(), nil, nil).Handler())
			t.Cleanup(ts.Close)
			e2 := *e
			e2.url = ts.URL
			e2.do("POST", "/v1/org/keys", owner, map[string]any{"name": "laptop"}).want(t, 503)
		})
	})
}

// TestSecretRefusalsMatchSpec checks the refusals against api/openapi.yaml.
func TestSecretRefusalsMatchSpec(t *testing.T) {
	t.Parallel()
	sc, err := secretscan.New()
	if err != nil {
		t.Fatal(err)
	}
	b, k := setupV1(t, testConfig(), secretscan.NewOrgScanner(sc))
	ghp := secrettest.Token("github-pat")
	b.do(t, call{Method: http.MethodPost, Path: "/v1/org/keys", Key: k.owner, Body: `{"name":"ci ` + ghp + `"}`, Want: 400})
	b.do(t, call{Method: http.MethodPut, Path: "/v1/repos/acme/" + ghp + "/team/entries/a.md", Key: k.member,
		Header: hdr("Content-Type", "text/markdown"), Body: "hello\n", Want: 400})
	b.do(t, call{Method: http.MethodPut, Path: "/api/claude_code/team_memory?repo=acme/widgets", Key: k.member,
		Header: hdr("X-Teammem-Client", ghp), Body: `{"entries":{"a.md":"hello\n"}}`, Want: 400})
}
