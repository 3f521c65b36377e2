package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// TestKeysPerUserCapped: keys were unlimited, which multiplied every
// per-key limit. A user now holds at most MaxKeysPerUser active keys,
// whoever creates them; revoked keys make room.
func TestKeysPerUserCapped(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, func(c *httpapi.Config) { c.MaxKeysPerUser = 3 })
		member := e.keys[teammem.RoleMember] // the member's first key
		var ids []string
		for i := range 2 {
			r := e.do("POST", "/v1/org/keys", member, map[string]any{"name": fmt.Sprint("k", i)}).want(t, 201)
			ids = append(ids, r.JSON(t)["id"].(string))
		}
		for _, key := range []string{member, e.keys[teammem.RoleOwner]} {
			r := e.do("POST", "/v1/org/keys", key, map[string]any{"name": "one too many", "user": "member"}).want(t, 409)
			d := r.JSON(t)["error"].(map[string]any)["details"].(map[string]any)
			if d["error_code"] != "too_many_keys" || d["max_keys_per_user"] != float64(3) {
				t.Fatalf("409 details = %v", d)
			}
		}
		// The owner's own keys are counted apart.
		e.do("POST", "/v1/org/keys", e.keys[teammem.RoleOwner], map[string]any{"name": "owner's"}).want(t, 201)
		e.do("DELETE", "/v1/org/keys/"+ids[0], member, nil).want(t, 200)
		e.do("POST", "/v1/org/keys", member, map[string]any{"name": "after a revoke"}).want(t, 201)
	})
}

// TestKeysPerUserCapSpec checks the 409 against the spec.
func TestKeysPerUserCapSpec(t *testing.T) {
	cfg := testConfig()
	cfg.MaxKeysPerUser = 1
	b, k := setupV1(t, cfg, nil)
	b.do(t, call{Method: http.MethodPost, Path: "/v1/org/keys", Key: k.owner, Body: `{"name":"second"}`, Want: http.StatusConflict})
}

// TestKeyMadeByExpiringKeyExpires: an expiring key could mint a key that
// never expires. Now a key made with an expiring key gets its expiry when
// it asks for none, may ask for an earlier one, and is refused a later one.
func TestKeyMadeByExpiringKeyExpires(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		clock := newTestClock()
		e := newV1Env(t, st, func(c *httpapi.Config) { c.Clock = clock.Now })
		expires := clock.Now().Add(24 * time.Hour)
		temp := mustExpiringKey(t, st, e.org, e.users[teammem.RoleAdmin], expires)
		created := func(body map[string]any) (time.Time, bool) {
			r := e.do("POST", "/v1/org/keys", temp, body).want(t, 201)
			var got struct {
				APIKey struct {
					ExpiresAt *time.Time `json:"expires_at"`
				} `json:"api_key"`
			}
			if err := json.Unmarshal(r.Body, &got); err != nil {
				t.Fatal(err)
			}
			if got.APIKey.ExpiresAt == nil {
				return time.Time{}, false
			}
			return *got.APIKey.ExpiresAt, true
		}
		if at, ok := created(map[string]any{"name": "no expiry asked"}); !ok || !at.Equal(expires) {
			t.Fatalf("a key made by a key expiring at %s expires at %v (set: %v)", expires, at, ok)
		}
		// For another user too: the creator's expiry bounds what it hands out.
		if at, ok := created(map[string]any{"name": "for the member", "user": "member"}); !ok || !at.Equal(expires) {
			t.Fatalf("the member's key expires at %v (set: %v)", at, ok)
		}
		earlier := expires.Add(-time.Hour)
		if at, ok := created(map[string]any{"name": "earlier", "expires_at": earlier.Format(time.RFC3339)}); !ok || !at.Equal(earlier) {
			t.Fatalf("an earlier expiry became %v", at)
		}
		later := expires.Add(time.Hour).Format(time.RFC3339)
		e.do("POST", "/v1/org/keys", temp, map[string]any{"name": "later", "expires_at": later}).want(t, 400)
		e.do("POST", "/v1/org/keys", temp, map[string]any{"name": "never", "expires_at": nil}).want(t, 201)
		// A key that never expires still makes keys that never expire.
		r := e.do("POST", "/v1/org/keys", e.keys[teammem.RoleAdmin], map[string]any{"name": "forever"}).want(t, 201)
		if r.JSON(t)["api_key"].(map[string]any)["expires_at"] != nil {
			t.Fatalf("a key of a key without expiry expires: %s", r.Body)
		}
	})
}

// mustExpiringKey creates a key of user that expires at at.
func mustExpiringKey(tb testing.TB, st teammem.Store, org teammem.Org, user teammem.User, at time.Time) string {
	tb.Helper()
	key, prefix := teammem.NewKeyString()
	if _, err := st.KeyCreate(context.Background(), org.ID, teammem.KeyCreateParams{UserID: user.ID, Name: "expiring",
		Prefix: prefix, Hash: teammem.HashKey(key), ExpiresAt: &at}); err != nil {
		tb.Fatal(err)
	}
	return key
}

// TestMaxEntriesCeiling: an org could set max_entries to 10⁹ and grow a
// space past any pull a client can take. PATCH /v1/org now refuses a cap
// above the server's ceiling, naming it, and a cap stored above it (before
// the ceiling) counts as the ceiling.
func TestMaxEntriesCeiling(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, func(c *httpapi.Config) {
			c.Defaults.MaxEntries, c.Defaults.MaxEntriesCeiling = 2, 3
		})
		owner := e.keys[teammem.RoleOwner]
		r := e.do("PATCH", "/v1/org", owner, map[string]any{"max_entries": 1_000_000_000}).want(t, 400)
		if d := r.JSON(t)["error"].(map[string]any)["details"].(map[string]any); d["server_max_entries_ceiling"] != float64(3) {
			t.Fatalf("400 details = %v", d)
		}
		e.do("PATCH", "/v1/org", owner, map[string]any{"max_entries": 3}).want(t, 200)
		// A setting stored before the ceiling existed.
		huge := teammem.OrgSettings{MaxEntries: 1_000_000_000}
		if _, err := st.OrgUpdate(context.Background(), e.org.ID, teammem.OrgUpdateParams{Settings: &huge}); err != nil {
			t.Fatal(err)
		}
		limits := e.do("GET", "/v1/org", owner, nil).want(t, 200).JSON(t)["limits"].(map[string]any)
		if limits["max_entries"] != float64(3) {
			t.Fatalf("limits in effect = %v, want max_entries at the ceiling", limits)
		}
		entries := map[string]string{"a.md": "a", "b.md": "b", "c.md": "c", "d.md": "d"}
		r = e.do("PUT", "/api/claude_code/team_memory?repo=acme/widgets", owner, map[string]any{"entries": entries}).want(t, 413)
		if d := r.JSON(t)["error"].(map[string]any)["details"].(map[string]any); d["max_entries"] != float64(3) {
			t.Fatalf("413 details = %v", d)
		}
	})
}

// TestMaxEntriesCeilingSpec checks the 400 against the spec.
func TestMaxEntriesCeilingSpec(t *testing.T) {
	b, k := setupV1(t, testConfig(), nil)
	r := b.do(t, call{Method: http.MethodPatch, Path: "/v1/org", Key: k.owner, Body: `{"max_entries":5001}`, Want: http.StatusBadRequest})
	if !json.Valid(r.Body) {
		t.Fatal(string(r.Body))
	}
}
