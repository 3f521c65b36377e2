package main_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// hook runs `teammem hook` on the machine with input on stdin, from a
// directory outside the clone: the hook must work in the input's cwd.
func (m *machine) hook(input string, env ...string) (stdout, stderr string, code int) {
	m.t.Helper()
	// Only a safety net against a hook that never returns; no test asserts a duration.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, clientBin, "hook")
	cmd.Dir = m.t.TempDir()
	// Claude Code would set CLAUDE_PROJECT_DIR; these tests give the cwd in the input.
	cmd.Env = append(append(append([]string(nil), m.env...), "CLAUDE_PROJECT_DIR="), env...)
	cmd.Stdin = strings.NewReader(input)
	cmd.WaitDelay = 5 * time.Second
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		m.t.Fatalf("teammem hook did not return: %v\n%s", err, m.hookLog())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		m.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// mustHook runs the hook and fails unless it exits 0 and prints nothing.
func (m *machine) mustHook(input string, env ...string) {
	m.t.Helper()
	out, errOut, code := m.hook(input, env...)
	if code != 0 || out != "" {
		m.t.Fatalf("teammem hook exited %d with stdout %q, stderr %q", code, out, errOut)
	}
}

// hookInput is what Claude Code passes for event in the machine's clone,
// with fields teammem does not read.
func (m *machine) hookInput(event, session, transcript string) string {
	b, _ := json.Marshal(map[string]any{
		"hook_event_name": event, "session_id": session, "transcript_path": transcript, "cwd": m.repo,
		"permission_mode": "default", "source": "startup", "stop_hook_active": false, "extra": map[string]any{"nested": []int{1}},
	})
	return string(b)
}

// memDirOffline is memDir without a server to ask `status`.
func (m *machine) memDirOffline() string {
	m.t.Helper()
	claude := filepath.Join(m.home, ".claude")
	loc, err := memdir.Resolve(memdir.Options{Cwd: m.repo, Home: m.home, Getenv: func(k string) string {
		return map[string]string{"CLAUDE_CONFIG_DIR": claude}[k]
	}})
	if err != nil {
		m.t.Fatal(err)
	}
	return loc.MemoryDir
}

// hookLog returns every hook.log the machine's teammem wrote.
func (m *machine) hookLog() string {
	cfg := filepath.Join(m.home, ".config", "teammem")
	logs, _ := filepath.Glob(filepath.Join(cfg, "local", "*", "hook.log"))
	var b strings.Builder
	for _, p := range append(logs, filepath.Join(cfg, "hook.log")) {
		data, _ := os.ReadFile(p)
		b.Write(data)
	}
	return b.String()
}

// waitLog waits until the machine's hook log contains want.
func (m *machine) waitLog(want string) string {
	m.t.Helper()
	for start := time.Now(); time.Since(start) < 2*time.Minute; time.Sleep(20 * time.Millisecond) {
		if l := m.hookLog(); strings.Contains(l, want) {
			return l
		}
	}
	m.t.Fatalf("hook.log never said %q:\n%s", want, m.hookLog())
	return ""
}

// TestHookSessionStartPulls: SessionStart pulls what another machine pushed.
func TestHookSessionStartPulls(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := newMachine(t, srv, "git@github.com:acme/hooks.git")
	b := newMachine(t, srv, "https://github.com/acme/hooks")
	A, B := a.memDir(), b.memDir()
	a.write(A, "team/deploys.md", "no deploys on Fridays\n")
	a.write(A, "me.md", "personal\n")
	a.must("push")

	b.mustHook(b.hookInput("SessionStart", "s-1", ""))
	for _, key := range []string{"team/deploys.md", "me.md"} {
		if got, want := read(t, B, key), read(t, A, key); got != want {
			t.Errorf("%s on b = %q, want %q", key, got, want)
		}
	}
	contains(t, b.hookLog(), "SessionStart: pull: acme/hooks: team 1 pulled; personal 1 pulled")
}

// TestHookSessionEndPushes: SessionEnd pushes a local edit, in the
// project Claude Code started in even after the agent cd'ed elsewhere.
func TestHookSessionEndPushes(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := newMachine(t, srv, "git@github.com:acme/ends.git")
	b := newMachine(t, srv, "git@github.com:acme/ends.git")
	A, B := a.memDir(), b.memDir()
	a.write(A, "team/testing.md", "run make test\n")
	in, _ := json.Marshal(map[string]string{"hook_event_name": "SessionEnd", "session_id": "s-2", "cwd": t.TempDir(), "reason": "exit"})
	a.mustHook(string(in), "CLAUDE_PROJECT_DIR="+a.repo)
	contains(t, a.hookLog(), "SessionEnd: push: acme/ends: team 1 pushed")
	b.must("pull")
	if got := read(t, B, "team/testing.md"); got != "run make test\n" {
		t.Fatalf("b has %q", got)
	}
}

// TestHookNeverFails: bad input, other events and servers that refuse or
// hang all end with exit 0, no output and a line in hook.log.
func TestHookNeverFails(t *testing.T) {
	t.Parallel()
	t.Run("malformed input", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t, "http://127.0.0.1:1", "git@github.com:o/r.git")
		for _, in := range []string{"{not json", "", `["SessionStart"]`, `{"session_id":"x"}`} {
			m.mustHook(in)
		}
		if n := strings.Count(m.hookLog(), "ignored:"); n != 4 {
			t.Fatalf("%d lines say the input was ignored, want 4:\n%s", n, m.hookLog())
		}
	})
	t.Run("other events", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t, "http://127.0.0.1:1", "git@github.com:o/r.git")
		m.mustHook(m.hookInput("PreToolUse", "s", ""))
		m.mustHook(m.hookInput("SubagentStop", "s", ""))
		if l := m.hookLog(); l != "" {
			t.Fatalf("ignored events logged:\n%s", l)
		}
	})
	t.Run("server refuses connections", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		m := newMachine(t, "http://"+addr, "git@github.com:o/r.git")
		m.write(m.memDirOffline(), "team/new.md", "to push\n")
		m.mustHook(m.hookInput("SessionStart", "s", ""))
		m.mustHook(m.hookInput("SessionEnd", "s", ""))
		l := m.hookLog()
		contains(t, l, "SessionStart: pull: o/r: team failed")
		contains(t, l, "SessionEnd: push: o/r: team failed")
	})
	t.Run("server hangs", func(t *testing.T) {
		t.Parallel()
		hit := make(chan struct{}, 8)
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hit <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) })
		m := newMachine(t, srv.URL, "git@github.com:o/r.git")
		m.mustHook(m.hookInput("SessionStart", "s", ""), "TEAMMEM_HOOK_TIMEOUT=1s")
		select {
		case <-hit:
		default:
			t.Fatal("the hook never reached the server")
		}
		contains(t, m.hookLog(), "SessionStart: pull: gave up after 1s")
	})
}

// blockingModel is a fake Anthropic API that holds every request until
// released, then answers from script.
type blockingModel struct {
	URL     string
	script  *llmtest.Script
	arrived chan struct{}
	release func()
}

func newBlockingModel(t *testing.T, script *llmtest.Script) *blockingModel {
	t.Helper()
	upstream, err := url.Parse(llmtest.AnthropicServer(t, script))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	gate := make(chan struct{})
	var once sync.Once
	bm := &blockingModel{script: script, arrived: make(chan struct{}, 64), release: func() { once.Do(func() { close(gate) }) }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case bm.arrived <- struct{}{}:
		default:
		}
		select {
		case <-gate:
			proxy.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(bm.release) // before srv.Close, which waits for handlers
	bm.URL = srv.URL
	return bm
}

// TestHookStopReturnsAtOnce: the Stop hook hands extraction to a detached
// process and exits while the model is still holding the request; once
// released, that process's extraction gets its answer.
func TestHookStopReturnsAtOnce(t *testing.T) {
	t.Parallel()
	session, transcript := extractSession, extractTranscript(t)
	var replies []llmtest.Reply
	for range 10 { // extraction needs one; the dream's gates should stop it before any
		replies = append(replies, llmtest.Text("Nothing here is worth remembering."))
	}
	model := newBlockingModel(t, llmtest.NewScript(replies...))
	m := newMachine(t, "http://127.0.0.1:1", "git@github.com:acme/stops.git")
	m.env = append(m.env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1", "TEAMMEM_LLM_PROVIDER=anthropic", "TEAMMEM_LLM_MODEL=test-model",
		"TEAMMEM_LLM_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=sk-ant-test", "TEAMMEM_LLM_MAX_RETRIES=0")

	m.mustHook(m.hookInput("Stop", session, transcript))
	// The hook is done; the background extraction now reaches the model,
	// which holds it.
	select {
	case <-model.arrived:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the background extraction never reached the model:\n%s", m.hookLog())
	}
	if n := len(model.script.Calls()); n != 0 {
		t.Fatalf("the model answered %d requests before it was released", n)
	}
	contains(t, m.hookLog(), "Stop: session "+session+": extraction and dream check started in the background")

	model.release()
	l := m.waitLog("Stop: dream:") // the worker's last step: nothing of it outlives the test
	contains(t, l, "Stop: extract: done")
	if len(model.script.Calls()) == 0 {
		t.Fatalf("the extraction's request never got to the model:\n%s", l)
	}
	t.Logf("hook.log:\n%s", l)
}

// TestHookInstall edits a settings.json that has other settings and hooks.
// Claude Code's auto memory is off, so every part is installed.
func TestHookInstall(t *testing.T) {
	t.Parallel()
	m := newMachine(t, "http://127.0.0.1:1", "git@github.com:o/r.git")
	m.env = append(m.env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1")
	settings := filepath.Join(m.home, ".claude", "settings.json")
	original := `{
  "model": "opus",
  "env": {"CI": "1"},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check-bash"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]
  },
  "permissions": {"allow": ["Bash(make test)"], "deny": []},
  "statusLine": {"type": "command", "command": "echo <&>"}
}
`
	m.write(filepath.Dir(settings), "settings.json", original)
	ours := clientBin + " hook"

	out := m.must("hook", "install")
	contains(t, out, "added teammem's hooks to "+settings)
	installed := readFile(t, settings)
	checkInstalled(t, installed, ours, allEvents...)
	// Everything else is kept, in its order.
	if keys := topKeys(t, installed); !reflect.DeepEqual(keys, []string{"model", "env", "hooks", "permissions", "statusLine"}) {
		t.Errorf("top-level keys %v", keys)
	}
	got, want := decode(t, installed), decode(t, original)
	gotHooks, wantHooks := got["hooks"].(map[string]any), want["hooks"].(map[string]any)
	delete(got, "hooks")
	delete(want, "hooks")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("other settings changed:\n%v\nwant\n%v", got, want)
	}
	if !reflect.DeepEqual(gotHooks["PreToolUse"], wantHooks["PreToolUse"]) {
		t.Errorf("PreToolUse = %v", gotHooks["PreToolUse"])
	}
	if stop := gotHooks["Stop"].([]any); len(stop) != 2 || !reflect.DeepEqual(stop[0], wantHooks["Stop"].([]any)[0]) {
		t.Errorf("Stop = %v", stop)
	}

	// Installing again changes nothing.
	contains(t, m.must("hook", "install", "--user"), "already")
	if again := readFile(t, settings); again != installed {
		t.Errorf("second install changed the file:\n%s", again)
	}

	// Uninstall takes out ours and nothing else.
	contains(t, m.must("hook", "uninstall"), "removed 5 teammem hook entries")
	if got := decode(t, readFile(t, settings)); !reflect.DeepEqual(got, decode(t, original)) {
		t.Errorf("after uninstall:\n%s", readFile(t, settings))
	}
	contains(t, m.must("hook", "uninstall"), "no teammem hooks")

	// A file that is not JSON is refused and left alone.
	m.write(filepath.Dir(settings), "settings.json", "{\"model\": \"opus\",\n")
	_, errOut, code := m.run("hook", "install")
	if code == 0 || readFile(t, settings) != "{\"model\": \"opus\",\n" {
		t.Fatalf("install over invalid JSON: exit %d, file %q", code, readFile(t, settings))
	}
	contains(t, errOut, "not valid JSON")
	contains(t, errOut, "nothing was changed")
}

// TestHookInstallProject creates .claude/settings.json in the repository.
func TestHookInstallProject(t *testing.T) {
	t.Parallel()
	m := newMachine(t, "http://127.0.0.1:1", "git@github.com:o/r.git")
	m.env = append(m.env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1")
	sub := filepath.Join(m.repo, "pkg", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	m.must("hook", "install", "--project", "--cwd", sub)
	settings := filepath.Join(m.repo, ".claude", "settings.json")
	checkInstalled(t, readFile(t, settings), clientBin+" hook", allEvents...)
	if _, err := os.Stat(filepath.Join(m.home, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Errorf("--project touched the user settings: %v", err)
	}
	m.must("hook", "uninstall", "--project")
	if got := strings.TrimSpace(readFile(t, settings)); got != "{}" {
		t.Errorf("after uninstall: %s", got)
	}
	if _, _, code := m.run("hook", "install", "--project", "--user"); code != 2 {
		t.Errorf("--project --user: exit %d, want 2", code)
	}
}

// allEvents are the events install registers when teammem runs every part.
var allEvents = []string{"SessionStart", "Stop", "SessionEnd", "PostToolUse", "PreCompact"}

// checkInstalled checks that each of events holds exactly one group
// running ours, as install writes it, and no other event runs teammem.
func checkInstalled(t *testing.T, settings, ours string, events ...string) {
	t.Helper()
	if n := strings.Count(settings, `"command": "`+ours+`"`); n != len(events) {
		t.Errorf("our command appears %d times, want %d:\n%s", n, len(events), settings)
	}
	if n := strings.Count(settings, "teammem hook"); n != len(events) {
		t.Errorf("teammem hook entries: %d, want %d:\n%s", n, len(events), settings)
	}
	hooks, _ := decode(t, settings)["hooks"].(map[string]any)
	want := map[string]any{"matcher": "", "hooks": []any{map[string]any{"type": "command", "command": ours, "timeout": float64(30)}}}
	for _, event := range events {
		groups, _ := hooks[event].([]any)
		if len(groups) == 0 || !reflect.DeepEqual(groups[len(groups)-1], want) {
			t.Errorf("%s = %v", event, hooks[event])
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v:\n%s", err, s)
	}
	return v
}

// topKeys returns the keys of a JSON object in file order.
func topKeys(t *testing.T, s string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	var keys []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
