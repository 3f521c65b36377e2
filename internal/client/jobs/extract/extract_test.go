package extract_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/jobs/extract"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/testing/fixtures"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// session is a transcript the tests extract from and what extraction sees in it.
type session struct {
	path     string // relative to the package directory, or absolute
	id       string
	lastUUID string // the last main-chain message
	messages int    // main-chain messages, as MessagesAfter counts them
	prompt   string // how the first prompt appears in the model's prompt
}

// ownSession is the repository's session (testdata/notebook-session.jsonl): a leading
// summary, an isMeta caveat, a prompt asking for a Jupyter notebook, streamed assistant
// records, tool calls outside the memory directory and a Task subagent inlined as sidechain
// records, which extraction does not see. 8 user and 7 assistant messages.
var ownSession = session{
	path:     filepath.Join("testdata", "notebook-session.jsonl"),
	id:       "6a0f3e1c-9b2d-4c7e-8f5a-1d3b5c7e9a2f",
	lastUUID: "e-a7",
	messages: 15,
	prompt:   "[user] make a jupyter notebook that runs each step",
}

// fixtureSession is a real session whose first prompt also asks for a Jupyter notebook.
var fixtureSession = session{
	path:     "chiphuyen__sniffly__d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl", // under fixtures/transcripts
	id:       "d3ad4cdc-5657-435d-98fa-0035d53e383d",
	lastUUID: "32a76d26-9a71-40c3-8505-14cf7fede521",
	messages: 125,
	prompt:   "[user] create a jupyter notebook file",
}

// testBundle is one test's memory dir, state dir and transcript.
type testBundle struct {
	base       string
	memDir     string
	stateDir   string
	transcript string
	sess       session
}

// setup copies the repository's session into a fresh temp tree.
func setup(t *testing.T) *testBundle {
	t.Helper()
	return setupSession(t, ownSession)
}

// setupSession copies the transcript of sess into a fresh temp tree.
func setupSession(t *testing.T, sess session) *testBundle {
	t.Helper()
	base := t.TempDir()
	b := &testBundle{base: base, memDir: filepath.Join(base, "memory"), stateDir: filepath.Join(base, "state"),
		transcript: filepath.Join(base, "session.jsonl"), sess: sess}
	for _, d := range []string{b.memDir, b.stateDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, b.transcript, mustRead(t, sess.path))
	return b
}

// options returns Options for the bundle with model m.
func (b *testBundle) options(m llm.Model) extract.Options {
	return extract.Options{
		Location:       memdir.Location{MemoryDir: b.memDir, TeamDir: filepath.Join(b.memDir, "team")},
		SessionID:      b.sess.id,
		TranscriptPath: b.transcript,
		Model:          m,
		StateDir:       b.stateDir,
	}
}

// session returns the persisted state of the bundle's session.
func (b *testBundle) session(t *testing.T) extract.SessionState {
	t.Helper()
	st, err := extract.LoadState(b.stateDir)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sessions[b.sess.id]
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// toolUses is one reply calling several tools at once.
func toolUses(calls ...llmtest.Reply) llmtest.Reply {
	var r llmtest.Reply
	for _, c := range calls {
		r.Response.Content = append(r.Response.Content, c.Response.Content...)
	}
	return r
}

// saveNotebookMemory is a model's two-step save of one feedback memory.
func saveNotebookMemory() []llmtest.Reply {
	return []llmtest.Reply{
		toolUses(
			llmtest.ToolUse("w1", "write", map[string]string{"path": "feedback_notebooks.md",
				"content": "---\nname: Notebooks for step-by-step testing\ndescription: wants a Jupyter notebook to test each pipeline step\ntype: feedback\n---\n\nOffer a notebook that exercises each step.\n"}),
			llmtest.ToolUse("w2", "write", map[string]string{"path": "MEMORY.md",
				"content": "- [Notebooks](feedback_notebooks.md) — test pipeline steps in a notebook\n"}),
		),
		llmtest.Text("Saved one memory."),
	}
}

// userText returns the first user message of a recorded request.
func userText(req llm.Request) string { return req.Messages[0].Content[0].Text }

func TestExtractSavesMemoryAndAdvancesCursor(t *testing.T) {
	t.Parallel()
	checkSavesMemory(t, setup(t))
}

func TestExtractSavesMemoryFixture(t *testing.T) {
	t.Parallel()
	sess := fixtureSession
	sess.path = fixtures.Path(t, "transcripts", sess.path)
	checkSavesMemory(t, setupSession(t, sess))
}

// checkSavesMemory runs an extraction whose model saves one memory: the files are written,
// the cursor moves to the end, and a second run finds nothing new.
func checkSavesMemory(t *testing.T, b *testBundle) {
	t.Helper()
	script := llmtest.NewScript(saveNotebookMemory()...)
	rep, err := extract.Run(context.Background(), b.options(script))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != extract.OutcomeSaved || rep.MemoriesSaved != 1 || rep.TeamSaved != 0 || rep.Messages != b.sess.messages ||
		strings.Join(rep.Files, ",") != "feedback_notebooks.md,MEMORY.md" || rep.Turns != 2 {
		t.Fatalf("report = %+v", rep)
	}
	if got := mustRead(t, filepath.Join(b.memDir, "feedback_notebooks.md")); !strings.Contains(got, "type: feedback") {
		t.Fatalf("topic file = %q", got)
	}
	if got := mustRead(t, filepath.Join(b.memDir, "MEMORY.md")); got != "- [Notebooks](feedback_notebooks.md) — test pipeline steps in a notebook\n" {
		t.Fatalf("index = %q", got)
	}
	s := b.session(t)
	if s.Cursor != b.sess.lastUUID || s.TurnsSince != 0 || s.LastOutcome != extract.OutcomeSaved {
		t.Fatalf("state = %+v", s)
	}
	// The model saw the conversation and the rules, and no team variant.
	req := script.Requests()[0]
	for _, want := range []string{fmt.Sprintf("%d messages of the session that no earlier extraction has seen", b.sess.messages),
		b.sess.prompt, "holds no memories yet"} {
		if !strings.Contains(userText(req), want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	for _, want := range []string{"at most 5 turns", "feedback", "reference", "What never to store", "\n---\nname: <short title>\n"} {
		if !strings.Contains(req.System, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if strings.Contains(req.System, "team/MEMORY.md") {
		t.Error("system prompt has the team variant without a team/ directory")
	}

	// Nothing new: skipped without a model call.
	again := llmtest.NewScript()
	rep, err = extract.Run(context.Background(), b.options(again))
	if err != nil || rep.Outcome != extract.OutcomeSkipped || rep.SkipReason != extract.SkipNoMessages || len(again.Calls()) != 0 {
		t.Fatalf("second run = %+v, %v (%d calls)", rep, err, len(again.Calls()))
	}
}

// Records of a hand-made transcript.
func userLine(uuid, text string) string {
	return fmt.Sprintf(`{"type":"user","uuid":%q,"sessionId":"s","timestamp":"2026-01-02T03:04:05.000Z","message":{"role":"user","content":%q}}`, uuid, text)
}

func metaLine(uuid, text string) string {
	return fmt.Sprintf(`{"type":"user","uuid":%q,"isMeta":true,"sessionId":"s","timestamp":"2026-01-02T03:04:05.000Z","message":{"role":"user","content":%q}}`, uuid, text)
}

func assistantLine(uuid, text string) string {
	return fmt.Sprintf(`{"type":"assistant","uuid":%q,"sessionId":"s","timestamp":"2026-01-02T03:04:06.000Z","message":{"id":"m-%s","role":"assistant","content":[{"type":"text","text":%q}]}}`, uuid, uuid, text)
}

func editLine(uuid, tool, filePath string) string {
	in, _ := json.Marshal(map[string]string{"file_path": filePath, "old_string": "a", "new_string": "b"})
	return fmt.Sprintf(`{"type":"assistant","uuid":%q,"sessionId":"s","timestamp":"2026-01-02T03:04:07.000Z","message":{"id":"e-%s","role":"assistant","content":[{"type":"tool_use","id":"t-%s","name":%q,"input":%s}]}}`, uuid, uuid, uuid, tool, in)
}

func appendLines(t *testing.T, p string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

func TestExtractSeesOnlyNewMessages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := extract.Run(context.Background(), b.options(llmtest.NewScript(llmtest.Text("Nothing worth keeping.")))); err != nil {
		t.Fatal(err)
	}
	appendLines(t, b.transcript, userLine("new-u1", "from now on, always use uv instead of pip"), assistantLine("new-a1", "Understood."))
	script := llmtest.NewScript(llmtest.Text("ok"))
	rep, err := extract.Run(context.Background(), b.options(script))
	if err != nil || rep.Outcome != extract.OutcomeSaved || rep.Messages != 2 || rep.MemoriesSaved != 0 {
		t.Fatalf("report = %+v, %v", rep, err)
	}
	prompt := userText(script.Requests()[0])
	if !strings.Contains(prompt, "2 messages of the session that no") || !strings.Contains(prompt, "[user] from now on, always use uv") ||
		strings.Contains(prompt, "jupyter") {
		t.Fatalf("prompt does not hold exactly the new messages:\n%s", prompt)
	}
	if s := b.session(t); s.Cursor != "new-a1" {
		t.Fatalf("cursor = %q", s.Cursor)
	}
}

func TestExtractSkipRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		lines  func(memDir string) []string
		reason string // "" means the model runs
	}{
		{"edit inside the memory dir", func(d string) []string {
			return []string{userLine("u1", "remember that I prefer tabs"), editLine("a1", "Edit", filepath.Join(d, "feedback_tabs.md"))}
		}, extract.SkipDirectWrite},
		{"write inside team/", func(d string) []string {
			return []string{userLine("u1", "note the release freeze"), editLine("a1", "Write", filepath.Join(d, "team", "project_freeze.md"))}
		}, extract.SkipDirectWrite},
		{"edit in a sibling with the same prefix", func(d string) []string {
			return []string{userLine("u1", "fix the build please"), editLine("a1", "Edit", d+"-backup/notes.md")}
		}, ""},
		{"relative path", func(string) []string {
			return []string{userLine("u1", "fix the build please"), editLine("a1", "Edit", "memory/notes.md")}
		}, ""},
		{"read of a memory file", func(d string) []string {
			return []string{userLine("u1", "what do you remember?"), editLine("a1", "Read", filepath.Join(d, "MEMORY.md"))}
		}, ""},
		{"only injected and assistant messages", func(string) []string {
			return []string{metaLine("u1", "Caveat: generated by a local command"), assistantLine("a1", "Done.")}
		}, extract.SkipNoProse},
		{"only a slash command", func(string) []string {
			return []string{userLine("u1", "<command-name>/clear</command-name><command-message>clear</command-message><command-args></command-args>"), assistantLine("a1", "ok")}
		}, extract.SkipNoProse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			mustWrite(t, b.transcript, "")
			appendLines(t, b.transcript, tt.lines(b.memDir)...)
			script := llmtest.NewScript(llmtest.Text("nothing to keep"))
			rep, err := extract.Run(context.Background(), b.options(script))
			if err != nil {
				t.Fatal(err)
			}
			if tt.reason == "" {
				if rep.Outcome != extract.OutcomeSaved || len(script.Calls()) != 1 {
					t.Fatalf("want a model run, got %+v", rep)
				}
				return
			}
			if rep.Outcome != extract.OutcomeSkipped || rep.SkipReason != tt.reason || len(script.Calls()) != 0 {
				t.Fatalf("want skip %s, got %+v", tt.reason, rep)
			}
			if s := b.session(t); s.Cursor != "a1" || s.LastSkipReason != tt.reason {
				t.Fatalf("skip did not advance the cursor: %+v", s)
			}
		})
	}
}

func TestExtractThrottle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	script := llmtest.NewScript(saveNotebookMemory()...)
	o := b.options(script)
	o.Every = 2
	rep, err := extract.Run(context.Background(), o)
	if err != nil || rep.SkipReason != extract.SkipThrottled || rep.TurnsSince != 1 || rep.Every != 2 || len(script.Calls()) != 0 {
		t.Fatalf("first run = %+v, %v", rep, err)
	}
	if s := b.session(t); s.Cursor != "" || s.TurnsSince != 1 {
		t.Fatalf("throttled run moved the state: %+v", s)
	}
	rep, err = extract.Run(context.Background(), o)
	if err != nil || rep.Outcome != extract.OutcomeSaved || rep.Messages != b.sess.messages || rep.MemoriesSaved != 1 {
		t.Fatalf("second run = %+v, %v", rep, err)
	}
	if s := b.session(t); s.Cursor != b.sess.lastUUID || s.TurnsSince != 0 {
		t.Fatalf("state after the run = %+v", s)
	}
}

func TestExtractModelErrorKeepsCursor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rep, err := extract.Run(context.Background(), b.options(llmtest.NewScript(llmtest.Fail(400, "prompt is too long"))))
	var llmErr *llm.Error
	if !errors.As(err, &llmErr) || rep.Outcome != extract.OutcomeError || !strings.Contains(rep.Error, "prompt is too long") {
		t.Fatalf("report = %+v, err = %v", rep, err)
	}
	if s := b.session(t); s.Cursor != "" || s.LastOutcome != extract.OutcomeError {
		t.Fatalf("state after a failed run = %+v", s)
	}
	// The next run reconsiders the same messages.
	script := llmtest.NewScript(saveNotebookMemory()...)
	rep, err = extract.Run(context.Background(), b.options(script))
	if err != nil || rep.Messages != b.sess.messages || rep.MemoriesSaved != 1 {
		t.Fatalf("retry = %+v, %v", rep, err)
	}
}

func TestExtractWithoutModel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := b.options(nil)
	o.ModelErr = fmt.Errorf("from the environment: %w", llm.ErrNotConfigured)
	rep, err := extract.Run(context.Background(), o)
	if !errors.Is(err, llm.ErrNotConfigured) || rep.SkipReason != extract.SkipNoModel || !strings.Contains(err.Error(), "TEAMMEM_LLM_PROVIDER") {
		t.Fatalf("report = %+v, err = %v", rep, err)
	}
	if s := b.session(t); s.Cursor != "" {
		t.Fatalf("cursor moved without a model: %+v", s)
	}
	// A skip that needs no model stays quiet.
	mustWrite(t, b.transcript, "")
	appendLines(t, b.transcript, metaLine("u1", "injected"), assistantLine("a1", "ok"))
	if rep, err := extract.Run(context.Background(), o); err != nil || rep.SkipReason != extract.SkipNoProse {
		t.Fatalf("no-prose run without a model = %+v, %v", rep, err)
	}
}

func TestExtractSandboxRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	outside := filepath.Join(b.base, "outside")
	if err := os.MkdirAll(filepath.Join(b.memDir, "team"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(b.memDir, "escape")); err != nil {
		t.Fatal(err)
	}
	token := "ghp_" + strings.Repeat("aB3dE5fG7h", 3) + "iJ1kL2"
	script := llmtest.NewScript(
		toolUses(
			llmtest.ToolUse("x1", "write", map[string]string{"path": "../outside/a.md", "content": "x"}),
			llmtest.ToolUse("x2", "write", map[string]string{"path": filepath.Join(outside, "b.md"), "content": "x"}),
			llmtest.ToolUse("x3", "write", map[string]string{"path": "escape/c.md", "content": "x"}),
			llmtest.ToolUse("x4", "write", map[string]string{"path": "team/reference_ci.md", "content": "---\nname: CI\ntype: reference\n---\ntoken " + token + "\n"}),
			llmtest.ToolUse("x5", "bash", map[string]string{"command": "rm -rf ~"}),
		),
		llmtest.ToolUse("ok", "write", map[string]string{"path": "team/reference_ci.md", "content": "---\nname: CI\ndescription: where CI runs\ntype: reference\n---\nCI runs on Buildkite.\n"}),
		llmtest.Text("Saved."),
	)
	o := b.options(script)
	sc, err := secretscan.New()
	if err != nil {
		t.Fatal(err)
	}
	o.Scanner = sc
	rep, err := extract.Run(context.Background(), o)
	if err != nil || rep.Outcome != extract.OutcomeSaved || rep.MemoriesSaved != 1 || rep.TeamSaved != 1 || len(rep.Denied) != 5 {
		t.Fatalf("report = %+v, %v", rep, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("files written outside the memory dir: %v", entries)
	}
	if got := mustRead(t, filepath.Join(b.memDir, "team", "reference_ci.md")); strings.Contains(got, "ghp_") {
		t.Fatalf("secret reached team/: %q", got)
	}
	// The team variant of the prompt was used.
	if sys := script.Requests()[0].System; !strings.Contains(sys, "team/MEMORY.md") || !strings.Contains(sys, "Never put secrets in team/") {
		t.Fatal("system prompt lacks the team rules")
	}
}

func TestExtractTurnLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var replies []llmtest.Reply
	for i := range 10 {
		replies = append(replies, llmtest.ToolUse(fmt.Sprint("l", i), "list", map[string]string{}))
	}
	script := llmtest.NewScript(replies...)
	rep, err := extract.Run(context.Background(), b.options(script))
	if err != nil || rep.Turns != 5 || !rep.HitTurnLimit || len(script.Calls()) != 5 || script.Remaining() != 5 {
		t.Fatalf("report = %+v, err = %v, calls = %d", rep, err, len(script.Calls()))
	}
	if s := b.session(t); s.Cursor != b.sess.lastUUID {
		t.Fatalf("a run that used its budget should still advance the cursor: %+v", s)
	}
}

func TestExtractPromptListsExistingMemories(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mtime := time.Date(2026, 3, 15, 10, 0, 0, 123e6, time.UTC)
	for _, f := range []struct{ key, content string }{
		{"user_role.md", "---\nname: Role\ndescription: data scientist, new to Go\ntype: user\n---\nbody\n"},
		{"team/project_freeze.md", "---\nname: Freeze\ndescription: release freeze until 2026-04-01\ntype: project\n---\nbody\n"},
		{"MEMORY.md", "- [Role](user_role.md) — who I am\n"},
		{"notes/untyped.md", "no frontmatter at all\n"},
		{"team/reference_grafana.md", "---\nname: Grafana\ndescription: latency dashboards\ntype: reference\n---\n"},
	} {
		p := filepath.Join(b.memDir, filepath.FromSlash(f.key))
		mustWrite(t, p, f.content)
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		mtime = mtime.Add(time.Hour)
	}
	script := llmtest.NewScript(llmtest.Text("nothing new"))
	if _, err := extract.Run(context.Background(), b.options(script)); err != nil {
		t.Fatal(err)
	}
	prompt := userText(script.Requests()[0])
	// Newest first, team/ and subdirectories included, MEMORY.md left out.
	want := "- [reference] team/reference_grafana.md (2026-03-15T14:00:00.123Z): latency dashboards\n" +
		"- notes/untyped.md (2026-03-15T13:00:00.123Z)\n" +
		"- [project] team/project_freeze.md (2026-03-15T11:00:00.123Z): release freeze until 2026-04-01\n" +
		"- [user] user_role.md (2026-03-15T10:00:00.123Z): data scientist, new to Go\n\n" +
		"If one of these already covers a subject, read it and update it rather than writing a second file"
	if !strings.Contains(prompt, want) {
		t.Errorf("prompt lacks the manifest\n%s\n---- prompt:\n%s", want, prompt[strings.Index(prompt, "</conversation>"):])
	}
	if strings.Contains(prompt, "] MEMORY.md") || strings.Contains(prompt, "- MEMORY.md") {
		t.Error("the manifest lists MEMORY.md")
	}
}
