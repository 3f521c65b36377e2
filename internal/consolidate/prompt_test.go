package consolidate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/consolidate"
)

func TestStorePrompt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 6, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		in        consolidate.StoreInput
		want, not []string
	}{
		{"with guidance", consolidate.StoreInput{StoreName: "payments", Now: now, MaxTurns: 7, Instructions: "Focus on the deploy notes.",
			Sessions: []consolidate.Session{{ID: "sesn_ab"}, {ID: "sesn_cd", LastActive: now}}},
			[]string{"Memory store: payments\n", "This store is shared with the whole team", "/MEMORY.md", "/sessions/sesn_ab.md\n",
				"/sessions/sesn_cd.md (last active", "Today is 2026-03-06 (Friday).", "read-only", "## Guidance from the requester",
				"Focus on the deploy notes.\n", "at most 7 turns", "under 200 lines and about 25 KB", "## 4. Prune and index"},
			[]string{"team/ is shared with everyone on the repository", "transcript"}},
		{"no guidance, no sessions", consolidate.StoreInput{Now: now},
			[]string{"No session material was given", "at most 30 turns"},
			[]string{"Guidance from the requester"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := consolidate.StorePrompt(c.in)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("prompt lacks %q:\n%s", w, got)
				}
			}
			for _, n := range c.not {
				if strings.Contains(strings.ToLower(got), strings.ToLower(n)) {
					t.Errorf("prompt holds %q", n)
				}
			}
		})
	}
	if consolidate.System(consolidate.InStore) != consolidate.StoreSystem || !strings.Contains(consolidate.StoreSystem, "This store is shared with the whole team") {
		t.Error("store system prompt")
	}
	if consolidate.System(consolidate.InDirectory) != consolidate.DirectorySystem {
		t.Error("directory system prompt")
	}
}
