package extract_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/jobs/extract"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// freshTurn writes a two-message transcript whose turn began at began and
// returns its bundle: a developer asking for something worth remembering.
func freshTurn(t *testing.T, began time.Time) *testBundle {
	t.Helper()
	base := t.TempDir()
	b := &testBundle{base: base, memDir: filepath.Join(base, "memory"), stateDir: filepath.Join(base, "state"),
		transcript: filepath.Join(base, "session.jsonl"), sess: session{id: "d3ad4cdc-5657-435d-98fa-0035d53e383d"}}
	for _, d := range []string{b.memDir, b.stateDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	line := func(v map[string]any) string {
		out, _ := json.Marshal(v)
		return string(out) + "\n"
	}
	ts := func(d time.Duration) string { return began.Add(d).UTC().Format("2006-01-02T15:04:05.000Z") }
	mustWrite(t, b.transcript,
		line(map[string]any{"type": "user", "uuid": "u1", "parentUuid": nil, "timestamp": ts(0), "sessionId": "d3ad4cdc-5657-435d-98fa-0035d53e383d",
			"message": map[string]any{"role": "user", "content": "From now on, always run the linter before committing: CI rejects unlinted code."}})+
			line(map[string]any{"type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": ts(time.Second),
				"message": map[string]any{"id": "msg_1", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Understood."}}}}))
	return b
}

func TestExtractLogModeAppendsToTodaysLog(t *testing.T) {
	t.Parallel()
	now := time.Now()
	b := freshTurn(t, now.Add(-time.Minute))
	mustWrite(t, filepath.Join(b.memDir, "MEMORY.md"), "- [Old](old.md) — kept\n")
	mustWrite(t, filepath.Join(b.memDir, "old.md"), "---\nname: Old\ntype: project\n---\nold\n")
	for _, k := range []string{"MEMORY.md", "old.md"} { // written before the turn
		if err := os.Chtimes(filepath.Join(b.memDir, k), now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	before := tree(t, b.memDir)
	script := llmtest.NewScript(
		toolUses(
			llmtest.ToolUse("l1", extract.LogTool, map[string]string{"type": "feedback", "text": "Run the linter before every commit; CI rejects unlinted code."}),
			llmtest.ToolUse("w1", "write", map[string]string{"path": "feedback_lint.md", "content": "x"}),
			llmtest.ToolUse("e1", "edit", map[string]string{"path": "MEMORY.md", "old_string": "kept", "new_string": "gone"}),
		),
		llmtest.Text("Logged one memory."))
	o := b.options(script)
	o.Mode = extract.ModeLog
	o.Now = func() time.Time { return now }
	rep, err := extract.Run(context.Background(), o)
	if err != nil || rep.Outcome != extract.OutcomeSaved || rep.MemoriesSaved != 1 || len(rep.Denied) != 2 {
		t.Fatalf("%v %+v", err, rep)
	}
	key := memdir.DailyLogKey(now)
	if !slices.Equal(rep.Files, []string{key}) {
		t.Fatalf("files %v, want [%s]", rep.Files, key)
	}
	log := mustRead(t, filepath.Join(b.memDir, filepath.FromSlash(key)))
	want := "# " + now.Format("2006-01-02") + "\n\n- " + now.Format("15:04") + " [feedback] Run the linter before every commit; CI rejects unlinted code.\n"
	if log != want {
		t.Fatalf("log %q, want %q", log, want)
	}
	// No topic file or index changed: the tree is the old one plus the log.
	after := tree(t, b.memDir)
	delete(after, key)
	if len(after) != len(before) {
		t.Fatalf("files after %v, before %v", after, before)
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed: %q", k, after[k])
		}
	}
	// The model was told it works on the log; its tools say so.
	req := script.Requests()[0]
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Name)
	}
	if !strings.Contains(req.System, "daily log") || !slices.Equal(names, []string{"list", "read", "grep", "glob", extract.LogTool}) {
		t.Fatalf("system prompt or tools wrong: %v", names)
	}
}

func TestExtractSkipsWhenAnotherWriterSavedTheTurn(t *testing.T) {
	t.Parallel()
	began := time.Now().Add(-2 * time.Minute)
	b := freshTurn(t, began)
	p := filepath.Join(b.memDir, "feedback_lint.md")
	mustWrite(t, p, "---\nname: Lint\ntype: feedback\n---\nrun the linter\n")
	if err := os.Chtimes(p, began.Add(time.Minute), began.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	script := llmtest.NewScript()
	rep, err := extract.Run(context.Background(), b.options(script))
	if err != nil || rep.SkipReason != extract.SkipMemoryChanged || len(script.Calls()) != 0 {
		t.Fatalf("%v %+v", err, rep)
	}
	if s := b.session(t); s.Cursor != "a1" {
		t.Fatalf("cursor %q: the skipped turn must not be extracted again", s.Cursor)
	}

	// The same file written by teammem itself does not count.
	b2 := freshTurn(t, began)
	p2 := filepath.Join(b2.memDir, "feedback_lint.md")
	mustWrite(t, p2, "mine\n")
	if err := os.Chtimes(p2, began.Add(time.Minute), began.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := extract.RecordWrites(b2.stateDir, b2.memDir, []string{"feedback_lint.md"}); err != nil {
		t.Fatal(err)
	}
	script = llmtest.NewScript(llmtest.Text("nothing new"))
	if rep, err := extract.Run(context.Background(), b2.options(script)); err != nil || rep.Outcome != extract.OutcomeSaved {
		t.Fatalf("own write: %v %+v", err, rep)
	}

	// A change long after the turn is not the turn's.
	b3 := freshTurn(t, time.Now().Add(-time.Hour))
	mustWrite(t, filepath.Join(b3.memDir, "later.md"), "later\n")
	script = llmtest.NewScript(llmtest.Text("nothing new"))
	if rep, err := extract.Run(context.Background(), b3.options(script)); err != nil || rep.Outcome != extract.OutcomeSaved {
		t.Fatalf("later change: %v %+v", err, rep)
	}
}

// tree maps every file under dir to its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	files, _, err := memdir.Scan(dir, memdir.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		out[f.Key] = string(f.Content)
	}
	return out
}
