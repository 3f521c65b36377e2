package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/client/apiclient"
)

func TestClaudeEnvComposition(t *testing.T) {
	team := &apiclient.MemoryStore{ID: "memstore_t1", Path: "/v1/memory_stores/memstore_t1"}
	me := &apiclient.MemoryStore{ID: "memstore_p1", Path: "/v1/memory_stores/memstore_p1"}
	const secret = "0123456789abcdef0123456789abcdef"
	vars := claudeEnv(claudeEnvParams{ProxyAddr: "127.0.0.1:7477", Secret: secret, CACert: "/cfg/teammem/proxy/ca.pem", Team: team, Personal: me,
		NeedsPlaceholder: true, NoProxy: "corp.example, localhost"})
	got := map[string]string{}
	for _, kv := range vars {
		got[kv[0]] = kv[1]
	}
	want := map[string]string{
		"CLAUDE_MEMORY_STORES":             `[{"path":"/v1/memory_stores/memstore_t1","mount":"teammem","scope":"team"},{"path":"/v1/memory_stores/memstore_p1","mount":"teammem-personal","scope":"user"}]`,
		"HTTPS_PROXY":                      "http://teammem:" + secret + "@127.0.0.1:7477",
		"NODE_EXTRA_CA_CERTS":              "/cfg/teammem/proxy/ca.pem",
		"NO_PROXY":                         "corp.example,localhost,127.0.0.1,::1",
		"CLAUDE_CODE_SESSION_ACCESS_TOKEN": sessionPlaceholder,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["TEAM_MEMORY_SYNC_URL"]; ok {
		t.Error("TEAM_MEMORY_SYNC_URL set without --legacy")
	}
	// With a login: no placeholder; --legacy adds the old endpoint; no personal store: one entry.
	vars = claudeEnv(claudeEnvParams{ProxyAddr: "127.0.0.1:1", Secret: secret, Team: team, Legacy: true})
	got = map[string]string{}
	for _, kv := range vars {
		got[kv[0]] = kv[1]
	}
	if _, ok := got["CLAUDE_CODE_SESSION_ACCESS_TOKEN"]; ok || got["TEAM_MEMORY_SYNC_URL"] != "http://127.0.0.1:1/"+secret ||
		got["NO_PROXY"] != "127.0.0.1,localhost,::1" || strings.Count(got["CLAUDE_MEMORY_STORES"], "path") != 1 {
		t.Errorf("login + legacy: %v", got)
	}
	// The caller's environment passes through; ours replaces theirs.
	env := mergeEnv([]string{"PATH=/bin", "HTTPS_PROXY=http://corp:3128", "ANTHROPIC_API_KEY=x"}, vars)
	if strings.Join(env, "\n") != "PATH=/bin\nANTHROPIC_API_KEY=x\n"+joinVars(vars) {
		t.Errorf("merged env: %q", env)
	}
	// --print-env prints sh export lines that keep the JSON intact.
	var out bytes.Buffer
	a := newApp(os.Getenv, nil, &out, &out)
	if err := a.printEnv([][2]string{{"CLAUDE_MEMORY_STORES", `[{"path":"/x"}]`}, {"HTTPS_PROXY", "http://127.0.0.1:1"}}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "export CLAUDE_MEMORY_STORES='[{\"path\":\"/x\"}]'\nexport HTTPS_PROXY=http://127.0.0.1:1\n" {
		t.Errorf("print-env: %q", out.String())
	}
}

func joinVars(vars [][2]string) string {
	var lines []string
	for _, kv := range vars {
		lines = append(lines, kv[0]+"="+kv[1])
	}
	return strings.Join(lines, "\n")
}

func TestClaudeLoginDetection(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if claudeLogin(getenv, home) {
		t.Fatal("no credentials file counted as a login")
	}
	write := func(s string) {
		if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-x","scopes":["user:inference"]}}`)
	if claudeLogin(getenv, home) {
		t.Fatal("a login without user:profile opens no sync gate")
	}
	write(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-x","refreshToken":"r","scopes":["user:inference","user:profile","user:sessions:claude_code"]}}`)
	if !claudeLogin(getenv, home) {
		t.Fatal("a Claude.ai login was not seen")
	}
	env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9999"
	if claudeLogin(getenv, home) {
		t.Fatal("a login with a third-party base URL opens no sync gate")
	}
	env["ANTHROPIC_BASE_URL"] = "https://api.anthropic.com"
	env["CLAUDE_CONFIG_DIR"] = t.TempDir()
	if claudeLogin(getenv, home) {
		t.Fatal("CLAUDE_CONFIG_DIR not honoured")
	}
	env["CLAUDE_CODE_SESSION_ACCESS_TOKEN"] = "caller's"
	if !claudeLogin(getenv, home) {
		t.Fatal("the caller's own session token needs no placeholder")
	}
}

func TestMigrateTeam(t *testing.T) {
	mem := t.TempDir()
	put := func(k, v string) {
		p := filepath.Join(mem, filepath.FromSlash(k))
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	put("team/a.md", "a")
	put("team/sub/b.md", "b")
	put("team/teammem/a.md", "a")
	put("team/teammem/c.md", "native")
	put("team/other/.memory-sync", `{"v":1}`)
	put("team/other/x.md", "someone else's store")
	put("notes.md", "personal")
	keys, err := teamFilesOutside(mem)
	if err != nil || strings.Join(keys, ",") != "a.md,sub/b.md" {
		t.Fatalf("stray files: %v %v", keys, err)
	}
	msg := migrateRefusal(keys).Error()
	for _, want := range []string{"team/a.md, team/sub/b.md", "--migrate", "--no-migrate", "team/teammem/"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
	put("team/sub/b.md", "b")
	put("team/teammem/sub/b.md", "different")
	if _, err := migrateTeam(mem, keys); err == nil || !strings.Contains(err.Error(), "sub/b.md") {
		t.Fatalf("a clash was not refused: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mem, "team/a.md")); err != nil {
		t.Fatal("a refused migration moved files")
	}
	os.Remove(filepath.Join(mem, "team/teammem/sub/b.md"))
	moved, err := migrateTeam(mem, keys)
	if err != nil || len(moved) != 2 {
		t.Fatalf("migrate: %v %v", moved, err)
	}
	if keys, _ := teamFilesOutside(mem); len(keys) != 0 {
		t.Fatalf("left behind: %v", keys)
	}
	for k, v := range map[string]string{"team/teammem/a.md": "a", "team/teammem/sub/b.md": "b", "team/teammem/c.md": "native"} {
		if b, _ := os.ReadFile(filepath.Join(mem, k)); string(b) != v {
			t.Errorf("%s = %q", k, b)
		}
	}
	if _, err := os.Stat(filepath.Join(mem, "team/sub")); err == nil {
		t.Error("the emptied team/sub was left")
	}
}
