package memsync_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	memsync "github.com/teammem/teammem/internal/client/memsync"
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/secrettest"
)

// TestServerSkipsSecretFileName: the server leaves out a team file whose
// name holds a secret and reports it without the name (issue 21 point 6).
// A client that sent it (one without a scanner of its own) tells from the
// report's key checksum which file that was: it reports it as skipped,
// keeps it on disk, and never takes it for synced, so a later sync does
// not delete it as gone from the server.
func TestServerSkipsSecretFileName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	org, err := db.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	user, err := db.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: "dev", Role: teammem.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	key, prefix := teammem.NewKeyString()
	if _, err := db.KeyCreate(ctx, org.ID, teammem.KeyCreateParams{UserID: user.ID, Name: "dev", Prefix: prefix, Hash: teammem.HashKey(key)}); err != nil {
		t.Fatal(err)
	}
	sc, err := secretscan.New()
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.New(db, secretscan.NewOrgScanner(sc), httpapi.Config{Defaults: teammem.DefaultServerDefaults, MaxBodyBytes: 4 << 20,
		TombstoneRetention: 720 * time.Hour}, nil, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	e := newEngine(t, ts.URL, key) // no scanner of its own: the server's decides
	team := filepath.Join(e.MemoryDir, "team")
	secretName := "notes-" + secrettest.Token("github-pat") + ".md"
	mustWrite(t, team, secretName, "plain text\n")
	mustWrite(t, team, "ok.md", "fine\n")
	rep := mustSync(t, e, teammem.ScopeTeam)
	skipped := false
	for _, s := range rep.Skipped {
		if s.Kind == memsync.SkipServerSecret && s.RuleID == "github-pat" {
			skipped = true
		}
	}
	if !skipped {
		t.Fatalf("the report does not list the file as skipped for its name: %+v", rep)
	}
	for range 2 {
		mustSync(t, e, teammem.ScopeTeam)
	}
	if _, err := os.Stat(filepath.Join(team, secretName)); err != nil {
		t.Fatalf("the file whose name holds a secret is gone from disk: %v", err)
	}
	if got := serverFiles(t, e, teammem.ScopeTeam); len(got) != 1 || got["ok.md"] != "fine\n" {
		t.Fatalf("the server holds %v, want ok.md only", got)
	}
}
