package console

import (
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

// TestClientAddr reads the client address as the throttle and the audit
// see it: X-Forwarded-For counts only from a trusted peer, is read from the
// right past the trusted proxies, and stops at an entry that is no address.
func TestClientAddr(t *testing.T) {
	proxies := Proxies{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	for _, tc := range []struct {
		peer, xff, proto string
		want             string
		https            bool
	}{
		{"192.0.2.1:5000", "", "", "192.0.2.1", false},
		{"192.0.2.1:5000", "198.51.100.7", "https", "192.0.2.1", false}, // untrusted peer: header ignored
		{"10.1.2.3:5000", "", "https", "10.1.2.3", true},
		{"10.1.2.3:5000", "198.51.100.7", "https, http", "198.51.100.7", true},
		{"10.1.2.3:5000", "203.0.113.9, 198.51.100.7, 10.9.9.9", "http", "198.51.100.7", false}, // spoofed leftmost entry never reached
		{"10.1.2.3:5000", "10.4.4.4, 10.5.5.5", "", "10.4.4.4", false},                          // only proxies: the farthest
		{"10.1.2.3:5000", "198.51.100.7, garbage", "", "10.1.2.3", false},                       // garbage written by the peer
		{"[::1]:5000", "::ffff:198.51.100.8", "HTTPS", "198.51.100.8", true},
	} {
		r := httptest.NewRequest("GET", "/ui/login", nil)
		r.RemoteAddr = tc.peer
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if tc.proto != "" {
			r.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		if got := proxies.clientAddr(r).String(); got != tc.want {
			t.Errorf("peer %s, X-Forwarded-For %q: client %s, want %s", tc.peer, tc.xff, got, tc.want)
		}
		if got := proxies.forwardedHTTPS(r); got != tc.https {
			t.Errorf("peer %s, X-Forwarded-Proto %q: https = %v, want %v", tc.peer, tc.proto, got, tc.https)
		}
	}
	if a, b := bucketAddr(netip.MustParseAddr("2001:db8::1")), bucketAddr(netip.MustParseAddr("2001:db8::ffff:2")); a != b {
		t.Errorf("two addresses of one IPv6 /64 have buckets %s and %s", a, b)
	}
}

// TestSignInThrottleBoundedAndRefunded checks that a successful attempt
// costs nothing, that a flood of new prefixes past the cap shares one
// overflow bucket, and that idle buckets are swept.
func TestSignInThrottleBoundedAndRefunded(t *testing.T) {
	th := newSignInThrottle(SignInLimit{Every: time.Minute, Burst: 2})
	now := time.Unix(1_700_000_000, 0)
	for range 5 {
		tk, wait := th.take("a", "p", now)
		if wait > 0 {
			t.Fatal("a refunded attempt cost a token")
		}
		th.refund(tk, now)
	}
	for i := range 3 {
		if _, wait := th.take("a", "p", now); (wait > 0) != (i == 2) {
			t.Fatalf("failure %d: wait %v", i, wait)
		}
	}
	for i := range maxSignInBuckets + 10 {
		th.take("b", string(rune(i+0x100)), now)
	}
	if n := len(th.kinds[1]); n > maxSignInBuckets+1 {
		t.Errorf("%d prefix buckets, want at most %d", n, maxSignInBuckets+1)
	}
	th.take("c", "", now.Add(time.Hour))
	if n := len(th.kinds[1]); n != 0 {
		t.Errorf("%d prefix buckets after an idle hour, want 0", n)
	}
}
