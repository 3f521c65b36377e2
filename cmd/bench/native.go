package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The stock client's one-of-200 change: Claude Code 2.1.332, unmodified,
// syncing its team store natively through `teammem claude` (machine B),
// and teammem's own `teammem watch` on machine A. 200 files are in sync;
// one changes in B's mount while a `claude -p` session is open (the fake
// Messages API holds its answer, so the session, and its memory watcher,
// stays up), and the clock runs until A's disk holds the new content. That
// is the stock client's poll (2 s) and debounce (2 s), its listing and
// update through the proxy, the server's live event and A's pull. The
// baseline is the same run's teammem watch A→B. All on loopback: the
// proxy's upstream is the fake and it refuses non-loopback dials.

// claudeVersion is the Claude Code build scripts/test installs.
const claudeVersion = "2.1.332"

// claudeBin finds the real Claude Code binary: TEAMMEM_CLAUDE_BIN, else
// where scripts/test installs it.
func claudeBin() (string, error) {
	bin := os.Getenv("TEAMMEM_CLAUDE_BIN")
	if bin == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		bin = filepath.Join(cache, "teammem", "claude-code", claudeVersion, "package", "claude")
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("Claude Code %s is not installed at %s (scripts/test installs it; or set TEAMMEM_CLAUDE_BIN)", claudeVersion, bin)
	}
	return bin, nil
}

// nativeRow names the row; d is the baseline watch's debounce.
func nativeRow(d time.Duration) string {
	return "1 of 200 files: stock Claude Code " + claudeVersion + " via teammem claude → teammem watch vs teammem watch A→B (debounce " +
		debounceText(d) + ") (ms)"
}

// runNative measures the stock client's one-of-200 change against
// watchMS, teammem watch's from the same run.
func (b *bench) runNative(ctx context.Context, srv server, watchMS float64) error {
	bin, err := claudeBin()
	if err != nil {
		b.rep.absent(nativeRow(b.opt.syncDebounce), "native_vs_watch_ratio", "binary absent")
		b.rep.note("stock Claude Code row not measured: %v", err)
		return nil
	}
	fake, err := startHeldMessages()
	if err != nil {
		return err
	}
	defer fake.close()
	dir := filepath.Join(b.tmp, "native")
	const remote = "git@github.com:acme/bench-native.git"
	var ms [2]*machine
	if err := parallel(len(ms), func(i int) (err error) {
		ms[i], err = newMachine(ctx, b.bins.client, filepath.Join(dir, fmt.Sprint(i)), srv.addr(), remote)
		return err
	}); err != nil {
		return err
	}
	a, nb := ms[0], ms[1]
	if err := writeTree(filepath.Join(a.memDir, "team")); err != nil {
		return err
	}
	if _, err := a.run(ctx, "sync"); err != nil {
		return err
	}
	nb.env = slices.DeleteFunc(nb.env, func(e string) bool {
		k, _, _ := strings.Cut(e, "=")
		return k == "CLAUDE_CODE_SESSION_ACCESS_TOKEN" || k == "CLAUDE_MEMORY_STORES" || k == "ANTHROPIC_AUTH_TOKEN"
	})
	nb.env = append(nb.env, "TEAMMEM_CLAUDE_BIN="+bin, "ANTHROPIC_BASE_URL="+fake.url, "ANTHROPIC_API_KEY=bench-fake-anthropic-key",
		"TEAMMEM_PROXY_UPSTREAM="+fake.url, "TEAMMEM_PROXY_LOOPBACK_ONLY=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_MEMORY_PERIODIC_RESYNC=1")
	mount := filepath.Join(nb.memDir, "team", "teammem")

	// The first session pulls the 200 files (bulk inflate) and ends.
	fake.release()
	t0 := time.Now()
	firstCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if _, err := nb.run(firstCtx, "claude", "--", "-p", "hello", "--debug-file", filepath.Join(dir, "debug-first.txt")); err != nil {
		return err
	}
	b.rep.set("native_first_session_ms", msSince(t0, time.Now()))
	for i := range syncFiles {
		if _, err := os.Stat(filepath.Join(mount, syncFileName(i))); err != nil {
			return fmt.Errorf("the stock client's first session did not pull %s: %v", syncFileName(i), err)
		}
	}

	w, err := a.watch(b.opt.syncDebounce)
	if err != nil {
		return err
	}
	defer w.stop()
	fake.hold()
	debug := filepath.Join(dir, "debug-held.txt")
	sess, err := startSession(nb, debug)
	if err != nil {
		return err
	}
	defer sess.stop(fake)
	var took []float64
	for i := -1; i < b.opt.syncSamples; i++ {
		key, content := syncEdit(i+1, 15000)
		t0 := time.Now()
		if err := writeFile(filepath.Join(mount, key), content); err != nil {
			return err
		}
		// The first change also waits out the session's start and its
		// first pull; it is kept apart as the cold time.
		limit := 30 * time.Second
		if i < 0 {
			limit = 90 * time.Second
		}
		if _, err := waitContent(ctx, filepath.Join(a.memDir, "team", key), content, limit, time.Millisecond); err != nil {
			db, _ := os.ReadFile(debug)
			return fmt.Errorf("%w\nteammem claude:\n%s\nclaude's sync:\n%s\nwatch A:\n%s", err, sess.out, syncLog(string(db)), w.logs)
		}
		d := msSince(t0, time.Now())
		if i < 0 {
			b.rep.set("native_one_of_200_cold_ms", d)
		} else {
			took = append(took, d)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if len(took) == 0 {
		return fmt.Errorf("no stock-client samples (--sync-samples %d)", b.opt.syncSamples)
	}
	native := median(took)
	b.rep.set("native_one_of_200_ms", native)
	b.rep.set("native_one_of_200_samples_ms", took)
	b.rep.compare(nativeRow(b.opt.syncDebounce), "native_vs_watch_ratio", native, watchMS, "ms", none)
	return nil
}

// syncLog keeps the lines of a claude debug log about its memory sync.
func syncLog(log string) string {
	var out []string
	for l := range strings.SplitSeq(log, "\n") {
		if strings.Contains(l, "multi-store-sync") || strings.Contains(l, "memory-watcher") || strings.Contains(l, "memory-backend") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// session is a running `teammem claude -p`.
type session struct {
	cmd  *exec.Cmd
	out  *tail
	done chan error
}

// startSession starts `teammem claude -- -p hello` on m in its own process
// group (teammem and the claude under it end together).
func startSession(m *machine, debug string) (*session, error) {
	s := &session{cmd: exec.Command(m.bin, "claude", "--", "-p", "hello", "--debug-file", debug), out: &tail{max: 100}, done: make(chan error, 1)}
	s.cmd.Dir, s.cmd.Env = m.repo, m.env
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.done <- s.cmd.Wait() }()
	return s, nil
}

// stop lets the model answer and waits for the session to end, killing
// it after 30 s.
func (s *session) stop(fake *heldMessages) {
	fake.release()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// heldMessages is a fake Anthropic API on loopback: Messages calls get a
// one-word SSE answer once released, everything else 404 (Claude Code
// tolerates 404 on its other first-party calls).
type heldMessages struct {
	url string
	srv *http.Server

	mu   sync.Mutex
	gate chan struct{} // closed: answer
}

func startHeldMessages() (*heldMessages, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &heldMessages{url: "http://" + ln.Addr().String(), gate: make(chan struct{})}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), ReadHeaderTimeout: 10 * time.Second}
	go f.srv.Serve(ln) //nolint:errcheck // ends with close
	return f, nil
}

func (f *heldMessages) hold() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.gate:
		f.gate = make(chan struct{})
	default:
	}
}

func (f *heldMessages) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.gate:
	default:
		close(f.gate)
	}
}

func (f *heldMessages) close() { f.release(); _ = f.srv.Close() }

func (f *heldMessages) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") || r.URL.Path == "/v1/messages/count_tokens" {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	gate := f.gate
	f.mu.Unlock()
	select {
	case <-gate:
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range [][2]string{
		{"message_start", `{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`},
		{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}`},
		{"message_stop", `{"type":"message_stop"}`},
	} {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev[0], ev[1])
	}
}
