package transcript

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// mustParse parses a line that must be valid.
func mustParse(tb testing.TB, line string) Record {
	tb.Helper()
	rec, err := ParseLine([]byte(line))
	if err != nil {
		tb.Fatalf("ParseLine(%.60s): %v", line, err)
	}
	return rec
}

func TestParseLineChainFields(t *testing.T) {
	t.Parallel()
	rec := mustParse(t, `{"parentUuid":"p","isSidechain":true,"userType":"external","cwd":"/w","sessionId":"s",
		"version":"2.1.0","type":"user","isMeta":true,"agentId":"a0123456789abcdef","origin":{"kind":"task-notification"},
		"message":{"role":"user","content":"hello"},"uuid":"u","timestamp":"2025-06-08T11:00:11.669Z"}`)
	want := Record{
		Type: TypeUser, UUID: "u", ParentUUID: "p", IsSidechain: true, IsMeta: true, SessionID: "s",
		Cwd: "/w", Version: "2.1.0", AgentID: "a0123456789abcdef", Origin: "task-notification", Role: "user",
		Timestamp: time.Date(2025, 6, 8, 11, 0, 11, 669e6, time.UTC),
		Content:   []Block{{Kind: BlockText, Text: "hello"}},
	}
	if !reflect.DeepEqual(rec, want) {
		t.Fatalf("got  %+v\nwant %+v", rec, want)
	}
}

func TestParseLineBlocks(t *testing.T) {
	t.Parallel()
	rec := mustParse(t, `{"type":"assistant","uuid":"a","message":{"id":"msg_1","model":"claude-x","role":"assistant","content":[
		{"type":"thinking","thinking":"hmm","signature":"sig"},
		{"type":"redacted_thinking","data":"xxx"},
		{"type":"text","text":"Done."},
		{"type":"tool_use","id":"toolu_1","name":"Edit","input":{"file_path":"/a.go","old_string":"a","new_string":"b\nc"}},
		{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}},
		{"type":"server_tool_use","id":"srv","name":"web_search","input":{}},
		"not a block", 42
	]}}`)
	want := []Block{
		{Kind: BlockThinking, Text: "hmm"},
		{Kind: BlockRedactedThinking},
		{Kind: BlockText, Text: "Done."},
		{Kind: BlockToolUse, ID: "toolu_1", Name: "Edit",
			Input: []byte(`{"file_path":"/a.go","old_string":"a","new_string":"b\nc"}`)},
		{Kind: BlockImage},
		{Kind: "server_tool_use"},
	}
	if rec.MessageID != "msg_1" || rec.Model != "claude-x" || rec.Role != "assistant" {
		t.Errorf("message fields = %q %q %q", rec.MessageID, rec.Model, rec.Role)
	}
	if !reflect.DeepEqual(rec.Content, want) {
		t.Fatalf("content\n got  %+v\nwant %+v", rec.Content, want)
	}
}

func TestParseLineToolResults(t *testing.T) {
	t.Parallel()
	rec := mustParse(t, `{"type":"user","message":{"role":"user","content":[
		{"type":"tool_result","tool_use_id":"t1","content":"plain"},
		{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":[{"type":"text","text":"a"},
			{"type":"image","source":{"data":"zzz"}},{"type":"text","text":"b"}]},
		{"type":"tool_result","tool_use_id":"t3","content":{"odd":true}},
		{"type":"tool_result","tool_use_id":"t4"}
	]},"toolUseResult":"Error: nope"}`)
	want := []Block{
		{Kind: BlockToolResult, ToolUseID: "t1", Text: "plain"},
		{Kind: BlockToolResult, ToolUseID: "t2", Text: "a\nb", IsError: true},
		{Kind: BlockToolResult, ToolUseID: "t3"},
		{Kind: BlockToolResult, ToolUseID: "t4"},
	}
	if !reflect.DeepEqual(rec.Content, want) {
		t.Fatalf("content\n got  %+v\nwant %+v", rec.Content, want)
	}
	if !rec.HasToolResult() {
		t.Error("HasToolResult = false")
	}
}

func TestParseLineMetadata(t *testing.T) {
	tests := []struct {
		line string
		want Record
	}{
		{`{"type":"summary","summary":"AI Music","leafUuid":"l1"}`,
			Record{Type: TypeSummary, Value: "AI Music", LeafUUID: "l1"}},
		{`{"type":"custom-title","sessionId":"s","customTitle":"Mine"}`,
			Record{Type: TypeCustomTitle, SessionID: "s", Value: "Mine"}},
		{`{"type":"ai-title","aiTitle":"Theirs"}`, Record{Type: TypeAITitle, Value: "Theirs"}},
		{`{"type":"last-prompt","lastPrompt":"Hello","leafUuid":"u1"}`,
			Record{Type: TypeLastPrompt, Value: "Hello", LeafUUID: "u1"}},
		{`{"type":"tag","tag":"x"}`, Record{Type: TypeTag, Value: "x"}},
		{`{"type":"queue-operation","operation":"enqueue","content":"tool_result"}`,
			Record{Type: TypeQueueOperation, Value: "enqueue"}},
		{`{"type":"attachment","uuid":"a","attachment":{"type":"hook_success","stdout":"{}"}}`,
			Record{Type: TypeAttachment, UUID: "a", AttachmentType: "hook_success"}},
		{`{"type":"system","subtype":"compact_boundary","parentUuid":null,"logicalParentUuid":"s3",
			"compactMetadata":{"trigger":"auto","preTokens":120000},"uuid":"s4"}`,
			Record{Type: TypeSystem, Subtype: SubtypeCompactBoundary, LogicalParentUUID: "s3", UUID: "s4",
				Compact: &CompactMetadata{Trigger: "auto", PreTokens: 120000}}},
		// Fields of an unexpected JSON type are dropped, the rest of the record survives.
		{`{"type":"user","uuid":7,"timestamp":"[trimmed]","isMeta":"yes","message":"oops","summary":{}}`,
			Record{Type: TypeUser}},
		{"\ufeff  " + `{"type":"mode","mode":"normal"}` + " \r\n", Record{Type: TypeMode, Value: "normal"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.want.Type), func(t *testing.T) {
			t.Parallel()
			if got := mustParse(t, tt.line); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseLineMalformed(t *testing.T) {
	for _, line := range []string{"", "   ", "{", `{"type":"user"`, "[]", "null", "3", `"user"`, `{}`,
		`{"type":null}`, `{"type":["user"]}`, `{"type":"user"} trailing`} {
		if _, err := ParseLine([]byte(line)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseLine(%q) error = %v, want ErrMalformed", line, err)
		}
	}
}

func TestTypeKnown(t *testing.T) {
	for _, typ := range []Type{TypeUser, TypeProgress, TypeAttributionSnapshot, TypeMarbleOrigamiSnapshot} {
		if !typ.Known() {
			t.Errorf("%s not known", typ)
		}
	}
	for _, typ := range []Type{"", "frame-link", "User"} {
		if typ.Known() {
			t.Errorf("%q known", typ)
		}
	}
	if !TypeSystem.IsChain() || TypeSummary.IsChain() {
		t.Error("IsChain wrong")
	}
}
