package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// BenchmarkWriteSessionIndex measures one committed write carrying a
// Claude Code session id with and without the partial index 0012_sessions
// adds (entry_versions_session), over a space already holding 5,000
// versions of 500 sessions: the index is the only cost sessions add to
// the write path.
func BenchmarkWriteSessionIndex(b *testing.B) {
	for _, withIndex := range []bool{true, false} {
		b.Run(fmt.Sprintf("index=%v", withIndex), func(b *testing.B) {
			ctx := context.Background()
			db, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if !withIndex {
				if _, err := db.w.ExecContext(ctx, `DROP INDEX entry_versions_session`); err != nil {
					b.Fatal(err)
				}
			}
			org, _ := db.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "bench", Name: "Bench"})
			user, _ := db.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: "u", Role: teammem.RoleOwner})
			repo, _ := db.RepoEnsure(ctx, org.ID, "o/r")
			sp, err := db.SpaceEnsure(ctx, org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
			if err != nil {
				b.Fatal(err)
			}
			write := func(i int) {
				session := fmt.Sprintf("%08x-0000-4000-8000-000000000000", i/10)
				_, err := teammem.SpaceApply(ctx, db, org.ID, sp.ID, teammem.ApplyParams{
					Actor: teammem.Actor{UserID: user.ID, ClientID: "bench", SessionID: session},
					Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
						return []teammem.EntryChange{{Key: fmt.Sprintf("k%d.md", i%100), Op: teammem.OpWrite, Content: fmt.Sprintf("v%d", i)}}, nil
					}})
				if err != nil {
					b.Fatal(err)
				}
			}
			for i := range 5000 {
				write(i)
			}
			b.ResetTimer()
			for i := range b.N {
				write(5000 + i)
			}
		})
	}
}
