package sqlite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// TestCheckpointsLeaveTheWriter: a write of more than a checkpoint's worth
// wakes the checkpointer, whose PASSIVE checkpoint copies the write into
// the database file, although the writer's own auto-checkpoint is set far
// above the write's size.
func TestCheckpointsLeaveTheWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "teammem.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	org, err := db.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := db.RepoEnsure(ctx, org.ID, "o/r")
	sp, err := db.SpaceEnsure(ctx, org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	const marker = "checkpointed-marker-4b1f"
	body := strings.Repeat("all work and no play\n", 12000) // 252 KB
	var changes []teammem.EntryChange
	for i := range 10 { // 10 × 252 KB, twice (entries and history): 5 MB
		changes = append(changes, teammem.EntryChange{Key: fmt.Sprintf("e%02d.md", i), Op: teammem.OpWrite, Content: marker + body})
	}
	if 2*10*len(body) < checkpointBytes || 2*10*len(body) > writerCheckpointPages*4096 {
		t.Fatal("the write must be over a checkpoint's worth and under the writer's backstop")
	}
	before := db.ckpt.runs.Load()
	if _, err := teammem.SpaceApply(ctx, db, org.ID, sp.ID, teammem.ApplyParams{Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
		return changes, nil
	}}); err != nil {
		t.Fatal(err)
	}
	// The checkpointer runs in the background: wait for it, generously.
	for deadline := time.Now().Add(30 * time.Second); db.ckpt.runs.Load() == before; {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint ran after a 5 MB write")
		}
		time.Sleep(10 * time.Millisecond)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(file, []byte(marker)) {
		t.Error("the write is not in the database file after the checkpoint")
	}
}
