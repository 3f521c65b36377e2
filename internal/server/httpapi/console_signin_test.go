package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// The console's sign-in door (issue 21, point 7): failed sign-ins are
// throttled per client address and per key prefix, every refused key reads
// the same and is audited without key material, and the cookies are Secure
// whenever the browser's side of the connection is https.

// signInAttempt is one browser's sign-in: a fresh cookie jar, the sign-in
// page for its token, then the form posted with key and the headers
// (name, value pairs) on both requests.
func (e *v1Env) signInAttempt(t *testing.T, key string, headers ...string) resp {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, path string, body io.Reader) resp {
		t.Helper()
		req, err := http.NewRequest(method, e.url+path, body)
		if err != nil {
			t.Fatal(err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return resp{Status: res.StatusCode, Header: res.Header, Body: b}
	}
	page := send("GET", "/ui/login", nil).want(t, http.StatusOK)
	m := csrfRE.FindSubmatch(page.Body)
	if m == nil {
		t.Fatalf("sign-in page has no token:\n%s", page.Body)
	}
	form := url.Values{"csrf": {string(m[1])}, "key": {key}}
	return send("POST", "/ui/login", strings.NewReader(form.Encode()))
}

var loginMessageRE = regexp.MustCompile(`(?s)<p class="notice" id="login-message">(.*?)</p>`)

// loginMessage is the notice of a sign-in page.
func loginMessage(r resp) string {
	if m := loginMessageRE.FindSubmatch(r.Body); m != nil {
		return string(m[1])
	}
	return ""
}

// wrongKey returns a well-formed key nobody holds, with prefix when not
// empty.
func wrongKey(prefix string) string {
	key, p := teammem.NewKeyString()
	if prefix == "" {
		return key
	}
	return strings.Replace(key, "tmk_"+p+"_", "tmk_"+prefix+"_", 1)
}

// countStatuses tallies the statuses of attempts; each 429 must carry a
// Retry-After of whole seconds, at least 1.
func countStatuses(t *testing.T, n int, attempt func(i int) resp) map[int]int {
	t.Helper()
	got := map[int]int{}
	for i := range n {
		r := attempt(i)
		got[r.Status]++
		if r.Status == http.StatusTooManyRequests {
			if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 {
				t.Fatalf("429 with Retry-After %q", r.Header.Get("Retry-After"))
			}
		}
	}
	return got
}

// TestConsoleSignInThrottledPerAddress sends 300 wrong keys from one
// address, each claiming another address in X-Forwarded-For (no proxy is
// trusted, so the claim counts for nothing): the first burst is answered
// 401, every other 429 with Retry-After, and a right key is not even looked
// up while the address is throttled. Once Retry-After has passed it signs
// in, and successful sign-ins cost the address nothing.
func TestConsoleSignInThrottledPerAddress(t *testing.T) {
	t.Parallel()
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		clock := newTestClock()
		e := newV1Env(t, st, func(c *httpapi.Config) { c.Clock = clock.Now })
		got := countStatuses(t, 300, func(i int) resp {
			return e.signInAttempt(t, wrongKey(""), "X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i%250+1))
		})
		if got[http.StatusUnauthorized] != 10 || got[http.StatusTooManyRequests] != 290 || len(got) != 2 {
			t.Fatalf("300 wrong keys from one address: %v, want 10 × 401 and 290 × 429", got)
		}
		right := e.signInAttempt(t, e.keys[teammem.RoleAdmin])
		if right.Status != http.StatusTooManyRequests || strings.Contains(strings.Join(right.Header.Values("Set-Cookie"), " "), "teammem_session=") {
			t.Fatalf("the right key from a throttled address = %d %v, want 429 and no session", right.Status, right.Header)
		}
		wait, _ := strconv.Atoi(right.Header.Get("Retry-After"))
		clock.Add(time.Duration(wait) * time.Second)
		for i := range 20 {
			if r := e.signInAttempt(t, e.keys[teammem.RoleAdmin]); r.Status != http.StatusSeeOther {
				t.Fatalf("sign-in %d after Retry-After = %d, want 303: %s", i, r.Status, loginMessage(r))
			}
		}
	})
}

// TestConsoleSignInRefusalsReadTheSame signs in with a key of every kind
// that fails: each answer has the same status and words, each refusal of a
// key the org knows (and each wrong secret for a real key's prefix) is in
// its audit log with the key's id and stored prefix and a reason, and no
// audit event holds any key that was typed.
func TestConsoleSignInRefusalsReadTheSame(t *testing.T) {
	t.Parallel()
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		ctx := t.Context()
		now := time.Now()
		mint := func(org teammem.Org, handle string, expires *time.Time) (teammem.APIKey, string) {
			t.Helper()
			u, err := st.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: handle, Role: teammem.RoleMember})
			if err != nil {
				t.Fatal(err)
			}
			key, prefix := teammem.NewKeyString()
			k, err := st.KeyCreate(ctx, org.ID, teammem.KeyCreateParams{UserID: u.ID, Name: handle + "-key", Prefix: prefix,
				Hash: teammem.HashKey(key), ExpiresAt: expires})
			if err != nil {
				t.Fatal(err)
			}
			return k, key
		}
		revoked, revokedKey := mint(e.org, "revoked", nil)
		if _, err := st.KeyRevoke(ctx, e.org.ID, revoked.ID, now); err != nil {
			t.Fatal(err)
		}
		past := now.Add(-time.Hour)
		expired, expiredKey := mint(e.org, "expired", &past)
		disabled, disabledKey := mint(e.org, "disabled", nil)
		yes := true
		if _, err := st.UserUpdate(ctx, e.org.ID, disabled.UserID, teammem.UserUpdateParams{Disabled: &yes}); err != nil {
			t.Fatal(err)
		}
		other := MustOrg(t, st, "other", teammem.OrgSettings{})
		offKey, offKeyString := mint(other, "off", nil)
		if _, err := st.OrgUpdate(ctx, other.ID, teammem.OrgUpdateParams{Disabled: &yes}); err != nil {
			t.Fatal(err)
		}
		typed := map[string]string{
			"unknown":       wrongKey(""),
			"unknown-tmk":   "tmk_nope_nope",
			"malformed":     "not a key, zq9-vbx7",
			"known-prefix":  wrongKey(teammem.KeyPrefix(e.keys[teammem.RoleAdmin])),
			"revoked":       revokedKey,
			"expired":       expiredKey,
			"user-disabled": disabledKey,
			"org-disabled":  offKeyString,
		}
		var first string
		for kind, key := range typed {
			r := e.signInAttempt(t, key)
			msg := loginMessage(r)
			if r.Status != http.StatusUnauthorized || msg == "" {
				t.Fatalf("%s key: %d %q, want 401 with a message", kind, r.Status, msg)
			}
			if first == "" {
				first = msg
			} else if msg != first {
				t.Errorf("%s key reads %q, another %q: every refused key must read the same", kind, msg, first)
			}
			if strings.Contains(string(r.Body), key) {
				t.Errorf("%s key: the page echoes the key", kind)
			}
		}
		audited := func(org teammem.Org) []teammem.AuditEvent {
			t.Helper()
			events, err := st.AuditList(ctx, org.ID, teammem.AuditFilter{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			all, _ := json.Marshal(events)
			for kind, key := range typed {
				_, secret, _ := strings.Cut(strings.TrimPrefix(key, "tmk_"), "_")
				if strings.Contains(string(all), key) || len(secret) > 4 && strings.Contains(string(all), secret) {
					t.Errorf("org %s's audit log holds the %s key", org.Slug, kind)
				}
			}
			var failed []teammem.AuditEvent
			for _, ev := range events {
				if ev.Action == "console.sign_in_failed" {
					failed = append(failed, ev)
				}
			}
			return failed
		}
		want := map[string]teammem.APIKey{revoked.ID: revoked, expired.ID: expired, disabled.ID: disabled}
		// A wrong secret for the admin's prefix is audited against the
		// admin's key, as a wrong secret.
		adminKeys, err := st.KeyList(ctx, e.org.ID, teammem.KeyFilter{UserID: e.users[teammem.RoleAdmin].ID})
		if err != nil || len(adminKeys) != 1 {
			t.Fatalf("the admin's keys: %v %v", adminKeys, err)
		}
		admin := adminKeys[0]
		want[admin.ID] = admin
		failed := audited(e.org)
		for _, ev := range failed {
			k, ok := want[ev.Target]
			if !ok {
				t.Errorf("unexpected failed sign-in event %+v", ev)
				continue
			}
			if ev.Details["key_prefix"] != k.Prefix || ev.Details["reason"] == "" || ev.Details["client"] != "127.0.0.1" ||
				(ev.Details["reason"] == "wrong_secret") != (k.ID == admin.ID) {
				t.Errorf("failed sign-in of %s: details %v", k.Name, ev.Details)
			}
			delete(want, ev.Target)
		}
		for _, k := range want {
			t.Errorf("no console.sign_in_failed event for the %s", k.Name)
		}
		if off := audited(other); len(off) != 1 || off[0].Target != offKey.ID {
			t.Errorf("the disabled org's audit log has %+v, want the one failed sign-in of its key", off)
		}
	})
}
