package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/client/jobs/sessionmem"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// notesSession is the session of testdata/session.
const notesSession = "3b1f5c2e-8d4a-4e6b-9c7d-2a5e8f1b0c93"

// notesMachine is a machine where teammem is the memory engine (Claude
// Code's auto memory is off), with the fake Anthropic model at modelURL
// ("" for none), and the session's transcript holding part 1.
type notesMachine struct {
	*machine
	transcript string
	notes      string
}

func newNotesMachine(t *testing.T, modelURL string) *notesMachine {
	t.Helper()
	m := newMachine(t, "http://127.0.0.1:1", "git@github.com:acme/uploader.git")
	m.env = append(m.env, withoutModel...)
	m.env = append(m.env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1", "TEAMMEM_HOOK_TIMEOUT=", "TEAMMEM_MEMORY_MODE=", "TEAMMEM_SESSION_MEMORY=")
	if modelURL != "" {
		m.env = append(m.env, "TEAMMEM_LLM_PROVIDER=anthropic", "TEAMMEM_LLM_MODEL=claude-test", "ANTHROPIC_API_KEY=test",
			"TEAMMEM_LLM_BASE_URL="+modelURL, "TEAMMEM_LLM_MAX_RETRIES=0")
	}
	claude := filepath.Join(m.home, ".claude")
	nm := &notesMachine{machine: m, notes: sessionmem.NotesPath(claude, m.repo, notesSession),
		transcript: filepath.Join(memdir.ProjectDir(claude, m.repo), notesSession+".jsonl")}
	nm.appendPart("part1.jsonl")
	return nm
}

// appendPart appends a part of testdata/session to the transcript.
func (nm *notesMachine) appendPart(name string) {
	nm.t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "session", name))
	if err != nil {
		nm.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(nm.transcript), 0o700); err != nil {
		nm.t.Fatal(err)
	}
	f, err := os.OpenFile(nm.transcript, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		nm.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		nm.t.Fatal(err)
	}
}

// payload is a recorded hook input of testdata/hooks for this machine.
func (nm *notesMachine) payload(name string) string {
	nm.t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hooks", name))
	if err != nil {
		nm.t.Fatal(err)
	}
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }
	return strings.NewReplacer("{{transcript}}", quote(nm.transcript), "{{cwd}}", quote(nm.repo)).Replace(string(data))
}

// notesReport runs session-memory --json.
func (nm *notesMachine) notesReport(args ...string) sessionmem.Report {
	nm.t.Helper()
	out := nm.must(append([]string{"session-memory", "--session", notesSession, "--session-cwd", nm.repo, "--json"}, args...)...)
	var rep sessionmem.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		nm.t.Fatalf("%v\n%s", err, out)
	}
	return rep
}

// The notes the fake model writes.
const (
	titleLine   = "_A distinctive title of 5 to 10 words that says what this session is about_\n"
	stateLine   = "_What is being worked on right now: pending tasks, the next steps, anything left half done_\n"
	filesLine   = "_The files and functions that matter for this work, with a few words on what each holds and why it matters_\n"
	errorsLine  = "_Errors met and how they were fixed, what the user corrected, approaches that failed and must not be tried again_\n"
	worklogLine = "_A terse step-by-step record of what was done, one line per step_\n"
	firstState  = "Done: Upload retries 503 and 429 up to 5 times with exponential backoff (100 ms doubling, capped at 5 s); go test ./... passes.\n"
	lastWorklog = "- go test ./... passes\n"
)

// editReply is one model reply making the given edits (old, new pairs).
func editReply(path string, pairs ...string) llmtest.Reply {
	var r llmtest.Reply
	for i := 0; i < len(pairs); i += 2 {
		e := llmtest.ToolUse("e"+string(rune('a'+i/2)), sessionmem.EditTool, map[string]any{"file_path": path, "old_string": pairs[i], "new_string": pairs[i+1]})
		r.Response.Content = append(r.Response.Content, e.Response.Content...)
	}
	return r
}

// twoUpdates are the model's replies for the two updates of the session.
func twoUpdates(path string) []llmtest.Reply {
	return []llmtest.Reply{
		editReply(path,
			titleLine, titleLine+"Retries with exponential backoff for the uploader\n",
			stateLine, stateLine+firstState,
			filesLine, filesLine+"- upload.go: Upload wraps c.put in retry(ctx, 5, ...)\n- retry.go: retry(); transient(err) decides what is retried\n",
			errorsLine, errorsLine+"- TestUploadRetries failed (attempts = 1, want 5): retry() treated every error as permanent; now only 503 and 429 are retried.\n",
			worklogLine, worklogLine+"- read upload.go\n- wrapped c.put in retry\n- go test: TestUploadRetries failed\n- retry only transient errors\n"+lastWorklog),
		llmtest.Text("Notes updated."),
		editReply(path,
			firstState, "Done: retries with exponential backoff and up to 25% jitter per delay; go test -race ./... passes. Nothing pending.\n",
			lastWorklog, lastWorklog+"- added up to 25% jitter to each delay\n- go test -race ./... passes\n"),
		llmtest.Text("Notes updated."),
	}
}

// TestSessionMemoryTwoUpdates is the resolution run: the real binary, the
// fake Anthropic API, a session transcript growing in two parts.
func TestSessionMemoryTwoUpdates(t *testing.T) {
	t.Parallel()
	script := llmtest.NewScript()
	nm := newNotesMachine(t, llmtest.AnthropicServer(t, script))
	script.Add(twoUpdates(nm.notes)...)

	rep := nm.notesReport()
	if rep.Outcome != sessionmem.OutcomeUpdated || rep.Tokens != 10020 || rep.Edits != 5 || !rep.Created || rep.NotesPath != nm.notes {
		t.Fatalf("first update: %+v", rep)
	}
	checkPerm(t, nm.notes, 0o600)
	checkPerm(t, filepath.Dir(nm.notes), 0o700)
	first := read(t, filepath.Dir(nm.notes), sessionmem.NotesFile)
	t.Logf("notes after the first update (%d tokens of context):\n%s", rep.Tokens, first)

	// Nothing new: the gate holds, no model call.
	if rep := nm.notesReport(); rep.SkipReason != sessionmem.SkipTokens || len(script.Calls()) != 2 {
		t.Fatalf("without growth: %+v, %d calls", rep, len(script.Calls()))
	}
	nm.appendPart("part2.jsonl")
	rep = nm.notesReport()
	if rep.Outcome != sessionmem.OutcomeUpdated || rep.Tokens != 15200 || rep.Growth != 5180 || rep.Edits != 2 {
		t.Fatalf("second update: %+v", rep)
	}
	notes := read(t, filepath.Dir(nm.notes), sessionmem.NotesFile)
	t.Logf("notes after the second update (%d tokens of context, %d more):\n%s", rep.Tokens, rep.Growth, notes)
	if err := sessionmem.CheckStructure(sessionmem.DefaultTemplate, notes); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"25% jitter", "TestUploadRetries failed", "- go test -race ./... passes\n"} {
		contains(t, notes, want)
	}
	// The second prompt carried only what came after the first update.
	second := script.Requests()[2].Messages[0].Content[0].Text
	contains(t, second, "Add jitter too")
	if strings.Contains(second, "gives up on the first 503") {
		t.Error("the second update was shown the conversation the first one covered")
	}
	contains(t, second, "Retries with exponential backoff for the uploader") // the current notes

	nm.must("hook", "install")
	status := nm.status()
	contains(t, status, "session notes  teammem: Claude Code does not run it (CLAUDE_CODE_DISABLE_AUTO_MEMORY=1)")
	contains(t, status, notesSession+"  ")
	contains(t, status, "(2 updates)")
	t.Logf("status:\n%s", status[strings.Index(status, "memory lifecycle"):])
}

func checkPerm(t *testing.T, p string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != want {
		t.Fatalf("%s: %v %v, want %v", p, fi.Mode(), err, want)
	}
}

// TestHookCompactionKeepsTheNotes: PreCompact brings the notes up to date
// and prints nothing; SessionStart with source compact hands them to the
// session in the JSON Claude Code reads; other sources print nothing.
func TestHookCompactionKeepsTheNotes(t *testing.T) {
	t.Parallel()
	script := llmtest.NewScript()
	nm := newNotesMachine(t, llmtest.AnthropicServer(t, script))
	script.Add(twoUpdates(nm.notes)[:2]...)

	nm.mustHook(nm.payload("pre_compact.json"))
	// Bounded by the hook's wait, not asserted: on a slow machine the
	// update finishes after the hook returned.
	l := nm.waitLog("session-memory: session " + notesSession + ": notes updated")
	contains(t, l, "PreCompact: session "+notesSession+": ")
	contains(t, read(t, filepath.Dir(nm.notes), sessionmem.NotesFile), firstState)

	out, errOut, code := nm.hook(nm.payload("session_start_compact.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("SessionStart(compact) printed %q: %v", out, err)
	}
	ctx := got.HookSpecificOutput.AdditionalContext
	if got.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(ctx, nm.notes) || !strings.Contains(ctx, firstState) ||
		!strings.Contains(ctx, "# Current State\n"+stateLine) || len(ctx) > sessionmem.HookContextLimit {
		t.Fatalf("additional context:\n%s", out)
	}
	contains(t, nm.hookLog(), "gave the compacted session its notes")

	nm.mustHook(nm.payload("session_start_startup.json")) // not after a compaction: nothing printed
	if n := len(script.Calls()); n != 2 {
		t.Fatalf("%d model calls, want 2", n)
	}
}

// TestHookPostToolUseStartsAnUpdate: a PostToolUse with the gate open
// starts the update in the background; one with the gate closed does not.
func TestHookPostToolUseStartsAnUpdate(t *testing.T) {
	t.Parallel()
	script := llmtest.NewScript()
	nm := newNotesMachine(t, llmtest.AnthropicServer(t, script))
	script.Add(twoUpdates(nm.notes)[:2]...)
	nm.mustHook(nm.payload("post_tool_use.json"))
	contains(t, nm.waitLog("session-memory: session "+notesSession+": notes updated"), "PostToolUse: session "+notesSession+": notes update started in the background")
	nm.mustHook(nm.payload("post_tool_use.json"))
	nm.mustHook(nm.payload("stop.json"))
	if n := strings.Count(nm.hookLog(), "notes update started"); n != 1 || len(script.Calls()) != 2 {
		t.Fatalf("%d updates started, %d model calls:\n%s", n, len(script.Calls()), nm.hookLog())
	}
}

// TestHookWithoutModelStaysQuiet: without a model, Stop hooks leave no
// failure in hook.log, say so once, and status counts the no_model skips.
func TestHookWithoutModelStaysQuiet(t *testing.T) {
	t.Parallel()
	nm := newNotesMachine(t, "")
	for range 3 {
		nm.mustHook(nm.payload("stop.json"))
	}
	nm.mustHook(nm.payload("post_tool_use.json"))
	nm.mustHook(nm.payload("pre_compact.json"))
	l := nm.hookLog()
	if strings.Contains(l, "failed") || strings.Contains(l, "started in the background") {
		t.Fatalf("hook.log:\n%s", l)
	}
	if n := strings.Count(l, "(no_model)"); n != 1 {
		t.Fatalf("no_model said %d times, want once:\n%s", n, l)
	}
	contains(t, l, "Stop: dream, extract, session_memory skipped (no_model): no language model configured")

	var st struct {
		Lifecycle struct {
			Model     string `json:"model"`
			HookSkips map[string]struct {
				Reason string `json:"reason"`
				Count  int    `json:"count"`
			} `json:"hook_skips"`
			Extraction struct{ By string } `json:"extraction"`
		} `json:"lifecycle"`
	}
	if err := json.Unmarshal([]byte(nm.status("--json")), &st); err != nil {
		t.Fatal(err)
	}
	lc := st.Lifecycle
	if lc.Model != "not configured" || lc.HookSkips["extract"].Reason != "no_model" || lc.HookSkips["extract"].Count != 3 ||
		lc.HookSkips["session_memory"].Count != 4 || lc.HookSkips["dream"].Count != 3 {
		t.Fatalf("status lifecycle %+v", lc)
	}
	contains(t, nm.status(), "hooks skipped it 3 times since")
}
