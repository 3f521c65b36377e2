package console

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// The console on its own: a fake Backend stands in for the /v1 API (it
// answers each method and path as told and records the calls), and a real
// SQLite store keeps the sessions and the audit. The end-to-end tests with
// the real API are in httpapi (console_*_test.go, TestConsoleInBrowser).

// fakeBackend is the API as a table of answers.
type fakeBackend struct {
	mu      sync.Mutex
	keys    map[string]teammem.Principal // by key hash
	down    bool                         // Principal fails as a database outage would
	answers map[string]answer            // by "METHOD path"
	calls   []apiCall
}

type answer struct {
	status int
	body   string
}

// apiCall is one request the console made of the API.
type apiCall struct {
	Method, Path string
	Body         map[string]any
}

func (b *fakeBackend) Principal(_ context.Context, keyHash []byte) (teammem.Principal, error) {
	if b.down {
		return teammem.Principal{}, teammem.Errorf(teammem.EUnavailable, "the database is not reachable")
	}
	if p, ok := b.keys[string(keyHash)]; ok {
		return p, nil
	}
	return teammem.Principal{}, teammem.Errorf(teammem.EUnauthorized, "the API key is not valid")
}

func (b *fakeBackend) Call(_ context.Context, _ teammem.Principal, method, path string, body []byte) (int, http.Header, []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := apiCall{Method: method, Path: path}
	if body != nil {
		_ = json.Unmarshal(body, &c.Body)
	}
	b.calls = append(b.calls, c)
	a, ok := b.answers[method+" "+path]
	if !ok {
		return http.StatusNotFound, http.Header{}, []byte(`{"error":{"type":"not_found","message":"no such route"}}`)
	}
	return a.status, http.Header{}, []byte(a.body)
}

// Status is the API's code → status table, for the codes these tests use.
func (b *fakeBackend) Status(err error) int {
	switch teammem.ErrorCode(err) {
	case teammem.EInvalid:
		return http.StatusBadRequest
	case teammem.EUnauthorized:
		return http.StatusUnauthorized
	case teammem.EForbidden:
		return http.StatusForbidden
	case teammem.ENotFound:
		return http.StatusNotFound
	case teammem.EConflict:
		return http.StatusConflict
	case teammem.EGone:
		return http.StatusGone
	case teammem.EUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// answer sets the answer to method and path.
func (b *fakeBackend) answer(method, path string, status int, body string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.answers[method+" "+path] = answer{status, body}
}

// lastCall returns the last request the console made.
func (b *fakeBackend) lastCall(t *testing.T) apiCall {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.calls) == 0 {
		t.Fatal("the console called no API route")
	}
	return b.calls[len(b.calls)-1]
}

// consoleBundle is a console on a fake backend, with one owner's key.
type consoleBundle struct {
	c       *Console
	h       http.Handler // c mounted at /ui/, as the server mounts it
	b       *fakeBackend
	st      *sqlite.DB
	p       teammem.Principal
	key     string
	session string // the session cookie after signIn
	csrf    string
}

func setupConsole(t *testing.T) *consoleBundle {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "console.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	org, err := st.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	user, err := st.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: "ada", Role: teammem.RoleOwner})
	if err != nil {
		t.Fatal(err)
	}
	key, prefix := teammem.NewKeyString()
	k, err := st.KeyCreate(ctx, org.ID, teammem.KeyCreateParams{UserID: user.ID, Name: "laptop", Prefix: prefix, Hash: teammem.HashKey(key)})
	if err != nil {
		t.Fatal(err)
	}
	p := teammem.Principal{Org: org, User: user, Key: k}
	b := &fakeBackend{keys: map[string]teammem.Principal{string(teammem.HashKey(key)): p}, answers: map[string]answer{}}
	c := New(Config{Backend: b, Store: st, Sessions: st})
	h := chi.NewRouter()
	h.Mount("/ui/", c)
	return &consoleBundle{c: c, h: h, b: b, st: st, p: p, key: key}
}

// do sends a request to the console with the bundle's session, if any.
func (cb *consoleBundle) do(t *testing.T, method, path string, form url.Values, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, path, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cb.session != "" {
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: cb.session})
	}
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	cb.h.ServeHTTP(w, r)
	return w
}

// cookie returns the cookie name a response set, or nil.
func cookie(w *httptest.ResponseRecorder, name string) *http.Cookie {
	for _, c := range w.Result().Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// login posts the sign-in form with key, with the token the form's page
// set, and returns the answer.
func (cb *consoleBundle) login(t *testing.T, key string) *httptest.ResponseRecorder {
	t.Helper()
	page := cb.do(t, "GET", "/ui/login", nil)
	tok := cookie(page, loginCookie)
	if page.Code != http.StatusOK || tok == nil {
		t.Fatalf("sign-in page: %d, login cookie %v", page.Code, tok)
	}
	return cb.do(t, "POST", "/ui/login", url.Values{"csrf": {tok.Value}, "key": {key}}, tok)
}

// signIn signs the bundle's owner in and keeps the session and its CSRF
// token for the bundle's later requests.
func (cb *consoleBundle) signIn(t *testing.T) {
	t.Helper()
	w := cb.login(t, cb.key)
	sess := cookie(w, sessionCookie)
	if w.Code != http.StatusSeeOther || sess == nil {
		t.Fatalf("sign-in answered %d %s", w.Code, w.Body)
	}
	cb.session = sess.Value
	s, err := cb.st.ConsoleSessionGet(context.Background(), hashToken(sess.Value), cb.c.now())
	if err != nil {
		t.Fatalf("the session is not stored: %v", err)
	}
	cb.csrf = s.CSRF
}

// wantPage checks a page's status and that its text holds each of want.
func wantPage(t *testing.T, w *httptest.ResponseRecorder, status int, want ...string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("answered %d, want %d: %s", w.Code, status, w.Body)
	}
	text := html.UnescapeString(w.Body.String())
	for _, s := range want {
		if !strings.Contains(text, s) {
			t.Errorf("page lacks %q:\n%s", s, text)
		}
	}
}

func TestConsoleSignIn(t *testing.T) {
	t.Parallel()
	t.Run("signed out", func(t *testing.T) {
		t.Parallel()
		cb := setupConsole(t)
		w := cb.do(t, "GET", "/ui/", nil)
		if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/login?why=none" {
			t.Errorf("a page without a session answered %d to %q", w.Code, w.Header().Get("Location"))
		}
		wantPage(t, cb.do(t, "POST", "/ui/users", url.Values{"handle": {"x"}}), http.StatusForbidden, "You are signed out")
		wantPage(t, cb.do(t, "GET", "/ui/login?why=expired", nil), http.StatusOK, "Your session expired.")
		if h := w.Header().Get("Content-Security-Policy"); h != contentSecurityPolicy {
			t.Errorf("Content-Security-Policy = %q", h)
		}
	})
	t.Run("key", func(t *testing.T) {
		t.Parallel()
		cb := setupConsole(t)
		cb.signIn(t)
		if w := cb.do(t, "GET", "/ui/login", nil); w.Code != http.StatusSeeOther {
			t.Errorf("the sign-in page of a signed-in browser answered %d, want a redirect", w.Code)
		}
		events, err := cb.st.AuditList(context.Background(), cb.p.Org.ID, teammem.AuditFilter{Action: "console.sign_in"})
		if err != nil || len(events) != 1 {
			t.Errorf("sign-in audit events: %v %v, want one", events, err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		cb := setupConsole(t)
		wantPage(t, cb.login(t, "tmk_notakey"), http.StatusUnauthorized, signInRefused)
		wantPage(t, cb.login(t, ""), http.StatusBadRequest, "Enter an API key.")
		cb.b.down = true
		wantPage(t, cb.login(t, cb.key), http.StatusServiceUnavailable, "could not check the key")
	})
	t.Run("csrf", func(t *testing.T) {
		t.Parallel()
		cb := setupConsole(t)
		wantPage(t, cb.do(t, "POST", "/ui/login", url.Values{"key": {cb.key}}), http.StatusForbidden, "CSRF token is missing or wrong")
		cb.signIn(t)
		wantPage(t, cb.do(t, "POST", "/ui/users", url.Values{"csrf": {"forged"}, "handle": {"x"}}), http.StatusForbidden, "CSRF token is missing or wrong")
		if n := len(cb.b.calls); n != 0 {
			t.Errorf("a forged form reached the API (%d calls)", n)
		}
	})
	t.Run("revoked", func(t *testing.T) {
		t.Parallel()
		cb := setupConsole(t)
		cb.signIn(t)
		delete(cb.b.keys, string(teammem.HashKey(cb.key)))
		w := cb.do(t, "GET", "/ui/", nil)
		if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/login?why=revoked" {
			t.Errorf("a revoked key's session answered %d to %q", w.Code, w.Header().Get("Location"))
		}
	})
	t.Run("logout", func(t *testing.T) {
		t.Parallel()
		cb := setupConsole(t)
		cb.signIn(t)
		w := cb.do(t, "POST", "/ui/logout", url.Values{"csrf": {cb.csrf}})
		if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/login?why=out" {
			t.Errorf("logout answered %d to %q", w.Code, w.Header().Get("Location"))
		}
		if w := cb.do(t, "GET", "/ui/", nil); w.Code != http.StatusSeeOther {
			t.Errorf("the session still works after logout: %d", w.Code)
		}
	})
}

// TestConsolePages renders every page from the API's answers.
func TestConsolePages(t *testing.T) {
	t.Parallel()
	cb := setupConsole(t)
	cb.signIn(t)
	const team = "/v1/repos/acme/widgets/team"
	b := cb.b
	b.answer("GET", "/v1/repos", 200, `{"repos":[{"repo":"acme/widgets","team":{"entry_count":3,"total_bytes":120,"version":7}}]}`)
	b.answer("GET", "/v1/org", 200, `{"org":{"slug":"acme","name":"Acme","settings":{"secret_allowlist":{"rule_ids":["generic-api-key"]}}},"limits":{"max_entries":10}}`)
	b.answer("GET", team+"?view=hashes", 200, `{"version":7,"entries":[{"key":"notes/build.md","size":40,"version":7,"author":"ada"}]}`)
	b.answer("GET", team, 200, `{"version":7,"entries":[{"key":"notes/build.md","content":"---\nname: build\ndescription: how we build\n---\nRun make.\n"}]}`)
	b.answer("GET", team+"/MEMORY.md?lint=1", 200, `{"findings":[]}`)
	b.answer("GET", team+"/entries/notes/build.md", 200, "# Build\n\nRun *make*.\n")
	b.answer("GET", team+"/entries/notes/build.md/history", 200, `{"key":"notes/build.md","versions":[{"version":7,"op":"write","checksum":"x","author":"ada"},{"version":3,"op":"write","checksum":"y","author":"bob"}]}`)
	b.answer("GET", "/v1/proposals?limit=31&status=pending", 200, `{"proposals":[]}`)
	b.answer("GET", "/v1/org/users", 200, `{"users":[{"handle":"ada","role":"owner"},{"handle":"bob","role":"member"}]}`)
	b.answer("GET", "/v1/org/keys", 200, `{"keys":[{"id":"k1","name":"laptop","prefix":"tmk_abcd","user":"ada"}]}`)
	b.answer("GET", "/v1/org/audit?limit=100", 200, `{"events":[{"action":"entry.restore","target":"notes/build.md","actor":"ada"}]}`)
	b.answer("GET", "/v1/search?q=make", 200, `{"data":[{"repo":"acme/widgets","scope":"team","path":"notes/build.md","snippet":"Run [[make]] <b>now</b>.","score":1,"updated_at":"2026-01-02T03:04:05Z","updated_by":"ada"},`+
		`{"repo":"acme/widgets","scope":"personal","path":"mine.md","snippet":"[[make]] it","score":0.5,"updated_at":"2026-01-02T03:04:05Z"}],"next_page":"c2VhcmNoOjI"}`)
	b.answer("GET", "/v1/search?q=nothing", 200, `{"data":[],"next_page":null}`)
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/ui/", []string{"Overview", "acme/widgets", "3 / 10"}},
		{"/ui/space?repo=acme/widgets", []string{"notes", "build.md"}},
		{"/ui/entry?repo=acme/widgets&key=notes/build.md", []string{"<em>make</em>", "bob"}},
		{"/ui/memory?repo=acme/widgets", []string{"MEMORY.md", "how we build"}},
		{"/ui/review", []string{"Review queue"}},
		{"/ui/users", []string{"Users", "bob"}},
		{"/ui/keys", []string{"laptop", "tmk_abcd"}},
		{"/ui/audit", []string{"entry.restore"}},
		{"/ui/settings", []string{"Settings", "generic-api-key"}},
		{"/ui/search", []string{`id="search-q"`, "Every word must match"}},
		{"/ui/search?q=make", []string{`<a href="/ui/entry?repo=acme%2Fwidgets&key=notes%2Fbuild.md">acme/widgets · notes/build.md</a>`,
			"acme/widgets · mine.md <span class=\"badge\">personal</span>", "by ada", `href="/ui/search?page=c2VhcmNoOjI&q=make"`}},
		{"/ui/search?q=nothing", []string{"No memory matches “nothing”."}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			wantPage(t, cb.do(t, "GET", tc.path, nil), http.StatusOK, tc.want...)
		})
	}
	t.Run("search snippets are escaped", func(t *testing.T) {
		// Only the marks become markup: the snippet's own text stays text.
		body := cb.do(t, "GET", "/ui/search?q=make", nil).Body.String()
		if !strings.Contains(body, "Run <mark>make</mark> &lt;b&gt;now&lt;/b&gt;.") {
			t.Fatalf("snippet not escaped:\n%s", body)
		}
	})
	t.Run("not found", func(t *testing.T) {
		wantPage(t, cb.do(t, "GET", "/ui/nowhere", nil), http.StatusNotFound, "No such page.")
	})
	t.Run("API error", func(t *testing.T) {
		b.answer("GET", "/v1/org/audit?limit=100", 403, `{"error":{"type":"forbidden","message":"role member may not read the audit log"}}`)
		wantPage(t, cb.do(t, "GET", "/ui/audit", nil), http.StatusForbidden, "role member may not read the audit log.")
		b.answer("GET", "/v1/org/audit?limit=100", 500, `garbage`)
		wantPage(t, cb.do(t, "GET", "/ui/audit", nil), http.StatusInternalServerError, "Something went wrong on the server")
	})
}

// TestConsoleForms posts every form: on success the console makes its one
// API call and redirects (or renders) with its notice; on the API's refusal
// it shows the refusal with the API's status.
func TestConsoleForms(t *testing.T) {
	t.Parallel()
	const entry = "/v1/repos/acme/widgets/team/entries/notes/build.md"
	for _, tc := range []struct {
		name       string
		form       string // console path
		values     url.Values
		method     string // of the API call
		api        string
		ok         int    // the API's success status
		okBody     string // and body
		wantBody   map[string]any
		wantTo     string // the redirect on success; "" when rendered
		refusal    int
		refusalMsg string
	}{
		{name: "restore", form: "/ui/entry/restore", values: url.Values{"repo": {"acme/widgets"}, "key": {"notes/build.md"}, "version": {"3"}},
			method: "POST", api: entry + "/restore", ok: 200, okBody: `{}`, wantBody: map[string]any{"version": float64(3)},
			wantTo: "/ui/entry?repo=acme%2Fwidgets&key=notes%2Fbuild.md&done=restored", refusal: 410, refusalMsg: "the version was redacted"},
		{name: "redact", form: "/ui/entry/redact", values: url.Values{"repo": {"acme/widgets"}, "key": {"notes/build.md"}, "version": {"3"}},
			method: "POST", api: entry + "/history/3/redact", ok: 200, okBody: `{}`,
			wantTo: "/ui/entry?repo=acme%2Fwidgets&key=notes%2Fbuild.md&done=redacted", refusal: 409, refusalMsg: "the live content cannot be redacted"},
		{name: "delete", form: "/ui/entry/delete", values: url.Values{"repo": {"acme/widgets"}, "key": {"notes/build.md"}},
			method: "DELETE", api: entry, ok: 204,
			wantTo: "/ui/entry?repo=acme%2Fwidgets&key=notes%2Fbuild.md&done=deleted", refusal: 404, refusalMsg: "entry not found"},
		{name: "approve", form: "/ui/review/approve", values: url.Values{"id": {"5"}, "note": {" fine "}},
			method: "POST", api: "/v1/proposals/5/approve", ok: 200, okBody: `{}`, wantBody: map[string]any{"note": "fine"},
			wantTo: "/ui/review?done=approved", refusal: 409, refusalMsg: "proposal 5 was not applied: notes/build.md changed"},
		{name: "reject", form: "/ui/review/reject", values: url.Values{"id": {"5"}},
			method: "POST", api: "/v1/proposals/5/reject", ok: 200, okBody: `{}`,
			wantTo: "/ui/review?done=rejected", refusal: 404, refusalMsg: "no proposal 5"},
		{name: "create user", form: "/ui/users", values: url.Values{"handle": {" cy "}, "role": {"member"}},
			method: "POST", api: "/v1/org/users", ok: 201, okBody: `{}`, wantBody: map[string]any{"handle": "cy", "role": "member"},
			wantTo: "/ui/users?done=user", refusal: 409, refusalMsg: "a user cy exists"},
		{name: "update user", form: "/ui/users/update", values: url.Values{"handle": {"bob"}, "disabled": {"true"}},
			method: "PATCH", api: "/v1/org/users/bob", ok: 200, okBody: `{}`, wantBody: map[string]any{"disabled": true},
			wantTo: "/ui/users?done=user", refusal: 403, refusalMsg: "an admin may not disable an owner"},
		{name: "create key", form: "/ui/keys", values: url.Values{"name": {"ci"}, "user": {"bob"}, "read_only": {"on"}},
			method: "POST", api: "/v1/org/keys", ok: 201, okBody: `{"key":"tmk_fresh_secret"}`,
			wantBody: map[string]any{"name": "ci", "user": "bob", "read_only": true}, refusal: 400, refusalMsg: "name is required"},
		{name: "revoke key", form: "/ui/keys/revoke", values: url.Values{"id": {"k2"}},
			method: "DELETE", api: "/v1/org/keys/k2", ok: 204, wantTo: "/ui/keys?done=revoked", refusal: 404, refusalMsg: "no key k2"},
		{name: "settings", form: "/ui/settings", values: url.Values{"max_entries": {"50"}, "secret_policy": {"block"}, "team_writes": {"direct"}},
			method: "PATCH", api: "/v1/org", ok: 200, okBody: `{}`, wantBody: map[string]any{"max_entries": float64(50), "secret_policy": "block"},
			wantTo: "/ui/settings?done=saved", refusal: 400, refusalMsg: "max_entries must be at most 10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cb := setupConsole(t)
			cb.signIn(t)
			cb.b.answer("GET", "/v1/org/keys", 200, `{"keys":[]}`) // the keys page rendered after a new key
			form := url.Values{"csrf": {cb.csrf}}
			for k, v := range tc.values {
				form[k] = v
			}
			cb.b.answer(tc.method, tc.api, tc.ok, tc.okBody)
			w := cb.do(t, "POST", tc.form, form)
			var call apiCall
			for _, c := range cb.b.calls {
				if c.Method == tc.method && c.Path == tc.api {
					call = c
				}
			}
			if call.Path == "" {
				t.Fatalf("no %s %s among the API calls %+v", tc.method, tc.api, cb.b.calls)
			}
			for k, v := range tc.wantBody {
				if call.Body[k] != v {
					t.Errorf("API call body %s = %v, want %v (body %v)", k, call.Body[k], v, call.Body)
				}
			}
			if tc.wantTo != "" {
				if w.Code != http.StatusSeeOther || w.Header().Get("Location") != tc.wantTo {
					t.Errorf("answered %d to %q, want a redirect to %q: %s", w.Code, w.Header().Get("Location"), tc.wantTo, w.Body)
				}
			} else {
				wantPage(t, w, http.StatusCreated, "tmk_fresh_secret")
			}
			body, _ := json.Marshal(map[string]any{"error": map[string]any{"type": codeOf(tc.refusal), "message": tc.refusalMsg}})
			cb.b.answer(tc.method, tc.api, tc.refusal, string(body))
			wantPage(t, cb.do(t, "POST", tc.form, form), tc.refusal, tc.refusalMsg)
		})
	}
	t.Run("bad input", func(t *testing.T) {
		t.Parallel()
		cb := setupConsole(t)
		cb.signIn(t)
		for path, values := range map[string]url.Values{
			"/ui/entry/restore":  {"version": {"three"}},
			"/ui/review/approve": {"id": {"0"}},
			"/ui/settings":       {"max_entries": {"many"}},
		} {
			values.Set("csrf", cb.csrf)
			wantPage(t, cb.do(t, "POST", path, values), http.StatusBadRequest)
		}
		if n := len(cb.b.calls); n != 0 {
			t.Errorf("invalid forms reached the API: %+v", cb.b.calls)
		}
	})
}

// codeOf is the API's error type of status, for the fake's error bodies.
func codeOf(status int) string {
	return map[int]string{400: teammem.EInvalid, 403: teammem.EForbidden, 404: teammem.ENotFound,
		409: teammem.EConflict, 410: teammem.EGone}[status]
}
