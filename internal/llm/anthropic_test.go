package llm

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Replies in the Messages API wire format, as documented by Anthropic.
const (
	anthropicTextReply = `{
	  "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
	  "model": "claude-sonnet-4-5",
	  "content": [{"type": "text", "text": "Hello from Claude."}],
	  "stop_reason": "end_turn", "stop_sequence": null,
	  "usage": {"input_tokens": 12, "cache_creation_input_tokens": 100,
	            "cache_read_input_tokens": 200, "output_tokens": 6}
	}`
	anthropicToolReply = `{
	  "id": "msg_02", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
	  "content": [
	    {"type": "text", "text": "Let me look."},
	    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "read_file",
	     "input": {"path": "team/notes.md"}}
	  ],
	  "stop_reason": "tool_use", "stop_sequence": null,
	  "usage": {"input_tokens": 50, "output_tokens": 20}
	}`
)

func TestAnthropicText(t *testing.T) {
	t.Parallel()
	b := setup(t, ProviderAnthropic, Config{Model: "claude-sonnet-4-5"}, reply{body: anthropicTextReply})
	temp := 0.2
	resp, err := b.model.Complete(t.Context(), Request{
		System:      "You keep the team's memory.",
		Messages:    []Message{userText("Hi")},
		Temperature: &temp,
	})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := Response{
		Content:    []Block{TextBlock("Hello from Claude.")},
		StopReason: StopEndTurn,
		Usage:      Usage{InputTokens: 12, OutputTokens: 6, CacheReadTokens: 200, CacheCreationTokens: 100},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %+v, want %+v", resp, want)
	}
	body := b.fake.body(t, 0)
	assertJSON(t, "request", body, `{
	  "model": "claude-sonnet-4-5",
	  "max_tokens": 4096,
	  "cache_control": {"type": "ephemeral"},
	  "system": [{"type": "text", "text": "You keep the team's memory."}],
	  "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
	}`)
	h := b.fake.header(0)
	// anthropic-sdk-go v2 sends the key as a bearer token, not x-api-key.
	if h.Get("Authorization") != "Bearer sk-test-secret-key" || h.Get("anthropic-version") == "" {
		t.Errorf("headers Authorization=%q anthropic-version=%q", h.Get("Authorization"), h.Get("anthropic-version"))
	}
	if got := b.model.Name(); got != "anthropic/claude-sonnet-4-5" {
		t.Errorf("Name() = %q", got)
	}
}

func TestAnthropicToolRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t, ProviderAnthropic, Config{}, reply{body: anthropicToolReply}, reply{body: anthropicTextReply})
	req := Request{Messages: []Message{userText("What do the notes say?")}, Tools: []Tool{readTool}, MaxTokens: 500}

	first, err := b.model.Complete(t.Context(), req)
	if err != nil {
		t.Fatalf("first Complete: %v", err)
	}
	if first.StopReason != StopToolUse || len(first.ToolUses()) != 1 {
		t.Fatalf("first response = %+v, want one tool_use", first)
	}
	use := first.ToolUses()[0]
	if use.ToolUseID != "toolu_01A09q90qw90lq917835lq9" || use.ToolName != "read_file" || string(use.Input) != `{"path": "team/notes.md"}` {
		t.Errorf("tool_use = %+v", use)
	}
	assertJSON(t, "tools", b.fake.body(t, 0)["tools"], `[{
	  "name": "read_file", "description": "Read a file in the memory directory.",
	  "input_schema": {"type": "object", "properties": {"path": {"type": "string", "maxLength": 200}},
	                   "required": ["path"], "additionalProperties": false}
	}]`)

	req.Messages = append(req.Messages, first.Message(), Message{Role: RoleUser, Content: []Block{
		ToolResultBlock(use.ToolUseID, "# Notes\nDeploy on Fridays is banned.", false),
		ToolResultBlock("toolu_other", "no such file", true),
		TextBlock("Answer briefly."),
	}})
	if _, err := b.model.Complete(t.Context(), req); err != nil {
		t.Fatalf("second Complete: %v", err)
	}
	msgs := b.fake.body(t, 1)["messages"].([]any)
	assertJSON(t, "assistant turn", msgs[1], `{"role": "assistant", "content": [
	  {"type": "text", "text": "Let me look."},
	  {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "read_file", "input": {"path": "team/notes.md"}}
	]}`)
	assertJSON(t, "tool results", msgs[2], `{"role": "user", "content": [
	  {"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
	   "content": [{"type": "text", "text": "# Notes\nDeploy on Fridays is banned."}]},
	  {"type": "tool_result", "tool_use_id": "toolu_other", "is_error": true,
	   "content": [{"type": "text", "text": "no such file"}]},
	  {"type": "text", "text": "Answer briefly."}
	]}`)
	if got := b.fake.body(t, 1)["max_tokens"]; got != 500.0 {
		t.Errorf("max_tokens = %v, want 500", got)
	}
}

// Thinking that precedes a tool call goes back, signature and all.
func TestAnthropicThinkingRoundTrip(t *testing.T) {
	t.Parallel()
	thinking := `{"type":"message","role":"assistant","model":"m","stop_reason":"tool_use",
	  "content":[
	    {"type":"thinking","thinking":"The notes file should say.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
	    {"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},
	    {"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a.md"}}],
	  "usage":{"input_tokens":10,"output_tokens":10}}`
	b := setup(t, ProviderAnthropic, Config{}, reply{body: thinking}, reply{body: anthropicTextReply})
	req := Request{Messages: []Message{userText("go")}, Tools: []Tool{readTool}}
	first, err := b.model.Complete(t.Context(), req)
	if err != nil {
		t.Fatalf("first: %v", err)
	}
	if len(first.Content) != 3 || first.Content[0].Kind != KindThinking || first.Content[0].Text != "The notes file should say." || first.Text() != "" {
		t.Fatalf("first = %+v", first)
	}
	req.Messages = append(req.Messages, first.Message(), Message{Role: RoleUser, Content: []Block{ToolResultBlock("toolu_1", "x", false)}})
	if _, err := b.model.Complete(t.Context(), req); err != nil {
		t.Fatalf("second: %v", err)
	}
	assertJSON(t, "assistant turn", b.fake.body(t, 1)["messages"].([]any)[1], `{"role":"assistant","content":[
	  {"type":"thinking","thinking":"The notes file should say.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
	  {"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},
	  {"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a.md"}}]}`)

	// OpenAI-compatible servers know nothing of it.
	o := setup(t, ProviderOpenAI, Config{}, reply{body: openAITextReply})
	if _, err := o.model.Complete(t.Context(), req); err != nil {
		t.Fatalf("openai: %v", err)
	}
	assertJSON(t, "openai assistant turn", o.fake.body(t, 0)["messages"].([]any)[1], `{"role":"assistant","tool_calls":[
	  {"id":"toolu_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.md\"}"}}]}`)
}

func TestAnthropicStopReasons(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"end_turn": StopEndTurn, "stop_sequence": StopEndTurn, "tool_use": StopToolUse,
		"max_tokens": StopMaxTokens, "model_context_window_exceeded": StopMaxTokens,
		"refusal": StopOther, "pause_turn": StopOther, "something_new": StopOther,
	} {
		b := setup(t, ProviderAnthropic, Config{}, reply{body: `{"type":"message","role":"assistant","content":[{"type":"text","text":"x"}],"stop_reason":"` + in + `","usage":{"input_tokens":1,"output_tokens":1}}`})
		resp, err := b.model.Complete(t.Context(), Request{Messages: []Message{userText("x")}})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if resp.StopReason != want {
			t.Errorf("stop_reason %s → %s, want %s", in, resp.StopReason, want)
		}
	}
}

func TestAnthropicEmptyToolInput(t *testing.T) {
	t.Parallel()
	b := setup(t, ProviderAnthropic, Config{}, reply{body: anthropicTextReply})
	_, err := b.model.Complete(t.Context(), Request{Messages: []Message{
		userText("list"),
		{Role: RoleAssistant, Content: []Block{{Kind: KindToolUse, ToolUseID: "toolu_1", ToolName: "list"}}},
		{Role: RoleUser, Content: []Block{ToolResultBlock("toolu_1", "", false)}},
	}})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	msgs := b.fake.body(t, 0)["messages"].([]any)
	assertJSON(t, "empty input", msgs[1], `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"list","input":{}}]}`)
	assertJSON(t, "empty result", msgs[2], `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1"}]}`)
}

func TestValidInput(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                `{}`,
		"null":            `{}`,
		`{"a":1}`:         `{"a":1}`,
		`{"path": "x"`:    `"{\"path\": \"x\""`,
		`not json at all`: `"not json at all"`,
	} {
		got := validInput([]byte(in))
		if string(got) != want || !json.Valid(got) {
			t.Errorf("validInput(%q) = %s, want %s", in, got, want)
		}
	}
}
