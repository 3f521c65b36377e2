package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// agentsRow is one agent of `teammem agents --json`.
type agentsRow struct {
	Type     string `json:"agent_type"`
	Scope    string `json:"scope"`
	Dir      string `json:"dir"`
	Exists   bool   `json:"exists"`
	Files    int    `json:"md_files"`
	Decision string `json:"decision"`
}

type agentsResult struct {
	Project string      `json:"project"`
	Agents  []agentsRow `json:"agents"`
	Applied []struct {
		Type   string   `json:"agent_type"`
		Copied []string `json:"copied"`
	} `json:"applied"`
}

func (m *machine) agents(args ...string) agentsResult {
	m.t.Helper()
	var r agentsResult
	out := m.must(append([]string{"agents", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		m.t.Fatalf("%v:\n%s", err, out)
	}
	return r
}

func (r agentsResult) find(t *testing.T, agentType, scope string) agentsRow {
	t.Helper()
	for _, a := range r.Agents {
		if a.Type == agentType && a.Scope == scope {
			return a
		}
	}
	t.Fatalf("no %s agent %s in %+v", scope, agentType, r.Agents)
	return agentsRow{}
}

// TestAgents lists agent memory in a clone with a snapshot for a plugin
// agent: --apply seeds its user memory once and never overwrites it.
func TestAgents(t *testing.T) {
	t.Parallel()
	m := newMachine(t, "http://127.0.0.1:1", "git@github.com:o/r.git")
	snap := filepath.Join(m.repo, ".claude", "agent-memory-snapshots", "plug:reviewer")
	m.write(snap, "snapshot.json", `{"updatedAt": "2025-06-01T12:00:00.000Z"}`)
	m.write(snap, "MEMORY.md", "- [Style](style.md) — review style\n")
	m.write(snap, "style.md", "prefer small diffs\n")
	m.write(filepath.Join(m.repo, ".claude", "agent-memory", "tester"), "MEMORY.md", "flaky: TestWatch\n")
	userDir := filepath.Join(m.home, ".claude", "agent-memory", "plug-reviewer")

	// From a subdirectory, the repository's .claude/ is found.
	sub := filepath.Join(m.repo, "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	r := m.agents("--cwd", sub)
	if want, _ := filepath.EvalSymlinks(m.repo); r.Project != want {
		t.Errorf("project = %s, want %s", r.Project, want)
	}
	rev := r.find(t, "plug:reviewer", "user")
	if rev.Dir != userDir || rev.Exists || rev.Decision != "initialize" {
		t.Errorf("reviewer before --apply: %+v", rev)
	}
	if tester := r.find(t, "tester", "project"); tester.Files != 1 || tester.Decision != "none" {
		t.Errorf("tester: %+v", tester)
	}
	contains(t, m.must("agents"), "teammem agents --apply")

	r = m.agents("--apply")
	if len(r.Applied) != 1 || r.Applied[0].Type != "plug:reviewer" || !slices.Equal(r.Applied[0].Copied, []string{"MEMORY.md", "style.md"}) {
		t.Fatalf("applied: %+v", r.Applied)
	}
	if rev := r.find(t, "plug:reviewer", "user"); rev.Files != 2 || rev.Decision != "none" {
		t.Errorf("reviewer after --apply: %+v", rev)
	}
	if got := read(t, userDir, "style.md"); got != "prefer small diffs\n" {
		t.Errorf("style.md = %q", got)
	}
	if got := read(t, userDir, "snapshot.json"); got != "<missing>" {
		t.Errorf("snapshot.json copied: %q", got)
	}
	var marker map[string]any
	if err := json.Unmarshal([]byte(read(t, userDir, ".snapshot-synced.json")), &marker); err != nil || marker["syncedFrom"] != "2025-06-01T12:00:00.000Z" {
		t.Errorf("marker = %v, %v", marker, err)
	}

	// The agent learns; then a newer snapshot arrives: reported, not applied.
	m.write(userDir, "style.md", "prefer small diffs\nname tests after behaviour\n")
	m.write(snap, "snapshot.json", `{"updatedAt": "2025-07-01T00:00:00Z"}`)
	m.write(snap, "style.md", "the team's new style\n")
	if rev := m.agents().find(t, "plug:reviewer", "user"); rev.Decision != "update-available" {
		t.Errorf("after a newer snapshot: %+v", rev)
	}
	out := m.must("agents", "--apply")
	contains(t, out, "update-available")
	contains(t, out, "never overwrites")
	if got := read(t, userDir, "style.md"); got != "prefer small diffs\nname tests after behaviour\n" {
		t.Errorf("--apply overwrote style.md: %q", got)
	}
}
