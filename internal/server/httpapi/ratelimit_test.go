package httpapi

import (
	"fmt"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// caller is a principal of key in user of org, as the limiter sees one.
func caller(org, user int64, key string) teammem.Principal {
	return teammem.Principal{Org: teammem.Org{ID: org}, User: teammem.User{ID: user}, Key: teammem.APIKey{ID: key}}
}

func TestLimiterPerKey(t *testing.T) {
	l := newLimiter("writes", RateLimit{2, 3}, RateLimit{}, RateLimit{})
	now := time.Unix(1000, 0)
	for i := range 3 {
		if err := l.allow(caller(1, 1, "k"), now); err != nil {
			t.Fatalf("write %d inside the burst refused: %v", i, err)
		}
	}
	err := l.allow(caller(1, 1, "k"), now)
	if teammem.ErrorCode(err) != teammem.ERateLimited || teammem.ErrorDetails(err)["retry_after_seconds"] != 1 ||
		teammem.ErrorDetails(err)["limit"] != "key_writes" {
		t.Fatalf("over the burst = %v %v", err, teammem.ErrorDetails(err))
	}
	if err := l.allow(caller(1, 1, "other"), now); err != nil {
		t.Fatalf("another key shares the bucket: %v", err)
	}
	if err := l.allow(caller(1, 1, "k"), now.Add(600*time.Millisecond)); err != nil {
		t.Fatalf("refilled token refused: %v", err)
	}
	if newLimiter("writes", RateLimit{0, 5}, RateLimit{1, 1}, RateLimit{1, 1}) != nil ||
		newLimiter("writes", RateLimit{0, 5}, RateLimit{}, RateLimit{}).allow(caller(1, 1, "k"), now) != nil {
		t.Fatal("a zero per-key rate must turn limiting off")
	}
}

// TestLimiterManyKeysOneUser is the finding of issue 12: fifty keys of one
// user each had a full bucket. Now they share the user's: a burst across
// them counts once.
func TestLimiterManyKeysOneUser(t *testing.T) {
	l := newLimiter("writes", RateLimit{10, 30}, RateLimit{10, 30}, RateLimit{100, 300})
	now := time.Unix(1000, 0)
	ok, limited := 0, 0
	for round := range 10 {
		for k := range 50 {
			err := l.allow(caller(1, 7, fmt.Sprintf("key-%d", k)), now)
			switch teammem.ErrorCode(err) {
			case "":
				ok++
			case teammem.ERateLimited:
				limited++
				if got := teammem.ErrorDetails(err)["limit"]; got != "user_writes" {
					t.Fatalf("round %d key %d refused by %v, want the user's bucket", round, k, got)
				}
			default:
				t.Fatal(err)
			}
		}
	}
	if ok != 30 || limited != 470 {
		t.Fatalf("50 keys of one user, 500 writes at one instant: %d accepted, %d limited; want the user's burst, 30", ok, limited)
	}
	// One second later the user's bucket holds 10 tokens again, whichever
	// keys ask.
	ok = 0
	for k := range 50 {
		if l.allow(caller(1, 7, fmt.Sprintf("key-%d", k)), now.Add(time.Second)) == nil {
			ok++
		}
	}
	if ok != 10 {
		t.Fatalf("a second later: %d accepted, want 10", ok)
	}
	// Another user of the org has a bucket of their own.
	if err := l.allow(caller(1, 8, "key-x"), now); err != nil {
		t.Fatalf("another user is limited by the first one's bucket: %v", err)
	}
}

func TestLimiterPerOrg(t *testing.T) {
	l := newLimiter("reads", RateLimit{100, 5}, RateLimit{100, 5}, RateLimit{1, 12})
	now := time.Unix(1000, 0)
	ok := 0
	for u := range int64(4) {
		for k := range 5 {
			if l.allow(caller(1, u, fmt.Sprintf("u%d-k%d", u, k)), now) == nil {
				ok++
			}
		}
	}
	if ok != 12 {
		t.Fatalf("4 users × 5 reads at once = %d accepted, want the org's burst, 12", ok)
	}
	err := l.allow(caller(1, 9, "fresh"), now)
	if teammem.ErrorDetails(err)["limit"] != "org_reads" {
		t.Fatalf("a fresh user of the full org: %v %v", err, teammem.ErrorDetails(err))
	}
	if l.allow(caller(2, 9, "other-org"), now) != nil {
		t.Fatal("another org shares the bucket")
	}
}

// TestLimiterRefusalCostsNothing checks that a request refused by one bucket
// takes no token from the others: a user at their limit does not drain the
// key buckets of their other keys, nor the org's.
func TestLimiterRefusalCostsNothing(t *testing.T) {
	l := newLimiter("writes", RateLimit{1, 2}, RateLimit{1, 2}, RateLimit{1, 3})
	now := time.Unix(1000, 0)
	for range 2 {
		if err := l.allow(caller(1, 1, "a"), now); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		if l.allow(caller(1, 1, "b"), now) == nil {
			t.Fatal("the user's empty bucket let a write through")
		}
	}
	// The org bucket lost only the two accepted writes: one is left.
	if err := l.allow(caller(1, 2, "c"), now); err != nil {
		t.Fatalf("refusals drained the org's bucket: %v", err)
	}
	// Retry-After covers the longest wait: org and user are both empty now.
	err := l.allow(caller(1, 1, "b"), now)
	if secs := teammem.ErrorDetails(err)["retry_after_seconds"]; secs != 1 {
		t.Fatalf("retry after %v, want 1", secs)
	}
}

func TestLimiterSweep(t *testing.T) {
	l := newLimiter("writes", RateLimit{10, 30}, RateLimit{10, 30}, RateLimit{100, 300})
	now := time.Unix(1000, 0)
	for k := range 100 {
		_ = l.allow(caller(1, int64(k), fmt.Sprint(k)), now)
	}
	if len(l.ids) != 201 {
		t.Fatalf("%d buckets, want 100 keys + 100 users + 1 org", len(l.ids))
	}
	_ = l.allow(caller(1, 0, "0"), now.Add(time.Hour))
	if len(l.ids) != 3 {
		t.Fatalf("after an hour idle: %d buckets, want only the one caller's 3", len(l.ids))
	}
}
