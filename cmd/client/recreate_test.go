package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pushReport is the part of `push --json` / `sync --json` these tests read.
type pushReport struct {
	Scopes []struct {
		Scope             string   `json:"scope"`
		Pushed            []string `json:"pushed"`
		RemovedLocal      []string `json:"removed_local"`
		HeldRemoteDeletes []string `json:"held_remote_deletes"`
		HeldLocalDeletes  []string `json:"held_local_deletes"`
		Overlapped        []string `json:"overlapped"`
		PulledOverlaps    []string `json:"pulled_overlaps"`
		Skipped           []struct {
			Key    string `json:"key"`
			Kind   string `json:"kind"`
			Detail string `json:"detail"`
		} `json:"skipped"`
	} `json:"scopes"`
}

func decodeReport(t *testing.T, out string) pushReport {
	t.Helper()
	var rep pushReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Scopes) == 0 {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	return rep
}

// writeNotes writes n team notes note0.md… with distinct content.
func writeNotes(m *machine, dir string, n int) {
	for i := range n {
		m.write(dir, fmt.Sprintf("team/n%d.md", i), fmt.Sprintf("note %d\n", i))
	}
}

// removeNotes deletes the notes writeNotes wrote.
func removeNotes(t *testing.T, dir string, n int) {
	t.Helper()
	for i := range n {
		if err := os.Remove(filepath.Join(dir, "team", fmt.Sprintf("n%d.md", i))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRecreatedFileIsPushed is issue 21's reproduction: 60 team files
// synced, deleted, the deletions let go with --allow-mass-delete, then one
// of them written again with exactly its old content. `push` must upload
// it as a new write (this machine knows the deletion, so the re-creation is
// deliberate), never delete it, and the other machine must get it.
func TestRecreatedFileIsPushed(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := newMachine(t, srv, "git@github.com:acme/widgets.git")
	b := newMachine(t, srv, "https://github.com/acme/widgets")
	A, B := a.memDir(), b.memDir()
	writeNotes(a, A, 60)
	a.must("sync")
	b.must("sync")
	removeNotes(t, A, 60)
	contains(t, a.must("sync", "--allow-mass-delete"), "60 deleted on the server")

	a.write(A, "team/n2.md", "note 2\n")
	rep := decodeReport(t, a.must("push", "--json"))
	if got := read(t, A, "team/n2.md"); got != "note 2\n" {
		t.Fatalf("push removed the re-created file: n2.md is %q; report %+v", got, rep)
	}
	if s := rep.Scopes[0]; !slices.Equal(s.Pushed, []string{"n2.md"}) || len(s.RemovedLocal) != 0 {
		t.Fatalf("push report %+v, want n2.md pushed and nothing removed", s)
	}
	if got := serverKeys(t, srv, serverKey, "team"); !slices.Equal(got, []string{"n2.md"}) {
		t.Fatalf("server team keys %v, want [n2.md]", got)
	}
	out := a.must("sync")
	contains(t, out, "checksum matches the server")

	// The other machine takes the 60 deletions and the re-creation.
	b.must("sync", "--allow-mass-delete")
	if got := files(t, filepath.Join(B, "team")); !slices.Equal(got, []string{"n2.md"}) || read(t, B, "team/n2.md") != "note 2\n" {
		t.Fatalf("b's team files %v (n2.md %q), want only n2.md", got, read(t, B, "team/n2.md"))
	}

	// Deleted again and re-created again, by the other machine this time:
	// it learned the second deletion by pulling it.
	if err := os.Remove(filepath.Join(A, "team", "n2.md")); err != nil {
		t.Fatal(err)
	}
	contains(t, a.must("push"), "1 deleted on the server")
	b.must("pull")
	if got := read(t, B, "team/n2.md"); got != "<missing>" {
		t.Fatalf("b kept n2.md after pulling its deletion: %q", got)
	}
	b.write(B, "team/n2.md", "note 2\n")
	contains(t, b.must("push"), "1 pushed")
	a.must("pull")
	if got := read(t, A, "team/n2.md"); got != "note 2\n" {
		t.Fatalf("a's n2.md after b re-created it: %q", got)
	}
}

// TestPushNeverDeletes gives a fresh machine (no sync state) a stale copy of
// a file the server deleted: the server refuses it as before, but `push`
// keeps the file, and its output (human and --json) names the file and the
// reason.
func TestPushNeverDeletes(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := newMachine(t, srv, "git@github.com:acme/widgets.git")
	A := a.memDir()
	a.write(A, "team/old.md", "outdated advice\n")
	a.must("sync")
	if err := os.Remove(filepath.Join(A, "team", "old.md")); err != nil {
		t.Fatal(err)
	}
	contains(t, a.must("push"), "1 deleted on the server")

	c := newMachine(t, srv, "git@github.com:acme/widgets.git")
	C := c.memDir()
	c.write(C, "team/old.md", "outdated advice\n")
	out := c.must("push")
	if got := read(t, C, "team/old.md"); got != "outdated advice\n" {
		t.Fatalf("push deleted a local file: old.md is %q\n%s", got, out)
	}
	contains(t, out, "skipped old.md: refused as a stale copy: deleted on the server")
	contains(t, out, "the file stays here")
	if strings.Contains(out, "removed locally") || !strings.Contains(out, "team: 1 skipped;") {
		t.Fatalf("push reports a local removal, or reads as up to date:\n%s", out)
	}
	rep := decodeReport(t, c.must("push", "--json"))
	s := rep.Scopes[0]
	if len(s.RemovedLocal) != 0 || len(s.Skipped) != 1 || s.Skipped[0].Key != "old.md" || s.Skipped[0].Kind != "stale_copy" {
		t.Fatalf("push --json %+v, want old.md skipped as stale_copy and nothing removed", s)
	}
	if read(t, C, "team/old.md") != "outdated advice\n" {
		t.Fatal("push --json deleted the stale copy")
	}
	if got := serverKeys(t, srv, serverKey, "team"); len(got) != 0 {
		t.Fatalf("the stale copy reached the server: %v", got)
	}
}

// TestHeldMassDeleteNeverUpToDate holds deletions on both sides: the team
// scope's lines never say "up to date" or "run sync again"; they name how
// many deletions are held, which files, and the flag that lets them go.
// Status names the flag too, not a plain sync.
func TestHeldMassDeleteNeverUpToDate(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := newMachine(t, srv, "git@github.com:acme/widgets.git")
	b := newMachine(t, srv, "https://github.com/acme/widgets")
	A := a.memDir()
	writeNotes(a, A, 60)
	a.must("sync")
	b.must("sync")
	removeNotes(t, A, 60)
	check := func(out string) {
		t.Helper()
		out, _, _ = strings.Cut(out, "\npersonal: ") // the personal scope is up to date
		for _, bad := range []string{"up to date", "run sync again"} {
			if strings.Contains(out, bad) {
				t.Errorf("output with held deletions says %q:\n%s", bad, out)
			}
		}
		contains(t, out, "60 deletions held")
		contains(t, out, "sync --allow-mass-delete")
		contains(t, out, "n0.md")
	}
	check(a.must("sync"))
	check(a.must("push"))
	st := a.must("status")
	contains(t, st, "deletions are held (run teammem sync --allow-mass-delete)")
	if strings.Contains(st, "(run teammem sync)") {
		t.Errorf("status advises a plain sync with deletions held:\n%s", st)
	}
	a.must("sync", "--allow-mass-delete")
	check(b.must("sync"))
	check(b.must("pull"))
}

// TestPulledOverlapNamed edits the same line on two machines: the machine
// that merges says so (as before), and so does every machine that pulls
// that merge, in its output (human and --json) and its status, until the
// file is edited again.
func TestPulledOverlapNamed(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := newMachine(t, srv, "git@github.com:acme/widgets.git")
	b := newMachine(t, srv, "https://github.com/acme/widgets")
	c := newMachine(t, srv, "https://github.com/acme/widgets.git")
	A, B := a.memDir(), b.memDir()
	a.write(A, "team/build.md", "run make\n")
	a.must("sync")
	b.must("sync")
	a.write(A, "team/build.md", "run make all\n")
	b.write(B, "team/build.md", "run make test\n")
	a.must("sync")
	contains(t, b.must("sync"), "merged with overlap: review build.md")

	rep := decodeReport(t, a.must("pull", "--json"))
	if s := rep.Scopes[0]; !slices.Equal(s.Overlapped, []string{"build.md"}) || !slices.Equal(s.PulledOverlaps, []string{"build.md"}) {
		t.Fatalf("a's pull --json %+v, want build.md overlapped", s)
	}
	contains(t, a.must("status"), "merged with overlap: review build.md")
	contains(t, c.must("sync"), "pulled a merge with overlap: review build.md")
	contains(t, c.must("status"), "merged with overlap: review build.md")

	// Reviewed and edited on a: the flag goes with the next write.
	a.write(A, "team/build.md", "run make all test\n")
	a.must("push")
	if out := c.must("sync"); strings.Contains(out, "overlap") {
		t.Fatalf("a plain edit still reads as an overlapping merge:\n%s", out)
	}
}
