package httpapi_test

import (
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// TestTeamDreamSettings: team_dream, its per-repository overrides and
// team_dream_min_writes are validated like team_writes and shown with
// their defaults in effect.
func TestTeamDreamSettings(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), nil)
	owner := e.keys[teammem.RoleOwner]
	limits := func() map[string]any {
		t.Helper()
		r := e.do("GET", "/v1/org", owner, nil)
		l, _ := r.JSON(t)["limits"].(map[string]any)
		return l
	}
	if l := limits(); l["team_dream"] != "manual" || l["team_dream_min_writes"] != float64(10) {
		t.Fatalf("defaults = %v", l)
	}
	for _, bad := range []map[string]any{
		{"team_dream": "weekly"},
		{"team_dream_repos": map[string]string{"acme/app": "sometimes"}},
		{"team_dream_repos": map[string]string{"not a slug": "off"}},
		{"team_dream_min_writes": -1},
		{"team_dream_min_writes": 1_000_001},
	} {
		if r := e.do("PATCH", "/v1/org", owner, bad); r.Status != 400 {
			t.Errorf("PATCH %v: %d %s", bad, r.Status, r.Body)
		}
	}
	if l := limits(); l["team_dream"] != "manual" {
		t.Fatalf("a refused patch changed the settings: %v", l)
	}
	r := e.do("PATCH", "/v1/org", owner, map[string]any{"team_dream": "nightly", "team_dream_min_writes": 3,
		"team_dream_repos": map[string]string{"acme/app": "off"}})
	if r.Status != 200 {
		t.Fatalf("PATCH: %d %s", r.Status, r.Body)
	}
	if l := limits(); l["team_dream"] != "nightly" || l["team_dream_min_writes"] != float64(3) {
		t.Fatalf("after patch = %v", l)
	}
	if r := e.do("PATCH", "/v1/org", e.keys[teammem.RoleMember], map[string]any{"team_dream": "off"}); r.Status != 403 {
		t.Fatalf("a member's patch: %d", r.Status)
	}
}
