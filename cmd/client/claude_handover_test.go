package main_test

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeClaude writes a claude that exits 0 at once, for tests of what
// `teammem claude` does around it.
func fakeClaude(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// hashDir is the local-state directory name of a memory dir.
func hashDir(memDir string) string {
	h := sha256.Sum256([]byte(memDir))
	return hex.EncodeToString(h[:8])
}

// nativeRecordPath is the record of a handed-over memory dir.
func (m *machine) nativeRecordPath() string {
	m.t.Helper()
	out, _, _ := m.run("status", "--json")
	var st struct {
		MemoryDir string `json:"memory_dir"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		m.t.Fatal(err)
	}
	return filepath.Join(m.home, ".config", "teammem", "local", hashDir(st.MemoryDir), "native.json")
}

// TestMigrateMovesWhatItsLastSyncPulled: one --migrate moves every file of
// teammem's own sync out of team/, also the one its own last sync pulled
// (the issue: the next run refused until a second --migrate).
func TestMigrateMovesWhatItsLastSyncPulled(t *testing.T) {
	srv := startServer(t)
	const remote = "git@github.com:acme/migrate.git"
	native, other := newMachine(t, srv, remote), newMachine(t, srv, remote)
	mem := native.memDir()
	native.write(mem, "team/local.md", "synced before\n")
	native.must("sync")
	other.must("sync")
	other.write(other.memDir(), "team/pulled.md", "pulled by the last own sync\n")
	other.must("sync")
	native.env = append(native.env, "TEAMMEM_CLAUDE_BIN="+fakeClaude(t))

	_, errOut, code := native.run("claude", "--migrate")
	if code != 0 {
		t.Fatalf("claude --migrate exited %d: %s", code, errOut)
	}
	contains(t, errOut, "moved 2 file(s) from team/ into team/teammem/")
	for _, k := range []string{"local.md", "pulled.md"} {
		if _, err := os.Stat(filepath.Join(mem, "team", k)); err == nil {
			t.Errorf("team/%s was left behind", k)
		}
		if _, err := os.Stat(filepath.Join(mem, "team", "teammem", k)); err != nil {
			t.Errorf("team/teammem/%s: %v", k, err)
		}
	}
	if _, errOut, code := native.run("claude"); code != 0 {
		t.Fatalf("the run after one --migrate exited %d: %s", code, errOut)
	}
}

// TestStateRefusalHasItsOwnExitCode: files of teammem's own sync in team/
// stop teammem claude with exit 6 (the state), not 2 (bad usage, which
// --migrate with --no-migrate still is), and change nothing.
func TestStateRefusalHasItsOwnExitCode(t *testing.T) {
	srv := startServer(t)
	m := newMachine(t, srv, "git@github.com:acme/refusal.git")
	m.write(m.memDir(), "team/a.md", "own sync\n")
	m.env = append(m.env, "TEAMMEM_CLAUDE_BIN="+fakeClaude(t))
	for _, args := range [][]string{{"claude"}, {"proxy", "--addr", "127.0.0.1:0"}, {"claude", "--print-env"}} {
		_, errOut, code := m.run(args...)
		if code != 6 || !strings.Contains(errOut, "--migrate") {
			t.Fatalf("%v with team/a.md: exit %d, %s", args, code, errOut)
		}
	}
	if _, _, code := m.run("claude", "--migrate", "--no-migrate"); code != 2 {
		t.Fatalf("--migrate --no-migrate: exit %d, want 2", code)
	}
	if _, err := os.Stat(m.nativeRecordPath()); err == nil {
		t.Fatal("a refused run handed over")
	}
	out, _, _ := m.run("claude", "--help")
	contains(t, out, "exit 6")
	out, _, _ = m.run("--help")
	contains(t, out, "6 refused because of the memory dir's state")
}

// TestPrintEnvChangesNothing: `teammem proxy` and `teammem claude
// --print-env` neither sync nor hand over (the issue: --print-env synced
// and handed both scopes over); --print-env prints the running proxy's
// credentials, and the hand-over happens when a session first uses the
// proxy.
func TestPrintEnvChangesNothing(t *testing.T) {
	srv := startServer(t)
	const remote = "git@github.com:acme/printenv.git"
	m, other := newMachine(t, srv, remote), newMachine(t, srv, remote)
	mem := m.memDir()
	m.write(mem, "notes.md", "v1\n")
	m.must("sync")
	m.write(mem, "notes.md", "v2, not pushed yet\n")
	record := m.nativeRecordPath()

	unchanged := func(step string) {
		t.Helper()
		other.must("sync")
		if _, err := os.Stat(record); err == nil {
			t.Fatalf("%s handed over before any session used the proxy", step)
		}
		if got := read(t, other.memDir(), "notes.md"); got != "v1\n" {
			t.Fatalf("%s synced: the other machine has %q", step, got)
		}
	}
	_, errOut, code := m.run("claude", "--print-env", "--proxy-addr", "127.0.0.1:1")
	unchanged("--print-env without a proxy")
	if code != 1 || !strings.Contains(errOut, "no teammem proxy is running at 127.0.0.1:1") {
		t.Fatalf("--print-env without a proxy: exit %d, %s", code, errOut)
	}
	byProxy, errb := m.startProxyProcess("TEAMMEM_PROXY_UPSTREAM=http://127.0.0.1:1", "TEAMMEM_PROXY_LOOPBACK_ONLY=1")
	vars := exportsOf(byProxy)
	proxy, err := url.Parse(vars["HTTPS_PROXY"])
	if err != nil || proxy.User == nil || proxy.User.Username() != "teammem" {
		t.Fatalf("HTTPS_PROXY %q carries no credentials", vars["HTTPS_PROXY"])
	}
	printed := m.must("claude", "--print-env", "--proxy-addr", proxy.Host)
	if exportsOf(printed)["HTTPS_PROXY"] != vars["HTTPS_PROXY"] {
		t.Fatalf("--print-env prints another proxy URL:\n%s\nthan teammem proxy:\n%s", printed, byProxy)
	}
	if _, errOut, code := m.run("claude", "--print-env", "--legacy", "--proxy-addr", proxy.Host); code != 2 || !strings.Contains(errOut, "without --legacy") {
		t.Fatalf("--print-env --legacy for a proxy without it: exit %d, %s", code, errOut)
	}
	unchanged("teammem proxy and --print-env")

	// A session uses the proxy: the hand-over happens now, before the call.
	stores := storesOf(t, printed)
	pem, err := os.ReadFile(vars["NODE_EXTRA_CA_CERTS"])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: pool}}}
	res, err := client.Get("https://api.anthropic.com" + stores["user"] + "/memories?limit=100")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("the session's first call: %d %s\n%s", res.StatusCode, body, errb.String())
	}
	if _, err := os.Stat(record); err != nil {
		t.Fatalf("no hand-over after the first session call: %v", err)
	}
	other.must("sync")
	if got := read(t, other.memDir(), "notes.md"); got != "v2, not pushed yet\n" {
		t.Fatalf("the hand-over's last own sync did not push: %q", got)
	}
	if !strings.Contains(string(body), "notes.md") {
		t.Fatalf("the store listing lacks the pushed file: %s", body)
	}
	// Without the credentials the proxy refuses.
	anon := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: proxy.Host}), TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if res, err := anon.Get("https://api.anthropic.com" + stores["user"] + "/memories"); err == nil {
		res.Body.Close()
		t.Fatalf("a call without the credentials got %d", res.StatusCode)
	}
}

// TestPrintEnvForAMigratingProxy: an IDE user runs `teammem proxy
// --migrate` (team/ holds files of teammem's own sync, which that proxy
// moves when a session first uses it) and then `teammem claude --print-env`
// for its variables. --print-env hands nothing over, so the memory dir's
// state is the running proxy's to check: it prints that proxy's variables
// and moves nothing (the review of issue 21: it refused with exit 6 and
// advised `teammem claude --migrate`, which starts claude instead).
func TestPrintEnvForAMigratingProxy(t *testing.T) {
	srv := startServer(t)
	m := newMachine(t, srv, "git@github.com:acme/printmigrate.git")
	mem := m.memDir()
	m.write(mem, "team/a.md", "own sync\n")
	m.must("sync")
	byProxy, _ := m.startProxyProcessArgs([]string{"--migrate"}, "TEAMMEM_PROXY_UPSTREAM=http://127.0.0.1:1", "TEAMMEM_PROXY_LOOPBACK_ONLY=1")
	vars := exportsOf(byProxy)
	proxy, err := url.Parse(vars["HTTPS_PROXY"])
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := m.run("claude", "--print-env", "--proxy-addr", proxy.Host)
	if code != 0 {
		t.Fatalf("--print-env for a running teammem proxy --migrate: exit %d, %s", code, errOut)
	}
	if exportsOf(out)["HTTPS_PROXY"] != vars["HTTPS_PROXY"] {
		t.Fatalf("--print-env prints another proxy URL:\n%s\nthan teammem proxy:\n%s", out, byProxy)
	}
	if got := read(t, mem, "team/a.md"); got != "own sync\n" {
		t.Fatalf("--print-env changed team/a.md: %q", got)
	}
	if _, err := os.Stat(m.nativeRecordPath()); err == nil {
		t.Fatal("--print-env handed over")
	}
}

// TestPrintEnvPrintsTheRunningProxysStores: --print-env prints the stores
// the running proxy serves, whatever flags it is given itself (the review of
// issue 21: for a `teammem proxy --no-personal` it printed the personal
// store too, whose calls that proxy does not send to teammem but passes on
// to the upstream API).
func TestPrintEnvPrintsTheRunningProxysStores(t *testing.T) {
	srv := startServer(t)
	m := newMachine(t, srv, "git@github.com:acme/printstores.git")
	byProxy, _ := m.startProxyProcessArgs([]string{"--no-personal"}, "TEAMMEM_PROXY_UPSTREAM=http://127.0.0.1:1", "TEAMMEM_PROXY_LOOPBACK_ONLY=1")
	vars := exportsOf(byProxy)
	proxy, err := url.Parse(vars["HTTPS_PROXY"])
	if err != nil {
		t.Fatal(err)
	}
	printed := exportsOf(m.must("claude", "--print-env", "--proxy-addr", proxy.Host))
	if printed["CLAUDE_MEMORY_STORES"] != vars["CLAUDE_MEMORY_STORES"] {
		t.Fatalf("--print-env prints the stores\n%s\nfor a proxy that serves\n%s", printed["CLAUDE_MEMORY_STORES"], vars["CLAUDE_MEMORY_STORES"])
	}
}

// TestProxyRefusesNonLoopbackAddrs: --addr naming no loopback address is
// bad usage (exit 2), refused before anything listens, and the message names
// the address given (the review of issue 21: 0.0.0.0 was reported as [::],
// and an address of another interface was bound, failing only when the
// machine lacked it).
func TestProxyRefusesNonLoopbackAddrs(t *testing.T) {
	srv := startServer(t)
	m := newMachine(t, srv, "git@github.com:acme/proxyaddr.git")
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0"} {
		_, errOut, code := m.run("proxy", "--addr", addr)
		if code != 2 || !strings.Contains(errOut, "loopback only, not "+addr) {
			t.Errorf("proxy --addr %s: exit %d, %s", addr, code, errOut)
		}
	}
}

// startProxyProcess runs `teammem proxy --addr 127.0.0.1:0` in the
// machine's clone until the test ends and returns what it printed (the
// export lines) once it listens, and its stderr.
func (m *machine) startProxyProcess(extraEnv ...string) (string, *syncBuffer) {
	m.t.Helper()
	return m.startProxyProcessArgs(nil, extraEnv...)
}

// startProxyProcessArgs is startProxyProcess with more flags.
func (m *machine) startProxyProcessArgs(flags []string, extraEnv ...string) (string, *syncBuffer) {
	m.t.Helper()
	cmd := exec.Command(clientBin, append([]string{"proxy", "--addr", "127.0.0.1:0"}, flags...)...)
	cmd.Dir, cmd.Env = m.repo, append(slices.Clone(m.env), extraEnv...)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	// The variables go to stdout before the line on stderr, but the two
	// pipes are copied apart: wait for both.
	for !strings.Contains(errb.String(), "proxy listening on ") || !strings.Contains(out.String(), "export HTTPS_PROXY=") {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			m.t.Fatalf("teammem proxy did not start:\n%s%s", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return out.String(), &errb
}

// exportsOf reads sh export lines.
func exportsOf(s string) map[string]string {
	out := map[string]string{}
	for l := range strings.SplitSeq(s, "\n") {
		if kv, ok := strings.CutPrefix(l, "export "); ok {
			k, v, _ := strings.Cut(kv, "=")
			out[k] = strings.Trim(v, "'")
		}
	}
	return out
}

// TestStatusNoSyncAdviceForNativeScopes: for a scope handed over to Claude
// Code, status says so and never advises teammem sync, even when the
// server's checksum differs from teammem's last own sync (the issue:
// "differs from the server (run teammem sync)").
func TestStatusNoSyncAdviceForNativeScopes(t *testing.T) {
	srv := startServer(t)
	const remote = "git@github.com:acme/nativestatus.git"
	m, other := newMachine(t, srv, remote), newMachine(t, srv, remote)
	mem := m.memDir()
	m.write(mem, "team/teammem/a.md", "native copy\n")
	rec := m.nativeRecordPath()
	m.write(filepath.Dir(rec), "native.json", `{"server":"`+srv+`","repo":"acme/nativestatus","team":{"id":"memstore_t","path":"/v1/memory_stores/memstore_t"}}`)
	other.write(other.memDir(), "team/new.md", "changes the server's checksum\n")
	other.must("sync")
	out := m.status()
	team := out[strings.Index(out, "\nteam  "):]
	team, _, _ = strings.Cut(team[1:], "\n\n")
	if strings.Contains(team, "run teammem sync") || strings.Contains(team, "checksum") {
		t.Fatalf("status advises teammem's sync for a handed-over scope:\n%s", team)
	}
	contains(t, team, "native      synced natively by Claude Code through teammem claude")
	var st struct {
		Scopes []struct {
			Scope  string `json:"scope"`
			Native string `json:"native"`
		} `json:"scopes"`
	}
	js, _, _ := m.run("status", "--json")
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Scopes {
		if (s.Native != "") != (s.Scope == "team") {
			t.Fatalf("status --json native of %s: %q", s.Scope, s.Native)
		}
	}
}

// TestProxyLegacyOnlyUnderTheSecret: the built teammem proxy serves the
// legacy endpoint only with --legacy and only under the secret it printed
// in TEAM_MEMORY_SYNC_URL; a plain request to the port (the curl
// read team memory and a PUT wrote) gets no key.
func TestProxyLegacyOnlyUnderTheSecret(t *testing.T) {
	srv := startServer(t)
	const remote = "git@github.com:acme/legacyproxy.git"
	m := newMachine(t, srv, remote)
	m.write(m.memDir(), "team/t.md", "team memory\n")
	m.must("sync")
	if err := os.RemoveAll(filepath.Join(m.memDir(), "team")); err != nil {
		t.Fatal(err) // no stray files: teammem proxy starts without --migrate
	}
	get := func(u string, hdr ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("GET", u, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		if len(hdr) > 1 && hdr[0] == "Host" {
			req.Host = hdr[1]
		}
		res, err := (&http.Transport{Proxy: nil}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	const q = "/api/claude_code/team_memory?repo=acme%2Flegacyproxy"

	plain, _ := m.startProxyProcess()
	u, _ := url.Parse(exportsOf(plain)["HTTPS_PROXY"])
	if _, ok := exportsOf(plain)["TEAM_MEMORY_SYNC_URL"]; ok {
		t.Fatal("TEAM_MEMORY_SYNC_URL printed without --legacy")
	}
	if status, body := get("http://" + u.Host + q); status != 404 {
		t.Fatalf("without --legacy: %d %s", status, body)
	}

	out, _ := m.startProxyProcessArgs([]string{"--legacy"})
	base := exportsOf(out)["TEAM_MEMORY_SYNC_URL"]
	lu, err := url.Parse(base)
	if err != nil || len(strings.Trim(lu.Path, "/")) < 32 {
		t.Fatalf("TEAM_MEMORY_SYNC_URL %q has no secret prefix", base)
	}
	for _, tc := range []struct {
		url  string
		hdr  []string
		want int
	}{
		{"http://" + lu.Host + q, nil, 403},
		{base + q, []string{"Host", "attacker.example"}, 403},
		{base + q, []string{"Origin", "http://attacker.example"}, 403},
		{base + "/api/claude_code/team_memory/%2e%2e/%2e%2e/%2e%2e/v1/me", nil, 400},
	} {
		if status, body := get(tc.url, tc.hdr...); status != tc.want || strings.Contains(body, "team memory") {
			t.Fatalf("%s %v: %d %s, want %d", tc.url, tc.hdr, status, body, tc.want)
		}
	}
	if status, body := get(base + q); status != 200 || !strings.Contains(body, "team memory") {
		t.Fatalf("under the secret: %d %s", status, body)
	}
}
