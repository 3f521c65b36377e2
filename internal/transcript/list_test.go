package transcript

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mustCopy copies the fixture src to dst, creating dst's directory.
func mustCopy(tb testing.TB, src, dst string) {
	tb.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	mustWrite(tb, dst, string(data))
}

// mustWrite writes content to path, creating its directory.
func mustWrite(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// projectBundle is a project directory laid out like <configHome>/projects/<key>/, built
// from the fixtures that flatten it into "__subagents__" file names.
type projectBundle struct {
	dir    string
	parent string // the main transcript
	child  string // the fixture subagent transcript
}

// setupProject builds the project directory.
func setupProject(t *testing.T) projectBundle {
	t.Helper()
	dir := t.TempDir()
	b := projectBundle{
		dir:    dir,
		parent: filepath.Join(dir, fixtureSession+".jsonl"),
		child:  filepath.Join(dir, fixtureSession, "subagents", "agent-a0ad4f44468bdf20d.jsonl"),
	}
	mustCopy(t, fixturePath(t, fxAgentParent), b.parent)
	mustCopy(t, fixturePath(t, fxAgentChild), b.child)
	mustWrite(t, filepath.Join(dir, fixtureSession, "subagents", "agent-a0ad4f44468bdf20d.meta.json"),
		`{"agentType":"general-purpose","description":"search files","worktreePath":"/tmp/wt"}`)
	return b
}

func TestListSessions(t *testing.T) {
	t.Parallel()
	b := setupProject(t)
	upper := strings.ToUpper("d3ad4cdc-5657-435d-98fa-0035d53e383d")
	mustCopy(t, fixturePath(t, fxSniffly), filepath.Join(b.dir, upper+".jsonl"))
	mustWrite(t, filepath.Join(b.dir, "agent-a0123456789abcdef.jsonl"), userLine) // not a session
	mustWrite(t, filepath.Join(b.dir, "notes.jsonl"), userLine)                   // stem not a UUID
	mustWrite(t, filepath.Join(b.dir, fixtureSession+".json"), userLine)          // wrong extension
	mustWrite(t, filepath.Join(b.dir, "ff71dbed-a4f2-4284-a4fc-fe2fb90de929.jsonl.bak"), userLine)
	if err := os.Mkdir(filepath.Join(b.dir, "11111111-2222-3333-4444-555555555555.jsonl"), 0o700); err != nil {
		t.Fatal(err) // a directory named like a session
	}
	old := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(b.parent, old, old); err != nil {
		t.Fatal(err)
	}

	got, err := ListSessions(b.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != fixtureSession || got[1].ID != upper {
		t.Fatalf("sessions = %+v", got)
	}
	if !got[0].ModTime.Equal(old) || got[0].Size != 1170 || got[0].Path != b.parent {
		t.Errorf("parent = %+v", got[0])
	}
	if got[1].Size != 880816 {
		t.Errorf("sniffly size = %d", got[1].Size)
	}
}

func TestListSessionsMissingDir(t *testing.T) {
	t.Parallel()
	if _, err := ListSessions(filepath.Join(t.TempDir(), "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
}

func TestSubagents(t *testing.T) {
	t.Parallel()
	b := setupProject(t)
	subs := filepath.Join(b.dir, fixtureSession, "subagents")
	// A nested subdirectory, a missing sidecar, a broken sidecar, and files that are not agents.
	mustWrite(t, filepath.Join(subs, "workflows", "agent-awf-0123456789abcdef.jsonl"), userLine+"\n")
	mustWrite(t, filepath.Join(subs, "agent-a1111111111111111.jsonl"), userLine+"\n")
	mustWrite(t, filepath.Join(subs, "agent-a1111111111111111.meta.json"), `{"agentType":`)
	mustWrite(t, filepath.Join(subs, "agent-.jsonl"), userLine)
	mustWrite(t, filepath.Join(subs, "notes.jsonl"), userLine)
	mustWrite(t, filepath.Join(subs, "workflows", "deeper", "agent-a2222222222222222.jsonl"), userLine)

	got, err := Subagents(b.dir, fixtureSession)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("subagents = %+v", got)
	}
	want := []SubagentFile{
		{AgentID: "a0ad4f44468bdf20d", Path: b.child, Size: 1752, HasMeta: true,
			AgentType: "general-purpose", Description: "search files", WorktreePath: "/tmp/wt"},
		{AgentID: "a1111111111111111", Path: filepath.Join(subs, "agent-a1111111111111111.jsonl"), Size: int64(len(userLine) + 1)},
		{AgentID: "awf-0123456789abcdef", Path: filepath.Join(subs, "workflows", "agent-awf-0123456789abcdef.jsonl"),
			Subdir: "workflows", Size: int64(len(userLine) + 1)},
	}
	for i := range want {
		g := got[i]
		g.ModTime = time.Time{}
		if g != want[i] {
			t.Errorf("subagent %d = %+v\nwant %+v", i, g, want[i])
		}
		if got[i].ModTime.IsZero() {
			t.Errorf("subagent %d has no mtime", i)
		}
	}

	// The subagent transcript found through the layout reads like the fixture.
	sum, err := Summarize(got[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 4 || sum.Sidechain != 4 || sum.Tools.Answered != 1 {
		t.Errorf("subagent summary = %+v", sum)
	}
}

func TestSubagentsEdgeCases(t *testing.T) {
	t.Parallel()
	b := setupProject(t)
	got, err := Subagents(b.dir, "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
	if err != nil || got != nil {
		t.Errorf("session without subagents: %v, %v", got, err)
	}
	for _, bad := range []string{"", "..", "../x", fixtureSession + "/..", "agent-a0ad4f44468bdf20d"} {
		if _, err := Subagents(b.dir, bad); err == nil {
			t.Errorf("Subagents(%q) succeeded", bad)
		}
	}
	// subagents/ existing as a file is an error worth reporting.
	sid := "aaaaaaaa-bbbb-cccc-dddd-ffffffffffff"
	mustWrite(t, filepath.Join(b.dir, sid, "subagents"), "")
	if _, err := Subagents(b.dir, sid); err == nil {
		t.Error("subagents as a file: no error")
	}
}

func TestIsSessionID(t *testing.T) {
	for s, want := range map[string]bool{
		fixtureSession:                          true,
		strings.ToUpper(fixtureSession):         true,
		"0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7":   false,
		"0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7ff": false,
		"0a1b2c3d4e5f406180712a3b4c5d6e7f":      false,
		"0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7g":  false,
		"":                                      false,
	} {
		if IsSessionID(s) != want {
			t.Errorf("IsSessionID(%q) = %v", s, !want)
		}
	}
}
