package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

func TestMe(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	for _, handle := range []string{"owner", "viewer", "admin-ro"} {
		body := b.req(t, http.MethodGet, "/v1/me", b.keys[handle], "", http.StatusOK)
		me := adminJSON[struct {
			Org  wireOrg  `json:"org"`
			User wireUser `json:"user"`
			Key  wireKey  `json:"key"`
		}](t, body)
		wantUser := strings.TrimSuffix(handle, "-ro")
		if me.Org.Slug != "acme" || me.User.Handle != wantUser || me.User.Role != string(b.users[wantUser].Role) {
			t.Errorf("%s: /me = %s", handle, body)
		}
		if me.Key.ID == "" || me.Key.Prefix != teammem.KeyPrefix(b.keys[handle]) || me.Key.ReadOnly != (handle == "admin-ro") {
			t.Errorf("%s: key = %+v", handle, me.Key)
		}
		if strings.Contains(string(body), b.keys[handle]) || strings.Contains(string(body), `"id":1`) {
			t.Errorf("%s: /me leaks the key or an internal id: %s", handle, body)
		}
	}
	b.req(t, http.MethodGet, "/v1/me", "", "", http.StatusUnauthorized)
	b.req(t, http.MethodGet, "/v1/me", "tmk_nope_nope", "", http.StatusUnauthorized)
}

func TestOrgSettings(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	got := adminJSON[wireOrgResponse](t, b.req(t, http.MethodGet, "/v1/org", b.keys["viewer"], "", http.StatusOK))
	want := wireLimits{MaxEntries: 500, MaxEntryBytes: 250_000, SecretPolicy: "skip", AutoCreateRepos: true}
	if got.Org.Slug != "acme" || got.Limits != want {
		t.Fatalf("GET /v1/org = %+v, want defaults %+v", got, want)
	}

	patch := `{"name":"Acme Inc","max_entries":10,"max_entry_bytes":1000,"secret_policy":"reject",
		"secret_allowlist":{"rule_ids":["github-pat"],"regexes":["^EXAMPLE_"]},"auto_create_repos":false}`
	b.req(t, http.MethodPatch, "/v1/org", b.keys["member"], patch, http.StatusForbidden)
	b.req(t, http.MethodPatch, "/v1/org", b.keys["admin-ro"], patch, http.StatusForbidden)
	got = adminJSON[wireOrgResponse](t, b.req(t, http.MethodPatch, "/v1/org", b.keys["admin"], patch, http.StatusOK))
	want = wireLimits{MaxEntries: 10, MaxEntryBytes: 1000, SecretPolicy: "reject", AutoCreateRepos: false}
	if got.Org.Name != "Acme Inc" || got.Limits != want || got.Org.Settings.SecretAllowlist.Regexes[0] != "^EXAMPLE_" {
		t.Errorf("PATCH /v1/org = %+v", got)
	}
	if again := adminJSON[wireOrgResponse](t, b.req(t, http.MethodGet, "/v1/org", b.keys["member"], "", http.StatusOK)); again.Limits != want {
		t.Errorf("GET after PATCH: limits %+v, want %+v", again.Limits, want)
	}

	// Zero values return to the server defaults; other fields stay.
	got = adminJSON[wireOrgResponse](t, b.req(t, http.MethodPatch, "/v1/org", b.keys["owner"],
		`{"max_entries":0,"max_entry_bytes":0,"secret_policy":""}`, http.StatusOK))
	want = wireLimits{MaxEntries: 500, MaxEntryBytes: 250_000, SecretPolicy: "skip", AutoCreateRepos: false}
	if got.Limits != want || got.Org.Name != "Acme Inc" {
		t.Errorf("PATCH back to defaults = %+v, want limits %+v", got, want)
	}

	for _, bad := range []string{
		`{"max_entries":-1}`,
		`{"max_entry_bytes":250001}`,
		`{"max_entry_bytes":-5}`,
		`{"secret_policy":"maybe"}`,
		`{"secret_allowlist":{"regexes":["("]}}`,
		`{"secret_allowlist":{"rule_ids":[""]}}`,
		`{"name":"  "}`,
		`{"max_entires":5}`,
		`{"secret_allowlist":{"rules":[]}}`,
		`{"max_entries":"5"}`,
		`{"max_entries":5`,
		`{} {}`,
	} {
		body := b.req(t, http.MethodPatch, "/v1/org", b.keys["admin"], bad, http.StatusBadRequest)
		if errorType(t, body) != teammem.EInvalid {
			t.Errorf("PATCH %s: %s, want an invalid error", bad, body)
		}
	}
	if body := b.req(t, http.MethodPatch, "/v1/org", b.keys["admin"], `{"max_entires":5}`, http.StatusBadRequest); !strings.Contains(string(body), `unknown field \"max_entires\"`) {
		t.Errorf("a misspelt field is not named: %s", body)
	}
}

func TestRepoList(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	body := b.req(t, http.MethodGet, "/v1/repos", b.keys["viewer"], "", http.StatusOK)
	if strings.TrimSpace(string(body)) != `{"repos":[]}` {
		t.Errorf("no repos: %s", body)
	}
	b.req(t, http.MethodPut, "/api/claude_code/team_memory?repo=acme/widgets", b.keys["member"],
		`{"entries":{"MEMORY.md":"- [a](a.md)\n","a.md":"a\n"}}`, http.StatusOK)
	if _, err := b.store.RepoEnsure(context.Background(), b.org.ID, "acme/empty"); err != nil {
		t.Fatal(err)
	}
	type team struct {
		Version    int64  `json:"version"`
		Checksum   string `json:"checksum"`
		EntryCount int    `json:"entry_count"`
		TotalBytes int64  `json:"total_bytes"`
	}
	got := adminJSON[struct {
		Repos []struct {
			Repo string `json:"repo"`
			Team team   `json:"team"`
		} `json:"repos"`
	}](t, b.req(t, http.MethodGet, "/v1/repos", b.keys["viewer"], "", http.StatusOK))
	if len(got.Repos) != 2 {
		t.Fatalf("repos = %+v, want acme/empty and acme/widgets", got.Repos)
	}
	if r := got.Repos[0]; r.Repo != "acme/empty" || r.Team != (team{Checksum: teammem.EmptySpaceChecksum}) {
		t.Errorf("never written repo = %+v", r)
	}
	if r := got.Repos[1]; r.Repo != "acme/widgets" || r.Team.Version != 1 || r.Team.EntryCount != 2 || r.Team.TotalBytes != 14 {
		t.Errorf("written repo = %+v", r)
	}
}
