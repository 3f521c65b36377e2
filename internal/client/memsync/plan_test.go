package memsync

import (
	"fmt"
	"testing"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/teammem"
)

func file(key, content string) memdir.File {
	return memdir.File{Key: key, Content: []byte(content), Checksum: teammem.EntryChecksum(content)}
}

// TestPlanPushNamesDeletionsAndOverlaps: a new file under a key this
// machine saw deleted names that deletion; an edited synced file never
// does; a file unchanged since an overlapping merge says so, one edited
// since does not.
func TestPlanPushNamesDeletionsAndOverlaps(t *testing.T) {
	sum := teammem.EntryChecksum
	ss := &ScopeState{
		Base:     map[string]string{"edited.md": sum("old"), "merged.md": sum("server side")},
		Deleted:  map[string]int64{"back.md": 7, "edited.md": 3},
		Overlaps: map[string]string{"merged.md": sum("ours\ntheirs\n"), "reviewed.md": sum("stale")},
	}
	files := []memdir.File{file("back.md", "as deleted"), file("edited.md", "new"), file("fresh.md", "x"),
		file("merged.md", "ours\ntheirs\n"), file("reviewed.md", "edited since")}
	present := map[string]bool{}
	for _, f := range files {
		present[f.Key] = true
	}
	p := planPush(files, present, ss)
	got := map[string]string{}
	for _, u := range p.upserts {
		got[u.Key] = fmt.Sprintf("recreates=%d overlap=%v", u.Recreates, u.Overlap)
	}
	want := map[string]string{
		"back.md":     "recreates=7 overlap=false",
		"edited.md":   "recreates=0 overlap=false", // has a base: not a re-creation
		"fresh.md":    "recreates=0 overlap=false",
		"merged.md":   "recreates=0 overlap=true",
		"reviewed.md": "recreates=0 overlap=false",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("upserts %v, want %v", got, want)
	}
}

// TestRememberedDeletions: a deletion with a version is remembered until
// the key is synced again, and only the newest maxRememberedDeletes are.
func TestRememberedDeletions(t *testing.T) {
	ss := (&State{}).Scope(teammem.ScopeTeam)
	ss.sawDeleted("a.md", 4)
	ss.sawDeleted("b.md", 0) // unknown version: names nothing
	if ss.Deleted["a.md"] != 4 || len(ss.Deleted) != 1 {
		t.Fatalf("deleted = %v", ss.Deleted)
	}
	ss.synced("a.md", teammem.EntryChecksum("x"))
	if len(ss.Deleted) != 0 {
		t.Fatalf("a synced key is still remembered as deleted: %v", ss.Deleted)
	}
	for i := range maxRememberedDeletes + 5 {
		ss.sawDeleted(fmt.Sprintf("n%d.md", i), int64(i+1))
	}
	ss.pruneDeleted()
	if len(ss.Deleted) != maxRememberedDeletes || ss.Deleted["n0.md"] != 0 || ss.Deleted[fmt.Sprintf("n%d.md", maxRememberedDeletes+4)] == 0 {
		t.Fatalf("after pruning: %d remembered, oldest kept %v", len(ss.Deleted), ss.Deleted["n0.md"])
	}
}
