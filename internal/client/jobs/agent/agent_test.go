package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/client/jobs/agent"
	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

func setup(t *testing.T) (root, outside string, sb *agent.Sandbox) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "memory"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "team"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "MEMORY.md"), []byte("- [Role](user_role.md) — who I am\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	sc, err := secretscan.New()
	if err != nil {
		t.Fatal(err)
	}
	return root, outside, &agent.Sandbox{Root: root, Scanner: sc}
}

func TestRunnerWritesAndRecords(t *testing.T) {
	root, _, sb := setup(t)
	script := llmtest.NewScript(
		llmtest.ToolUse("1", "read", map[string]string{"path": "MEMORY.md"}),
		llmtest.ToolUse("2", "write", map[string]string{"path": "user_role.md", "content": "---\nname: role\ntype: user\n---\nbackend engineer\n"}),
		llmtest.ToolUse("3", "edit", map[string]string{"path": "MEMORY.md", "old_string": "who I am", "new_string": "who I am and what I do"}),
		llmtest.Text("Saved one memory."),
	)
	res, err := (&consolidate.Runner{Model: script, Toolbox: sb, MaxTurns: 5}).Run(context.Background(), "remember")
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 4 || res.HitTurnLimit || res.Final != "Saved one memory." || strings.Join(res.Touched, ",") != "user_role.md,MEMORY.md" {
		t.Fatalf("result = %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "MEMORY.md")); !strings.Contains(string(b), "what I do") {
		t.Fatalf("edit not applied: %q", b)
	}
	// The model saw each tool's result.
	calls := script.Calls()
	last := calls[len(calls)-1].Request.Messages
	if got := last[len(last)-1].Content[0].Text; got != "edited MEMORY.md" {
		t.Fatalf("last tool result = %q", got)
	}
}

func TestSandboxRefusals(t *testing.T) {
	root, outside, sb := setup(t)
	token := "ghp_" + strings.Repeat("aB3dE5fG7h", 3) + "iJ1kL2"
	attempts := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"write", map[string]any{"path": "../outside/x.md", "content": "x"}, "not a path inside"},
		{"write", map[string]any{"path": filepath.Join(outside, "abs.md"), "content": "x"}, "outside the memory directory"},
		{"write", map[string]any{"path": "escape/through-symlink.md", "content": "x"}, "symlink"},
		{"read", map[string]any{"path": "escape/anything.md"}, "not"},
		{"delete", map[string]any{"path": "../outside"}, "not a path inside"},
		{"write", map[string]any{"path": "team/ci.md", "content": "use " + token}, "GitHub PAT"},
		{"edit", map[string]any{"path": "MEMORY.md", "old_string": "a", "new_string": "b"}, "read MEMORY.md before editing"},
		{"bash", map[string]any{"command": "rm -rf /"}, "no tool"},
	}
	var replies []llmtest.Reply
	for i, a := range attempts {
		replies = append(replies, llmtest.ToolUse(string(rune('a'+i)), a.tool, a.args))
	}
	script := llmtest.NewScript(append(replies, llmtest.Text("done"))...)
	res, err := (&consolidate.Runner{Model: script, Toolbox: sb, MaxTurns: 20}).Run(context.Background(), "try to escape")
	if err != nil {
		t.Fatal(err)
	}
	calls := script.Calls()
	for i, a := range attempts {
		msgs := calls[i+1].Request.Messages
		result := msgs[len(msgs)-1].Content[0]
		if !result.IsError || !strings.Contains(result.Text, a.want) {
			t.Errorf("%s %v: result %+v, want an error containing %q", a.tool, a.args, result, a.want)
		}
		if strings.Contains(result.Text, token) {
			t.Errorf("the refusal echoed the secret")
		}
	}
	if len(res.Touched) != 0 {
		t.Fatalf("touched %v", res.Touched)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 0 {
		t.Fatalf("files appeared outside: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(root, "team", "ci.md")); err == nil {
		t.Fatal("the secret reached team/")
	}
}

func TestTurnLimitAndNoNewTeamFiles(t *testing.T) {
	_, _, sb := setup(t)
	sb.NoNewTeamFiles = true
	var replies []llmtest.Reply
	for range 10 {
		replies = append(replies, llmtest.ToolUse("x", "write", map[string]string{"path": "team/promoted.md", "content": "personal fact"}))
	}
	script := llmtest.NewScript(replies...)
	res, err := (&consolidate.Runner{Model: script, Toolbox: sb, MaxTurns: 3}).Run(context.Background(), "loop forever")
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 3 || !res.HitTurnLimit || len(script.Calls()) != 3 {
		t.Fatalf("turn limit not held: %+v, %d calls", res, len(script.Calls()))
	}
	if len(res.Denied) != 3 || !strings.Contains(res.Denied[0], "never move personal ones into team/") {
		t.Fatalf("denied = %v", res.Denied)
	}
}

func TestGrepAndGlobAndReadRoots(t *testing.T) {
	root, outside, sb := setup(t)
	if err := os.WriteFile(filepath.Join(outside, "s.jsonl"), []byte(`{"x":"needle in a transcript"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "team", "t.md"), []byte("team needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb.ReadRoots = []string{outside}
	out, isErr := sb.Call("grep", []byte(`{"pattern":"needle"}`))
	if isErr || !strings.Contains(out, "team/t.md:1: team needle") || strings.Contains(out, "transcript") {
		t.Fatalf("grep memory = %q", out)
	}
	out, isErr = sb.Call("grep", []byte(`{"pattern":"needle","path":"`+outside+`"}`))
	if isErr || !strings.Contains(out, "needle in a transcript") {
		t.Fatalf("grep transcripts = %q %v", out, isErr)
	}
	if out, isErr = sb.Call("read", []byte(`{"path":"`+filepath.Join(outside, "s.jsonl")+`"}`)); !isErr {
		t.Fatalf("read of a read-only root allowed: %q", out)
	}
	out, _ = sb.Call("glob", []byte(`{"pattern":"**/*.md"}`))
	if !strings.Contains(out, "MEMORY.md") || !strings.Contains(out, "team/t.md") {
		t.Fatalf("glob = %q", out)
	}
}

func TestCancellation(t *testing.T) {
	_, _, sb := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := (&consolidate.Runner{Model: llmtest.NewScript(llmtest.Text("x")), Toolbox: sb}).Run(ctx, "x")
	if err == nil {
		t.Fatal("a cancelled run succeeded")
	}
}
