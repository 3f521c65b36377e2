package console

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The sign-in door: who is knocking (the client address, taken from a
// trusted proxy's X-Forwarded-For only), whether the request was https
// (for the cookie's Secure flag), and the buckets that throttle failed
// sign-ins per client address and per key prefix.

// SignInLimit is the shape of a sign-in bucket: Burst failed sign-ins at
// once, then one every Every. A zero Every means the default.
type SignInLimit struct {
	Every time.Duration
	Burst int
}

// DefaultSignInLimit is the bucket of each client address and of each key
// prefix: 10 failed sign-ins, then one every 6 s (10 a minute).
var DefaultSignInLimit = SignInLimit{Every: 6 * time.Second, Burst: 10}

// maxSignInBuckets bounds the buckets kept per kind; past it, new
// addresses or prefixes share one overflow bucket, so a flood of made-up
// prefixes costs memory once and throttles itself.
const maxSignInBuckets = 100_000

// overflowBucket is the shared bucket of callers past maxSignInBuckets.
const overflowBucket = "\x00overflow"

// Proxies is the set of peers whose X-Forwarded-For and X-Forwarded-Proto
// are believed (TEAMMEM_TRUSTED_PROXIES).
type Proxies []netip.Prefix

// trusts reports whether a is one of the proxies.
func (ps Proxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr is the address of the connection's other end.
func peerAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// clientAddr is the address of the client r comes from: the peer, unless
// the peer is a trusted proxy; then the nearest address in X-Forwarded-For
// (read from the right) that is not a trusted proxy itself. An entry that
// does not parse stops the walk at the proxy that wrote it.
func (ps Proxies) clientAddr(r *http.Request) netip.Addr {
	addr := peerAddr(r)
	if !ps.trusts(addr) {
		return addr
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h := strings.TrimSpace(hops[i])
		if h == "" {
			continue
		}
		a, err := netip.ParseAddr(h)
		if err != nil {
			return addr
		}
		addr = a.Unmap()
		if !ps.trusts(addr) {
			return addr
		}
	}
	return addr
}

// forwardedHTTPS reports whether a trusted proxy says r reached it over
// https: the first (client-facing) value of X-Forwarded-Proto.
func (ps Proxies) forwardedHTTPS(r *http.Request) bool {
	if !ps.trusts(peerAddr(r)) {
		return false
	}
	first, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(first), "https")
}

// bucketAddr is the bucket name of a client address: the address, or its
// /64 for IPv6, which one host commonly holds whole.
func bucketAddr(a netip.Addr) string {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// signInThrottle holds the buckets of failed sign-ins, per client address
// and per key prefix. An attempt takes a token from both before its key is
// looked up, so a throttled caller learns nothing about any key; a
// successful sign-in gives them back, so only failures count.
type signInThrottle struct {
	limit SignInLimit
	mu    sync.Mutex
	kinds [2]map[string]*signInBucket // by address, by key prefix
	swept time.Time
}

type signInBucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// signInTicket is an attempt's claim on its buckets.
type signInTicket struct{ held []*rate.Reservation }

func newSignInThrottle(l SignInLimit) *signInThrottle {
	if l.Every <= 0 {
		l.Every = DefaultSignInLimit.Every
	}
	if l.Burst < 1 {
		l.Burst = DefaultSignInLimit.Burst
	}
	return &signInThrottle{limit: l, kinds: [2]map[string]*signInBucket{{}, {}}}
}

// take claims a token of the address's bucket and, when prefix is not
// empty, of the prefix's. When either is empty it claims none and returns
// how long until both have one.
func (t *signInThrottle) take(addr, prefix string, now time.Time) (signInTicket, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweep(now)
	names := []string{addr, prefix}
	var lims []*rate.Limiter
	var wait time.Duration
	for kind, name := range names {
		if kind > 0 && name == "" {
			continue
		}
		lim := t.bucket(kind, name, now)
		lims = append(lims, lim)
		if tokens := lim.TokensAt(now); tokens < 1 {
			wait = max(wait, time.Duration((1-tokens)*float64(t.limit.Every)))
		}
	}
	if wait > 0 {
		return signInTicket{}, wait
	}
	var tk signInTicket
	for _, lim := range lims {
		tk.held = append(tk.held, lim.ReserveN(now, 1))
	}
	return tk, 0
}

// refund gives a successful sign-in's tokens back.
func (t *signInThrottle) refund(tk signInTicket, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range tk.held {
		r.CancelAt(now)
	}
}

// bucket returns the bucket name of kind, created full when missing.
func (t *signInThrottle) bucket(kind int, name string, now time.Time) *rate.Limiter {
	m := t.kinds[kind]
	b := m[name]
	if b == nil {
		if len(m) >= maxSignInBuckets {
			name = overflowBucket
			if b = m[name]; b != nil {
				b.seen = now
				return b.lim
			}
		}
		b = &signInBucket{lim: rate.NewLimiter(rate.Every(t.limit.Every), t.limit.Burst)}
		m[name] = b
	}
	b.seen = now
	return b.lim
}

// sweep drops, once a minute, the buckets idle long enough to be full
// again: a new one would be the same.
func (t *signInThrottle) sweep(now time.Time) {
	if now.Sub(t.swept) <= time.Minute {
		return
	}
	refill := t.limit.Every * time.Duration(t.limit.Burst)
	for _, m := range t.kinds {
		for name, b := range m {
			if now.Sub(b.seen) > refill {
				delete(m, name)
			}
		}
	}
	t.swept = now
}

// retrySeconds is a wait as whole seconds for Retry-After, at least 1.
func retrySeconds(d time.Duration) int { return max(int(math.Ceil(d.Seconds())), 1) }
