package dream_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/jobs/dream"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

func (b *bundle) write(key, content string) {
	b.t.Helper()
	if _, err := memdir.WriteAtomic(b.mem, key, []byte(content)); err != nil {
		b.t.Fatal(err)
	}
}

// tree returns every file under dir with its content and mtime, the lock
// included.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		m[rel] = string(b) + "@" + fi.ModTime().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// forcedPlan runs a forced check and fails the test when it skips.
func forcedPlan(t *testing.T, d *dream.Dreamer) dream.Plan {
	t.Helper()
	d.Config.Force = true
	plan, err := d.Check()
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	return plan
}

func TestDreamRunCompletes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write("MEMORY.md", "- [Testing](feedback_testing.md) — how tests are run\n")
	b.write("feedback_testing.md", "---\nname: testing\ndescription: tests\ntype: feedback\n---\nRun go test.\n")
	logKey := memdir.DailyLogKey(b.now.Local())
	if _, err := memdir.AppendLog(b.mem, b.now.Local(), "moved CI to GitHub Actions"); err != nil {
		t.Fatal(err)
	}
	b.sessions(0, 2, b.now.Add(-time.Hour), readLine)
	script := llmtest.NewScript(
		llmtest.ToolUse("1", "read", map[string]string{"path": "MEMORY.md"}),
		llmtest.ToolUse("2", "write", map[string]string{"path": "project_ci.md", "content": "---\nname: ci\ndescription: CI runs on GitHub Actions\ntype: project\n---\nCI moved to GitHub Actions.\n"}),
		llmtest.ToolUse("3", "edit", map[string]string{"path": "MEMORY.md", "old_string": "run\n", "new_string": "run\n- [CI](project_ci.md) — where CI runs\n"}),
		llmtest.Text("Added project_ci.md and indexed it."),
	)
	d := b.dreamer(dream.DefaultConfig())
	d.Model = script
	var turns int
	d.OnTurn = func(int, string, int) { turns++ }
	plan := forcedPlan(t, d)
	rep, err := d.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != dream.OutcomeCompleted || strings.Join(rep.Touched, ",") != "project_ci.md,MEMORY.md" ||
		rep.Summary != "Added project_ci.md and indexed it." || turns != 4 {
		t.Fatalf("report = %+v, turns %d", rep, turns)
	}
	// The lock stays with us: its mtime is the new last consolidation.
	body, _ := os.ReadFile(dream.LockPath(b.mem))
	if string(body) != strconv.Itoa(os.Getpid()) || time.Since(dream.LastConsolidated(b.mem)) > time.Minute {
		t.Fatalf("lock after a completed run: %q %v", body, dream.LastConsolidated(b.mem))
	}
	req := script.Requests()[0]
	prompt := req.Messages[0].Content[0].Text
	for _, want := range []string{b.mem, b.transcripts, "logs/YYYY/MM/YYYY-MM-DD.md", logKey, sessionID(0), sessionID(1),
		"Sessions since the last consolidation (2)", "200 lines", "never move or copy a private memory", "absolute",
		"Orient", "Gather recent signal", "Consolidate", "Prune and index", "summary", "never been consolidated"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if req.System != dream.SystemPrompt || len(req.Tools) == 0 {
		t.Errorf("system prompt or tools missing")
	}
}

func TestDreamRunFailureRollsBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	prior := time.Now().Add(-72 * time.Hour).Truncate(time.Millisecond)
	b.lock("", prior)
	d := b.dreamer(dream.DefaultConfig())
	d.Model = llmtest.NewScript(llmtest.Fail(500, "overloaded"))
	plan := forcedPlan(t, d)
	rep, err := d.Run(context.Background(), plan)
	if err == nil || rep.Outcome != dream.OutcomeFailed {
		t.Fatalf("run = %+v, %v; want a failure", rep, err)
	}
	body, _ := os.ReadFile(dream.LockPath(b.mem))
	if string(body) != "" || !dream.LastConsolidated(b.mem).Equal(prior) {
		t.Fatalf("lock after failure: %q %v, want empty and %v", body, dream.LastConsolidated(b.mem), prior)
	}
}

// blockingModel waits for its context to end, as a model call does when
// the user presses Ctrl-C.
type blockingModel struct{ entered chan struct{} }

func (m blockingModel) Name() string { return "test/blocking" }

func (m blockingModel) Complete(ctx context.Context, _ llm.Request) (llm.Response, error) {
	close(m.entered)
	<-ctx.Done()
	return llm.Response{}, ctx.Err()
}

func TestDreamRunCancelRollsBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := b.dreamer(dream.DefaultConfig())
	m := blockingModel{entered: make(chan struct{})}
	d.Model = m
	plan := forcedPlan(t, d)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-m.entered; cancel() }()
	_, err := d.Run(ctx, plan)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run = %v, want cancellation", err)
	}
	if _, err := os.Stat(dream.LockPath(b.mem)); !os.IsNotExist(err) {
		t.Fatalf("lock after cancelling a first run still exists: %v", err)
	}
}

func TestDreamRunNeverCreatesTeamFiles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write("user_role.md", "---\nname: role\ndescription: role\ntype: user\n---\nbackend\n")
	b.write("team/conventions.md", "Use tabs.\n")
	d := b.dreamer(dream.DefaultConfig())
	d.Model = llmtest.NewScript(
		llmtest.ToolUse("1", "write", map[string]string{"path": "team/user_role.md", "content": "backend\n"}),
		llmtest.ToolUse("2", "write", map[string]string{"path": "team/conventions.md", "content": "Use tabs; gofmt decides.\n"}),
		llmtest.Text("Tightened the team conventions."),
	)
	rep, err := d.Run(context.Background(), forcedPlan(t, d))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Touched, ",") != "team/conventions.md" || len(rep.Denied) != 1 || !strings.Contains(rep.Denied[0], "new team memory") {
		t.Fatalf("report = %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(b.mem, "team", "user_role.md")); !os.IsNotExist(err) {
		t.Fatal("a personal memory was promoted into team/")
	}
}

func TestDreamDryRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write("MEMORY.md", "- [Old](old.md) — stale\n- [Keep](keep.md) — kept\n")
	b.write("old.md", "obsolete\n")
	b.write("keep.md", "line one\nline two\n")
	before := tree(t, b.mem)
	d := b.dreamer(dream.DefaultConfig())
	d.Config.DryRun = true
	d.Model = llmtest.NewScript(
		llmtest.ToolUse("1", "delete", map[string]string{"path": "old.md"}),
		llmtest.ToolUse("2", "read", map[string]string{"path": "keep.md"}),
		llmtest.ToolUse("3", "edit", map[string]string{"path": "keep.md", "old_string": "line two", "new_string": "line 2"}),
		llmtest.ToolUse("4", "write", map[string]string{"path": "new.md", "content": "fresh\n"}),
		llmtest.Text("Deleted old.md, fixed keep.md, added new.md."),
	)
	rep, err := d.Run(context.Background(), forcedPlan(t, d))
	if err != nil {
		t.Fatal(err)
	}
	want := "--- a/keep.md\n+++ b/keep.md\n@@ -1,2 +1,2 @@\n line one\n-line two\n+line 2\n" +
		"--- /dev/null\n+++ b/new.md\n@@ -0,0 +1 @@\n+fresh\n" +
		"--- a/old.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-obsolete\n"
	if rep.Outcome != dream.OutcomeDryRun || rep.Diff != want {
		t.Fatalf("outcome %s, diff:\n%s\nwant:\n%s", rep.Outcome, rep.Diff, want)
	}
	after := tree(t, b.mem)
	if len(after) != len(before) {
		t.Fatalf("tree changed: %v -> %v", before, after)
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("%s changed: %q -> %q", k, v, after[k])
		}
	}
}
