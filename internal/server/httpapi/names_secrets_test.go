package httpapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/secrettest"
)

// Issue 21 point 6: secrets in names are never stored.

// noSecret fails when what holds the secret.
func noSecret(t *testing.T, what string, body []byte, secret string) {
	t.Helper()
	if strings.Contains(string(body), secret) {
		t.Errorf("%s repeats the secret: %.400s", what, body)
	}
}

// wantWithheld checks a skippedSecrets list: one finding of rule, for the
// file whose key is key, named without it.
func wantWithheld(t *testing.T, what string, list any, key, rule string) {
	t.Helper()
	found, _ := list.([]any)
	if len(found) != 1 {
		t.Fatalf("%s: skippedSecrets = %v, want one", what, list)
	}
	f := found[0].(map[string]any)
	if f["path"] != teammem.WithheldKey || f["ruleId"] != rule || f["keyChecksum"] != teammem.EntryChecksum(key) {
		t.Fatalf("%s: skipped = %v, want path %q, rule %s and the key's checksum", what, f, teammem.WithheldKey, rule)
	}
}

// TestSecretInKeyName puts a secret in a file's name on every dialect, on
// both drivers. The legacy endpoint and /v1 skip the file and report it as
// they report a secret-bearing file (under secret_policy skip), or refuse
// the write (under reject), exactly as for a secret in the content; both
// memory-store dialects refuse it with the message Claude Code's client
// maps to a per-file notice (content_secret). The name is never stored,
// and no answer, audit record or metric repeats it.
func TestSecretInKeyName(t *testing.T) {
	ghp := secrettest.Token("github-pat")
	key := "notes-" + ghp + ".md"
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newStoreEnv(t, st, teammem.OrgSettings{})
		owner, member := e.keys[teammem.RoleOwner], e.keys[teammem.RoleMember]
		legacy := "/api/claude_code/team_memory?repo=acme/widgets"
		v1 := "/v1/repos/acme/widgets/team"

		// Legacy: skipped and reported like a secret-bearing file.
		r := e.do("PUT", legacy, member, map[string]any{"entries": map[string]string{key: "hello\n", "ok.md": "fine\n"}}).want(t, 200)
		noSecret(t, "the legacy PUT", r.Body, ghp)
		body := r.JSON(t)
		if body["filesUploaded"] != float64(1) {
			t.Fatalf("filesUploaded = %v, want 1 (ok.md only)", body["filesUploaded"])
		}
		wantWithheld(t, "legacy", body["skippedSecrets"], key, "github-pat")

		// /v1: the batch and the single-entry PUT skip it the same way.
		r = e.do("POST", v1+"/batch", member, map[string]any{"upserts": []map[string]any{{"key": key, "content": "hello\n"}, {"key": "ok2.md", "content": "fine\n"}}}).want(t, 200)
		noSecret(t, "the /v1 batch", r.Body, ghp)
		wantWithheld(t, "/v1 batch", r.JSON(t)["skippedSecrets"], key, "github-pat")
		r = e.do("PUT", v1+"/entries/"+url.PathEscape(key), member, "hello\n").want(t, 200)
		noSecret(t, "the /v1 entry PUT", r.Body, ghp)
		wantWithheld(t, "/v1 entry", r.JSON(t)["skippedSecrets"], key, "github-pat")
		// A refusal for another reason does not repeat the name either.
		r = e.do("PUT", v1+"/entries/"+url.PathEscape(key), member, strings.Repeat("x", teammem.DefaultServerDefaults.MaxEntryBytes+1)).want(t, 413)
		noSecret(t, "an oversized entry's refusal", r.Body, ghp)
		r = e.do("PUT", legacy, member, map[string]any{"entries": map[string]string{key: "nul\x00"}}).want(t, 400)
		noSecret(t, "a NUL entry's refusal", r.Body, ghp)
		// Nor does any other answer that would name it.
		for _, c := range []struct{ method, path string }{
			{"GET", v1 + "/entries/" + url.PathEscape(key)},
			{"GET", v1 + "/entries/" + url.PathEscape(key) + "/history"},
			{"DELETE", v1 + "/entries/" + url.PathEscape(key)},
			{"POST", v1 + "/entries/" + url.PathEscape(key) + "/restore"},
		} {
			var body any
			if c.method == "POST" {
				body = map[string]any{"version": 1}
			}
			r := e.do(c.method, c.path, owner, body)
			if r.Status < 400 {
				t.Errorf("%s %s: %d", c.method, c.path, r.Status)
			}
			noSecret(t, c.method+" of the entry", r.Body, ghp)
		}

		// Memory stores, both dialects: the per-file refusal.
		p := storePath(t, e, member)
		api, err := url.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		m := e.do("POST", p+"/memories", member, map[string]any{"path": "/plain.md", "content": "plain\n"}, cliHeaders...).want(t, 200).JSON(t)
		for _, c := range []struct {
			name, method, path string
			body               map[string]any
			headers            []string
		}{
			{"Claude Code create", "POST", p + "/memories", map[string]any{"path": "/" + key, "content": "x\n",
				"precondition": map[string]any{"type": "not_exists"}}, cliHeaders},
			{"public API create", "POST", api.Path + "/memories?beta=true", map[string]any{"path": "/" + key, "content": "x\n"}, nil},
			{"Claude Code rename", "POST", p + "/memories/" + m["id"].(string), map[string]any{"path": "/" + key}, cliHeaders},
			{"public API rename", "POST", api.Path + "/memories/" + m["id"].(string) + "?beta=true", map[string]any{"path": "/dir/" + key}, nil},
		} {
			r := e.do(c.method, c.path, member, c.body, c.headers...).want(t, 400)
			noSecret(t, c.name, r.Body, ghp)
			if typ, msg := errMessage(t, r); typ != "invalid_request_error" || msg != teammem.MsgContentSecret {
				t.Errorf("%s: %s %q, want invalid_request_error %q", c.name, typ, msg, teammem.MsgContentSecret)
			}
		}

		// Under secret_policy reject the write is refused, as for content.
		e.do("PATCH", "/v1/org", owner, map[string]any{"secret_policy": "reject"}).want(t, 200)
		r = e.do("PUT", legacy, member, map[string]any{"entries": map[string]string{key: "hello\n", "ok3.md": "fine\n"}}).want(t, 422)
		noSecret(t, "the rejected legacy PUT", r.Body, ghp)
		if d := r.JSON(t)["error"].(map[string]any)["details"].(map[string]any); d["error_code"] != "team_memory_secret_detected" {
			t.Fatalf("reject details = %v", d)
		} else {
			wantWithheld(t, "legacy reject", d["skippedSecrets"], key, "github-pat")
		}
		r = e.do("POST", v1+"/batch", member, map[string]any{"upserts": []map[string]any{{"key": key, "content": "hello\n"}}}).want(t, 422)
		noSecret(t, "the rejected batch", r.Body, ghp)

		// Nothing holds the name: the space, the store, the audit log and
		// the metrics.
		for what, path := range map[string]string{
			"the legacy pull": legacy, "the /v1 snapshot": v1, "the store's export": p + "/memories/export",
			"the audit log": "/v1/org/audit?limit=200", "the repos": "/v1/repos",
		} {
			r := e.do("GET", path, owner, nil, cliHeaders...).want(t, 200)
			noSecret(t, what, r.Body, ghp)
		}
		metrics := e.do("GET", "/metrics", testMetricsToken, nil).want(t, 200).Body
		noSecret(t, "the metrics", metrics, ghp)
		// ... yet every skip and refusal is reported, by rule.
		audit := string(e.do("GET", "/v1/org/audit?limit=200", owner, nil).want(t, 200).Body)
		for _, want := range []string{"push.secret_skipped", "push.rejected", "github-pat"} {
			if !strings.Contains(audit, want) {
				t.Errorf("the audit log has no %s: %.800s", want, audit)
			}
		}
		if !strings.Contains(string(metrics), `teammem_secrets_skipped_total{org="acme",rule="github-pat"}`) {
			t.Errorf("no skipped-secret metric for the rule")
		}
		hashes := e.do("GET", legacy+"&view=hashes", owner, nil).want(t, 200).JSON(t)["entryChecksums"].(map[string]any)
		// plain.md too: a refused rename deletes nothing.
		if len(hashes) != 3 || hashes["ok.md"] == nil || hashes["ok2.md"] == nil || hashes["plain.md"] == nil {
			t.Fatalf("the team space holds %v, want ok.md, ok2.md and plain.md", hashes)
		}
	})
}

// TestSecretInKeyNameAnywhere: a token is found wherever it stands in a
// file's name, though most rules want it followed by a space or a line's
// end (".md", "/", "-notes" follow it in a name), for each rule the
// samples have a bare token of.
func TestSecretInKeyNameAnywhere(t *testing.T) {
	t.Parallel()
	e := newStoreEnv(t, MustOpenStore(t), teammem.OrgSettings{})
	member := e.keys[teammem.RoleMember]
	for _, rule := range []string{"github-pat", "aws-access-token", "npm-access-token", "gcp-api-key", "databricks-api-token"} {
		tok := secrettest.Token(rule)
		for _, key := range []string{tok + ".md", "dir/" + tok + "/a.md", "x-" + tok + "-notes.md", tok} {
			r := e.do("PUT", "/api/claude_code/team_memory?repo=acme/widgets", member, map[string]any{"entries": map[string]string{key: "x\n"}}).want(t, 200)
			noSecret(t, rule+" in "+strings.ReplaceAll(key, tok, "<token>"), r.Body, tok)
			if got := r.JSON(t)["skippedSecrets"].([]any); len(got) != 1 {
				t.Errorf("%s in %s: skipped %v, want the file", rule, strings.ReplaceAll(key, tok, "<token>"), got)
			}
		}
	}
}

// TestSecretInStoreFields: a store's name, description and metadata are
// shown to every reader of the org: a secret in any of them is refused
// with the per-file refusal message, on create and on update, and nothing
// changes.
func TestSecretInStoreFields(t *testing.T) {
	ghp := secrettest.Token("github-pat")
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newStoreEnv(t, st, teammem.OrgSettings{})
		owner := e.keys[teammem.RoleOwner]
		s := e.do("POST", "/v1/memory_stores?beta=true", owner, map[string]any{"name": "clean"}).want(t, 200).JSON(t)
		id := s["id"].(string)
		for _, body := range []map[string]any{
			{"name": "ci " + ghp},
			{"name": "n", "description": "token " + ghp},
			{"name": "n", "metadata": map[string]any{"token": ghp}},
			{"name": "n", "metadata": map[string]any{ghp: "v"}},
		} {
			for _, path := range []string{"/v1/memory_stores?beta=true", "/v1/memory_stores/" + id + "?beta=true"} {
				r := e.do("POST", path, owner, body).want(t, 400)
				noSecret(t, path, r.Body, ghp)
				if _, msg := errMessage(t, r); msg != teammem.MsgContentSecret {
					t.Errorf("%s %v: %q", path, body, msg)
				}
			}
		}
		list := e.do("GET", "/v1/memory_stores?beta=true&limit=100", owner, nil).want(t, 200)
		noSecret(t, "the store list", list.Body, ghp)
		if got := e.do("GET", "/v1/memory_stores/"+id+"?beta=true", owner, nil).want(t, 200).JSON(t); got["name"] != "clean" {
			t.Fatalf("the store after the refusals: %v", got)
		}
	})
}
