package main_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var consoleCSRFRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// consoleSignIn signs in to s's console with key, sending headers (name,
// value pairs) on both requests, and returns the response to the form.
func consoleSignIn(t *testing.T, s *server, key string, headers ...string) *http.Response {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path string, body io.Reader) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL+path, body)
		if body != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	_, page := do("GET", "/ui/login", nil)
	m := consoleCSRFRE.FindSubmatch(page)
	if m == nil {
		t.Fatalf("sign-in page without a token:\n%s", page)
	}
	res, _ := do("POST", "/ui/login", strings.NewReader(url.Values{"csrf": {string(m[1])}, "key": {key}}.Encode()))
	return res
}

// TestConsoleBehindTrustedProxy runs the binary as it runs behind a
// TLS-terminating proxy on the same machine (TEAMMEM_TRUSTED_PROXIES):
// the session cookie is Secure when the proxy says https, and the sign-in
// throttle counts the client the proxy names, not the proxy. A malformed
// TEAMMEM_TRUSTED_PROXIES stops the start, naming the variable.
func TestConsoleBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	s := startServer(t, "sqlite://"+filepath.Join(t.TempDir(), "teammem.db"), "TEAMMEM_TRUSTED_PROXIES=127.0.0.1, ::1")
	res := consoleSignIn(t, s, bootstrapKey, "X-Forwarded-Proto", "https", "X-Forwarded-For", "192.0.2.1")
	ck := strings.Join(res.Header.Values("Set-Cookie"), "\n")
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(ck, "teammem_session=") || !strings.Contains(ck, "; Secure") {
		t.Fatalf("sign-in behind the proxy = %d, cookies:\n%s", res.StatusCode, ck)
	}
	statuses := map[int]int{}
	for range 15 {
		statuses[consoleSignIn(t, s, "tmk_wrongpfx_nope", "X-Forwarded-For", "192.0.2.66").StatusCode]++
	}
	if statuses[http.StatusUnauthorized] != 10 || statuses[http.StatusTooManyRequests] != 5 {
		t.Fatalf("15 wrong keys from one client behind the proxy: %v, want 10 × 401, 5 × 429", statuses)
	}
	// Another client behind the same proxy, with another key prefix, is
	// not throttled for that one.
	if st := consoleSignIn(t, s, bootstrapKey, "X-Forwarded-For", "192.0.2.2").StatusCode; st != http.StatusSeeOther {
		t.Fatalf("another client's sign-in = %d, want 303", st)
	}

	cmd := exec.Command(serverBin)
	cmd.Env = append(os.Environ(), "TEAMMEM_ADDR=127.0.0.1:0", "TEAMMEM_METRICS_ADDR=off", "TEAMMEM_TRUSTED_PROXIES=10.0.0.0/33",
		"TEAMMEM_DATABASE_URL=sqlite://"+filepath.Join(t.TempDir(), "teammem.db"), "TEAMMEM_BOOTSTRAP_KEY="+bootstrapKey)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "TEAMMEM_TRUSTED_PROXIES") || !strings.Contains(string(out), "10.0.0.0/33") {
		t.Fatalf("server with a bad TEAMMEM_TRUSTED_PROXIES: %v\n%s", err, out)
	}
	help, _ := exec.Command(serverBin, "--help").CombinedOutput()
	for _, flag := range []string{"--trusted-proxies", "TEAMMEM_TRUSTED_PROXIES", "--public-url", "TEAMMEM_PUBLIC_URL"} {
		if !strings.Contains(string(help), flag) {
			t.Errorf("--help does not mention %s:\n%s", flag, help)
		}
	}
}
