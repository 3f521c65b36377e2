package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// dreamModel is a fake Anthropic server that holds every request until
// released, so tests can act while a dream is waiting on its model.
type dreamModel struct {
	URL      string
	script   *llmtest.Script
	arrived  chan struct{} // one value per request that reached the model
	mu       sync.Mutex
	requests int
	release  func()
}

func newDreamModel(t *testing.T, script *llmtest.Script, held bool) *dreamModel {
	t.Helper()
	upstream, err := url.Parse(llmtest.AnthropicServer(t, script))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // a killed client's request is expected to fail
	gate := make(chan struct{})
	var once sync.Once
	dm := &dreamModel{script: script, arrived: make(chan struct{}, 64), release: func() { once.Do(func() { close(gate) }) }}
	if !held {
		dm.release()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dm.mu.Lock()
		dm.requests++
		dm.mu.Unlock()
		dm.arrived <- struct{}{}
		select {
		case <-gate:
			proxy.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(dm.release) // runs before srv.Close, which waits for handlers
	dm.URL = srv.URL
	return dm
}

func (dm *dreamModel) count() int {
	dm.mu.Lock()
	defer dm.mu.Unlock()
	return dm.requests
}

// waitArrived waits for a request to reach the model.
func (dm *dreamModel) waitArrived(t *testing.T) {
	t.Helper()
	select {
	case <-dm.arrived:
	case <-time.After(time.Minute):
		t.Fatal("no dream reached the model")
	}
}

// dreamMachine is a machine with a model configured and no reachable
// server (telemetry is off unless a test turns it on).
func dreamMachine(t *testing.T, modelURL string) (*machine, memdir.Location) {
	t.Helper()
	m := newMachine(t, "http://127.0.0.1:1", "git@github.com:acme/dreams.git")
	if modelURL != "" {
		m.env = append(m.env, "TEAMMEM_LLM_PROVIDER=anthropic", "TEAMMEM_LLM_MODEL=test-model",
			"TEAMMEM_LLM_BASE_URL="+modelURL, "ANTHROPIC_API_KEY=sk-ant-test", "TEAMMEM_LLM_MAX_RETRIES=0")
	}
	claude := filepath.Join(m.home, ".claude")
	loc, err := memdir.Resolve(memdir.Options{Cwd: m.repo, Home: m.home, Getenv: func(k string) string {
		return map[string]string{"CLAUDE_CONFIG_DIR": claude}[k]
	}})
	if err != nil {
		t.Fatal(err)
	}
	return m, loc
}

// dreamProc is a teammem process started in the background.
type dreamProc struct {
	cmd       *exec.Cmd
	out, errb syncBuffer
	done      chan struct{}
	code      int
}

func (m *machine) start(args ...string) *dreamProc {
	m.t.Helper()
	p := &dreamProc{cmd: exec.Command(clientBin, args...), done: make(chan struct{})}
	p.cmd.Dir, p.cmd.Env = m.repo, m.env
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errb
	if err := p.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
		}
		close(p.done)
	}()
	m.t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	return p
}

func (p *dreamProc) wait(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("teammem %v never finished:\n%s%s", p.cmd.Args[1:], p.out.String(), p.errb.String())
	}
}

func (p *dreamProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// lockState returns the lock's body and mtime.
func lockState(t *testing.T, dir string) (string, time.Time) {
	t.Helper()
	p := filepath.Join(dir, memdir.LockFileName)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("lock: %v", err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), fi.ModTime()
}

// telemetrySink is a fake /v1/telemetry/events endpoint that validates
// every event against the server's allowlist.
type telemetrySink struct {
	mu     sync.Mutex
	events []string // name, or name:reason / name:outcome
}

func newTelemetrySink(t *testing.T) (*telemetrySink, string) {
	t.Helper()
	sink := &telemetrySink{}
	metrics := telemetry.NewClientMetrics()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Events []json.RawMessage }
		if r.URL.Path != "/v1/telemetry/events" || json.NewDecoder(r.Body).Decode(&body) != nil {
			t.Errorf("telemetry: bad request %s", r.URL.Path)
			return
		}
		for _, raw := range body.Events {
			if drop := metrics.Record("test", raw); drop != "" {
				t.Errorf("telemetry event %s refused: %s", raw, drop)
			}
			var ev struct {
				Name   string
				Fields map[string]any
			}
			_ = json.Unmarshal(raw, &ev)
			label := ev.Name
			for _, f := range []string{"reason", "outcome"} {
				if v, ok := ev.Fields[f].(string); ok {
					label += ":" + v
				}
			}
			sink.mu.Lock()
			sink.events = append(sink.events, label)
			sink.mu.Unlock()
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	return sink, srv.URL
}

func (s *telemetrySink) list() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.events, ",")
}

// TestDreamOnlyOneOfTwo starts two forced dreams at once: exactly one
// takes the lock and reaches the model; the other reports the lock.
func TestDreamOnlyOneOfTwo(t *testing.T) {
	t.Parallel()
	model := newDreamModel(t, llmtest.NewScript(llmtest.Text("Nothing needed changing.")), true)
	m, loc := dreamMachine(t, model.URL)
	sink, sinkURL := newTelemetrySink(t)
	m.env = append(m.env, "TEAMMEM_TELEMETRY=1", "TEAMMEM_SERVER="+sinkURL)

	a, b := m.start("dream", "--force"), m.start("dream", "--force")
	model.waitArrived(t)
	// One holds the model; the other finds the lock and leaves.
	var winner, loser *dreamProc
	for winner == nil {
		switch {
		case a.exited():
			winner, loser = b, a
		case b.exited():
			winner, loser = a, b
		default:
			time.Sleep(10 * time.Millisecond)
		}
	}
	if loser.code != 0 || !strings.Contains(loser.out.String(), "dream skipped (lock)") {
		t.Fatalf("the second dream: exit %d\n%s%s", loser.code, loser.out.String(), loser.errb.String())
	}
	if model.count() != 1 || winner.exited() {
		t.Fatalf("%d requests reached the model; winner exited: %v", model.count(), winner.exited())
	}
	body, _ := lockState(t, loc.MemoryDir)
	if body != strconv.Itoa(winner.cmd.Process.Pid) {
		t.Fatalf("lock body %q, want the winner's pid %d", body, winner.cmd.Process.Pid)
	}
	model.release()
	winner.wait(t)
	if winner.code != 0 || !strings.Contains(winner.out.String(), "no memories changed") {
		t.Fatalf("the running dream: exit %d\n%s%s", winner.code, winner.out.String(), winner.errb.String())
	}
	if n := len(model.script.Calls()); n != 1 {
		t.Fatalf("the model answered %d requests, want 1", n)
	}
	events := sink.list()
	if !strings.Contains(events, "teammem_dream_skipped:lock") || !strings.Contains(events, "teammem_dream_run:completed") {
		t.Fatalf("telemetry events: %s", events)
	}
}

// TestDreamKilledRunIsTakenOver: a dream killed while it waits on the model
// leaves its PID in the lock; the next dream sees a dead holder and runs.
func TestDreamKilledRunIsTakenOver(t *testing.T) {
	t.Parallel()
	script := llmtest.NewScript(llmtest.Text("Nothing needed changing."), llmtest.Text("Nothing needed changing."))
	model := newDreamModel(t, script, true)
	m, loc := dreamMachine(t, model.URL)

	p := m.start("dream", "--force")
	model.waitArrived(t)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait(t)
	body, mtime := lockState(t, loc.MemoryDir)
	if body != strconv.Itoa(p.cmd.Process.Pid) {
		t.Fatalf("lock after the kill holds %q, want the dead pid %d", body, p.cmd.Process.Pid)
	}

	model.release()
	out := m.must("dream", "--force")
	contains(t, out, "no memories changed")
	body, after := lockState(t, loc.MemoryDir)
	if body == strconv.Itoa(p.cmd.Process.Pid) || body == "" || after.Before(mtime) {
		t.Fatalf("lock was not taken over: %q %v (before %v)", body, after, mtime)
	}
}

// TestDreamFailureRollsBack: when the model fails, the lock's mtime goes
// back to the previous consolidation and its body is emptied.
func TestDreamFailureRollsBack(t *testing.T) {
	t.Parallel()
	model := newDreamModel(t, llmtest.NewScript(llmtest.Fail(500, "overloaded")), false)
	m, loc := dreamMachine(t, model.URL)
	prior := time.Now().Add(-72 * time.Hour).Truncate(time.Millisecond)
	m.write(loc.MemoryDir, memdir.LockFileName, "")
	if err := os.Chtimes(filepath.Join(loc.MemoryDir, memdir.LockFileName), prior, prior); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := m.run("dream", "--force")
	if code != 1 || !strings.Contains(errOut, "overloaded") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	body, mtime := lockState(t, loc.MemoryDir)
	if body != "" || !mtime.Equal(prior) {
		t.Fatalf("lock after a failure: %q %v, want empty and %v", body, mtime, prior)
	}
}

// TestDreamImproves runs through the real gates: sessions in the
// transcript directory, the current one not counted, then a run that
// writes two files; right after it the time gate stops the next.
func TestDreamImproves(t *testing.T) {
	t.Parallel()
	script := llmtest.NewScript(
		llmtest.ToolUse("1", "write", map[string]string{"path": "project_ci.md",
			"content": "---\nname: ci\ndescription: where CI runs\ntype: project\n---\nCI runs on GitHub Actions since 2026-01-05.\n"}),
		llmtest.ToolUse("2", "write", map[string]string{"path": "MEMORY.md", "content": "- [CI](project_ci.md) — where CI runs\n"}),
		llmtest.Text("Created project_ci.md from the daily log and indexed it."),
	)
	model := newDreamModel(t, script, false)
	m, loc := dreamMachine(t, model.URL)
	m.must("log", "moved CI to GitHub Actions")
	ids := []string{"0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e70", "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e71", "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e72",
		"0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e73", "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e74"}
	for _, id := range ids {
		m.write(loc.TranscriptDir, id+".jsonl", `{"type":"user","message":{"role":"user","content":"hi"}}`+"\n")
	}
	out := m.must("dream", "--session", ids[0])
	contains(t, out, "dream skipped (sessions): 4 sessions since the last consolidation; 5 needed")
	// The scan throttle holds the next check for 10 minutes, whatever the sessions.
	m.write(loc.TranscriptDir, "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e75.jsonl", "{}\n")
	contains(t, m.must("dream", "--session", ids[0]), "dream skipped (throttle)")
	if model.count() != 0 {
		t.Fatal("a skipped dream reached the model")
	}
	// A fresh state directory (another machine's throttle) lets the scan run.
	m.env = append(m.env, "XDG_CONFIG_HOME="+t.TempDir())
	out = m.must("dream", "--session", ids[0])
	contains(t, out, "Improved 2 memories:\n  project_ci.md\n  MEMORY.md\n")
	contains(t, out, "Created project_ci.md")
	contains(t, read(t, loc.MemoryDir, "project_ci.md"), "GitHub Actions")
	prompt := script.Calls()[0].Request.Messages[0].Content[0].Text
	for _, want := range []string{loc.MemoryDir, loc.TranscriptDir, memdir.DailyLogKey(time.Now()), ids[1], "Sessions since the last consolidation (5)"} {
		contains(t, prompt, want)
	}
	if strings.Contains(prompt, ids[0]) {
		t.Fatal("the current session is listed in the prompt")
	}
	body, _ := lockState(t, loc.MemoryDir)
	if _, err := strconv.Atoi(body); err != nil {
		t.Fatalf("lock body after a run = %q, want a pid", body)
	}
	contains(t, m.must("dream", "--min-hours", "0.5"), "dream skipped (time)")
}

// TestDreamDryRun: the diff is printed and the memory directory, lock
// included, is exactly as before.
func TestDreamDryRun(t *testing.T) {
	t.Parallel()
	model := newDreamModel(t, llmtest.NewScript(
		llmtest.ToolUse("1", "read", map[string]string{"path": "feedback_tests.md"}),
		llmtest.ToolUse("2", "edit", map[string]string{"path": "feedback_tests.md", "old_string": "yesterday", "new_string": "on 2026-01-04"}),
		llmtest.ToolUse("3", "delete", map[string]string{"path": "stale.md"}),
		llmtest.ToolUse("4", "write", map[string]string{"path": "user_role.md", "content": "backend engineer\n"}),
		llmtest.Text("Dated the testing rule, dropped a stale note, recorded the role."),
	), false)
	m, loc := dreamMachine(t, model.URL)
	m.write(loc.MemoryDir, "MEMORY.md", "- [Tests](feedback_tests.md) — how to test\n")
	m.write(loc.MemoryDir, "feedback_tests.md", "Since yesterday, run the race detector.\n")
	m.write(loc.MemoryDir, "stale.md", "old\n")
	before := dreamTree(t, loc.MemoryDir)
	out := m.must("dream", "--force", "--dry-run")
	for _, want := range []string{"--- a/feedback_tests.md\n+++ b/feedback_tests.md\n@@ -1 +1 @@\n-Since yesterday, run the race detector.\n+Since on 2026-01-04, run the race detector.\n",
		"--- a/stale.md\n+++ /dev/null\n", "--- /dev/null\n+++ b/user_role.md\n@@ -0,0 +1 @@\n+backend engineer\n", "nothing in " + loc.MemoryDir + " was touched"} {
		contains(t, out, want)
	}
	after := dreamTree(t, loc.MemoryDir)
	if before != after {
		t.Fatalf("dry run changed the memory directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// dreamTree lists every file under dir with its mode, mtime and content,
// and every directory by name (taking and releasing the lock touches the
// memory directory's own mtime).
func dreamTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.IsDir() {
			b.WriteString(rel + "/\n")
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b.WriteString(rel + " " + fi.Mode().String() + " " + fi.ModTime().String() + " " + strconv.Quote(string(data)) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDreamNeedsModelUnlessDisabled(t *testing.T) {
	t.Parallel()
	m, loc := dreamMachine(t, "")
	out, errOut, code := m.run("dream", "--force")
	if code != 1 || !strings.Contains(errOut, "TEAMMEM_LLM_PROVIDER") {
		t.Fatalf("without a model: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(loc.MemoryDir, memdir.LockFileName)); !os.IsNotExist(err) {
		t.Fatal("a dream without a model left a lock")
	}
	m.env = append(m.env, "TEAMMEM_DREAM=0")
	contains(t, m.must("dream", "--force"), "dream skipped (disabled): dreaming is turned off by TEAMMEM_DREAM=0")
	settings := filepath.Join(m.home, ".claude", "settings.json")
	m.env = append(m.env, "TEAMMEM_DREAM=")
	m.write(filepath.Dir(settings), "settings.json", `{"autoDreamEnabled": false}`)
	contains(t, m.must("dream"), "autoDreamEnabled=false in "+settings)
	if _, _, code := m.run("dream", "--max-turns", "0"); code != 2 {
		t.Fatalf("--max-turns 0: exit %d, want 2", code)
	}
}

func TestDreamSchedule(t *testing.T) {
	t.Parallel()
	m, _ := dreamMachine(t, "")
	out := strings.TrimSpace(m.must("dream", "--schedule"))
	f := strings.Fields(out)
	if len(f) < 6 || f[2] != "*" || f[3] != "*" || f[4] != "*" {
		t.Fatalf("not a crontab line: %q", out)
	}
	minute, err1 := strconv.Atoi(f[0])
	hour, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || minute < 0 || minute > 59 || hour < 0 || hour > 5 {
		t.Fatalf("schedule %q is not between 00:00 and 05:59", out)
	}
	repo, _ := filepath.EvalSymlinks(m.repo)
	bin, _ := filepath.EvalSymlinks(clientBin)
	contains(t, out, " * * * cd "+repo+" && ")
	contains(t, out, " "+bin+" dream --min-hours 20 >> ") // a daily run lands either side of 24 h
	contains(t, out, "CLAUDE_CONFIG_DIR="+filepath.Join(m.home, ".claude")+" ")
	if !strings.HasSuffix(out, "dream.log 2>&1") {
		t.Fatalf("no log redirection: %q", out)
	}
}

func TestLogAppendsToDailyLog(t *testing.T) {
	t.Parallel()
	m, loc := dreamMachine(t, "")
	day := time.Now()
	path := strings.TrimSpace(m.must("log", "switched", "the", "queue to NATS"))
	if path != filepath.Join(loc.MemoryDir, filepath.FromSlash(memdir.DailyLogKey(day))) &&
		path != filepath.Join(loc.MemoryDir, filepath.FromSlash(memdir.DailyLogKey(time.Now()))) {
		t.Fatalf("log path = %q", path)
	}
	if want := filepath.Join("logs", day.Format("2006"), day.Format("01"), day.Format("2006-01-02")+".md"); !strings.HasSuffix(path, want) &&
		day.YearDay() == time.Now().YearDay() {
		t.Fatalf("log path %q does not end in %s", path, want)
	}

	cmd := exec.Command(clientBin, "log", "-")
	cmd.Dir, cmd.Env = m.repo, m.env
	cmd.Stdin = strings.NewReader("from stdin\nsecond line\n")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != path {
		t.Fatalf("log - : %v %q", err, out.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), " switched the queue to NATS\n") || !strings.Contains(string(data), " from stdin\n  second line\n") {
		t.Fatalf("log content:\n%s", data)
	}

	for _, args := range [][]string{{"log"}, {"log", "  "}} {
		if _, errOut, code := m.run(args...); code != 2 || !strings.Contains(errOut, "nothing to write") {
			t.Fatalf("%q: exit %d %s", args, code, errOut)
		}
	}
	cmd = exec.Command(clientBin, "log", "-")
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = m.repo, m.env, strings.NewReader("\n"), io.Discard, io.Discard
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 2 {
		t.Fatalf("empty stdin: %v", err)
	}
}

// TestDreamInterruptRollsBack: Ctrl-C while the model works rolls the lock
// back to the previous consolidation.
func TestDreamInterruptRollsBack(t *testing.T) {
	t.Parallel()
	model := newDreamModel(t, llmtest.NewScript(llmtest.Text("unused")), true)
	m, loc := dreamMachine(t, model.URL)
	prior := time.Now().Add(-30 * time.Hour).Truncate(time.Millisecond)
	lock := filepath.Join(loc.MemoryDir, memdir.LockFileName)
	m.write(loc.MemoryDir, memdir.LockFileName, "1")
	if err := os.Chtimes(lock, prior, prior); err != nil {
		t.Fatal(err)
	}
	p := m.start("dream", "--force")
	model.waitArrived(t)
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	p.wait(t)
	if p.code != 1 || !strings.Contains(p.errb.String(), "interrupted") {
		t.Fatalf("exit %d\n%s%s", p.code, p.out.String(), p.errb.String())
	}
	body, mtime := lockState(t, loc.MemoryDir)
	if body != "" || !mtime.Equal(prior) {
		t.Fatalf("lock after Ctrl-C: %q %v, want empty and %v", body, mtime, prior)
	}
}
