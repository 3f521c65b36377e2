package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/console"
	"github.com/teammem/teammem/internal/teammem"
)

// uiClient is a browser-like client of the console: a cookie jar, no
// redirects followed.
type uiClient struct {
	t    *testing.T
	e    *v1Env
	http *http.Client
	csrf string // the last page's CSRF token
}

func (e *v1Env) ui(t *testing.T) *uiClient {
	jar, _ := cookiejar.New(nil)
	return &uiClient{t: t, e: e, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (c *uiClient) get(path string) resp {
	c.t.Helper()
	res, err := c.http.Get(c.e.url + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if m := csrfRE.FindSubmatch(b); m != nil {
		c.csrf = string(m[1])
	}
	return resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// post submits a form; pairs are name, value.
func (c *uiClient) post(path string, pairs ...string) resp {
	c.t.Helper()
	form := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		form.Set(pairs[i], pairs[i+1])
	}
	res, err := c.http.PostForm(c.e.url+path, form)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// signIn signs in with key through the form.
func (c *uiClient) signIn(key string) {
	c.t.Helper()
	c.get("/ui/login").want(c.t, http.StatusOK)
	r := c.post("/ui/login", "csrf", c.csrf, "key", key).want(c.t, http.StatusSeeOther)
	ck := r.Header.Get("Set-Cookie")
	for _, want := range []string{"teammem_session=", "HttpOnly", "SameSite=Strict", "Path=/ui/"} {
		if !strings.Contains(ck, want) {
			c.t.Fatalf("session cookie %q lacks %s", ck, want)
		}
	}
}

func TestConsoleSessionAndCSRF(t *testing.T) {
	t.Parallel()
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		c := e.ui(t)
		if r := c.get("/ui/"); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/ui/login") {
			t.Fatalf("signed out overview = %d %s", r.Status, r.Header.Get("Location"))
		}
		login := c.get("/ui/login")
		csp := login.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "form-action 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %s", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || login.Header.Get("X-Frame-Options") != "DENY" || login.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("security headers: %v", login.Header)
		}
		// Sign-in without the double-submitted token, or with a bad key.
		c.post("/ui/login", "key", e.keys[teammem.RoleAdmin]).want(t, http.StatusForbidden)
		c.get("/ui/login")
		c.post("/ui/login", "csrf", c.csrf, "key", "tmk_nope_nope").want(t, http.StatusUnauthorized)

		c.signIn(e.keys[teammem.RoleAdmin])
		page := c.get("/ui/").want(t, http.StatusOK)
		if !strings.Contains(string(page.Body), "Team writes per day") {
			t.Fatalf("overview: %s", page.Body)
		}
		// Every POST needs the session's token.
		c.post("/ui/settings", "max_entries", "7").want(t, http.StatusForbidden)
		c.post("/ui/settings", "csrf", "wrong", "max_entries", "7").want(t, http.StatusForbidden)
		c.get("/ui/settings")
		c.post("/ui/settings", "csrf", c.csrf, "max_entries", "7", "secret_policy", "reject").want(t, http.StatusSeeOther)
		org := e.do("GET", "/v1/org", e.keys[teammem.RoleAdmin], nil).want(t, http.StatusOK).JSON(t)
		if lim := org["limits"].(map[string]any); lim["max_entries"] != float64(7) || lim["secret_policy"] != "reject" {
			t.Fatalf("settings not saved: %v", lim)
		}
		// Bad input: the API's message, nothing changed.
		bad := c.post("/ui/settings", "csrf", c.csrf, "max_entries", "-1")
		if bad.Status != http.StatusBadRequest || !strings.Contains(string(bad.Body), "max_entries must be") {
			t.Fatalf("bad setting = %d %s", bad.Status, bad.Body)
		}

		// Revoking the session's key signs it out at the next request.
		var keys struct {
			Keys []teammem.APIKey `json:"keys"`
		}
		mustJSON(t, e.do("GET", "/v1/org/keys", e.keys[teammem.RoleOwner], nil).want(t, http.StatusOK).Body, &keys)
		for _, k := range keys.Keys {
			if k.UserHandle == string(teammem.RoleAdmin) {
				e.do("DELETE", "/v1/org/keys/"+k.ID, e.keys[teammem.RoleOwner], nil).want(t, http.StatusOK)
			}
		}
		if r := c.get("/ui/"); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/ui/login?why=revoked" {
			t.Fatalf("revoked session = %d %s", r.Status, r.Header.Get("Location"))
		}
		c.post("/ui/settings", "csrf", c.csrf, "max_entries", "9").want(t, http.StatusForbidden)
	})
}

func TestConsoleViewerCannotChange(t *testing.T) {
	t.Parallel()
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		entry := "/v1/repos/acme/app/team/entries/notes.md"
		e.do("PUT", entry, e.keys[teammem.RoleMember], "one\n").want(t, http.StatusOK)
		e.do("PUT", entry, e.keys[teammem.RoleMember], "two\n").want(t, http.StatusOK)
		c := e.ui(t)
		c.signIn(e.keys[teammem.RoleViewer])
		page := string(c.get("/ui/entry?repo=acme%2Fapp&key=notes.md").want(t, http.StatusOK).Body)
		for _, control := range []string{"/ui/entry/restore", "/ui/entry/redact", "/ui/entry/delete"} {
			if strings.Contains(page, control) {
				t.Errorf("a viewer's entry page offers %s", control)
			}
		}
		settings := string(c.get("/ui/settings").want(t, http.StatusOK).Body)
		if strings.Contains(settings, "save-settings") || strings.Contains(string(c.get("/ui/").Body), `href="/ui/users"`) {
			t.Errorf("a viewer sees admin controls")
		}
		// Posted anyway, with a valid token: the server refuses.
		c.get("/ui/settings")
		for _, p := range [][]string{
			{"/ui/entry/restore", "repo", "acme/app", "key", "notes.md", "version", "1"},
			{"/ui/entry/redact", "repo", "acme/app", "key", "notes.md", "version", "1"},
			{"/ui/entry/delete", "repo", "acme/app", "key", "notes.md"},
			{"/ui/settings", "max_entries", "3"},
			{"/ui/users", "handle", "mallory", "role", "owner"},
		} {
			c.post(p[0], append([]string{"csrf", c.csrf}, p[1:]...)...).want(t, http.StatusForbidden)
		}
		hist := e.do("GET", entry+"/history", e.keys[teammem.RoleOwner], nil).want(t, http.StatusOK).JSON(t)
		if n := len(hist["versions"].([]any)); n != 2 {
			t.Fatalf("history has %d versions after refused changes, want 2", n)
		}
	})
}

func TestConsoleEntryEscapingAndModeration(t *testing.T) {
	t.Parallel()
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		entry := "/v1/repos/acme/app/team/entries/evil.md"
		hostile := "---\nname: <script>alert(1)</script>\ndescription: x\" onmouseover=\"alert(2)\ntype: project\n---\n" +
			"<script>window.pwned=1</script>\n\n<img src=x onerror=alert(3)>\n\n[click](javascript:alert(4)) " +
			"[enc](&#106;avascript:alert(5)) [tab](<java\tscript:alert(6)>) ![img](data:image/svg+xml;base64,PHN2Zz4=) [ok](other.md)\n"
		e.do("PUT", entry, e.keys[teammem.RoleMember], hostile).want(t, http.StatusOK)
		e.do("PUT", entry, e.keys[teammem.RoleMember], "clean\n").want(t, http.StatusOK)
		e.do("PUT", entry, e.keys[teammem.RoleMember], hostile).want(t, http.StatusOK)
		c := e.ui(t)
		c.signIn(e.keys[teammem.RoleAdmin])
		page := string(c.get("/ui/entry?repo=acme%2Fapp&key=evil.md").want(t, http.StatusOK).Body)
		for _, bad := range []string{"<script>", "<img src=x", `href="javascript`, `href="java`, `src="data:`, `onmouseover="`} {
			if strings.Contains(page, bad) {
				t.Errorf("entry page contains %q", bad)
			}
		}
		if m := regexp.MustCompile(`<[^>]*\son[a-z]+=`).FindString(page); m != "" {
			t.Errorf("entry page has an event handler attribute: %s", m)
		}
		if n := strings.Count(page, "[link removed]"); n != 4 {
			t.Errorf("%d links removed, want 4 (javascript:, entity-encoded, tab, data: image)", n)
		}
		if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(page, "/ui/entry?repo=acme%2Fapp&amp;key=other.md") {
			t.Errorf("frontmatter or relative link not shown as expected:\n%s", page)
		}
		diff := string(c.get("/ui/entry?repo=acme%2Fapp&key=evil.md&from=2&to=3").want(t, http.StatusOK).Body)
		if !strings.Contains(diff, "Diff v2 → v3") || strings.Contains(diff, "<script>") {
			t.Fatalf("diff page:\n%s", diff)
		}
		// Restore v2, then redact v1 (no longer live).
		c.post("/ui/entry/restore", "csrf", c.csrf, "repo", "acme/app", "key", "evil.md", "version", "2").want(t, http.StatusSeeOther)
		if got := string(e.do("GET", entry, e.keys[teammem.RoleOwner], nil).want(t, http.StatusOK).Body); got != "clean\n" {
			t.Fatalf("after restore: %q", got)
		}
		c.post("/ui/entry/redact", "csrf", c.csrf, "repo", "acme/app", "key", "evil.md", "version", "1").want(t, http.StatusSeeOther)
		hist := string(c.get("/ui/entry?repo=acme%2Fapp&key=evil.md").Body)
		if !strings.Contains(hist, "redacted") {
			t.Fatalf("history does not show the redaction:\n%s", hist)
		}
		c.post("/ui/entry/delete", "csrf", c.csrf, "repo", "acme/app", "key", "evil.md").want(t, http.StatusSeeOther)
		e.do("GET", entry, e.keys[teammem.RoleOwner], nil).want(t, http.StatusNotFound)
		audit := string(c.get("/ui/audit?action=entry.restore").want(t, http.StatusOK).Body)
		if !strings.Contains(audit, "entry.restore") {
			t.Fatalf("audit page lacks the restore:\n%s", audit)
		}
	})
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
}

func TestConsoleLoginLinkWorksOnce(t *testing.T) {
	t.Parallel()
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		token, hash := console.NewLoginLink()
		link := teammem.LoginLink{TokenHash: hash, KeyHash: teammem.HashKey(e.keys[teammem.RoleAdmin]), ExpiresAt: time.Now().Add(time.Minute)}
		if err := st.(teammem.ConsoleStore).LoginLinkCreate(t.Context(), e.org.ID, link); err != nil {
			t.Fatal(err)
		}
		c := e.ui(t)
		c.get("/ui/link?token="+token).want(t, http.StatusOK)
		c.post("/ui/link", "csrf", c.csrf, "link", token).want(t, http.StatusSeeOther)
		c.get("/ui/").want(t, http.StatusOK)
		again := e.ui(t)
		again.get("/ui/link?token=" + token)
		again.post("/ui/link", "csrf", again.csrf, "link", token).want(t, http.StatusUnauthorized)
	})
}
