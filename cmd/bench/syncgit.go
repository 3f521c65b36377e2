package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The one-of-200 comparison: 200 memory files are in sync on two
// machines; one changes on A, and the clock runs until the new content is
// on B's disk. Ours, as the product syncs: `teammem watch --debounce
// --sync-debounce` on both machines (fsnotify on A, debounce, push; a
// server-sent event on B, pull), the debounce included in the time. Ours
// through the CLI, for information: `teammem sync` on A, then on B (two
// process starts). Git: commit + push on A, pull on B, through a local
// bare repository, timed from the first command.

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

// syncEdit is sample i's change: which file, and its new content. seed
// keeps the CLI and watch samples' contents apart.
func syncEdit(i int, seed uint64) (key, content string) {
	return syncFileName(i * 7 % syncFiles), fmt.Sprintf("edit %d.%d\n", seed, i) + prose(seed+uint64(i), 1500)
}

// runSyncVsGit measures the one-of-200 change with teammem watch and with
// the teammem sync CLI on the same two machines, then with git, and
// reports each against git.
func (b *bench) runSyncVsGit(ctx context.Context, srv server) error {
	a, bm, err := b.setUpSync(ctx, srv)
	if err != nil {
		return err
	}
	cli, pushSide, pullSide, err := b.timeTeammemSync(ctx, a, bm)
	if err != nil {
		return err
	}
	watch, err := b.timeTeammemWatch(ctx, srv.addr(), a, bm)
	if err != nil {
		return err
	}
	git, err := b.timeGit(ctx)
	if err != nil {
		return err
	}
	b.rep.set("sync_one_of_200_ms", cli)
	b.rep.set("sync_one_of_200_push_side_ms", pushSide)
	b.rep.set("sync_one_of_200_pull_side_ms", pullSide)
	b.rep.set("git_one_of_200_ms", git)
	b.rep.set("watch_one_of_200_ms", watch)
	b.rep.set("sync_debounce_ms", float64(b.opt.syncDebounce)/float64(time.Millisecond))
	b.rep.compare(fmt.Sprintf("1 of 200 files: teammem watch A→B (debounce %s, included) vs git commit+push+pull (ms)", debounceText(b.opt.syncDebounce)),
		"propagation_vs_git_ratio", watch, git, "ms", atMost(0.5))
	b.rep.compare("1 of 200 files: teammem sync CLI on A, then on B vs git commit+push+pull (ms)", "sync_cli_vs_git_ratio", cli, git, "ms", none)
	// A failure of the stock client is reported, not fatal to the run.
	if err := b.runNative(ctx, srv, watch); err != nil {
		b.rep.absent(nativeRow(b.opt.syncDebounce), "native_vs_watch_ratio", "failed")
		b.rep.note("stock Claude Code row failed: %v", err)
	}
	return nil
}

// debounceText names the debounce a watch runs with.
func debounceText(d time.Duration) string {
	if d <= 0 {
		return "2s default"
	}
	return d.String()
}

// syncRepo is the repository both machines of the one-of-200 change share.
const syncRepo = "acme/bench-sync"

// setUpSync prepares two machines whose team memory holds the same 200
// files, in sync through the server.
func (b *bench) setUpSync(ctx context.Context, srv server) (a, bm *machine, err error) {
	dir := filepath.Join(b.tmp, "sync")
	var ms [2]*machine
	err = parallel(len(ms), func(i int) (err error) {
		ms[i], err = newMachine(ctx, b.bins.client, filepath.Join(dir, fmt.Sprint(i)), srv.addr(), "git@github.com:"+syncRepo+".git")
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if err := writeTree(filepath.Join(ms[0].memDir, "team")); err != nil {
		return nil, nil, err
	}
	for _, m := range ms {
		if _, err := m.run(ctx, "sync"); err != nil {
			return nil, nil, err
		}
	}
	return ms[0], ms[1], nil
}

// timeTeammemSync returns the median time of sync on A then sync on B, and
// the medians of each side.
func (b *bench) timeTeammemSync(ctx context.Context, a, bm *machine) (total, pushSide, pullSide float64, err error) {
	var tot, push, pull []float64
	for i := range b.opt.syncSamples {
		key, content := syncEdit(i, 9000)
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

// timeTeammemWatch runs teammem watch --debounce opt.syncDebounce on both
// machines and returns the median time from writing one file on A until B
// holds the new content, polled every millisecond. A first, unrecorded
// change warms the watchers up (A builds its secret scanner on the first
// file it scans); its time is kept as watch_one_of_200_cold_ms.
func (b *bench) timeTeammemWatch(ctx context.Context, host string, a, bm *machine) (float64, error) {
	var ws [2]*watcher
	defer func() {
		for _, w := range ws {
			if w != nil {
				w.stop()
			}
		}
	}()
	ms := [2]*machine{a, bm}
	if err := parallel(len(ms), func(i int) (err error) {
		ws[i], err = ms[i].watch(b.opt.syncDebounce)
		return err
	}); err != nil {
		return 0, err
	}
	events, err := listenChanges(ctx, host, syncRepo)
	if err != nil {
		return 0, err
	}
	defer events.stop()
	var took []float64
	var stages stageSamples
	for i := -1; i < b.opt.syncSamples; i++ {
		key, content := syncEdit(i+1, 12000)
		t0 := time.Now()
		if err := writeFile(filepath.Join(a.memDir, "team", key), content); err != nil {
			return 0, err
		}
		if _, err := waitContent(ctx, filepath.Join(bm.memDir, "team", key), content, 30*time.Second, time.Millisecond); err != nil {
			return 0, fmt.Errorf("%w\nwatch A:\n%s\nwatch B:\n%s", err, ws[0].logs, ws[1].logs)
		}
		file := time.Now()
		d := msSince(t0, file)
		// Let both watchers settle (B's pull is itself a file event that
		// ends in a no-op push after the debounce) before the next change;
		// A reports its push meanwhile.
		time.Sleep(100*time.Millisecond + 2*b.opt.syncDebounce)
		if i < 0 {
			b.rep.set("watch_one_of_200_cold_ms", d)
			continue
		}
		took = append(took, d)
		ev, _ := events.firstAfter(t0)
		ack, _ := ws[0].logs.firstAfter("pushed", t0)
		stages.add(t0, ev, file, ack)
	}
	if len(took) == 0 {
		return 0, fmt.Errorf("no watch samples (--sync-samples %d)", b.opt.syncSamples)
	}
	b.reportStages(stages, b.opt.syncDebounce)
	b.rep.set("watch_one_of_200_samples_ms", took)
	b.rep.set("watch_one_of_200_max_ms", slices.Max(took))
	return median(took), nil
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
