package memsync

import (
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// TestSkipHeld: a held file is not sent again while unchanged, goes again
// once edited, and is forgotten once the server's copy caught up.
func TestSkipHeld(t *testing.T) {
	sum := teammem.EntryChecksum
	ss := &ScopeState{Base: map[string]string{"gone.md": sum("old")}, Held: map[string]HeldFile{
		"same.md": {Checksum: sum("held"), Proposal: 1}, "edited.md": {Checksum: sum("held"), Proposal: 1},
		"gone.md": {Proposal: 2}, "approved.md": {Checksum: sum("done"), Proposal: 3}}}
	ss.Base["approved.md"] = sum("done")
	empty := ""
	p := pushPlan{content: map[string]string{"same.md": "held", "edited.md": "new", "approved.md": "done"},
		upserts: []wire.BatchUpsert{{Key: "same.md", Content: "held", Base: &empty}, {Key: "edited.md", Content: "new", Base: &empty}},
		deletes: []wire.BatchDelete{{Key: "gone.md"}}}
	rep := &Report{}
	skipHeld(ss, &p, rep)
	if len(p.upserts) != 1 || p.upserts[0].Key != "edited.md" || len(p.deletes) != 0 {
		t.Fatalf("plan after skipHeld: %+v", p)
	}
	if _, ok := ss.Held["edited.md"]; ok {
		t.Error("an edited held file is still held")
	}
	if _, ok := ss.Held["approved.md"]; ok {
		t.Error("a file whose server copy caught up is still held")
	}
	if len(rep.HeldForReview) != 2 {
		t.Errorf("report held = %v, want same.md and gone.md", rep.HeldForReview)
	}
}
