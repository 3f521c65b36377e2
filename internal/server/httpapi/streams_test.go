package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// rest returns the events a stream sends until it ends; it fails the test
// when the stream stays open.
func (s *sseStream) rest(t *testing.T) []sse {
	t.Helper()
	var out []sse
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-s.ch:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("the stream is still open after %d events: %+v", len(out), out)
		}
	}
}

// wantStreamEnded checks that the events end with one error event of the
// reason and that no change was announced before it.
func wantStreamEnded(t *testing.T, evs []sse, reason string) {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].event != "error" {
		t.Fatalf("the stream ended without an error event: %+v", evs)
	}
	for _, ev := range evs[:len(evs)-1] {
		if ev.event == "change" {
			t.Fatalf("a change was announced to a key that may no longer read: %+v", evs)
		}
	}
	data := evs[len(evs)-1].data
	var body any
	if err := json.Unmarshal([]byte(data), &body); err != nil {
		t.Fatalf("error event data %q: %v", data, err)
	}
	schema := MustLoadSpec(t).Components.Schemas["StreamErrorEvent"].Value
	if err := schema.VisitJSON(body, openapi3.MultiErrors()); err != nil {
		t.Errorf("error event %s does not match StreamErrorEvent: %v", data, err)
	}
	if got := body.(map[string]any)["error"].(map[string]any)["details"].(map[string]any)["reason"]; got != reason {
		t.Fatalf("stream ended for %v, want %s: %s", got, reason, data)
	}
}

// TestStreamEndsOnRevocation: event streams kept delivering after their
// key was revoked. Now the next change ends the stream with an error event
// instead of announcing it.
func TestStreamEndsOnRevocation(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, func(c *httpapi.Config) { c.StreamRecheck = time.Hour }) // only events re-check here
		member := e.users[teammem.RoleMember]
		key := MustExtraKey(t, st, e.org, member, true)
		events := e.stream(t, key, "")
		events.next(t) // connected
		keys := e.do("GET", "/v1/org/keys", e.keys[teammem.RoleMember], nil).want(t, 200).JSON(t)["keys"].([]any)
		for _, k := range keys {
			if k := k.(map[string]any); k["read_only"] == true {
				e.do("DELETE", "/v1/org/keys/"+k["id"].(string), e.keys[teammem.RoleMember], nil).want(t, 200)
			}
		}
		e.do("PUT", team+"/entries/a.md", e.keys[teammem.RoleOwner], "after the revocation\n").want(t, 200)
		wantStreamEnded(t, events.rest(t), "key_revoked")
		e.do("GET", "/v1/repos/acme/widgets/events", key, nil).want(t, 401)
	})
}

// TestStreamEndsWhenUserDisabled: disabling the user ends their streams.
func TestStreamEndsWhenUserDisabled(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, func(c *httpapi.Config) { c.StreamRecheck = time.Hour })
		events := e.stream(t, e.keys[teammem.RoleMember], "")
		events.next(t)
		e.do("PATCH", "/v1/org/users/member", e.keys[teammem.RoleOwner], map[string]any{"disabled": true}).want(t, 200)
		e.do("PUT", team+"/entries/a.md", e.keys[teammem.RoleOwner], "after\n").want(t, 200)
		wantStreamEnded(t, events.rest(t), "user_disabled")
	})
}

// TestStreamEndsWhenKeyExpires: a key that expires while its stream is open
// hears of no change after its expiry.
func TestStreamEndsWhenKeyExpires(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		clock := newTestClock()
		e := newV1Env(t, st, func(c *httpapi.Config) { c.Clock, c.StreamRecheck = clock.Now, time.Hour })
		key := mustExpiringKey(t, st, e.org, e.users[teammem.RoleViewer], clock.Now().Add(time.Hour))
		events := e.stream(t, key, "")
		events.next(t)
		e.do("PUT", team+"/entries/a.md", e.keys[teammem.RoleOwner], "before\n").want(t, 200)
		if ev := events.next(t); ev.event != "change" {
			t.Fatalf("before the expiry: %+v", ev)
		}
		clock.Add(time.Hour)
		e.do("PUT", team+"/entries/a.md", e.keys[teammem.RoleOwner], "after\n").want(t, 200)
		wantStreamEnded(t, events.rest(t), "key_expired")
	})
}

// TestStreamRechecksTheDatabase: a revocation this replica never heard of
// (made on another replica, its notification lost; here straight in the
// store) ends an idle stream at the next periodic re-check, which reads the
// key from the database past the auth cache.
func TestStreamRechecksTheDatabase(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, func(c *httpapi.Config) { c.StreamRecheck = 50 * time.Millisecond })
		key, prefix := teammem.NewKeyString()
		k, err := st.KeyCreate(context.Background(), e.org.ID, teammem.KeyCreateParams{UserID: e.users[teammem.RoleViewer].ID,
			Name: "elsewhere", Prefix: prefix, Hash: teammem.HashKey(key)})
		if err != nil {
			t.Fatal(err)
		}
		events := e.stream(t, key, "")
		events.next(t)
		if _, err := st.KeyRevoke(context.Background(), e.org.ID, k.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		wantStreamEnded(t, events.rest(t), "key_revoked")
	})
}

// TestStreamsPerKeyCapped: one key holds at most MaxStreamsPerKey streams;
// one more is 429 as the spec documents it, and a closed stream frees its
// slot.
func TestStreamsPerKeyCapped(t *testing.T) {
	cfg := testConfig()
	cfg.MaxStreamsPerKey = 2
	b, k := setupV1(t, cfg, nil)
	path := "/v1/repos/acme/widgets/events"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func(ctx context.Context) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.url+path, nil)
		req.Header.Set("x-api-key", k.member)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first, firstCancel := context.WithCancel(ctx)
	if res := open(first); res.StatusCode != 200 {
		t.Fatalf("first stream: %d", res.StatusCode)
	}
	if res := open(ctx); res.StatusCode != 200 {
		t.Fatalf("second stream: %d", res.StatusCode)
	}
	if res := open(ctx); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third stream of a key capped at 2: %d, want 429", res.StatusCode)
	}
	r := b.do(t, call{Method: http.MethodGet, Path: path, Key: k.member, Want: http.StatusTooManyRequests})
	if r.Header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After: %s", r.Header)
	}
	b.do(t, call{Method: http.MethodGet, Path: path, Key: k.viewer, Want: 200, Stream: true}) // another key's own slots
	firstCancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := open(ctx)
		if res.StatusCode == 200 {
			break
		}
		res.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("a closed stream never freed its slot")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
