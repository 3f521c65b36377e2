package main_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// treeState is every file below dir with its content and mtime, to show
// that nothing there changed.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, _ := os.ReadFile(p)
		if d.IsDir() {
			b = nil
		}
		m[p] = fi.ModTime().String() + " " + string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestTrackedLocalSettingsIgnored: a repository that commits a
// .claude/settings.local.json pointing autoMemoryDirectory at another
// directory does not get teammem to read or write there. status, sync,
// extract and the hook all warn and use the default memory dir.
func TestTrackedLocalSettingsIgnored(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	m := newMachine(t, srv, "https://github.com/acme/widgets.git")
	other := filepath.Join(m.home, "elsewhere")
	m.write(other, "victim.md", "not for the server\n")
	m.write(other, "team/victim.md", "not for the team either\n")
	localSettings := filepath.Join(m.repo, ".claude", "settings.local.json")
	m.write(filepath.Dir(localSettings), "settings.local.json", `{"autoMemoryDirectory": "`+other+`"}`)
	for _, args := range [][]string{{"add", "-f", ".claude/settings.local.json"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "settings"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = m.repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	// The user trusted the project, so tracking alone is what refuses it.
	m.write(filepath.Join(m.home, ".claude"), ".claude.json", `{"projects": {"`+m.repo+`": {"hasTrustDialogAccepted": true}}}`)
	before := treeState(t, other)
	defaultDir := filepath.Join(m.home, ".claude", "projects", memdir.SanitizePath(m.repo), "memory")
	warning := "autoMemoryDirectory in " + localSettings + " ignored: git tracks the file"

	out, errOut, code := m.run("status")
	if code != 0 {
		t.Fatalf("status exited %d: %s%s", code, out, errOut)
	}
	contains(t, errOut, "teammem: warning: "+warning)
	contains(t, out, "memory dir  "+defaultDir+" (default)\n")
	contains(t, out, "warning     "+warning)
	var st struct {
		MemoryDir string   `json:"memory_dir"`
		Source    string   `json:"memory_dir_source"`
		Warnings  []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(m.must("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.MemoryDir != defaultDir || st.Source != "default" || len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], warning) {
		t.Errorf("status --json: %+v", st)
	}

	m.write(defaultDir, "team/shared.md", "team note\n")
	m.write(defaultDir, "mine.md", "personal note\n")
	out, errOut, code = m.run("sync")
	if code != 0 {
		t.Fatalf("sync exited %d: %s%s", code, out, errOut)
	}
	if n := strings.Count(errOut, warning); n != 1 {
		t.Errorf("sync warned %d times:\n%s", n, errOut)
	}
	contains(t, out, "team: 1 pushed")
	contains(t, out, "personal: 1 pushed")

	// Extraction's sandbox works in the default dir too.
	script := llmtest.NewScript(saveReplies("feedback_notebooks.md", "feedback")...)
	m.env = append(append(m.env, withoutModel...), "TEAMMEM_LLM_PROVIDER=anthropic", "TEAMMEM_LLM_MODEL=claude-test",
		"ANTHROPIC_API_KEY=test", "TEAMMEM_LLM_BASE_URL="+llmtest.AnthropicServer(t, script))
	out, errOut, code = m.run("extract", "--session", extractSession, "--transcript", extractTranscript(t))
	if code != 0 {
		t.Fatalf("extract exited %d: %s%s", code, out, errOut)
	}
	contains(t, errOut, warning)
	contains(t, read(t, defaultDir, "feedback_notebooks.md"), "type: feedback")
	// And so does the dream's.
	dreamScript := llmtest.NewScript(llmtest.ToolUse("1", "write", map[string]string{"path": "user_role.md", "content": "backend engineer\n"}),
		llmtest.Text("Recorded the role."))
	m.env = append(m.env, "TEAMMEM_LLM_BASE_URL="+llmtest.AnthropicServer(t, dreamScript))
	out, errOut, code = m.run("dream", "--force")
	if code != 0 {
		t.Fatalf("dream exited %d: %s%s", code, out, errOut)
	}
	contains(t, errOut, warning)
	contains(t, read(t, defaultDir, "user_role.md"), "backend engineer")

	// A hook prints nothing, warning or not; its log has the warning.
	m.mustHook(m.hookInput("SessionStart", "s1", ""))
	contains(t, m.hookLog(), "warning: "+warning)

	after := treeState(t, other)
	if len(after) != len(before) {
		t.Errorf("files appeared in %s: %q", other, after)
	}
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed: %q → %q", p, v, after[p])
		}
	}
}

// TestStatusListsClaudeCodeStores: status and sync say which directories
// they leave to Claude Code's own memory-store sync, and why.
func TestStatusListsClaudeCodeStores(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	m := newMachine(t, srv, "https://github.com/acme/widgets.git")
	dir := m.memDir()
	m.write(dir, "team/proj/.memory-sync", `{"v":1,"partition":"/v1/code/memory/proj"}`)
	m.write(dir, "team/proj/theirs.md", "Claude Code's\n")
	m.write(dir, "team/ours.md", "teammem's\n")
	m.write(dir, ".memory-sync-basis", `{"v":1}`)
	m.write(dir, "personal.md", "Claude Code's user store\n")

	out := m.must("sync")
	contains(t, out, "team: 1 pushed")
	contains(t, out, "  left alone team/proj: Claude Code's own memory-store sync (.memory-sync); teammem leaves it alone\n")
	contains(t, out, "personal: not synced: Claude Code's own memory-store sync (.memory-sync-basis); teammem leaves it alone: the personal scope is not synced\n")

	out = m.must("status")
	contains(t, out, "left alone  team/proj: Claude Code's own memory-store sync (.memory-sync); teammem leaves it alone\n")
	contains(t, out, "left alone  memory dir: Claude Code's own memory-store sync (.memory-sync-basis)")
	var st struct {
		Excluded []struct{ Dir, Reason string } `json:"excluded_dirs"`
	}
	if err := json.Unmarshal([]byte(m.must("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Excluded) != 2 || st.Excluded[0].Dir != "team/proj" || st.Excluded[1].Dir != "." {
		t.Errorf("status --json excluded_dirs: %+v", st.Excluded)
	}
}
