package main_test

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/teammem/teammem/internal/testing/testpg"
)

// serverCmd runs a teammem-server subcommand against dsn and returns its
// output and error.
func serverCmd(dsn string, args ...string) (string, error) {
	cmd := exec.Command(serverBin, args...)
	cmd.Env = append(os.Environ(), "TEAMMEM_DATABASE_URL="+dsn)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// fileSum is a file's SHA-256, "" when it is missing.
func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// TestBackupUnderLoad takes `teammem-server backup` while 16 clients push,
// on both drivers, and restores it with `teammem-server restore` into a
// new database: fsck is clean and every write acknowledged before the
// backup began is there, with its content. Around it, every refusal changes
// nothing: a backup over an existing file, a restore into the database a
// running server has open, a restore over a database with orgs, and a file
// that is not a backup.
func TestBackupUnderLoad(t *testing.T) {
	for name, newDSN := range databases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dsn := newDSN(t)
			s := startServer(t, dsn)
			const clients = 16
			type write struct {
				key, content string
				acked        time.Time
			}
			var (
				mu     sync.Mutex
				acked  = make([][]write, clients)
				counts [clients]atomic.Int64
				stop   = make(chan struct{})
				wg     sync.WaitGroup
				failed atomic.Int64
			)
			for i := range clients {
				wg.Go(func() {
					c := newRelClient(bootstrapKey)
					repo := fmt.Sprintf("acme/backup-%02d", i)
					for n := 0; n < 400; n++ {
						select {
						case <-stop:
							return
						default:
						}
						key, content := fmt.Sprintf("n%03d.md", n), fmt.Sprintf("client %d write %d\n", i, n)
						r := c.stockPut(s.URL, repo, map[string]string{key: content}, "")
						if r.Err != nil || r.Status != 200 {
							failed.Add(1)
							t.Errorf("client %d write %d: %d %v %s", i, n, r.Status, r.Err, r.Body)
							return
						}
						at := time.Now()
						mu.Lock()
						acked[i] = append(acked[i], write{key, content, at})
						mu.Unlock()
						counts[i].Add(1)
					}
				})
			}
			least := func() int64 {
				m := int64(1 << 62)
				for i := range clients {
					m = min(m, counts[i].Load())
				}
				return m
			}
			for least() < 10 && failed.Load() == 0 {
				time.Sleep(10 * time.Millisecond)
			}
			dir := t.TempDir()
			file := filepath.Join(dir, "teammem.backup")
			began := time.Now()
			atStart := least()
			out, err := serverCmd(dsn, "backup", file)
			if err != nil {
				t.Fatalf("backup under load: %v\n%s", err, out)
			}
			// Keep the load on until every client wrote past the backup.
			for least() < atStart+5 && failed.Load() == 0 {
				time.Sleep(10 * time.Millisecond)
			}
			close(stop)
			wg.Wait()
			if t.Failed() {
				return
			}
			var total int
			for i := range clients {
				total += len(acked[i])
			}
			t.Logf("%s: %s; %d writes by %d clients acknowledged in all", name, strings.TrimSpace(lastLine(out)), total, clients)

			// Refusals: each changes nothing.
			sum := fileSum(t, file)
			if out, err := serverCmd(dsn, "backup", file); err == nil || !strings.Contains(out, "exists: --force replaces it") {
				t.Errorf("backup over an existing file: %v\n%s", err, out)
			}
			if got := fileSum(t, file); got != sum {
				t.Error("a refused backup changed the existing file")
			}
			if out, err := serverCmd(dsn, "restore", "--force", file); err == nil || !strings.Contains(out, "stop the server") {
				t.Errorf("restore under a running server: %v\n%s", err, out)
			}
			junk := filepath.Join(dir, "junk")
			if err := os.WriteFile(junk, []byte("not a backup\n"), 0o600); err != nil {
				t.Fatal(err)
			}

			// Restore into a new database, then check it.
			var target string
			if name == "sqlite" {
				target = "sqlite://" + filepath.Join(t.TempDir(), "restored.db")
			} else {
				target = testpg.NewDatabase(t)
			}
			if out, err := serverCmd(target, "restore", junk); err == nil || !strings.Contains(out, "not a") {
				t.Errorf("restore of a file that is not a backup: %v\n%s", err, out)
			}
			out, err = serverCmd(target, "restore", file)
			if err != nil || !strings.Contains(out, "fsck clean") {
				t.Fatalf("restore: %v\n%s", err, out)
			}
			t.Logf("%s: %s", name, strings.TrimSpace(lastLine(out)))
			if out, err := serverCmd(target, "restore", file); err == nil || !strings.Contains(out, "holds orgs: --force replaces it") {
				t.Errorf("restore over a database with orgs: %v\n%s", err, out)
			}
			runFsck(t, target)

			r := startServer(t, target)
			c := newRelClient(bootstrapKey)
			var before, after, afterIn int
			for i := range clients {
				snap := c.mustSnapshot(t, r.URL, fmt.Sprintf("acme/backup-%02d", i))
				have := map[string]string{}
				for _, e := range snap.Entries {
					have[e.Key] = e.Content
				}
				for _, w := range acked[i] {
					got, ok := have[w.key]
					switch {
					case w.acked.Before(began):
						before++
						if !ok || got != w.content {
							t.Errorf("client %d: %s, acknowledged before the backup began, restored as %q (present %v)", i, w.key, got, ok)
						}
					case ok:
						after++
						afterIn++
						if got != w.content {
							t.Errorf("client %d: %s restored as %q, written as %q", i, w.key, got, w.content)
						}
					default:
						after++
					}
				}
			}
			t.Logf("%s: %d writes acknowledged before the backup began, all restored; of %d later ones, %d are in the backup", name, before, after, afterIn)
		})
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// TestBackupRefusesAnotherSchema: backup opens nothing it would have to
// migrate. A database at another schema version than the binary's (here
// one behind, as under a server not yet upgraded) is refused with the
// reason, and left at its version.
func TestBackupRefusesAnotherSchema(t *testing.T) {
	forEachDB(t, func(t *testing.T, dsn string) {
		if out, err := serverCmd(dsn, "migrate", "--create"); err != nil {
			t.Fatalf("migrate: %v\n%s", err, out)
		}
		exec := func(q string) int64 {
			t.Helper()
			var v int64
			if strings.HasPrefix(dsn, "sqlite://") {
				db, err := sql.Open("sqlite", strings.TrimPrefix(dsn, "sqlite://"))
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				if err := db.QueryRow(q).Scan(&v); err != nil {
					t.Fatal(err)
				}
				return v
			}
			conn, err := pgx.Connect(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(t.Context())
			if err := conn.QueryRow(t.Context(), q).Scan(&v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		behind := exec(`UPDATE schema_migrations SET version = version - 1 RETURNING version`)
		file := filepath.Join(t.TempDir(), "b")
		out, err := serverCmd(dsn, "backup", file)
		if err == nil || !strings.Contains(out, fmt.Sprintf("schema version %d, this teammem-server's is %d", behind, behind+1)) {
			t.Fatalf("backup of a database one schema behind: %v\n%s", err, out)
		}
		if fileSum(t, file) != "" {
			t.Error("a refused backup wrote its file")
		}
		if v := exec(`SELECT version FROM schema_migrations`); v != behind {
			t.Errorf("the refused backup moved the schema to %d, want %d", v, behind)
		}
	})
}
