package sqlite_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// eraseEnv is a SQLite store with one org, its owner and a repo, and the
// files it writes.
type eraseEnv struct {
	ctx  context.Context
	db   *sqlite.DB
	path string
	org  teammem.Org
	user teammem.User
	repo teammem.Repo
}

func newEraseEnv(t *testing.T) *eraseEnv {
	t.Helper()
	e := &eraseEnv{ctx: context.Background(), path: filepath.Join(t.TempDir(), "teammem.db")}
	var err error
	if e.db, err = sqlite.Open(e.ctx, e.path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.db.Close() })
	if e.org, err = e.db.OrgCreate(e.ctx, teammem.OrgCreateParams{Slug: "acme", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	if e.user, err = e.db.UserCreate(e.ctx, e.org.ID, teammem.UserCreateParams{Handle: "alice", Role: teammem.RoleOwner}); err != nil {
		t.Fatal(err)
	}
	if e.repo, err = e.db.RepoEnsure(e.ctx, e.org.ID, "o/r"); err != nil {
		t.Fatal(err)
	}
	return e
}

// space returns the repo's team space.
func (e *eraseEnv) space(t *testing.T) teammem.Space {
	t.Helper()
	sp, err := e.db.SpaceEnsure(e.ctx, e.org.ID, teammem.SpaceRef{RepoID: e.repo.ID, Scope: teammem.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func (e *eraseEnv) apply(t *testing.T, sp teammem.Space, changes ...teammem.EntryChange) teammem.Space {
	t.Helper()
	sp, err := teammem.SpaceApply(e.ctx, e.db, e.org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: e.user.ID}, Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
		return changes, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// marker returns a string found nowhere else, inside content of n bytes (a
// large n spills the row onto overflow pages, which are freed differently).
func marker(t *testing.T, n int) (string, string) {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	m := "ERASE-ME-" + hex.EncodeToString(b)
	return m, m + "\n" + strings.Repeat("leaked personal data "+m+"\n", n/(len(m)+23)+1)
}

// filesHolding returns which of the database's files (the database, its
// WAL and its shared-memory index) contain m, or, for a marker, its random
// part alone: the search index keeps the words of a text, in lower case.
func (e *eraseEnv) filesHolding(t *testing.T, m string) []string {
	t.Helper()
	word := strings.ToLower(strings.TrimPrefix(m, "ERASE-ME-"))
	var found []string
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(e.path + suffix)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(m)) || bytes.Contains(b, []byte(word)) {
			found = append(found, filepath.Base(e.path+suffix))
		}
	}
	return found
}

func write(key, content string) teammem.EntryChange {
	return teammem.EntryChange{Key: key, Op: teammem.OpWrite, Content: content}
}

// TestErasedBytesLeaveTheFiles writes unique markers, erases them from
// history (a redaction, a space purge, the retention sweep), and searches
// the raw bytes of the database file, the WAL and the shared memory: the
// markers are in the files before and nowhere after. Small and large
// contents, since a large one lives on overflow pages.
func TestErasedBytesLeaveTheFiles(t *testing.T) {
	erasures := map[string]func(t *testing.T, e *eraseEnv, sp teammem.Space){
		"redact": func(t *testing.T, e *eraseEnv, sp teammem.Space) {
			if _, _, err := e.db.VersionRedact(e.ctx, e.org.ID, sp.ID, teammem.VersionRedactParams{Key: "a.md", Version: 1, By: e.user.ID, At: time.Now()}); err != nil {
				t.Fatal(err)
			}
		},
		"space purge": func(t *testing.T, e *eraseEnv, sp teammem.Space) {
			if _, err := e.db.SpaceVersionsPurge(e.ctx, e.org.ID, sp.ID); err != nil {
				t.Fatal(err)
			}
		},
		"retention": func(t *testing.T, e *eraseEnv, sp teammem.Space) {
			if _, err := e.db.VersionsPurge(e.ctx, e.org.ID, teammem.VersionsPurgeParams{MaxPerKey: 1}); err != nil {
				t.Fatal(err)
			}
			if err := e.db.HistoryScrub(e.ctx); err != nil { // as the sweep does
				t.Fatal(err)
			}
		},
	}
	for name, erase := range erasures {
		for _, size := range []int{200, 20_000} {
			t.Run(name+"/"+map[bool]string{true: "large", false: "small"}[size > 4096], func(t *testing.T) {
				t.Parallel()
				e := newEraseEnv(t)
				sp := e.space(t)
				m, content := marker(t, size)
				sp = e.apply(t, sp, write("a.md", content), write("other.md", "unrelated"))
				// The live entry moves on (or goes): only history holds the marker.
				sp = e.apply(t, sp, write("a.md", "nothing to see\n"))
				if got := e.filesHolding(t, m); len(got) == 0 {
					t.Fatal("the marker is in no file before the erasure: the search proves nothing")
				}
				erase(t, e, sp)
				if got := e.filesHolding(t, m); len(got) > 0 {
					t.Fatalf("after the %s the marker is still in %v", name, got)
				}
				// The database still works and holds the rest.
				if got, err := e.db.EntryGet(e.ctx, e.org.ID, sp.ID, "other.md"); err != nil || got.Content != "unrelated" {
					t.Fatalf("other.md after the erasure: %+v, %v", got, err)
				}
			})
		}
	}
}

// TestPurgeShrinksTheFile checks that a new database gives the pages a
// purge freed back to the file system.
func TestPurgeShrinksTheFile(t *testing.T) {
	t.Parallel()
	e := newEraseEnv(t)
	sp := e.space(t)
	for i := range 20 {
		_, content := marker(t, 50_000)
		sp = e.apply(t, sp, write("big.md", content), write("n.md", strings.Repeat("x", i)))
	}
	size := func() int64 { // what the database takes on disk: the file and its WAL
		var n int64
		for _, suffix := range []string{"", "-wal"} {
			if fi, err := os.Stat(e.path + suffix); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	before := size()
	if _, err := e.db.VersionsPurge(e.ctx, e.org.ID, teammem.VersionsPurgeParams{MaxPerKey: 1}); err != nil {
		t.Fatal(err)
	}
	if err := e.db.HistoryScrub(e.ctx); err != nil {
		t.Fatal(err)
	}
	if after := size(); after > before/4 {
		t.Fatalf("the file is %d bytes after purging 19 of 20 large versions, %d before", after, before)
	}
}

// TestErasedProposalBytesLeaveTheFiles: a held write's content, in an
// approved, a rejected and a pending proposal, leaves the database file,
// the WAL and the shared memory with the redaction of the version that
// holds it and with a purge of the space's history.
func TestErasedProposalBytesLeaveTheFiles(t *testing.T) {
	erasures := map[string]func(t *testing.T, e *eraseEnv, sp teammem.Space){
		"redact": func(t *testing.T, e *eraseEnv, sp teammem.Space) {
			if _, _, err := e.db.VersionRedact(e.ctx, e.org.ID, sp.ID, teammem.VersionRedactParams{Key: "a.md", Version: 1, By: e.user.ID, At: time.Now()}); err != nil {
				t.Fatal(err)
			}
		},
		"space purge": func(t *testing.T, e *eraseEnv, sp teammem.Space) {
			if _, err := e.db.SpaceVersionsPurge(e.ctx, e.org.ID, sp.ID); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, erase := range erasures {
		for _, size := range []int{200, 20_000} {
			t.Run(name+"/"+map[bool]string{true: "large", false: "small"}[size > 4096], func(t *testing.T) {
				t.Parallel()
				e := newEraseEnv(t)
				sp := e.space(t)
				m, content := marker(t, size)
				var held []teammem.Proposal
				for _, status := range []teammem.ProposalStatus{teammem.ProposalApproved, teammem.ProposalRejected, teammem.ProposalPending} {
					p, err := e.db.ProposalCreate(e.ctx, e.org.ID, teammem.Proposal{Repo: "o/r", Scope: teammem.ScopeTeam, AuthorID: e.user.ID,
						Reason: teammem.HeldPoisoning, Changes: []teammem.ProposedChange{{Key: "a.md", Op: teammem.OpWrite, Content: content}},
						Findings: []teammem.PoisonFinding{{Path: "a.md", RuleID: "r", Label: "l", Line: 2, Excerpt: m}}})
					if err != nil {
						t.Fatal(err)
					}
					if status != teammem.ProposalPending {
						if _, err := e.db.ProposalDecide(e.ctx, e.org.ID, p.ID, teammem.ProposalDecideParams{Status: status, By: e.user.ID, At: time.Now()}); err != nil {
							t.Fatal(err)
						}
					}
					held = append(held, p)
				}
				sp = e.apply(t, sp, write("a.md", content), write("other.md", "unrelated"))
				sp = e.apply(t, sp, write("a.md", "nothing to see\n"))
				erase(t, e, sp)
				if got := e.filesHolding(t, m); len(got) > 0 {
					t.Fatalf("after the %s the marker is still in %v", name, got)
				}
				for _, p := range held {
					got, err := e.db.ProposalGet(e.ctx, e.org.ID, p.ID)
					if err != nil || got.Changes[0].Content != "" || got.Changes[0].Key != "a.md" || got.Author != "alice" {
						t.Fatalf("proposal %d after the %s: %+v, %v", p.ID, name, got, err)
					}
				}
			})
		}
	}
}
