package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/testing/e2etest"
	"github.com/teammem/teammem/internal/testing/testpg"
)

// restartable is a teammem-server that stops and starts again at the same
// address, so its clients keep talking to "the same server URL" while its
// database is backed up, restored or swapped underneath.
type restartable struct {
	t    *testing.T
	addr string
	dsn  string
	env  []string
	cmd  *exec.Cmd
}

func newRestartable(t *testing.T, dsn string, env ...string) *restartable {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &restartable{t: t, addr: ln.Addr().String(), dsn: dsn, env: env}
	ln.Close()
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *restartable) url() string { return "http://" + s.addr }

func (s *restartable) start() {
	s.t.Helper()
	_, s.cmd, _ = e2etest.StartServer(s.t, serverBin, append([]string{"TEAMMEM_ADDR=" + s.addr,
		"TEAMMEM_DATABASE_URL=" + s.dsn, "TEAMMEM_BOOTSTRAP_KEY=" + serverKey, "TEAMMEM_WRITE_RATE=0", "TEAMMEM_READ_RATE=0"}, s.env...)...)
}

func (s *restartable) stop() {
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(os.Interrupt)
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// dsns are the databases the backup tests run on.
var dsns = map[string]func(t *testing.T) string{
	"sqlite":   func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "teammem.db") },
	"postgres": func(t *testing.T) string { return testpg.NewDatabase(t) },
}

// serverTool runs a teammem-server subcommand against dsn, the way an
// operator would, failing the test on an error.
func serverTool(t *testing.T, dsn string, args ...string) {
	t.Helper()
	cmd := exec.Command(serverBin, args...)
	cmd.Env = append(os.Environ(), "TEAMMEM_DATABASE_URL="+dsn)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("teammem-server %v: %v\n%s", args, err, out)
	}
}

// files returns every file under dir (relative, slash-separated), sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// serverKeys lists the keys of a space as the server holds them.
func serverKeys(t *testing.T, server, key, scope string) []string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, server+"/v1/repos/acme/widgets/"+scope+"?view=hashes", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		return nil
	}
	var body struct {
		Entries []struct{ Key string } `json:"entries"`
	}
	if b, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusOK || json.Unmarshal(b, &body) != nil {
		t.Fatalf("GET %s space: %d %s", scope, res.StatusCode, b)
	}
	var keys []string
	for _, e := range body.Entries {
		keys = append(keys, e.Key)
	}
	slices.Sort(keys)
	return keys
}

// TestServerRestoredFromBackup syncs two machines, backs the server up
// while it serves (teammem-server backup), writes more on one machine,
// restores the older backup (teammem-server restore) and syncs both
// again: on both drivers no file is lost on either machine, the server ends
// with every file, and the client says the server went back in time. A
// second round restores the backup again and lets a new machine write past
// the first one's version, so only the history check can tell.
func TestServerRestoredFromBackup(t *testing.T) {
	t.Parallel()
	for name, newDSN := range dsns {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dsn := newDSN(t)
			srv := newRestartable(t, dsn)
			a := newMachine(t, srv.url(), "git@github.com:acme/widgets.git")
			b := newMachine(t, srv.url(), "https://github.com/acme/widgets")
			A, B := a.memDir(), b.memDir()
			a.write(A, "team/MEMORY.md", "- [Build](build.md)\n")
			a.write(A, "team/build.md", "make all\n")
			a.write(A, "me.md", "personal\n")
			a.must("sync")
			b.must("sync")

			backup := filepath.Join(t.TempDir(), "backup")
			serverTool(t, dsn, "backup", backup)

			// Three separate syncs after the backup: a's version moves three ahead.
			a.write(A, "team/deploy.md", "ship it\n")
			a.must("sync")
			a.write(A, "team/build.md", "make all\nmake test\n")
			a.write(A, "later.md", "personal, later\n")
			a.must("sync")
			a.write(A, "team/ops/oncall.md", "page the lead\n")
			a.must("sync")
			beforeA, beforeB := files(t, A), files(t, B)

			srv.stop()
			serverTool(t, dsn, "restore", "--force", backup)
			srv.start()

			b.must("sync") // b never saw the later writes: nothing changes there
			out := a.must("sync")
			contains(t, out, "went back in time")
			b.must("sync")
			afterA, afterB := files(t, A), files(t, B)
			t.Logf("%s: machine a %d files before the restore, %d after; machine b %d before, %d after",
				name, len(beforeA), len(afterA), len(beforeB), len(afterB))
			if !slices.Equal(afterA, beforeA) || !slices.Equal(afterB, beforeA) {
				t.Fatalf("after the restore: a has %v, b has %v; a had %v", afterA, afterB, beforeA)
			}
			if got := read(t, B, "team/build.md"); got != "make all\nmake test\n" {
				t.Fatalf("b's build.md = %q", got)
			}
			wantTeam := []string{"MEMORY.md", "build.md", "deploy.md", "ops/oncall.md"}
			if got := serverKeys(t, srv.url(), serverKey, "team"); !slices.Equal(got, wantTeam) {
				t.Fatalf("server team keys %v, want %v", got, wantTeam)
			}
			if got := serverKeys(t, srv.url(), serverKey, "personal"); !slices.Equal(got, []string{"later.md", "me.md"}) {
				t.Fatalf("server personal keys %v", got)
			}

			// Round two: restore again, then a new machine c writes six
			// commits, so the server's version passes a's before a syncs
			// and only the history check can tell.
			srv.stop()
			serverTool(t, dsn, "restore", "--force", backup)
			srv.start()
			c := newMachine(t, srv.url(), "git@github.com:acme/widgets.git")
			C := c.memDir()
			c.must("sync", "--scope", "team")
			for i := range 6 {
				c.write(C, fmt.Sprintf("team/c%d.md", i), "from c\n")
				c.must("sync", "--scope", "team")
			}
			out = a.must("sync", "--scope", "team")
			contains(t, out, "went back in time")
			c.must("sync", "--scope", "team")
			b.must("sync", "--scope", "team")
			wantTeam = []string{"MEMORY.md", "build.md", "c0.md", "c1.md", "c2.md", "c3.md", "c4.md", "c5.md", "deploy.md", "ops/oncall.md"}
			if got := serverKeys(t, srv.url(), serverKey, "team"); !slices.Equal(got, wantTeam) {
				t.Fatalf("round two: server team keys %v, want %v", got, wantTeam)
			}
			for _, m := range []string{A, B, C} {
				if got := files(t, filepath.Join(m, "team")); !slices.Equal(got, wantTeam) {
					t.Fatalf("round two: %s has %v", m, got)
				}
			}
		})
	}
}

// TestServerReplacedOrForgotten points a synced machine at a fresh server
// at the same URL, then switches its key to another org whose space already
// holds a file: each time the files are uploaded again and none is deleted.
func TestServerReplacedOrForgotten(t *testing.T) {
	t.Parallel()
	const adminKey = "restore-admin-key-0123456789abcdefghijk"
	srv := newRestartable(t, "sqlite://"+filepath.Join(t.TempDir(), "first.db"), "TEAMMEM_ADMIN_KEY="+adminKey)
	a := newMachine(t, srv.url(), "git@github.com:acme/widgets.git")
	A := a.memDir()
	a.write(A, "team/build.md", "make all\n")
	a.write(A, "team/deploy.md", "ship it\n")
	a.write(A, "me.md", "personal\n")
	a.must("sync")
	before := files(t, A)

	srv.stop()
	srv.dsn = "sqlite://" + filepath.Join(t.TempDir(), "fresh.db")
	srv.start()
	out := a.must("sync")
	contains(t, out, "no longer has this space")
	if got := files(t, A); !slices.Equal(got, before) {
		t.Fatalf("after the fresh server: %v, want %v", got, before)
	}
	if got := serverKeys(t, srv.url(), serverKey, "team"); !slices.Equal(got, []string{"build.md", "deploy.md"}) {
		t.Fatalf("fresh server's team keys %v", got)
	}

	// Another org, whose acme/widgets already holds a file of its own.
	req, _ := http.NewRequest(http.MethodPost, srv.url()+"/v1/admin/orgs", strings.NewReader(`{"slug":"other"}`))
	req.Header.Set("Authorization", "Bearer "+adminKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		OwnerKey string `json:"owner_key"`
	}
	if err := json.NewDecoder(res.Body).Decode(&created); err != nil || created.OwnerKey == "" {
		t.Fatalf("create org: %d %v", res.StatusCode, err)
	}
	res.Body.Close()
	c := newMachine(t, srv.url(), "git@github.com:acme/widgets.git")
	c.env = append(c.env, "TEAMMEM_API_KEY="+created.OwnerKey)
	C := c.memDir()
	c.write(C, "team/theirs.md", "the other org's note\n")
	c.write(C, "team/build.md", "make all\nmake lint\n")
	c.must("sync")

	a.env = append(a.env, "TEAMMEM_API_KEY="+created.OwnerKey)
	out = a.must("sync")
	contains(t, out, "not the one last synced")
	wantTeam := []string{"build.md", "deploy.md", "theirs.md"}
	if got := files(t, filepath.Join(A, "team")); !slices.Equal(got, wantTeam) {
		t.Fatalf("a's team files %v, want %v", got, wantTeam)
	}
	if got := read(t, A, "team/build.md"); got != "make all\nmake lint\n" {
		t.Fatalf("build.md merged to %q", got)
	}
	if got := serverKeys(t, srv.url(), created.OwnerKey, "team"); !slices.Equal(got, wantTeam) {
		t.Fatalf("other org's team keys %v, want %v", got, wantTeam)
	}
	if got := serverKeys(t, srv.url(), serverKey, "team"); !slices.Equal(got, []string{"build.md", "deploy.md"}) {
		t.Fatalf("first org's team keys changed: %v", got)
	}
}

// TestMassDeleteGuard removes 60 of 100 synced files on one machine: the
// deletions are held until --allow-mass-delete, then reach the server, and
// the other machine holds them in turn until it allows them too.
func TestMassDeleteGuard(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := newMachine(t, srv, "git@github.com:acme/widgets.git")
	b := newMachine(t, srv, "https://github.com/acme/widgets")
	A, B := a.memDir(), b.memDir()
	for i := range 100 {
		a.write(A, fmt.Sprintf("team/n%03d.md", i), fmt.Sprintf("note %d\n", i))
	}
	a.must("sync")
	b.must("sync")
	for i := range 60 {
		if err := os.Remove(filepath.Join(A, "team", fmt.Sprintf("n%03d.md", i))); err != nil {
			t.Fatal(err)
		}
	}
	out := a.must("sync")
	contains(t, out, "held 60 local deletions: more than the mass-delete guard allows (50)")
	if got := len(serverKeys(t, srv, serverKey, "team")); got != 100 {
		t.Fatalf("server has %d entries after a held sync, want 100", got)
	}
	var st struct {
		Scopes []struct {
			Scope             string   `json:"scope"`
			HeldRemoteDeletes []string `json:"held_remote_deletes"`
			HeldLocalDeletes  []string `json:"held_local_deletes"`
		} `json:"scopes"`
	}
	if err := json.Unmarshal([]byte(a.must("status", "--json")), &st); err != nil || len(st.Scopes[0].HeldRemoteDeletes) != 60 {
		t.Fatalf("status --json: %v %+v", err, st)
	}
	contains(t, a.must("status"), "held        60 local deletions (more than 50)")

	contains(t, a.must("sync", "--allow-mass-delete"), "60 deleted on the server")
	if got := len(serverKeys(t, srv, serverKey, "team")); got != 40 {
		t.Fatalf("server has %d entries, want 40", got)
	}
	out = b.must("sync")
	contains(t, out, "held 60 deletions from the server")
	if got := len(files(t, filepath.Join(B, "team"))); got != 100 {
		t.Fatalf("b has %d files after a held pull, want 100", got)
	}
	contains(t, b.must("status"), "held        60 deletions from the server")
	b.must("sync") // held again, and nothing re-uploaded
	if got := len(serverKeys(t, srv, serverKey, "team")); got != 40 {
		t.Fatalf("server has %d entries after b's held syncs, want 40", got)
	}
	contains(t, b.must("sync", "--allow-mass-delete"), "60 removed locally")
	if got := len(files(t, filepath.Join(B, "team"))); got != 40 {
		t.Fatalf("b has %d files, want 40", got)
	}
	if err := json.Unmarshal([]byte(b.must("status", "--json")), &st); err != nil || len(st.Scopes[0].HeldLocalDeletes) != 0 {
		t.Fatalf("status --json after the allowed sync: %v %+v", err, st)
	}
}

// TestOverlapShownUntilChanged edits the same line on two machines: the
// merge keeps both, names the file in sync output, status and --json, and
// status stops naming it once the file is edited again.
func TestOverlapShownUntilChanged(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := newMachine(t, srv, "git@github.com:acme/widgets.git")
	b := newMachine(t, srv, "https://github.com/acme/widgets")
	A, B := a.memDir(), b.memDir()
	a.write(A, "team/build.md", "run make\n")
	a.must("sync")
	b.must("sync")
	a.write(A, "team/build.md", "run make all\n")
	b.write(B, "team/build.md", "run make test\n")
	a.must("sync")
	out := b.must("sync")
	contains(t, out, "merged with overlap: review build.md")
	var rep struct {
		Scopes []struct {
			Overlapped []string `json:"overlapped"`
		} `json:"scopes"`
	}
	if err := json.Unmarshal([]byte(b.must("status", "--json")), &rep); err != nil || !slices.Equal(rep.Scopes[0].Overlapped, []string{"build.md"}) {
		t.Fatalf("status --json: %v %+v", err, rep)
	}
	contains(t, b.must("status"), "merged with overlap: review build.md")
	b.must("sync") // still unreviewed: still shown
	contains(t, b.must("status"), "merged with overlap: review build.md")
	b.write(B, "team/build.md", "run make all test\n")
	if out := b.must("status"); strings.Contains(out, "merged with overlap") {
		t.Fatalf("status still names a file edited since the merge:\n%s", out)
	}
}
