package teammem_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

func TestFsck(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, _ := st.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "o", Name: "o"})
	repo, _ := st.RepoEnsure(ctx, org.ID, "o/r")
	sp, _ := st.SpaceEnsure(ctx, org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
	_, err = teammem.SpaceApply(ctx, st, org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{}, Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
		return []teammem.EntryChange{{Key: "a.md", Op: teammem.OpWrite, Content: "a"}, {Key: "b.md", Op: teammem.OpWrite, Content: "bb"}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := teammem.Fsck(ctx, st)
	if err != nil || len(rep.Problems) != 0 || rep.Spaces != 1 || rep.Entries != 2 {
		t.Fatalf("clean fsck = %+v, %v", rep, err)
	}
	// Corrupt one entry behind the store's back.
	if err := sqlite.ExecForTest(st, `UPDATE entries SET content = 'tampered' WHERE key = 'a.md'`); err != nil {
		t.Fatal(err)
	}
	rep, err = teammem.Fsck(ctx, st)
	if err != nil || len(rep.Problems) < 2 || !strings.Contains(rep.Problems[0].Message, `"a.md"`) {
		t.Fatalf("fsck of a corrupt space = %+v, %v", rep, err)
	}
}
