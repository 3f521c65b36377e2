package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/testing/fixtures"
)

// TestTwoMachines syncs two clones of one repo through a real server:
// creates, edits, nested directories, deletions, a concurrent edit of one
// file (merged, nothing lost), a file with a secret and a 300 KB file.
func TestTwoMachines(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := newMachine(t, srv, "git@github.com:acme/widgets.git")
	b := newMachine(t, srv, "https://github.com/acme/widgets")
	A, B := a.memDir(), b.memDir()
	if A == B || !strings.HasSuffix(A, filepath.Join("memory")) {
		t.Fatalf("memory dirs %s and %s", A, B)
	}
	a.write(A, "team/MEMORY.md", "- [Testing](testing.md) — how we test\n")
	a.write(A, "team/testing.md", "line 1\nline 2\nline 3\n")
	a.write(A, "team/deep/nested/dir/notes.md", "nested\n")
	a.write(A, "user_role.md", "personal to the developer\n")
	token := "ghp_" + strings.Repeat("aB3dE5fG7h", 3) + "iJ1kL2"
	a.write(A, "team/creds.md", "ci token "+token+"\n")
	a.write(A, "team/huge.md", strings.Repeat("x", 300_000))
	out := a.must("sync")
	contains(t, out, "skipped creds.md: secret: GitHub PAT (github-pat)")
	contains(t, out, "skipped huge.md: larger than 250000 bytes")
	contains(t, out, "checksum matches the server")

	b.must("sync")
	for _, k := range []string{"team/MEMORY.md", "team/testing.md", "team/deep/nested/dir/notes.md", "user_role.md"} {
		if read(t, B, k) != read(t, A, k) {
			t.Errorf("%s on b = %q, want %q", k, read(t, B, k), read(t, A, k))
		}
	}
	for _, k := range []string{"team/creds.md", "team/huge.md"} {
		if read(t, B, k) != "<missing>" {
			t.Errorf("%s reached machine b", k)
		}
	}

	// Both edit testing.md at once: a's edit lands first, b's sync merges.
	a.write(A, "team/testing.md", "line 1 (a)\nline 2\nline 3\n")
	b.write(B, "team/testing.md", "line 1\nline 2\nline 3 (b)\n")
	a.must("push")
	out = b.must("sync")
	contains(t, out, "merged testing.md")
	a.must("pull")
	want := "line 1 (a)\nline 2\nline 3 (b)\n"
	if read(t, A, "team/testing.md") != want || read(t, B, "team/testing.md") != want {
		t.Fatalf("merge: a=%q b=%q", read(t, A, "team/testing.md"), read(t, B, "team/testing.md"))
	}
	// The same line edited on both sides keeps both lines.
	a.write(A, "user_role.md", "from a\n")
	b.write(B, "user_role.md", "from b\n")
	a.must("sync")
	b.must("sync")
	a.must("sync")
	for _, m := range []string{read(t, A, "user_role.md"), read(t, B, "user_role.md")} {
		if !strings.Contains(m, "from a") || !strings.Contains(m, "from b") {
			t.Fatalf("conflicting edit lost a side: %q", m)
		}
	}

	// Deletions travel and stick.
	if err := os.Remove(filepath.Join(B, "team", "deep", "nested", "dir", "notes.md")); err != nil {
		t.Fatal(err)
	}
	contains(t, b.must("push", "--scope", "team"), "1 deleted on the server")
	a.must("sync")
	if _, err := os.Stat(filepath.Join(A, "team", "deep")); !os.IsNotExist(err) {
		t.Fatalf("deleted file's directories remain on a: %v", err)
	}

	// Status shows both scopes in sync and the held-back files.
	var st struct {
		Repo   string `json:"repo"`
		User   string `json:"user"`
		Scopes []struct {
			Scope   string `json:"scope"`
			InSync  *bool  `json:"checksum_matches_server"`
			Changed []string
			Held    []struct{ Key, Reason string } `json:"held_back"`
		} `json:"scopes"`
	}
	if err := json.Unmarshal([]byte(a.must("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Repo != "acme/widgets" || st.User != "admin" || len(st.Scopes) != 2 || st.Scopes[0].InSync == nil || !*st.Scopes[0].InSync || len(st.Scopes[0].Held) != 2 {
		t.Fatalf("status = %+v", st)
	}
	// The secret never reached the server.
	scan, _, code := a.run("scan")
	if code != 3 || !strings.Contains(scan, "creds.md") || strings.Contains(scan, token) {
		t.Fatalf("scan exit %d:\n%s", code, scan)
	}
}

// watch starts teammem watch with args on m until the test ends, and waits
// for its live event stream.
func (m *machine) watch(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(clientBin, append([]string{"watch"}, args...)...)
	cmd.Dir, cmd.Env = m.repo, m.env
	logs := &syncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		t.Logf("watch log:\n%s", logs.String())
	})
	for !strings.Contains(logs.String(), "live updates connected") {
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWatchMaxWait rewrites a file on A faster than the debounce for longer
// than --max-wait: B must get a version while the writes go on.
func TestWatchMaxWait(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := newMachine(t, srv, "git@github.com:acme/busy.git")
	b := newMachine(t, srv, "git@github.com:acme/busy.git")
	a.watch(t, "--debounce", "300ms", "--max-wait", "1s")
	b.watch(t)
	A, B := a.memDir(), b.memDir()
	start := time.Now()
	seen := false
	for i := 0; time.Since(start) < 4*time.Second; i++ {
		a.write(A, "team/busy.md", fmt.Sprintf("revision %d\n", i))
		if _, err := os.Stat(filepath.Join(B, "team", "busy.md")); err == nil {
			seen = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !seen {
		t.Fatal("a file rewritten every 100 ms never reached B within 4 s (--max-wait 1s)")
	}
	t.Logf("first version on B after %v of continuous writes", time.Since(start).Round(time.Millisecond))
}

// TestWatchPropagates runs `teammem watch` on two machines: a file saved on
// one is on the other's disk within seconds, through live events.
func TestWatchPropagates(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := newMachine(t, srv, "git@github.com:acme/live.git")
	b := newMachine(t, srv, "git@github.com:acme/live.git")
	A, B := a.memDir(), b.memDir()
	for _, m := range []*machine{a, b} {
		m.watch(t)
	}
	var took []time.Duration
	for i, key := range []string{"team/new.md", "team/sub/dir/deep.md", "personal-note.md"} {
		content := strings.Repeat("x", i+1) + "\n"
		a.write(A, key, content)
		took = append(took, waitFile(t, B, key, content, 20*time.Second))
	}
	t.Logf("propagation a → b (2 s debounce included): %v", took)
	// Edits go the other way too, and deletions travel.
	b.write(B, "team/new.md", "edited on b\n")
	waitFile(t, A, "team/new.md", "edited on b\n", 20*time.Second)
	if err := os.Remove(filepath.Join(A, "team", "new.md")); err != nil {
		t.Fatal(err)
	}
	waitFile(t, B, "team/new.md", "<missing>", 20*time.Second)
}

// TestIndexLint lints the repository's memory directory (testdata/memory): its two
// dangling links and the topic file the index leaves out are reported, and the exit code is 3.
func TestIndexLint(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("testdata", "memory"))
	if err != nil {
		t.Fatal(err)
	}
	out := checkIndexLint(t, dir, 2)
	if n := strings.Count(out, "not_indexed"); n != 1 || !strings.Contains(out, "reference_tracker.md") {
		t.Fatalf("%d files reported as not indexed, want reference_tracker.md:\n%s", n, out)
	}
}

// TestIndexLintFixture lints the real memory directory fixture: its dangling
// links are reported and the exit code is 3.
func TestIndexLintFixture(t *testing.T) {
	t.Parallel()
	checkIndexLint(t, fixtures.Path(t, "memdirs", "4444J99__application-pipeline", ".claude", "memory"), 25)
}

// checkIndexLint runs index --lint on dir, expecting missing dangling links and exit code 3,
// then renders the index in text and JSON. It returns the lint's output.
func checkIndexLint(t *testing.T, dir string, missing int) string {
	t.Helper()
	m := newMachine(t, "http://127.0.0.1:1", "git@github.com:o/r.git")
	out, _, code := m.run("index", "--lint", "--dir", dir)
	if code != 3 {
		t.Fatalf("exit %d, want 3:\n%s", code, out)
	}
	if n := strings.Count(out, "missing_link"); n != missing {
		t.Fatalf("%d missing links reported, want %d:\n%s", n, missing, out)
	}
	idx := m.must("index", "--dir", dir)
	contains(t, idx, "[")
	jsonOut := m.must("index", "--json", "--dir", dir)
	contains(t, jsonOut, `"rendered": false`)
	return out
}
