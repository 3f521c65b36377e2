package httpapi_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// mustPrefixes parses CIDRs for Config.TrustedProxies.
func mustPrefixes(t *testing.T, cidrs ...string) []netip.Prefix {
	t.Helper()
	var out []netip.Prefix
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestConsoleSignInThrottledPerKeyPrefix guesses secrets of one key's
// prefix from 300 addresses, as a trusted proxy reports them: the prefix's
// bucket throttles them although no address is seen twice. Another key
// still signs in from a fresh address.
func TestConsoleSignInThrottledPerKeyPrefix(t *testing.T) {
	t.Parallel()
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		clock := newTestClock()
		e := newV1Env(t, st, func(c *httpapi.Config) {
			c.Clock = clock.Now
			c.TrustedProxies = mustPrefixes(t, "127.0.0.1/32", "::1/128")
		})
		prefix := teammem.KeyPrefix(e.keys[teammem.RoleAdmin])
		got := countStatuses(t, 300, func(i int) resp {
			return e.signInAttempt(t, wrongKey(prefix), "X-Forwarded-For", fmt.Sprintf("198.51.%d.%d", i/250, i%250+1))
		})
		if got[http.StatusUnauthorized] != 10 || got[http.StatusTooManyRequests] != 290 || len(got) != 2 {
			t.Fatalf("300 guesses of one prefix from 300 addresses: %v, want 10 × 401 and 290 × 429", got)
		}
		if r := e.signInAttempt(t, e.keys[teammem.RoleMember], "X-Forwarded-For", "192.0.2.7"); r.Status != http.StatusSeeOther {
			t.Fatalf("another key from a fresh address = %d, want 303: %s", r.Status, loginMessage(r))
		}
		// Behind the proxy, the client is the nearest address the proxy did
		// not add itself; one address is one bucket however it is written.
		got = countStatuses(t, 12, func(i int) resp {
			return e.signInAttempt(t, wrongKey(""), "X-Forwarded-For", []string{"192.0.2.9", "::ffff:192.0.2.9"}[i%2]+", 127.0.0.1")
		})
		if got[http.StatusUnauthorized] != 10 || got[http.StatusTooManyRequests] != 2 {
			t.Fatalf("12 wrong keys from one address behind the proxy: %v, want 10 × 401 and 2 × 429", got)
		}
	})
}

// TestConsoleCookieSecureBehindHTTPS signs in over plain HTTP, as a server
// behind a TLS-terminating proxy is reached: the sign-in and session
// cookies are Secure when the public URL is https or a trusted proxy says
// the request was https (and a form posted from that https origin is
// same-origin), and not when an untrusted peer claims it or nothing does.
func TestConsoleCookieSecureBehindHTTPS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		cfg     func(*httpapi.Config)
		headers []string
		secure  bool
	}{
		{"plain", nil, nil, false},
		{"public url https", func(c *httpapi.Config) { c.PublicURL = "https://teammem.example" }, []string{"Origin", "https://teammem.example"}, true},
		{"public url http", func(c *httpapi.Config) { c.PublicURL = "http://teammem.example" }, nil, false},
		{"trusted proxy says https", func(c *httpapi.Config) { c.TrustedProxies = mustPrefixes(t, "127.0.0.0/8") },
			[]string{"X-Forwarded-Proto", "https", "Origin", "https://{host}"}, true},
		{"trusted proxy says http", func(c *httpapi.Config) { c.TrustedProxies = mustPrefixes(t, "127.0.0.0/8") },
			[]string{"X-Forwarded-Proto", "http"}, false},
		{"untrusted peer says https", func(c *httpapi.Config) { c.TrustedProxies = mustPrefixes(t, "10.0.0.0/8") },
			[]string{"X-Forwarded-Proto", "https"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newV1Env(t, MustOpenStore(t), tc.cfg)
			if !strings.HasPrefix(e.url, "http://") {
				t.Fatalf("the test server is not plain HTTP: %s", e.url)
			}
			headers := append([]string(nil), tc.headers...)
			for i := range headers {
				headers[i] = strings.ReplaceAll(headers[i], "{host}", strings.TrimPrefix(e.url, "http://"))
			}
			key := e.keys[teammem.RoleAdmin]
			r := e.signInAttempt(t, key, headers...)
			if r.Status != http.StatusSeeOther {
				t.Fatalf("sign-in = %d: %s", r.Status, loginMessage(r))
			}
			cookies := r.Header.Values("Set-Cookie")
			if len(cookies) == 0 {
				t.Fatal("no cookie set")
			}
			for _, ck := range cookies {
				if got := strings.Contains(ck, "; Secure"); got != tc.secure {
					t.Errorf("cookie %q: Secure = %v, want %v", ck, got, tc.secure)
				}
			}
		})
	}
}
