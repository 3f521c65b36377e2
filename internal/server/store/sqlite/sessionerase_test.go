package sqlite_test

import (
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// TestErasedSessionNotesLeaveTheFiles uploads session notes holding a
// unique marker, then purges the history of the team space they were
// uploaded for, or of their uploader's personal space, and searches the
// raw bytes of the database file, the WAL and the shared memory: the
// marker is in the files before and nowhere after, and the notes are gone.
func TestErasedSessionNotesLeaveTheFiles(t *testing.T) {
	const session = "0a1b2c3d-0000-4000-8000-0000000000aa"
	purges := map[string]func(t *testing.T, e *eraseEnv, team teammem.Space) teammem.Space{
		"team purge": func(t *testing.T, e *eraseEnv, team teammem.Space) teammem.Space { return team },
		"uploader's personal purge": func(t *testing.T, e *eraseEnv, team teammem.Space) teammem.Space {
			sp, err := e.db.SpaceEnsure(e.ctx, e.org.ID, teammem.SpaceRef{RepoID: e.repo.ID, Scope: teammem.ScopePersonal, UserID: e.user.ID})
			if err != nil {
				t.Fatal(err)
			}
			return sp
		},
	}
	for name, purged := range purges {
		for _, size := range []int{200, 20_000} {
			t.Run(name+"/"+map[bool]string{true: "large", false: "small"}[size > 4096], func(t *testing.T) {
				t.Parallel()
				e := newEraseEnv(t)
				team := e.space(t)
				m, content := marker(t, size)
				if _, err := e.db.SessionNotesPut(e.ctx, e.org.ID, teammem.SessionNotesPutParams{ClaudeCodeSessionID: session,
					SpaceID: team.ID, UploaderID: e.user.ID, KeyID: "key_1", Content: content}); err != nil {
					t.Fatal(err)
				}
				if got := e.filesHolding(t, m); len(got) == 0 {
					t.Fatal("the marker is in no file before the erasure: the search proves nothing")
				}
				if _, err := e.db.SpaceVersionsPurge(e.ctx, e.org.ID, purged(t, e, team).ID); err != nil {
					t.Fatal(err)
				}
				if got := e.filesHolding(t, m); len(got) > 0 {
					t.Fatalf("after the %s the marker is still in %v", name, got)
				}
				if l, err := e.db.SessionNotesList(e.ctx, e.org.ID, session); err != nil || len(l) != 0 {
					t.Fatalf("notes after the %s: %+v, %v", name, l, err)
				}
			})
		}
	}
}
