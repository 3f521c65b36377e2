package httpapi_test

import (
	"sync"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// TestOrgPatchesDoNotLoseUpdates sends patches of different fields at once,
// round after round, on both drivers: every field keeps the value its patch
// set. A stale If-Match is refused with the current ETag.
func TestOrgPatchesDoNotLoseUpdates(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		k := e.keys[teammem.RoleAdmin]
		for round := range 15 {
			policy := []string{"reject", "skip"}[round%2]
			var wg sync.WaitGroup
			wg.Go(func() { e.do("PATCH", "/v1/org", k, map[string]any{"secret_policy": policy}).want(t, 200) })
			wg.Go(func() { e.do("PATCH", "/v1/org", k, map[string]any{"max_entries": 100 + round}).want(t, 200) })
			wg.Go(func() { e.do("PATCH", "/v1/org", k, map[string]any{"auto_create_repos": round%2 == 0}).want(t, 200) })
			wg.Wait()
			set := e.do("GET", "/v1/org", k, nil).want(t, 200).JSON(t)["org"].(map[string]any)["settings"].(map[string]any)
			if set["secret_policy"] != policy || set["max_entries"] != float64(100+round) || set["auto_create_repos"] != (round%2 == 0) {
				t.Fatalf("round %d: settings %v lost an update", round, set)
			}
		}
		g := e.do("GET", "/v1/org", k, nil).want(t, 200)
		etag := g.Header.Get("ETag")
		if etag == "" {
			t.Fatal("GET /v1/org sends no ETag")
		}
		p := e.do("PATCH", "/v1/org", k, map[string]any{"name": "Renamed"}, "If-Match", etag).want(t, 200)
		stale := e.do("PATCH", "/v1/org", k, map[string]any{"secret_policy": "skip"}, "If-Match", etag).want(t, 412)
		if d := stale.JSON(t)["error"].(map[string]any)["details"].(map[string]any); d["etag"] != p.Header.Get("ETag") {
			t.Fatalf("412 details %v, want the current ETag %s", d, p.Header.Get("ETag"))
		}
	})
}
