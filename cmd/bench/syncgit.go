package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The one-of-200 comparison: 200 memory files are in sync on two
// machines; one changes on A. Ours: `teammem sync` on A, then on B. Git:
// commit + push on A, pull on B, through a local bare repository. Both are
// timed from the first command to the file being on B's disk.

const syncFiles = 200

// syncFileName names file i of the 200.
func syncFileName(i int) string { return fmt.Sprintf("topic-%03d.md", i) }

// writeTree writes the 200 files of the comparison into dir.
func writeTree(dir string) error {
	for i := range syncFiles {
		if err := writeFile(filepath.Join(dir, syncFileName(i)), prose(uint64(5000+i), 1500)); err != nil {
			return err
		}
	}
	return nil
}

// runSyncVsGit runs both sides and reports the ratio of their medians.
func (b *bench) runSyncVsGit(ctx context.Context, srv server) error {
	ours, pushSide, pullSide, err := b.timeTeammemSync(ctx, srv)
	if err != nil {
		return err
	}
	git, err := b.timeGit(ctx)
	if err != nil {
		return err
	}
	b.rep.set("sync_one_of_200_ms", ours)
	b.rep.set("sync_one_of_200_push_side_ms", pushSide)
	b.rep.set("sync_one_of_200_pull_side_ms", pullSide)
	b.rep.set("git_one_of_200_ms", git)
	b.rep.compare("1 of 200 files: teammem sync A+B vs git commit+push+pull (ms)", "propagation_vs_git_ratio", ours, git, "ms", atMost(0.5))
	return nil
}

// timeTeammemSync returns the median time of sync on A then sync on B, and
// the medians of each side.
func (b *bench) timeTeammemSync(ctx context.Context, srv server) (total, pushSide, pullSide float64, err error) {
	dir := filepath.Join(b.tmp, "sync")
	var ms [2]*machine
	err = parallel(len(ms), func(i int) (err error) {
		ms[i], err = newMachine(ctx, b.bins.client, filepath.Join(dir, fmt.Sprint(i)), srv.addr(), "git@github.com:acme/bench-sync.git")
		return err
	})
	if err != nil {
		return 0, 0, 0, err
	}
	a, bm := ms[0], ms[1]
	if err := writeTree(filepath.Join(a.memDir, "team")); err != nil {
		return 0, 0, 0, err
	}
	for _, m := range ms {
		if _, err := m.run(ctx, "sync"); err != nil {
			return 0, 0, 0, err
		}
	}
	var tot, push, pull []float64
	for i := range b.opt.syncSamples {
		key := syncFileName(i * 7 % syncFiles)
		content := fmt.Sprintf("edit %d\n", i) + prose(uint64(9000+i), 1500)
		if err := writeFile(filepath.Join(a.memDir, "team", key), content); err != nil {
			return 0, 0, 0, err
		}
		t0 := time.Now()
		if _, err := a.run(ctx, "sync"); err != nil {
			return 0, 0, 0, err
		}
		t1 := time.Now()
		if _, err := bm.run(ctx, "sync"); err != nil {
			return 0, 0, 0, err
		}
		t2 := time.Now()
		if got, _ := os.ReadFile(filepath.Join(bm.memDir, "team", key)); string(got) != content {
			return 0, 0, 0, fmt.Errorf("teammem sync: %s did not reach machine B", key)
		}
		tot = append(tot, msSince(t0, t2))
		push, pull = append(push, msSince(t0, t1)), append(pull, msSince(t1, t2))
	}
	return median(tot), median(push), median(pull), nil
}

// msSince returns b - a in milliseconds.
func msSince(a, b time.Time) float64 { return float64(b.Sub(a)) / float64(time.Millisecond) }

// gitEnv is the environment of the git baseline: no user or system
// configuration, a fixed identity.
func gitEnv(home string) []string {
	return append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=bench",
		"GIT_AUTHOR_EMAIL=bench@example.com", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
}

// setUpGit makes a bare repository and two clones of it holding the 200
// files, and returns the clones.
func (b *bench) setUpGit(ctx context.Context, dir string) (a, bc string, err error) {
	bare, a, bc := filepath.Join(dir, "origin.git"), filepath.Join(dir, "a"), filepath.Join(dir, "b")
	env := gitEnv(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	steps := []struct {
		in   string
		args []string
	}{
		{dir, []string{"init", "-q", "--bare", bare}},
		{dir, []string{"clone", "-q", bare, a}},
		{a, nil}, // the files are written here
		{a, []string{"add", "-A"}},
		{a, []string{"commit", "-q", "-m", "200 files"}},
		{a, []string{"push", "-q", "-u", "origin", "HEAD"}},
		{dir, []string{"clone", "-q", bare, bc}},
	}
	for _, s := range steps {
		if s.args == nil {
			err = writeTree(a)
		} else {
			_, err = runIn(ctx, s.in, env, "git", s.args...)
		}
		if err != nil {
			return "", "", err
		}
	}
	return a, bc, nil
}

// timeGit returns the median time of commit + push on one clone and pull
// on the other.
func (b *bench) timeGit(ctx context.Context) (float64, error) {
	dir := filepath.Join(b.tmp, "git")
	a, bc, err := b.setUpGit(ctx, dir)
	if err != nil {
		return 0, err
	}
	env := gitEnv(dir)
	var took []float64
	for i := range b.opt.syncSamples {
		key := syncFileName(i * 7 % syncFiles)
		content := fmt.Sprintf("edit %d\n", i) + prose(uint64(9000+i), 1500)
		if err := writeFile(filepath.Join(a, key), content); err != nil {
			return 0, err
		}
		t0 := time.Now()
		for _, s := range []struct {
			in   string
			args []string
		}{{a, []string{"commit", "-q", "-am", "edit"}}, {a, []string{"push", "-q"}}, {bc, []string{"pull", "-q", "--ff-only"}}} {
			if _, err := runIn(ctx, s.in, env, "git", s.args...); err != nil {
				return 0, err
			}
		}
		took = append(took, msSince(t0, time.Now()))
		if got, _ := os.ReadFile(filepath.Join(bc, key)); string(got) != content {
			return 0, fmt.Errorf("git: %s did not reach clone B", key)
		}
	}
	return median(took), nil
}
