package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// testClock is a clock tests move by hand, for Config.Clock: rate limits
// refill and keys expire only when the test says so.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock { return &testClock{now: time.Now().UTC().Truncate(time.Second)} }

// Now returns the clock's time.
func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock forward by d.
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// statusCounts counts responses by status.
type statusCounts map[int]int

func (c statusCounts) String() string { return fmt.Sprintf("%d × 200, %d × 429", c[200], c[429]) }

// TestWriteLimitPerUser is issue 12's finding: 50 minted keys of one user
// each had a bucket of their own (978 writes/s against the documented
// 10/s). Now the user's keys share the user's bucket: at one instant the
// user gets the user's burst, whichever keys they spread it over, and a
// second later the rate.
func TestWriteLimitPerUser(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		clock := newTestClock()
		e := newV1Env(t, st, func(c *httpapi.Config) {
			c.WriteRate, c.WriteBurst = 10, 30
			c.UserWrite = httpapi.RateLimit{Rate: 10, Burst: 30}
			c.OrgWrite = httpapi.RateLimit{Rate: 100, Burst: 300}
			c.Clock = clock.Now
		})
		member := e.users[teammem.RoleMember]
		keys := make([]string, 50)
		for i := range keys {
			keys[i] = MustExtraKey(t, st, e.org, member, false)
		}
		write := func(round int) statusCounts {
			got := statusCounts{}
			for i, k := range keys {
				r := e.do("PUT", fmt.Sprintf("%s/entries/k%d.md", team, i), k, fmt.Sprintf("round %d\n", round))
				got[r.Status]++
				if r.Status == 429 {
					if r.Header.Get("Retry-After") == "" || r.JSON(t)["error"].(map[string]any)["details"].(map[string]any)["limit"] != "user_writes" {
						t.Fatalf("429 = %s %s", r.Header, r.Body)
					}
				}
			}
			return got
		}
		// Two rounds over 50 keys at one instant: 100 writes, 30 accepted.
		if got := write(0); got[200] != 30 || got[429] != 20 {
			t.Fatalf("first round over 50 keys: %s; want the user's burst of 30", got)
		}
		if got := write(1); got[200] != 0 || got[429] != 50 {
			t.Fatalf("second round at the same instant: %s; want every write refused", got)
		}
		clock.Add(time.Second)
		if got := write(2); got[200] != 10 || got[429] != 40 {
			t.Fatalf("a second later: %s; want the user's rate, 10", got)
		}
		// Another user of the org has a bucket of their own.
		e.do("PUT", team+"/entries/owner.md", e.keys[teammem.RoleOwner], "mine\n").want(t, 200)
	})
}

// TestWriteLimitPerOrg: many users together get at most the org's bucket.
func TestWriteLimitPerOrg(t *testing.T) {
	clock := newTestClock()
	st := MustOpenStore(t)
	e := newV1Env(t, st, func(c *httpapi.Config) {
		c.WriteRate, c.WriteBurst = 10, 3
		c.UserWrite = httpapi.RateLimit{Rate: 10, Burst: 3}
		c.OrgWrite = httpapi.RateLimit{Rate: 1, Burst: 7}
		c.Clock = clock.Now
	})
	got := statusCounts{}
	for u := range 5 {
		_, key := MustUserKey(t, st, e.org, fmt.Sprintf("writer%d", u), teammem.RoleMember)
		for i := range 3 {
			got[e.do("PUT", fmt.Sprintf("%s/entries/u%d-%d.md", team, u, i), key, "x\n").Status]++
		}
	}
	if got[200] != 7 || got[429] != 8 {
		t.Fatalf("5 users × 3 writes: %s; want the org's burst of 7", got)
	}
}

// TestReadLimit: reads had no limit at all. They now have buckets of their
// own, apart from the write buckets.
func TestReadLimit(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		clock := newTestClock()
		e := newV1Env(t, st, func(c *httpapi.Config) {
			c.WriteRate, c.WriteBurst = 10, 30
			c.Read = httpapi.RateLimit{Rate: 1, Burst: 5}
			c.UserRead = httpapi.RateLimit{Rate: 1, Burst: 8}
			c.Clock = clock.Now
		})
		member := e.users[teammem.RoleMember]
		k1, k2 := e.keys[teammem.RoleMember], MustExtraKey(t, st, e.org, member, true)
		e.do("PUT", team+"/entries/a.md", k1, "a\n").want(t, 200)
		got := statusCounts{}
		for range 7 {
			got[e.do("GET", team+"/entries/a.md", k1, nil).Status]++
		}
		if got[200] != 5 || got[429] != 2 {
			t.Fatalf("7 reads with one key: %s; want the key's read burst of 5", got)
		}
		r := e.do("GET", "/api/claude_code/team_memory?repo=acme/widgets", k1, nil).want(t, 429)
		if r.Header.Get("Retry-After") != "1" {
			t.Fatalf("Retry-After = %q", r.Header.Get("Retry-After"))
		}
		// Writes have their own buckets: an exhausted read bucket does not
		// stop them, and they did not drain it.
		e.do("PUT", team+"/entries/b.md", k1, "b\n").want(t, 200)
		// The user's second key gets the rest of the user's read bucket.
		got = statusCounts{}
		for range 5 {
			got[e.do("GET", "/v1/me", k2, nil).Status]++
		}
		if got[200] != 3 || got[429] != 2 {
			t.Fatalf("the user's second key: %s; want the 3 left of the user's 8", got)
		}
		clock.Add(time.Second)
		e.do("GET", "/v1/me", k2, nil).want(t, 200)
		// Health is never limited.
		for range 10 {
			e.do("GET", "/healthz", "", nil).want(t, 200)
		}
	})
}

// TestEveryKeyedRouteDocumentsReadLimit runs every request that is not a
// memory write with an empty read bucket: each answers 429 as the spec
// documents it.
func TestEveryKeyedRouteDocumentsReadLimit(t *testing.T) {
	cfg := testConfig()
	cfg.Read = httpapi.RateLimit{Rate: 0.001, Burst: 1}
	b, k := setupV1(t, cfg, nil)
	b.do(t, call{Method: http.MethodGet, Path: "/v1/me", Key: k.owner, Want: 200})
	for _, c := range v1KeyedCalls() {
		if c.Method != http.MethodGet && strings.HasPrefix(c.Path, "/v1/repos/") {
			continue // memory writes take write tokens, not read tokens
		}
		c.Key, c.Want, c.Stream = k.owner, http.StatusTooManyRequests, false
		r := b.do(t, c)
		if !strings.Contains(string(r.Body), `"limit":"key_reads"`) {
			t.Errorf("%s %s: %s", c.Method, c.Path, r.Body)
		}
	}
	b.do(t, call{Method: http.MethodGet, Path: "/api/claude_code/team_memory?repo=acme/widgets", Key: k.owner, Want: 429})
}
