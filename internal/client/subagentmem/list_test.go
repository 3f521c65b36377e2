package subagentmem_test

import (
	"path/filepath"
	"testing"

	"github.com/teammem/teammem/internal/client/subagentmem"
)

func TestAgentsList(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	r := subagentmem.Roots{ConfigHome: filepath.Join(base, "claude"), Project: filepath.Join(base, "repo")}
	const at = "2025-06-01T12:00:00Z"

	// User memory of a plugin agent that also has a snapshot: memory and no
	// marker, so an update is available.
	mustWrite(t, r.Dir(subagentmem.ScopeUser, "plug:rev"), "MEMORY.md", "x")
	mustWrite(t, r.Dir(subagentmem.ScopeUser, "plug:rev"), "topics/a.md", "x")
	mustWrite(t, r.Dir(subagentmem.ScopeUser, "plug:rev"), "notes.txt", "x")
	mustWrite(t, r.SnapshotDir("plug:rev"), "snapshot.json", snapshotJSON(at))
	// A snapshot with no memory yet: initialize, in user scope.
	mustWrite(t, r.SnapshotDir("fresh"), "snapshot.json", snapshotJSON(at))
	mustWrite(t, r.SnapshotDir("fresh"), "MEMORY.md", "x")
	// A snapshot for an agent whose definition declares local memory.
	mustWrite(t, r.SnapshotDir("seeded"), "snapshot.json", snapshotJSON(at))
	mustWrite(t, r.Project, ".claude/agents/seeded.md", "---\nname: seeded\ndescription: d\nmemory: local\n---\nYou seed.\n")
	// A snapshot directory without metadata is not a snapshot.
	mustWrite(t, r.SnapshotDir("broken"), "MEMORY.md", "x")
	// Project and local memory of one agent, discovered from directories.
	mustWrite(t, r.Dir(subagentmem.ScopeProject, "tester"), "MEMORY.md", "x")
	mustWrite(t, r.Dir(subagentmem.ScopeLocal, "tester"), "a.md", "x")
	mustWrite(t, r.Dir(subagentmem.ScopeLocal, "tester"), "b.md", "x")
	// Definitions: declared memory without a directory yet; a user definition
	// overridden by a project one; no memory; unusable names.
	mustWrite(t, r.ConfigHome, "agents/docs.md", "---\nname: docs\nmemory: user\n---\n")
	mustWrite(t, r.Project, ".claude/agents/sub/docs.md", "---\nname: docs\nmemory: project\n---\n")
	mustWrite(t, r.Project, ".claude/agents/plain.md", "---\nname: plain\ndescription: no memory\n---\n")
	mustWrite(t, r.Project, ".claude/agents/evil.md", "---\nname: ../../evil\nmemory: user\n---\n")
	mustWrite(t, r.Project, ".claude/agents/odd.md", "---\nname: odd\nmemory: everywhere\n---\n")

	got, err := subagentmem.List(r)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		typ, dirName string
		scope        subagentmem.Scope
		exists       bool
		files        int
		declared     subagentmem.Scope
		decision     subagentmem.Decision
	}
	want := []row{
		{"docs", "docs", subagentmem.ScopeProject, false, 0, subagentmem.ScopeProject, subagentmem.DecisionNone},
		{"fresh", "fresh", subagentmem.ScopeUser, false, 0, "", subagentmem.DecisionInitialize},
		{"plug:rev", "plug-rev", subagentmem.ScopeUser, true, 2, "", subagentmem.DecisionUpdate},
		{"seeded", "seeded", subagentmem.ScopeLocal, false, 0, subagentmem.ScopeLocal, subagentmem.DecisionInitialize},
		{"tester", "tester", subagentmem.ScopeProject, true, 1, "", subagentmem.DecisionNone},
		{"tester", "tester", subagentmem.ScopeLocal, true, 2, "", subagentmem.DecisionNone},
	}
	if len(got) != len(want) {
		t.Fatalf("List returned %d agents, want %d: %+v", len(got), len(want), got)
	}
	for i, a := range got {
		w := want[i]
		if (row{a.Type, a.DirName, a.Scope, a.Exists, a.Files, a.Declared, a.Decision}) != w {
			t.Errorf("agent %d = %+v, want %+v", i, a, w)
		}
		if a.Dir != r.Dir(a.Scope, a.Type) {
			t.Errorf("%s dir = %s", a.Type, a.Dir)
		}
		if (a.Snapshot != nil) != (a.Decision != subagentmem.DecisionNone) {
			t.Errorf("%s snapshot = %+v with decision %s", a.Type, a.Snapshot, a.Decision)
		}
	}
	if s := got[2].Snapshot; s == nil || s.UpdatedAt != at || s.Dir != r.SnapshotDir("plug:rev") {
		t.Errorf("plug:rev snapshot = %+v", s)
	}
}

func TestAgentsListEmpty(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	got, err := subagentmem.List(subagentmem.Roots{ConfigHome: filepath.Join(base, "none"), Project: filepath.Join(base, "nothing")})
	if err != nil || len(got) != 0 {
		t.Errorf("List = %+v, %v", got, err)
	}
}
