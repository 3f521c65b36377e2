package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// machine is one simulated developer machine: its own home, Claude config
// home and clone of a repository, running the teammem client.
type machine struct {
	bin    string
	home   string
	repo   string
	env    []string
	memDir string
}

// newMachine prepares a machine whose clone has origin remote.
func newMachine(ctx context.Context, bin, dir, server, remote string) (*machine, error) {
	m := &machine{bin: bin, home: dir, repo: filepath.Join(dir, "src", "bench")}
	if err := os.MkdirAll(m.repo, 0o755); err != nil {
		return nil, err
	}
	m.env = append(os.Environ(), "HOME="+dir, "CLAUDE_CONFIG_DIR="+filepath.Join(dir, ".claude"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "TEAMMEM_SERVER=http://"+server, "TEAMMEM_API_KEY="+benchKey,
		"GIT_CONFIG_NOSYSTEM=1")
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", remote}} {
		if _, err := runIn(ctx, m.repo, m.env, "git", args...); err != nil {
			return nil, err
		}
	}
	out, err := m.run(ctx, "status", "--json")
	if err != nil {
		return nil, err
	}
	var st struct {
		MemoryDir string `json:"memory_dir"`
	}
	if err := json.Unmarshal(out, &st); err != nil || st.MemoryDir == "" {
		return nil, fmt.Errorf("teammem status --json gave no memory_dir: %v: %s", err, out)
	}
	m.memDir = st.MemoryDir
	return m, nil
}

// run runs the client in the machine's clone and returns its stdout.
func (m *machine) run(ctx context.Context, args ...string) ([]byte, error) {
	return runIn(ctx, m.repo, m.env, m.bin, args...)
}

// runIn runs a program in dir and returns stdout; a failure carries stderr.
func runIn(ctx context.Context, dir string, env []string, bin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %v\n%s%s", filepath.Base(bin), strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.Bytes(), nil
}

// waitContent waits until path holds want, reading it every poll.
func waitContent(ctx context.Context, path, want string, limit, poll time.Duration) (time.Duration, error) {
	start := time.Now()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for time.Since(start) < limit {
		if b, err := os.ReadFile(path); err == nil && string(b) == want {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
		}
	}
	return 0, fmt.Errorf("%s did not get the new content within %s", path, limit)
}

// watcher is a running teammem watch.
type watcher struct {
	cmd  *exec.Cmd
	logs *tail
	done chan error
}

// watch starts teammem watch on m and waits for its live event stream.
func (m *machine) watch(debounce time.Duration) (*watcher, error) {
	args := []string{"watch"}
	if debounce > 0 {
		args = append(args, "--debounce", debounce.String())
	}
	w := &watcher{cmd: exec.Command(m.bin, args...), logs: &tail{max: 200}, done: make(chan error, 1)}
	w.cmd.Dir, w.cmd.Env = m.repo, m.env
	w.cmd.Stdout, w.cmd.Stderr = w.logs, w.logs
	if err := w.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { w.done <- w.cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(w.logs.String(), "live updates connected") {
		select {
		case err := <-w.done:
			return nil, fmt.Errorf("teammem watch exited: %v\n%s", err, w.logs)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			w.stop()
			return nil, fmt.Errorf("teammem watch never connected its event stream:\n%s", w.logs)
		}
	}
	return w, nil
}

func (w *watcher) stop() {
	_ = w.cmd.Process.Signal(os.Interrupt)
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

// runPropagation measures watch-to-watch propagation of new files (with
// --debounce) and the one-of-200 change against git (teammem watch with
// --sync-debounce, and the teammem sync CLI), on the SQLite server.
func (b *bench) runPropagation(ctx context.Context, srv server) error {
	switch {
	case b.bins.clientErr != nil:
		b.rep.note("propagation skipped: %v", b.bins.clientErr)
		return nil
	case srv == nil:
		b.rep.note("propagation skipped: it runs on the SQLite server, which this run did not start")
		return nil
	}
	b.startupBreakdown(ctx)
	if err := b.runWatch(ctx, srv); err != nil {
		return err
	}
	return b.runSyncVsGit(ctx, srv)
}

// runWatch runs teammem watch on two machines and times a file written on
// A until it is on B's disk.
func (b *bench) runWatch(ctx context.Context, srv server) error {
	dir := filepath.Join(b.tmp, "watch")
	var ms [2]*machine
	var ws [2]*watcher
	defer func() {
		for _, w := range ws {
			if w != nil {
				w.stop()
			}
		}
	}()
	err := parallel(len(ms), func(i int) error {
		m, err := newMachine(ctx, b.bins.client, filepath.Join(dir, fmt.Sprint(i)), srv.addr(), "git@github.com:acme/bench.git")
		if err != nil {
			return err
		}
		ms[i] = m
		ws[i], err = m.watch(b.opt.debounce)
		return err
	})
	if err != nil {
		return err
	}
	var took []float64
	for i := range b.opt.samples {
		key := fmt.Sprintf("prop-%02d.md", i)
		content := fmt.Sprintf("sample %d\n", i) + prose(uint64(1000+i), 1500)
		if err := writeFile(filepath.Join(ms[0].memDir, "team", key), content); err != nil {
			return err
		}
		d, err := waitContent(ctx, filepath.Join(ms[1].memDir, "team", key), content, 30*time.Second, 5*time.Millisecond)
		if err != nil {
			return fmt.Errorf("%w\nwatch A:\n%s\nwatch B:\n%s", err, ws[0].logs, ws[1].logs)
		}
		took = append(took, float64(d)/float64(time.Millisecond))
		time.Sleep(100 * time.Millisecond)
	}
	b.rep.single(fmt.Sprintf("watch propagation A→B p50 (%d samples, debounce %s)", len(took), debounceText(b.opt.debounce)), "propagation_p50_ms",
		median(took), "ms", below(3000))
	b.rep.set("propagation_max_ms", slices.Max(took))
	b.rep.set("propagation_samples_ms", took)
	return nil
}

// parallel runs fn(0) … fn(n-1) at once and returns the first error.
func parallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startupBreakdown records how long the client binary takes to do nothing
// (teammem --help) and how much of that, and of the server's start, is the
// go-re2 package init (GODEBUG=inittrace=1). The client is built without
// -tags gore2regex (see buildAll), so it has no go-re2 init to find: that
// records 0 without a note. The server must have one.
func (b *bench) startupBreakdown(ctx context.Context) {
	var runs []float64
	for range b.opt.rounds {
		start := time.Now()
		if _, err := runIn(ctx, b.tmp, os.Environ(), b.bins.client, "--help"); err != nil {
			b.rep.note("teammem --help: %v", err)
			return
		}
		runs = append(runs, float64(time.Since(start))/float64(time.Millisecond))
	}
	b.rep.set("client_exec_ms", median(runs))
	for key, bin := range map[string]string{"client_re2_init_ms": b.bins.client, "server_re2_init_ms": b.bins.server} {
		ms, err := re2InitMS(ctx, bin, b.tmp)
		switch {
		case err == nil:
			b.rep.set(key, ms)
		case errors.Is(err, errNoRE2Init) && key == "client_re2_init_ms":
			b.rep.set(key, 0.0) // expected: the client ships on Go's regexp engine
		default:
			b.rep.note("%s: %v", key, err)
		}
	}
}

// errNoRE2Init is re2InitMS's answer for a binary without go-re2.
var errNoRE2Init = errors.New("no go-re2 init in the init trace (built without -tags gore2regex?)")

// re2InitMS runs bin --help with GODEBUG=inittrace=1 and returns the clock
// time of github.com/wasilibs/go-re2/internal's init.
func re2InitMS(ctx context.Context, bin, dir string) (float64, error) {
	if bin == "" {
		return 0, errors.New("no binary")
	}
	cmd := exec.CommandContext(ctx, bin, "--help")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "GODEBUG=inittrace=1")
	out, _ := cmd.CombinedOutput()
	for line := range strings.SplitSeq(string(out), "\n") {
		// init github.com/wasilibs/go-re2/internal @6.8 ms, 593 ms clock, ...
		if rest, ok := strings.CutPrefix(line, "init github.com/wasilibs/go-re2/internal @"); ok {
			var at, clock float64
			if _, err := fmt.Sscanf(rest, "%f ms, %f ms clock", &at, &clock); err == nil {
				return clock, nil
			}
		}
	}
	return 0, errNoRE2Init
}
