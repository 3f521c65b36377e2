package sessionmem_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/jobs/sessionmem"
	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// testBundle is one session: a transcript, a config home for the notes
// and a state directory.
type testBundle struct {
	root, configHome, stateDir, transcript, notes string
}

const session = "7f3c2a10-5b9e-4c1d-9a2f-3e8b6d4c1a01"

// setup copies the synthetic transcript file (testdata/gates) into a fresh
// tree.
func setup(t *testing.T, file string) *testBundle {
	t.Helper()
	root := t.TempDir()
	b := &testBundle{root: root, configHome: filepath.Join(root, ".claude"), stateDir: filepath.Join(root, "state"),
		transcript: filepath.Join(root, "t.jsonl")}
	b.notes = sessionmem.NotesPath(b.configHome, "/home/dev/src/widgets", session)
	data, err := os.ReadFile(gateFile(file))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.transcript, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(b.stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *testBundle) options(model llm.Model) sessionmem.Options {
	return sessionmem.Options{SessionID: session, TranscriptPath: b.transcript, NotesPath: b.notes, StateDir: b.stateDir,
		Texts: sessionmem.LoadTexts(b.configHome), Model: model}
}

// edit is the model calling the edit tool.
func edit(id, path, old, new string) llmtest.Reply {
	return llmtest.ToolUse(id, sessionmem.EditTool, map[string]any{"file_path": path, "old_string": old, "new_string": new})
}

// together puts several tool calls in one reply, as parallel calls.
func together(replies ...llmtest.Reply) llmtest.Reply {
	var r llmtest.Reply
	for _, x := range replies {
		r.Response.Content = append(r.Response.Content, x.Response.Content...)
	}
	return r
}

const (
	titleLine = "_A distinctive title of 5 to 10 words that says what this session is about_\n"
	stateLine = "_What is being worked on right now: pending tasks, the next steps, anything left half done_\n"
)

// fill writes text under the heading whose italic line is line.
func fill(id, path, line, text string) llmtest.Reply {
	return edit(id, path, line, line+text+"\n")
}

func TestUpdateEditsOnlyTheNotes(t *testing.T) {
	t.Parallel()
	b := setup(t, "init")
	script := llmtest.NewScript(
		together(fill("e1", b.notes, titleLine, "Retry for the uploader"), fill("e2", b.notes, stateLine, "Reading uploader.go")),
		llmtest.Text("Updated."))
	rep, err := sessionmem.Run(context.Background(), b.options(script))
	if err != nil || rep.Outcome != sessionmem.OutcomeUpdated || rep.Edits != 2 || !rep.Created || len(rep.Denied) != 0 {
		t.Fatalf("%v: %+v", err, rep)
	}
	notes := readFile(t, b.notes)
	if !strings.Contains(notes, titleLine+"Retry for the uploader\n") || !strings.Contains(notes, stateLine+"Reading uploader.go\n") {
		t.Fatalf("notes:\n%s", notes)
	}
	if err := sessionmem.CheckStructure(sessionmem.DefaultTemplate, notes); err != nil {
		t.Fatal(err)
	}
	checkMode(t, b.notes, 0o600)
	checkMode(t, filepath.Dir(b.notes), 0o700|fs.ModeDir)
	// Nothing but the notes (and teammem's own state) exists in the tree.
	if got := files(t, b.configHome); !slices.Equal(got, []string{strings.TrimPrefix(b.notes, b.configHome+"/")}) {
		t.Fatalf("files under the config home: %v", got)
	}
	// The model saw the conversation, the notes path and the notes.
	req := script.Requests()[0]
	prompt := req.Messages[0].Content[0].Text
	for _, want := range []string{"<conversation>", "[user] Add a retry to the uploader.", "<current_notes_content>\n" + sessionmem.DefaultTemplate,
		"file_path exactly " + b.notes} {
		if !strings.Contains(prompt, want) {
			t.Fatalf("prompt lacks %q:\n%s", want, prompt)
		}
	}
	if len(req.Tools) != 1 || req.Tools[0].Name != sessionmem.EditTool {
		t.Fatalf("tools %v", req.Tools)
	}
	st, _ := sessionmem.LoadState(b.stateDir, session)
	if st.Updates != 1 || st.TokensAtLastUpdate != 10000 || st.LastSummarized == "" || st.Scan.Cursor != st.Scan.LastUUID {
		t.Fatalf("state %+v", st)
	}
	// The same transcript again: nothing accrued, no model call.
	rep, err = sessionmem.Run(context.Background(), b.options(script))
	if err != nil || rep.SkipReason != sessionmem.SkipTokens || len(script.Calls()) != 2 {
		t.Fatalf("second run: %v %+v (%d calls)", err, rep, len(script.Calls()))
	}
}

func TestUpdateRefusesOtherFilesAndHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, "init")
	other := filepath.Join(filepath.Dir(b.notes), "other.md")
	memory := filepath.Join(b.root, "memory", "MEMORY.md")
	script := llmtest.NewScript(
		together(
			llmtest.ToolUse("w1", "write", map[string]string{"path": memory, "content": "x"}),
			edit("e1", other, "a", "b"),
			edit("e2", "summary.md", titleLine, titleLine+"relative path\n"),
			edit("e3", b.notes, "# Current State\n", "# Status\n"),
			edit("e4", b.notes, stateLine, "_Whatever I like_\n"),
			edit("e5", b.notes, stateLine, stateLine+"# A new heading\n"),
			edit("e6", b.notes, "\n# Session Title", "Preamble\n# Session Title"),
			fill("e7", b.notes, titleLine, "Kept edit"),
		),
		llmtest.Text("Done."))
	rep, err := sessionmem.Run(context.Background(), b.options(script))
	if err != nil || rep.Outcome != sessionmem.OutcomeUpdated || rep.Edits != 1 {
		t.Fatalf("%v: %+v", err, rep)
	}
	if len(rep.Denied) != 7 {
		t.Fatalf("%d refusals, want 7: %q", len(rep.Denied), rep.Denied)
	}
	for i, want := range []string{`no tool "write"`, "other.md", `"summary.md" is not the notes file`, `heading "# Current State" was changed`,
		"italic line under", "new heading", "above the first heading"} {
		if !strings.Contains(rep.Denied[i], want) {
			t.Errorf("refusal %d = %q, want %q", i, rep.Denied[i], want)
		}
	}
	want := strings.Replace(sessionmem.DefaultTemplate, titleLine, titleLine+"Kept edit\n", 1)
	if got := readFile(t, b.notes); got != want {
		t.Fatalf("notes:\n%s", got)
	}
	for _, p := range []string{other, memory} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists: %v", p, err)
		}
	}
	// The model was told why, in the tool results.
	results := script.Requests()[1].Messages[2].Content
	if len(results) != 8 || !results[0].IsError || results[7].IsError {
		t.Fatalf("tool results %+v", results)
	}
}

func TestUpdateBudgetReminders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		worklog   int // characters under Worklog
		learnings int
		want      []string
		not       []string
	}{
		{"within budget", 7000, 100, nil, []string{"CRITICAL", "limit: 2000"}},
		{"one section over", 9000, 100, []string{"These sections are over their limit", `- "# Worklog" is ~2250 tokens (limit: 2000)`}, []string{"CRITICAL"}},
		{"total over", 30000, 20000, []string{"CRITICAL: the notes are now ~", "over their limit of 12000 tokens", "Shorten these sections first, largest first:\n" +
			`- "# Worklog" is ~7500 tokens (limit: 2000)` + "\n" + `- "# Learnings" is ~5000 tokens (limit: 2000)`}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "init")
			notes := strings.Replace(sessionmem.DefaultTemplate, "one line per step_\n", "one line per step_\n"+filler(c.worklog-len("_A terse step-by-step record of what was done, one line per step_\n"))+"\n", 1)
			notes = strings.Replace(notes, "what to avoid next time_\n", "what to avoid next time_\n"+filler(c.learnings-len("_What worked well, what did not, and what to avoid next time_\n"))+"\n", 1)
			writeNotes(t, b.notes, notes)
			script := llmtest.NewScript(llmtest.Text("Nothing to change."))
			rep, err := sessionmem.Run(context.Background(), b.options(script))
			if err != nil || rep.Outcome != sessionmem.OutcomeUpdated || rep.Created {
				t.Fatalf("%v %+v", err, rep)
			}
			prompt := script.Requests()[0].Messages[0].Content[0].Text
			for _, w := range c.want {
				if !strings.Contains(prompt, w) || !strings.Contains(rep.BudgetReminder, strings.TrimSpace(w)) {
					t.Errorf("prompt or report lacks %q:\n%s", w, rep.BudgetReminder)
				}
			}
			for _, w := range c.not {
				if strings.Contains(prompt, w) {
					t.Errorf("prompt has %q", w)
				}
			}
		})
	}
}

// filler is n characters of text in lines of 80.
func filler(n int) string {
	var b strings.Builder
	for b.Len() < n {
		line := strings.Repeat("w", min(79, n-b.Len()-1))
		b.WriteString(line + "\n")
	}
	return strings.TrimSuffix(b.String()[:n], "\n")
}

func TestUpdateUsesOverrides(t *testing.T) {
	t.Parallel()
	b := setup(t, "init")
	cfg := filepath.Join(b.configHome, "session-memory", "config")
	template := "\n# Goal\n_What we are after_\n\n# Next\n_What comes next_\n"
	prompt := "Custom instruction for {{notesPath}}; notes:\n{{currentNotes}}\nUnknown {{other}} stays.\n"
	writeNotes(t, filepath.Join(cfg, sessionmem.TemplateFile), template)
	writeNotes(t, filepath.Join(cfg, sessionmem.PromptFile), prompt)
	texts := sessionmem.LoadTexts(b.configHome)
	if len(texts.Overridden) != 2 || len(texts.Problems) != 0 {
		t.Fatalf("texts %+v", texts)
	}
	script := llmtest.NewScript(together(edit("e1", b.notes, "_What comes next_\n", "_What comes next_\nShip it\n")), llmtest.Text("ok"))
	rep, err := sessionmem.Run(context.Background(), b.options(script))
	if err != nil || rep.Edits != 1 {
		t.Fatalf("%v %+v", err, rep)
	}
	if got := readFile(t, b.notes); got != "\n# Goal\n_What we are after_\n\n# Next\n_What comes next_\nShip it\n" {
		t.Fatalf("notes %q", got)
	}
	sent := script.Requests()[0].Messages[0].Content[0].Text
	if !strings.Contains(sent, "Custom instruction for "+b.notes+"; notes:\n"+template+"\nUnknown {{other}} stays.") ||
		strings.Contains(sent, "Rules:") {
		t.Fatalf("prompt:\n%s", sent)
	}
}

func TestSubstituteIsOnePass(t *testing.T) {
	t.Parallel()
	got := sessionmem.Substitute("{{currentNotes}} at {{notesPath}} {{x}}", map[string]string{"currentNotes": "{{notesPath}} $1", "notesPath": "/n"})
	if got != "{{notesPath}} $1 at /n {{x}}" {
		t.Fatalf("%q", got)
	}
}

func TestUpdateWithoutModel(t *testing.T) {
	t.Parallel()
	b := setup(t, "init")
	o := b.options(nil)
	o.ModelErr = fmt.Errorf("no model: %w", llm.ErrNotConfigured)
	rep, err := sessionmem.Run(context.Background(), o)
	if !errors.Is(err, llm.ErrNotConfigured) || rep.SkipReason != sessionmem.SkipNoModel {
		t.Fatalf("%v %+v", err, rep)
	}
	if _, err := os.Stat(b.notes); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("notes created without a model")
	}
	// The gate still passes once a model is there: the cursor did not move.
	rep, err = sessionmem.Check(b.options(nil))
	if err != nil || rep.Outcome != sessionmem.OutcomeDue {
		t.Fatalf("check: %v %+v", err, rep)
	}
}

func TestUpdateLock(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		pid    int
		age    time.Duration
		reason string
	}{
		{"live holder", os.Getpid(), time.Second, sessionmem.SkipInProgress},
		{"dead holder", 1 << 22, time.Second, ""},
		{"stale holder", os.Getpid(), sessionmem.LockStale + time.Minute, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "init")
			lock := filepath.Join(b.stateDir, sessionmem.StateDirName, session+".update")
			writeNotes(t, lock, fmt.Sprintf("%d %d\n", c.pid, time.Now().Add(-c.age).UnixMilli()))
			script := llmtest.NewScript(llmtest.Text("ok"))
			rep, err := sessionmem.Run(context.Background(), b.options(script))
			if err != nil || rep.SkipReason != c.reason {
				t.Fatalf("%v %+v", err, rep)
			}
			if c.reason == "" && rep.Outcome != sessionmem.OutcomeUpdated {
				t.Fatalf("not updated: %+v", rep)
			}
			if c.reason == "" {
				if _, err := os.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
					t.Fatal("the lock outlived the update")
				}
			}
		})
	}
}

func TestEnsureNotesKeepsAnExistingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a", "b", "summary.md")
	writeNotes(t, path, "mine\n")
	created, err := sessionmem.EnsureNotes(path, sessionmem.DefaultTemplate)
	if err != nil || created || readFile(t, path) != "mine\n" {
		t.Fatalf("%v %v %q", created, err, readFile(t, path))
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeNotes(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func checkMode(t *testing.T, p string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil || fi.Mode() != want {
		t.Fatalf("%s: mode %v (%v), want %v", p, fi.Mode(), err, want)
	}
}

// files lists the regular files under dir, relative, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}
