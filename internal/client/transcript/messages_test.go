package transcript

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// conversation is a small main chain with a streamed assistant reply (m1 split over a1a and
// a1b around its tool result), sidechain noise and metadata lines.
var conversation = strings.Join([]string{
	`{"type":"summary","summary":"s","leafUuid":"a2"}`,
	`{"type":"user","uuid":"u1","message":{"role":"user","content":"please remember tabs"}}`,
	`{"type":"assistant","uuid":"a1a","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"ok"}]}}`,
	`{"type":"assistant","uuid":"a1b","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/mem/tabs.md","content":"x"}}]}}`,
	`{"type":"user","uuid":"s1","isSidechain":true,"message":{"role":"user","content":"subagent task"}}`,
	`{"type":"user","uuid":"u2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"written"}]}}`,
	`{"type":"assistant","uuid":"a1c","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"/src/a.go"}}]}}`,
	`{"type":"system","uuid":"y1","subtype":"turn_duration"}`,
	`{"type":"assistant","uuid":"a2","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"done"}]}}`,
	`{"type":"custom-title","customTitle":"t"}`,
}, "\n") + "\n"

// describe renders messages compactly: role:uuid:records[:tool paths].
func describe(msgs []Message) string {
	var parts []string
	for _, m := range msgs {
		s := fmt.Sprintf("%s:%s:%d", m.Role, m.UUID, m.Records)
		for _, tu := range m.ToolUses {
			s += ":" + tu.Name + "=" + tu.FilePath
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func TestMessagesAfter(t *testing.T) {
	const all = "user:u1:1 assistant:a1c:3:Write=/mem/tabs.md:Edit=/src/a.go user:u2:1 assistant:a2:1"
	tests := []struct {
		cursor string
		found  bool
		want   string
	}{
		{"", false, all},
		{"nope", false, all},
		{"u1", true, "assistant:a1c:3:Write=/mem/tabs.md:Edit=/src/a.go user:u2:1 assistant:a2:1"},
		// A cursor inside a streamed message: only the later parts follow it.
		{"a1a", true, "assistant:a1c:2:Write=/mem/tabs.md:Edit=/src/a.go user:u2:1 assistant:a2:1"},
		{"a1b", true, "user:u2:1 assistant:a1c:1:Edit=/src/a.go assistant:a2:1"},
		// Sidechain and system records can be cursors but are never returned.
		{"s1", true, "user:u2:1 assistant:a1c:1:Edit=/src/a.go assistant:a2:1"},
		{"y1", true, "assistant:a2:1"},
		{"a2", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.cursor, func(t *testing.T) {
			t.Parallel()
			msgs, found, last, err := MessagesAfterReader(strings.NewReader(conversation), tt.cursor)
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(msgs); found != tt.found || got != tt.want || last != "a2" {
				t.Errorf("found %v last %q msgs %q\nwant found %v last a2 msgs %q", found, last, got, tt.found, tt.want)
			}
		})
	}
}

func TestMessagesAfterRepeatedCursor(t *testing.T) {
	t.Parallel()
	input := userLine + "\n" + asstLine + "\n" + userLine + "\n" +
		`{"type":"user","uuid":"u9","message":{"role":"user","content":"again"}}` + "\n"
	msgs, found, last, err := MessagesAfterReader(strings.NewReader(input), "u1")
	if err != nil || !found || last != "u9" || describe(msgs) != "user:u9:1" {
		t.Fatalf("msgs %q found %v last %q err %v", describe(msgs), found, last, err)
	}
	if msgs[0].Text != "again" {
		t.Errorf("text = %q", msgs[0].Text)
	}
}

func TestMessagesAfterTestdataCursor(t *testing.T) {
	t.Parallel()
	checkCursorNearEnd(t, tdPath(tdLegacy))
	checkCursorNearEnd(t, tdPath(tdV2))
}

func TestMessagesAfterFixtureCursor(t *testing.T) {
	t.Parallel()
	checkCursorNearEnd(t, filepath.Join(realTranscripts(t), fxSniffly))
}

// checkCursorNearEnd puts the cursor on the fourth message from the end of the transcript at
// path: exactly the last three follow it.
func checkCursorNearEnd(t *testing.T, path string) {
	t.Helper()
	all, _, _, err := MessagesAfter(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 4 {
		t.Fatalf("%s: %d messages", path, len(all))
	}
	cursor := all[len(all)-4].UUID
	after, found, _, err := MessagesAfter(path, cursor)
	if err != nil || !found {
		t.Fatalf("%s: found %v err %v", path, found, err)
	}
	if describe(after) != describe(all[len(all)-3:]) {
		t.Fatalf("%s after %s:\n%s\nwant\n%s", path, cursor, describe(after), describe(all[len(all)-3:]))
	}
}

func TestWritesMemory(t *testing.T) {
	isMem := func(p string) bool { return strings.HasPrefix(p, "/mem/") }
	msgs, _, _, err := MessagesAfterReader(strings.NewReader(conversation), "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		msgs []Message
		want bool
	}{
		{"whole conversation", msgs, true},
		{"none (cursor set but not found)", nil, false},
		{"edit outside memory", []Message{{Role: "assistant", ToolUses: []ToolUse{{Name: "Edit", FilePath: "/src/x"}}}}, false},
		{"edit inside memory", []Message{{Role: "assistant", ToolUses: []ToolUse{{Name: "Edit", FilePath: "/mem/x.md"}}}}, true},
		{"multiedit does not count", []Message{{Role: "assistant", ToolUses: []ToolUse{{Name: "MultiEdit", FilePath: "/mem/x.md"}}}}, false},
		{"read does not count", []Message{{Role: "assistant", ToolUses: []ToolUse{{Name: "Read", FilePath: "/mem/x.md"}}}}, false},
		{"user role ignored", []Message{{Role: "user", ToolUses: []ToolUse{{Name: "Write", FilePath: "/mem/x.md"}}}}, false},
		{"no file path", []Message{{Role: "assistant", ToolUses: []ToolUse{{Name: "Write"}}}}, false},
	}
	for _, tt := range tests {
		if got := WritesMemory(tt.msgs, isMem); got != tt.want {
			t.Errorf("%s: WritesMemory = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestToolUseFilePath(t *testing.T) {
	t.Parallel()
	input := `{"type":"assistant","uuid":"a","message":{"role":"assistant","content":[
		{"type":"tool_use","name":"Write","input":{"file_path":7}},
		{"type":"tool_use","name":"Write","input":"str"},
		{"type":"tool_use","name":"Write"},
		{"type":"tool_use","name":"Edit","input":{"file_path":"/mem/ok.md","old_string":"a"}}]}}` + "\n"
	msgs, _, _, err := MessagesAfterReader(strings.NewReader(strings.ReplaceAll(input, "\n\t\t", "")), "")
	if err != nil || len(msgs) != 1 {
		t.Fatalf("msgs %v err %v", msgs, err)
	}
	if got := describe(msgs); got != "assistant:a:1:Write=:Write=:Write=:Edit=/mem/ok.md" {
		t.Fatalf("got %q", got)
	}
}

func TestHasProse(t *testing.T) {
	user := func(text string) Message { return Message{Role: "user", Text: text} }
	tests := []struct {
		name string
		msg  Message
		want bool
	}{
		{"plain prompt", user("fix the tests"), true},
		{"blank", user(" \n\t"), false},
		{"no content placeholder", user("(no content)"), false},
		{"interrupt", user("[Request interrupted by user for tool use]"), false},
		{"interrupt then prose", user("[Request interrupted by user]\nactually use tabs"), true},
		{"caveat", user("Caveat: The messages below were generated by the user while running local commands. DO NOT respond."), false},
		{"slash command without args", user("<command-name>/clear</command-name>\n <command-message>clear</command-message>\n <command-args></command-args>"), false},
		{"slash command with args", user("<command-message>o</command-message>\n<command-name>/o</command-name>\n<command-args>create a TODO app</command-args>"), true},
		{"local command output", user("<local-command-stdout>Exported</local-command-stdout>"), false},
		{"local command caveat", user("<local-command-caveat>Caveat: ...</local-command-caveat>"), false},
		{"bash escape", user("<bash-input>ls</bash-input>"), false},
		{"bash output", user("<bash-stdout>a\nb</bash-stdout><bash-stderr></bash-stderr>"), false},
		{"memory input", user("<user-memory-input>always use tabs</user-memory-input>"), true},
		{"ide context plus prose", user("<ide_opened_file>The user opened a.go</ide_opened_file>\nwhy does this fail?"), true},
		{"ide context only", user("<ide_selection>x := 1</ide_selection>"), false},
		{"system reminder only", user("<system-reminder>be nice</system-reminder>"), false},
		{"unknown tag is text", user("<div>hello</div>"), true},
		{"unclosed wrapper is text", user("<command-name>/clear"), true},
		{"meta", Message{Role: "user", Text: "Please analyze this codebase", IsMeta: true}, false},
		{"compact summary", Message{Role: "user", Text: "Summary of prior context.", IsCompactSummary: true}, false},
		{"tool result", Message{Role: "user", Text: "note", ToolResults: 1}, false},
		{"task notification", Message{Role: "user", Text: "task done", Origin: "task-notification"}, false},
		{"human origin", Message{Role: "user", Text: "hi", Origin: "human"}, true},
		{"assistant", Message{Role: "assistant", Text: "I will"}, false},
	}
	for _, tt := range tests {
		if got := HasProse([]Message{tt.msg}); got != tt.want {
			t.Errorf("%s: HasProse = %v, want %v", tt.name, got, tt.want)
		}
	}
	if HasProse(nil) {
		t.Error("HasProse(nil) = true")
	}
	if !HasProse([]Message{user("(no content)"), user("real words")}) {
		t.Error("HasProse misses a later prose message")
	}
}

func TestHasProseTestdata(t *testing.T) {
	t.Parallel()
	checkHasProse(t, map[string]bool{
		tdPath(tdLegacy): true, tdPath(tdInterrupted): true, tdPath(tdSummaryOnly): false, tdPath(tdV2): true,
		tdParent: true,
		tdChild:  false, // all sidechain: MessagesAfter returns nothing
	})
	// After the "#" memory note only command wrappers follow.
	checkNothingAfterMemoryNote(t, tdPath(tdLegacy))
}

func TestHasProseFixtures(t *testing.T) {
	t.Parallel()
	dir := realTranscripts(t)
	checkHasProse(t, map[string]bool{
		filepath.Join(dir, fxSniffly): true, filepath.Join(dir, fxSnifflySum): false, filepath.Join(dir, fxAgentParent): true,
		filepath.Join(dir, fxAgentChild): false, filepath.Join(dir, fxKiliman): true,
	})
	checkNothingAfterMemoryNote(t, filepath.Join(dir, fxKiliman))
}

// checkHasProse checks HasProse over all the messages of each transcript.
func checkHasProse(t *testing.T, want map[string]bool) {
	t.Helper()
	for path, prose := range want {
		msgs, _, _, err := MessagesAfter(path, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := HasProse(msgs); got != prose {
			t.Errorf("%s: HasProse = %v, want %v", path, got, prose)
		}
	}
}

// checkNothingAfterMemoryNote checks that what follows the last "#" memory note of the
// transcript at path has messages but no prose.
func checkNothingAfterMemoryNote(t *testing.T, path string) {
	t.Helper()
	msgs, _, _, err := MessagesAfter(path, "")
	if err != nil {
		t.Fatal(err)
	}
	var cursor string
	for _, m := range msgs {
		if strings.Contains(m.Text, "<user-memory-input>") {
			cursor = m.UUID
		}
	}
	after, found, _, err := MessagesAfter(path, cursor)
	if err != nil || !found || len(after) == 0 || HasProse(after) {
		t.Fatalf("%s after the memory note: found %v, %d messages, prose %v, err %v", path, found, len(after), HasProse(after), err)
	}
}
