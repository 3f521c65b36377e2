package memsync

import (
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

func TestDiscontinuity(t *testing.T) {
	t.Parallel()
	sum := teammem.EntryChecksum("x")
	synced := &ScopeState{SpaceID: "aa", Version: 5, Checksum: "sha256:five", Base: map[string]string{"a.md": sum}}
	for _, tc := range []struct {
		name string
		ss   *ScopeState
		head wire.SpaceHead
		want string
	}{
		{"never synced continues anything", &ScopeState{Base: map[string]string{}}, wire.SpaceHead{SpaceID: "bb", Version: 9}, ""},
		{"space missing", synced, wire.SpaceHead{Checksum: teammem.EmptySpaceChecksum}, ResetForgotten},
		{"another space", synced, wire.SpaceHead{SpaceID: "bb", Version: 7}, ResetReplaced},
		{"version went back", synced, wire.SpaceHead{SpaceID: "aa", Version: 4}, ResetRestored},
		{"same version, other content", synced, wire.SpaceHead{SpaceID: "aa", Version: 5, Checksum: "sha256:other"}, ResetRestored},
		{"moved on", synced, wire.SpaceHead{SpaceID: "aa", Version: 6, Checksum: "sha256:six"}, ""},
		{"a server without ids", synced, wire.SpaceHead{Version: 6}, ""},
		{"first id seen is adopted", &ScopeState{Version: 5, Base: map[string]string{"a.md": sum}}, wire.SpaceHead{SpaceID: "cc", Version: 6}, ""},
		{"unknown checksum after a push", &ScopeState{SpaceID: "aa", Version: 5, Base: map[string]string{"a.md": sum}},
			wire.SpaceHead{SpaceID: "aa", Version: 5, Checksum: "sha256:any"}, ""},
	} {
		if got := discontinuity(tc.ss, tc.head); got != tc.want {
			t.Errorf("%s: discontinuity = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLeadsTo(t *testing.T) {
	t.Parallel()
	a, b, c := teammem.EntryChecksum("a"), teammem.EntryChecksum("b"), teammem.EntryChecksum("c")
	ss := &ScopeState{Base: map[string]string{"a.md": a, "b.md": b}, Foreign: map[string]string{"big.md": c}}
	head := func(sums map[string]string) wire.SpaceHead {
		return wire.SpaceHead{Checksum: teammem.SpaceChecksum(sums)}
	}
	changes := []wire.Change{{Key: "b.md", Op: "delete", Checksum: b}, {Key: "c.md", Op: "upsert", Checksum: c}}
	if !leadsTo(ss, changes, head(map[string]string{"a.md": a, "c.md": c, "big.md": c})) {
		t.Error("changes that continue the history were refused")
	}
	// A restored server wrote c.md after forgetting b.md was ever there: the
	// change list does not mention b.md, so the result differs from its head.
	if leadsTo(ss, changes[1:], head(map[string]string{"a.md": a, "c.md": c, "big.md": c})) {
		t.Error("a history that skipped b.md's deletion was accepted")
	}
	if leadsTo(ss, nil, head(map[string]string{"a.md": a, "b.md": b})) {
		t.Error("a head lacking the foreign entry was accepted")
	}
}

func TestMergeUnion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ours, theirs, want string
		conflict           bool
	}{
		{"a\nb\n", "a\nb\n", "a\nb\n", false},
		{"a\nb\nc\n", "a\nb\n", "a\nb\nc\n", false},   // an older copy adds nothing
		{"a\n", "a\nb\n", "a\nb\n", false},            // theirs is the newer
		{"x\na\ny\n", "a\nz\n", "x\na\ny\nz\n", true}, // both sides keep their lines
		{"title\nold\nend\n", "title\nnew\nend\n", "title\nold\nnew\nend\n", true},
	} {
		got, conflict := MergeUnion(tc.ours, tc.theirs)
		if got != tc.want || conflict != tc.conflict {
			t.Errorf("MergeUnion(%q, %q) = %q, %v; want %q, %v", tc.ours, tc.theirs, got, conflict, tc.want, tc.conflict)
		}
	}
}

func TestDeleteLimit(t *testing.T) {
	t.Parallel()
	for tracked, want := range map[int]int{0: 50, 100: 50, 500: 50, 501: 50, 510: 51, 5000: 500} {
		if got := DeleteLimit(tracked); got != want {
			t.Errorf("DeleteLimit(%d) = %d, want %d", tracked, got, want)
		}
	}
}
