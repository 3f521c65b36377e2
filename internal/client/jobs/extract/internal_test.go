package extract

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/client/transcript"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

func TestRunCoalescesWhileLocked(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	memDir, stateDir := filepath.Join(base, "memory"), filepath.Join(base, "state")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	unlock, ok, err := lockSession(stateDir, "s1")
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	script := llmtest.NewScript()
	o := Options{Location: memdir.Location{MemoryDir: memDir}, SessionID: "s1", TranscriptPath: filepath.Join(base, "none.jsonl"),
		Model: script, StateDir: stateDir}
	rep, err := Run(context.Background(), o)
	if err != nil || rep.Outcome != OutcomeSkipped || rep.SkipReason != SkipCoalesced || len(script.Calls()) != 0 {
		t.Fatalf("report = %+v, %v", rep, err)
	}
	st, _ := LoadState(stateDir)
	if st.Sessions["s1"].LastOutcome != SkipCoalesced {
		t.Fatalf("state = %+v", st)
	}
	// Another session is not blocked, and the lock is free once released.
	if _, ok, _ := lockSession(stateDir, "s2"); !ok {
		t.Fatal("session s2 blocked by s1's lock")
	}
	unlock()
	if rep, _ := Run(context.Background(), o); rep.SkipReason == SkipCoalesced {
		t.Fatal("still coalescing after unlock")
	}
}

func TestStateDropsIdleSessions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	set := func(id string, at time.Time) {
		if err := updateSession(dir, id, at, func(s *SessionState) { s.LastRun, s.Cursor = at, "c-"+id }); err != nil {
			t.Fatal(err)
		}
	}
	set("old", now.Add(-31*24*time.Hour))
	set("recent", now.Add(-time.Hour))
	set("current", now)
	st, err := LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Sessions["old"]; ok || st.Sessions["recent"].Cursor != "c-recent" || st.Sessions["current"].Cursor != "c-current" {
		t.Fatalf("state = %+v", st)
	}
}

func TestRenderExcerpt(t *testing.T) {
	t.Parallel()
	msgs := []transcript.Message{
		{Role: "user", Text: "first prompt"},
		{Role: "assistant", Text: "looking", ToolUses: []transcript.ToolUse{{Name: "Read", FilePath: "/w/a.go"}, {Name: "Bash"}}},
		{Role: "user", ToolResults: 2},
		{Role: "assistant", ToolUses: []transcript.ToolUse{{Name: "TodoWrite"}}},
		{Role: "user", IsMeta: true, Text: "expanded command"},
		{Role: "user", Text: "keep this <system-reminder>noise\nmore</system-reminder>and this"},
	}
	got := renderExcerpt(msgs, MaxExcerptChars)
	want := "[user] first prompt\n" +
		"[assistant] looking\n  (tools: Read /w/a.go, Bash)\n" +
		"[assistant] (tools: TodoWrite)\n" +
		"[user (automatic, not typed by the developer)] expanded command\n" +
		"[user] keep this and this"
	if got != want {
		t.Fatalf("excerpt =\n%s\nwant\n%s", got, want)
	}
	// Over the limit, the newest messages are kept.
	var many []transcript.Message
	for i := range 100 {
		many = append(many, transcript.Message{Role: "user", Text: strings.Repeat("x", 90) + string(rune('a'+i%26))})
	}
	got = renderExcerpt(many, 1000)
	if len(got) > 1100 || !strings.HasPrefix(got, "[… 90 earlier messages left out for length …]") || !strings.HasSuffix(got, "xv") {
		t.Fatalf("capped excerpt (%d chars) =\n%s", len(got), got)
	}
	// One huge message is cut in the middle without splitting a character.
	huge := renderMessage(&transcript.Message{Role: "user", Text: strings.Repeat("é", 10_000)})
	if len(huge) > maxMessageChars+200 || !strings.Contains(huge, "characters left out") || !strings.HasSuffix(huge, "é") {
		t.Fatalf("huge message rendered as %d bytes", len(huge))
	}
}

func TestManifestScan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := t.TempDir()
	write := func(p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "late.md"), "---\nname: late\n"+strings.Repeat("x: y\n", 30)+"description: too late\ntype: user\n---\n")
	write(filepath.Join(dir, "bom.md"), "\uFEFF---\r\ndescription: with BOM and CRLF\r\ntype: feedback\r\n---\r\n")
	write(filepath.Join(dir, "team", "MEMORY.md"), "- index\n")
	write(filepath.Join(dir, "notes.txt"), "not markdown")
	write(filepath.Join(dir, memdir.TempPrefix+"x.md"), "---\ndescription: temp\n---\n")
	write(filepath.Join(outside, "secret.md"), "---\ndescription: outside\n---\n")
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "linked.md")); err != nil {
		t.Fatal(err)
	}
	got := Manifest(dir)
	lines := strings.Split(got, "\n")
	if len(lines) != 2 {
		t.Fatalf("manifest =\n%s", got)
	}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "- late.md ("):
			if strings.Contains(l, "too late") || strings.Contains(l, "[user]") {
				t.Errorf("frontmatter past line 30 was read: %s", l)
			}
		case strings.HasPrefix(l, "- [feedback] bom.md ("):
			if !strings.HasSuffix(l, "): with BOM and CRLF") {
				t.Errorf("bom line = %s", l)
			}
		default:
			t.Errorf("unexpected line %q", l)
		}
	}
	if Manifest(filepath.Join(dir, "missing")) != "" {
		t.Error("a missing directory should give an empty manifest")
	}
}
