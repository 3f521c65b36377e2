package transcript

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestEditLines(t *testing.T) {
	tests := []struct {
		name, input    string
		added, removed int
	}{
		{"Edit", `{"file_path":"a","old_string":"x\ny","new_string":"x\ny\nz\n"}`, 3, 2},
		{"Edit", `{"file_path":"a","old_string":"","new_string":"one"}`, 1, 0},
		{"edit", `{"old_string":"a","new_string":"b","replace_all":true}`, 1, 1},
		{"MultiEdit", `{"edits":[{"old_string":"a","new_string":"b\nc"},{"old_string":"d\ne\nf","new_string":""}]}`, 2, 4},
		{"Write", `{"file_path":"a","content":"1\n2\n3"}`, 3, 0},
		{"Write", `{"file_path":"a","content":""}`, 0, 0},
		{"NotebookEdit", `{"new_source":"x = 1\ny = 2","edit_mode":"insert"}`, 2, 0},
		{"NotebookEdit", `{"new_source":"x","edit_mode":"delete"}`, 0, 0},
		{"Read", `{"file_path":"a","content":"x"}`, 0, 0},
		{"Edit", `not json`, 0, 0},
		{"Edit", ``, 0, 0},
		{"Edit", `{"old_string":5,"new_string":"a\nb"}`, 2, 0},
	}
	for _, tt := range tests {
		added, removed := EditLines(tt.name, json.RawMessage(tt.input))
		if added != tt.added || removed != tt.removed {
			t.Errorf("EditLines(%s, %s) = +%d -%d, want +%d -%d", tt.name, tt.input, added, removed, tt.added, tt.removed)
		}
	}
}

func TestClassifyTool(t *testing.T) {
	want := map[string]ToolClass{
		"Read": ClassRead, "NotebookRead": ClassRead, "View": ClassRead,
		"Grep": ClassSearch, "Glob": ClassSearch, "LS": ClassSearch, "WebSearch": ClassSearch,
		"Bash": ClassShell, "bash": ClassShell,
		"Edit": ClassEdit, "MultiEdit": ClassEdit, "Write": ClassEdit, "NotebookEdit": ClassEdit,
		"Task": ClassOther, "WebFetch": ClassOther, "mcp__x__y": ClassOther, "": ClassOther,
	}
	for name, class := range want {
		if got := ClassifyTool(name); got != class {
			t.Errorf("ClassifyTool(%q) = %d, want %d", name, got, class)
		}
	}
}

func TestStatsToolPairing(t *testing.T) {
	t.Parallel()
	use := func(id, name string) Block { return Block{Kind: BlockToolUse, ID: id, Name: name} }
	result := func(id string, isErr bool) Block { return Block{Kind: BlockToolResult, ToolUseID: id, IsError: isErr} }
	recs := []Record{
		{Type: TypeAssistant, Content: []Block{use("t1", "Bash"), use("t2", "Read")}},
		{Type: TypeUser, Content: []Block{result("t2", false)}},
		{Type: TypeUser, Content: []Block{result("t1", true)}},
		{Type: TypeUser, Content: []Block{result("t1", false)}}, // duplicate: orphan
		{Type: TypeAssistant, Content: []Block{use("", "bash"), use("", "Task"), use("t3", "Grep")}},
		{Type: TypeUser, Content: []Block{result("", false)}}, // answers the first id-less use
		{Type: TypeUser, Content: []Block{result("zz", false)}},
	}
	st := NewStats()
	for i := range recs {
		st.Add(&recs[i])
	}
	got := st.Summary().Tools
	if got.Uses != 5 || got.Results != 5 || got.Errors != 1 || got.Answered != 3 || got.Unanswered != 2 ||
		got.Orphans != 2 || got.Shell != 2 || got.Reads != 1 || got.Searches != 1 || got.Other != 1 {
		t.Fatalf("tools = %+v", got)
	}
	if got.ByName["Bash"] != 1 || got.ByName["bash"] != 1 || len(got.ByName) != 5 {
		t.Errorf("by name = %v", got.ByName)
	}
}

func TestStatsCompaction(t *testing.T) {
	t.Parallel()
	input := strings.Join([]string{
		`{"type":"user","uuid":"u1","timestamp":"2025-01-01T00:00:05Z","message":{"role":"user","content":"go"}}`,
		`{"type":"system","uuid":"b1","subtype":"compact_boundary","timestamp":"2025-01-01T00:00:01Z","compactMetadata":{"trigger":"manual","preTokens":9}}`,
		`{"type":"user","uuid":"c1","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued"}}`,
		`{"type":"system","uuid":"b2","subtype":"microcompact_boundary"}`,
		`{"type":"summary","summary":"x","leafUuid":"u1"}`,
	}, "\n")
	sum, err := SummarizeReader(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if sum.CompactBoundaries != 1 || sum.MicrocompactBoundaries != 1 || sum.CompactSummaries != 1 ||
		sum.Types[TypeSummary] != 1 || sum.Prompts != 1 || sum.FirstPrompt != "go" {
		t.Fatalf("summary = %+v", sum)
	}
	if got := sum.FirstTimestamp.Second(); got != 1 || sum.LastTimestamp.Second() != 5 {
		t.Errorf("timestamps %v .. %v", sum.FirstTimestamp, sum.LastTimestamp)
	}
}

func TestPromptCandidate(t *testing.T) {
	tests := []struct {
		text, display string
		fallback, ok  bool
	}{
		{"  fix\n the   bug  ", "fix the bug", false, true},
		{"", "", false, false},
		{"(no content)", "", false, false},
		{"[Request interrupted by user for tool use]", "", false, false},
		{"<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>", "/clear", true, true},
		{"<command-message>o is running</command-message>\n<command-name>/o</command-name>\n<command-args>build it</command-args>", "/o build it", true, true},
		{"<bash-input>git status</bash-input>", "! git status", false, true},
		{"<local-command-stdout>done</local-command-stdout>", "", false, false},
		{"<user-memory-input>tabs</user-memory-input>", "", false, false},
		{"<Div>upper-case tags are text</Div>", "<Div>upper-case tags are text</Div>", false, true},
	}
	for _, tt := range tests {
		display, fallback, ok := promptCandidate(tt.text)
		if display != tt.display || fallback != tt.fallback || ok != tt.ok {
			t.Errorf("promptCandidate(%q) = %q, %v, %v; want %q, %v, %v", tt.text, display, fallback, ok, tt.display, tt.fallback, tt.ok)
		}
	}
}

func TestDisplayPromptTruncation(t *testing.T) {
	if got := displayPrompt(strings.Repeat("a", 200)); got != strings.Repeat("a", 200) {
		t.Errorf("200 units truncated: %q", got)
	}
	if got := displayPrompt(strings.Repeat("a", 201)); got != strings.Repeat("a", 200)+"…" {
		t.Errorf("201 units: %q", got)
	}
	// An astral character is two UTF-16 units and is never split.
	got := displayPrompt(strings.Repeat("a", 199) + "😀b")
	if got != strings.Repeat("a", 199)+"…" {
		t.Errorf("astral: %q", got)
	}
	if n := len(utf16.Encode([]rune(displayPrompt(strings.Repeat("é", 500))))); n != 201 {
		t.Errorf("accented: %d units", n)
	}
}

func TestFirstPromptPreference(t *testing.T) {
	t.Parallel()
	input := strings.Join([]string{
		`{"type":"user","isSidechain":true,"message":{"role":"user","content":"subagent prompt"}}`,
		`{"type":"user","isMeta":true,"message":{"role":"user","content":"meta"}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"}]}}`,
		`{"type":"user","message":{"role":"user","content":"<command-name>/init</command-name>"}}`,
		`{"type":"user","message":{"role":"user","content":"<system-reminder>x</system-reminder>"}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"image"},{"type":"text","text":"first"},{"type":"text","text":"line"}]}}`,
		`{"type":"user","message":{"role":"user","content":"second"}}`,
	}, "\n")
	sum, err := SummarizeReader(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if sum.FirstPrompt != "first line" {
		t.Fatalf("first prompt = %q", sum.FirstPrompt)
	}
}
