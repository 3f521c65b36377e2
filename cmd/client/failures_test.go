package main_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// scopeJSON is one scope of `pull|push|sync --json`.
type scopeJSON struct {
	Scope string `json:"scope"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Status  int    `json:"status"`
	} `json:"error"`
	FailedStep string `json:"failed_step"`
	Pending    *int   `json:"pending"`
}

func decodeScopes(t *testing.T, out string) []scopeJSON {
	t.Helper()
	var v struct {
		Scopes []scopeJSON `json:"scopes"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return v.Scopes
}

// api calls the server with the bootstrap (owner) key and decodes into out.
func api(t *testing.T, server, method, path string, body, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, server+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+serverKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d", method, path, resp.StatusCode)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}

// newKey creates a key for user (the owner when ""), read-only if asked.
func newKey(t *testing.T, server, user string, readOnly bool) string {
	t.Helper()
	var created struct {
		Key string `json:"key"`
	}
	api(t, server, "POST", "/v1/org/keys", map[string]any{"user": user, "name": "test", "read_only": readOnly}, &created)
	return created.Key
}

// TestRetriesThroughOutage: the server answers 503 twice, then works again:
// one pull succeeds after two retries.
func TestRetriesThroughOutage(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	target, _ := url.Parse(srv)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var refused atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refused.Load() < 2 {
			refused.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"type":"unavailable","message":"the database cannot be reached"}}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	m := newMachine(t, front.URL, "git@github.com:acme/widgets.git")
	out, errOut, code := m.run("pull", "--scope", "team")
	if code != 0 || refused.Load() != 2 || !strings.Contains(out, "team: up to date") {
		t.Fatalf("exit %d after %d refusals:\n%s%s", code, refused.Load(), out, errOut)
	}
}

// TestRefusedKeys: a wrong key, a read-only key and a viewer's key are
// named as such in text and JSON, with exit code 5.
func TestRefusedKeys(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	api(t, srv, "POST", "/v1/org/users", map[string]any{"handle": "vera", "role": "viewer"}, nil)
	readOnly, viewer := newKey(t, srv, "", true), newKey(t, srv, "vera", false)
	m := newMachine(t, srv, "git@github.com:acme/widgets.git")
	dir := m.memDir()
	m.write(dir, "team/new.md", "to push\n")
	as := func(key string, args ...string) (string, string, int) {
		saved := m.env
		defer func() { m.env = saved }()
		m.env = append(append([]string{}, m.env...), "TEAMMEM_API_KEY="+key)
		return m.run(args...)
	}

	out, errOut, code := as(readOnly, "push", "--scope", "team")
	if code != 5 || !strings.Contains(out, "team: push failed — the API key is read-only; 1 change pending") || strings.Contains(out, "up to date") {
		t.Fatalf("read-only push: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = as(readOnly, "push", "--scope", "team", "--json")
	if s := decodeScopes(t, out); code != 5 || len(s) != 1 || s[0].Error == nil || s[0].Error.Code != "forbidden" ||
		s[0].Error.Status != 403 || s[0].FailedStep != "push" || s[0].Pending == nil || *s[0].Pending != 1 {
		t.Fatalf("read-only push --json: exit %d\n%s", code, out)
	}

	out, errOut, code = as(viewer, "push", "--scope", "team")
	if code != 5 || !strings.Contains(out, "team: push failed — the API key may not do this: its user is a viewer") {
		t.Fatalf("viewer push: exit %d\n%s%s", code, out, errOut)
	}

	wrong := "tmk_aaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	out, errOut, code = as(wrong, "pull")
	if code != 5 || !strings.Contains(out, "team: pull failed — the API key was refused") || !strings.Contains(out, "personal: pull failed") {
		t.Fatalf("wrong key pull: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = as(wrong, "sync", "--json")
	if s := decodeScopes(t, out); code != 5 || len(s) != 2 || s[0].Error == nil || s[0].Error.Code != "unauthorized" || s[0].Error.Status != 401 {
		t.Fatalf("wrong key sync --json: exit %d\n%s", code, out)
	}
	var st struct {
		Reachable bool `json:"server_reachable"`
		Error     *struct {
			Code string `json:"code"`
		} `json:"server_error"`
	}
	out, _, code = as(wrong, "status", "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 5 || !st.Reachable || st.Error == nil || st.Error.Code != "unauthorized" {
		t.Fatalf("wrong key status: exit %d %+v\n%s", code, st, out)
	}
	// The owner's key pushes the pending change.
	m.must("push", "--scope", "team")
}

// TestStatusUnreachable: status says the server is unreachable, still
// prints the local state, and exits 4; a redirect is named as one.
func TestStatusUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	m := newMachine(t, closed, "git@github.com:acme/widgets.git")
	out, errOut, code := m.run("status")
	if code != 4 || !strings.Contains(out, "not reachable: cannot reach the server") || !strings.Contains(out, "pending") {
		t.Fatalf("closed port: exit %d\n%s%s", code, out, errOut)
	}
	login := httptest.NewServer(http.RedirectHandler("https://sso.example.com/login", http.StatusFound))
	t.Cleanup(login.Close)
	m = newMachine(t, login.URL, "git@github.com:acme/widgets.git")
	out, errOut, code = m.run("status", "--json")
	if code != 4 || !strings.Contains(out, `"code": "redirect"`) || !strings.Contains(errOut, "the server answered a redirect (302 to https://sso.example.com/login)") {
		t.Fatalf("redirect: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = m.run("pull", "--scope", "team")
	if code != 4 || !strings.Contains(out, "team: pull failed — the server answered a redirect") {
		t.Fatalf("pull behind a redirect: exit %d\n%s", code, out)
	}
}

// TestUsageExitCodes: command-line mistakes exit 2; a missing directory is
// refused or fails instead of reading as empty.
func TestUsageExitCodes(t *testing.T) {
	t.Parallel()
	m := newMachine(t, "http://127.0.0.1:9", "git@github.com:acme/widgets.git")
	missing := filepath.Join(t.TempDir(), "nowhere")
	for _, args := range [][]string{
		{"bogus"}, {"pull", "extra"}, {"status", "now"}, {"hook", "bogus"}, {"index", "a", "b"},
		{"--server", "ftp://example.com", "status"}, {"--server", "http://", "pull"}, {"--server", "https://u:p@example.com", "sync"},
		{"--dir", missing, "pull"}, {"--dir", missing, "scan"},
	} {
		if out, errOut, code := m.run(args...); code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s%s", args, code, out, errOut)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("a refused --dir was created: %v", err)
	}
	// With --create it is made, private, and scanned.
	if out, errOut, code := m.run("--dir", missing, "--create", "scan"); code != 0 || !strings.Contains(out, "scanned 0 files") {
		t.Fatalf("--create scan: exit %d\n%s%s", code, out, errOut)
	}
	if fi, err := os.Stat(missing); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("--create made %v (%v)", fi.Mode(), err)
	}
	// scan and index on a default memory dir that does not exist yet fail.
	for _, args := range [][]string{{"scan"}, {"index", "--lint"}, {"index"}} {
		if out, errOut, code := m.run(args...); code != 1 || !strings.Contains(errOut, "does not exist") {
			t.Errorf("%q on a missing dir: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	if _, _, code := m.run("--help"); code != 0 {
		t.Errorf("--help: exit %d", code)
	}
}

// TestLoginWritesPrivateConfig: the config file is 0600 and its directory,
// even one that existed with looser permissions, 0700.
func TestLoginWritesPrivateConfig(t *testing.T) {
	t.Parallel()
	m := newMachine(t, "http://127.0.0.1:9", "git@github.com:acme/widgets.git")
	dir := filepath.Join(m.home, ".config", "teammem")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m.must("login", "--no-check", "--server", "https://teammem.example.com/")
	fi, err := os.Stat(filepath.Join(dir, "config.json"))
	di, _ := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("config %v, dir %v (%v)", fi.Mode(), di.Mode(), err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	if !strings.Contains(string(b), `"server": "https://teammem.example.com"`) {
		t.Fatalf("config: %s", b)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".config-*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
	if _, _, code := m.run("login", "--no-check", "--server", "example.com"); code != 2 {
		t.Fatalf("login without a scheme: exit %d, want 2", code)
	}
}
