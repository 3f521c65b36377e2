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

// mustCopy copies the transcript src to dst, creating dst's directory.
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

// projectBundle is a project directory laid out like <configHome>/projects/<key>/.
type projectBundle struct {
	dir    string
	parent string // the main transcript
	child  string // the subagent transcript
	// session and agent are the ids in the file names; childSize the subagent file's size.
	session, agent string
	childSize      int64
}

// setupProject copies the repository's own project directory (testdata/project) into a
// temp dir.
func setupProject(t *testing.T) projectBundle {
	t.Helper()
	dir := t.TempDir()
	b := projectBundle{
		dir:       dir,
		parent:    filepath.Join(dir, tdSession+".jsonl"),
		child:     filepath.Join(dir, tdSession, "subagents", "agent-"+tdAgent+".jsonl"),
		session:   tdSession,
		agent:     tdAgent,
		childSize: mustSize(t, tdChild),
	}
	mustCopy(t, tdParent, b.parent)
	mustCopy(t, tdChild, b.child)
	meta := filepath.Join(filepath.Dir(tdChild), "agent-"+tdAgent+".meta.json")
	mustCopy(t, meta, filepath.Join(filepath.Dir(b.child), filepath.Base(meta)))
	return b
}

// setupRealProject builds the same layout from the real-world fixtures, which flatten it
// into "__subagents__" file names, with a sidecar written here.
func setupRealProject(t *testing.T) projectBundle {
	t.Helper()
	dir, src := t.TempDir(), realTranscripts(t)
	b := projectBundle{
		dir:       dir,
		parent:    filepath.Join(dir, fixtureSession+".jsonl"),
		child:     filepath.Join(dir, fixtureSession, "subagents", "agent-a0ad4f44468bdf20d.jsonl"),
		session:   fixtureSession,
		agent:     "a0ad4f44468bdf20d",
		childSize: 1752,
	}
	mustCopy(t, filepath.Join(src, fxAgentParent), b.parent)
	mustCopy(t, filepath.Join(src, fxAgentChild), b.child)
	mustWrite(t, filepath.Join(dir, fixtureSession, "subagents", "agent-a0ad4f44468bdf20d.meta.json"),
		`{"agentType":"general-purpose","description":"List TODOs","worktreePath":"/home/dev/widgets/.claude/worktrees/todos"}`)
	return b
}

func TestListSessions(t *testing.T) {
	t.Parallel()
	checkListSessions(t, setupProject(t), tdPath(tdLegacy))
}

func TestListSessionsFixtures(t *testing.T) {
	t.Parallel()
	checkListSessions(t, setupRealProject(t), filepath.Join(realTranscripts(t), fxSniffly))
}

// checkListSessions adds another session (a copy of other under an upper-case id) and files
// that are not sessions to b, and lists it.
func checkListSessions(t *testing.T, b projectBundle, other string) {
	t.Helper()
	upper := strings.ToUpper("d3ad4cdc-5657-435d-98fa-0035d53e383d")
	mustCopy(t, other, filepath.Join(b.dir, upper+".jsonl"))
	mustWrite(t, filepath.Join(b.dir, "agent-a0123456789abcdef.jsonl"), userLine) // not a session
	mustWrite(t, filepath.Join(b.dir, "notes.jsonl"), userLine)                   // stem not a UUID
	mustWrite(t, filepath.Join(b.dir, b.session+".json"), userLine)               // wrong extension
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
	if len(got) != 2 || got[0].ID != b.session || got[1].ID != upper {
		t.Fatalf("sessions = %+v", got)
	}
	if !got[0].ModTime.Equal(old) || got[0].Size != mustSize(t, b.parent) || got[0].Path != b.parent {
		t.Errorf("parent = %+v", got[0])
	}
	if got[1].Size != mustSize(t, other) {
		t.Errorf("other session's size = %d", got[1].Size)
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
	checkSubagents(t, setupProject(t))
}

func TestSubagentsFixtures(t *testing.T) {
	t.Parallel()
	checkSubagents(t, setupRealProject(t))
}

// checkSubagents adds subagent files of every edge case to b and lists them.
func checkSubagents(t *testing.T, b projectBundle) {
	t.Helper()
	subs := filepath.Join(b.dir, b.session, "subagents")
	// A nested subdirectory, a missing sidecar, a broken sidecar, and files that are not agents.
	mustWrite(t, filepath.Join(subs, "workflows", "agent-awf-0123456789abcdef.jsonl"), userLine+"\n")
	mustWrite(t, filepath.Join(subs, "agent-a5555555555555555.jsonl"), userLine+"\n")
	mustWrite(t, filepath.Join(subs, "agent-a5555555555555555.meta.json"), `{"agentType":`)
	mustWrite(t, filepath.Join(subs, "agent-.jsonl"), userLine)
	mustWrite(t, filepath.Join(subs, "notes.jsonl"), userLine)
	mustWrite(t, filepath.Join(subs, "workflows", "deeper", "agent-a2222222222222222.jsonl"), userLine)

	got, err := Subagents(b.dir, b.session)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("subagents = %+v", got)
	}
	want := []SubagentFile{
		{AgentID: b.agent, Path: b.child, Size: b.childSize, HasMeta: true,
			AgentType: "general-purpose", Description: "List TODOs", WorktreePath: "/home/dev/widgets/.claude/worktrees/todos"},
		{AgentID: "a5555555555555555", Path: filepath.Join(subs, "agent-a5555555555555555.jsonl"), Size: int64(len(userLine) + 1)},
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

	// The subagent transcript found through the layout reads as a subagent's: every record a
	// sidechain one, its tool call answered.
	sum, err := Summarize(got[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records == 0 || sum.Sidechain != sum.Records || sum.Tools.Answered != 1 || sum.Prompts != 0 {
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
	for _, bad := range []string{"", "..", "../x", b.session + "/..", "agent-" + b.agent} {
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
		tdSession:                               true,
		strings.ToUpper(tdSession):              true,
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
