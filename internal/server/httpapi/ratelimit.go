package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/teammem/teammem/internal/teammem"
)

// RateLimit is the shape of one token bucket: Rate tokens a second, at most
// Burst saved up. A Rate of 0 means no bucket.
type RateLimit struct {
	Rate  float64
	Burst int
}

// Token buckets live in each replica's memory: behind a load balancer that
// spreads one client over N replicas, the effective rates are up to N times
// the configured ones.

// level is what a bucket is shared by: one key, every key of one user, or
// every key of one org.
type level int

const (
	levelKey level = iota
	levelUser
	levelOrg
	levels
)

var levelNames = [levels]string{"key", "user", "org"}

// limits holds the buckets on memory writes and those on every other
// authenticated request (reads). The lead's write path calls allowWrite, the
// request middleware allowRead; either is nil-safe.
type limits struct {
	writes, reads *limiter
}

// allowWrite takes a write token of p's key, user and org, or none of them
// and returns ERateLimited with the wait.
func (l limits) allowWrite(p teammem.Principal, now time.Time) error { return l.writes.allow(p, now) }

// allowRead takes a read token of p's key, user and org, or none of them.
func (l limits) allowRead(p teammem.Principal, now time.Time) error { return l.reads.allow(p, now) }

// limiter is the token buckets of one kind of request, per key, per user
// and per org. A request passes only when every bucket that applies has a
// token, and then takes one from each: a burst spread over many keys of one
// user still drains that user's bucket once per request.
type limiter struct {
	kind   string // "writes" or "reads", for messages and details
	shapes [levels]RateLimit
	mu     sync.Mutex
	ids    map[bucketID]*limiterEntry
	swept  time.Time
}

// bucketID names one bucket: the key id at levelKey, else a user or org id.
type bucketID struct {
	level level
	key   string
	id    int64
}

type limiterEntry struct {
	lim  *rate.Limiter
	seen time.Time
}

// newLimiter returns the buckets of kind with the given shapes, or nil (no
// limiting at all) when the per-key rate is 0.
func newLimiter(kind string, key, user, org RateLimit) *limiter {
	if key.Rate <= 0 {
		return nil
	}
	return &limiter{kind: kind, shapes: [levels]RateLimit{key, user, org}, ids: map[bucketID]*limiterEntry{}}
}

// allow takes a token from each of p's buckets, or from none when one of
// them is empty: it then returns ERateLimited naming the bucket with the
// longest wait, so that Retry-After is long enough for all of them.
func (l *limiter) allow(p teammem.Principal, now time.Time) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	var held [levels]*rate.Limiter
	var worst time.Duration
	refused := level(-1)
	for lv := range levels {
		shape := l.shapes[lv]
		if shape.Rate <= 0 {
			continue
		}
		lim := l.bucket(bucketOf(lv, p), shape, now)
		held[lv] = lim
		// Checked before any is taken, so that a refusal costs no bucket a
		// token (it would punish the user's other keys for this one).
		if tokens := lim.TokensAt(now); tokens < 1 {
			wait := time.Duration((1 - tokens) / shape.Rate * float64(time.Second))
			if refused < 0 || wait > worst {
				refused, worst = lv, wait
			}
		}
	}
	if refused >= 0 {
		return l.refusal(refused, worst)
	}
	for _, lim := range held {
		if lim != nil {
			lim.AllowN(now, 1) // cannot fail: checked above under l.mu
		}
	}
	return nil
}

// bucketOf names p's bucket at level lv.
func bucketOf(lv level, p teammem.Principal) bucketID {
	switch lv {
	case levelKey:
		return bucketID{level: lv, key: p.Key.ID}
	case levelUser:
		return bucketID{level: lv, id: p.User.ID}
	default:
		return bucketID{level: lv, id: p.Org.ID}
	}
}

// bucket returns the bucket id, created full when missing.
func (l *limiter) bucket(id bucketID, shape RateLimit, now time.Time) *rate.Limiter {
	e := l.ids[id]
	if e == nil {
		e = &limiterEntry{lim: rate.NewLimiter(rate.Limit(shape.Rate), max(shape.Burst, 1))}
		l.ids[id] = e
	}
	e.seen = now
	return e.lim
}

// sweep drops, once a minute, the buckets idle long enough to be full
// again: a new one would be the same, and memory stays bounded by the keys,
// users and orgs active lately.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.swept) <= time.Minute {
		return
	}
	for id, e := range l.ids {
		shape := l.shapes[id.level]
		refill := time.Duration(float64(max(shape.Burst, 1)) / shape.Rate * float64(time.Second))
		if now.Sub(e.seen) > refill+time.Minute {
			delete(l.ids, id)
		}
	}
	l.swept = now
}

// refusal is the ERateLimited error of an empty bucket at level lv.
func (l *limiter) refusal(lv level, wait time.Duration) error {
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	who := map[level]string{levelKey: "with this key", levelUser: "by this user (all of their keys together)",
		levelOrg: "in this organization"}[lv]
	return teammem.Errorf(teammem.ERateLimited, "too many %s %s; retry in %s s", l.kind, who, strconv.Itoa(secs)).
		WithDetails(map[string]any{"retry_after_seconds": secs, "limit": levelNames[lv] + "_" + l.kind})
}

// limitReads is middleware, behind requireKey, that takes a read token for
// every authenticated request but a memory write (which the write path
// limits with its own buckets): reads of memory, the admin plane, telemetry
// and the setup of an event stream alike. Health and metrics carry no key
// and are not limited.
func (s *Server) limitReads(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isMemoryWrite(r) {
			if err := s.limiter.allowRead(principal(r), s.now()); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isMemoryWrite reports whether r is a write to memory: a PUT of the Claude
// Code endpoint, anything but a read under /v1/repos/ (every such route
// writes a space) or a memory write of a store. Routes that write memory
// elsewhere must be added here, or they take a read token besides their
// write token.
func isMemoryWrite(r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return false
	}
	return r.URL.Path == "/api/claude_code/team_memory" || strings.HasPrefix(r.URL.Path, "/v1/repos/") ||
		isStoreMemoryWrite(r.Method, r.URL.Path)
}
