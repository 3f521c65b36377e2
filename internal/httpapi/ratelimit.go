package httpapi

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/teammem/teammem/internal/teammem"
)

// writeLimiter is a token bucket per API key on writes. Buckets live in
// each replica's memory: behind a load balancer that spreads one client
// over N replicas, the effective rate is up to N times the configured one.
type writeLimiter struct {
	rate  rate.Limit
	burst int
	mu    sync.Mutex
	keys  map[string]*limiterEntry
	swept time.Time
}

type limiterEntry struct {
	lim  *rate.Limiter
	seen time.Time
}

func newWriteLimiter(perSecond float64, burst int) *writeLimiter {
	if perSecond <= 0 {
		return nil
	}
	return &writeLimiter{rate: rate.Limit(perSecond), burst: max(burst, 1), keys: map[string]*limiterEntry{}}
}

// allow takes a token for keyID or returns ERateLimited with Retry-After.
func (l *writeLimiter) allow(keyID string, now time.Time) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		// Drop buckets idle long enough to be full again.
		for k, e := range l.keys {
			if now.Sub(e.seen) > time.Duration(float64(l.burst)/float64(l.rate)*float64(time.Second))+time.Minute {
				delete(l.keys, k)
			}
		}
		l.swept = now
	}
	e := l.keys[keyID]
	if e == nil {
		e = &limiterEntry{lim: rate.NewLimiter(l.rate, l.burst)}
		l.keys[keyID] = e
	}
	e.seen = now
	if e.lim.AllowN(now, 1) {
		return nil
	}
	wait := time.Duration(float64(time.Second) / float64(l.rate))
	if r := e.lim.ReserveN(now, 1); r.OK() {
		wait = r.DelayFrom(now)
		r.CancelAt(now)
	}
	secs := int(math.Ceil(wait.Seconds()))
	return teammem.Errorf(teammem.ERateLimited, "too many writes with this key; retry in %d s", max(secs, 1)).
		WithDetails(map[string]any{"retry_after_seconds": max(secs, 1)})
}
