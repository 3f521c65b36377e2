package llm

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Replies in the chat completions wire format, as documented by OpenAI and
// served by Ollama, vLLM and llama.cpp.
const (
	openAITextReply = `{
	  "id": "chatcmpl-123", "object": "chat.completion", "created": 1677652288, "model": "llama3.1",
	  "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello from Llama.", "refusal": null},
	               "logprobs": null, "finish_reason": "stop"}],
	  "usage": {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35,
	            "prompt_tokens_details": {"cached_tokens": 10}}
	}`
	openAIToolReply = `{
	  "id": "chatcmpl-456", "object": "chat.completion", "created": 1677652300, "model": "llama3.1",
	  "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": null,
	    "message": {"role": "assistant", "content": null, "tool_calls": [
	      {"id": "call_abc123", "type": "function",
	       "function": {"name": "read_file", "arguments": "{\"path\":\"team/notes.md\"}"}}
	    ]}}],
	  "usage": {"prompt_tokens": 80, "completion_tokens": 18, "total_tokens": 98}
	}`
)

func TestOpenAIText(t *testing.T) {
	t.Parallel()
	b := setup(t, ProviderOpenAI, Config{Model: "llama3.1"}, reply{body: openAITextReply})
	temp := 0.2
	resp, err := b.model.Complete(t.Context(), Request{
		System:      "You keep the team's memory.",
		Messages:    []Message{userText("Hi")},
		Temperature: &temp,
		MaxTokens:   300,
	})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := Response{
		Content:    []Block{TextBlock("Hello from Llama.")},
		StopReason: StopEndTurn,
		Usage:      Usage{InputTokens: 20, OutputTokens: 5, CacheReadTokens: 10},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %+v, want %+v", resp, want)
	}
	assertJSON(t, "request", b.fake.body(t, 0), `{
	  "model": "llama3.1",
	  "max_tokens": 300,
	  "temperature": 0.2,
	  "messages": [
	    {"role": "system", "content": "You keep the team's memory."},
	    {"role": "user", "content": "Hi"}
	  ]
	}`)
	if got := b.fake.header(0).Get("Authorization"); got != "Bearer sk-test-secret-key" {
		t.Errorf("Authorization = %q", got)
	}
}

func TestOpenAIToolRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t, ProviderOpenAI, Config{}, reply{body: openAIToolReply}, reply{body: openAITextReply})
	req := Request{Messages: []Message{userText("What do the notes say?")}, Tools: []Tool{readTool}}

	first, err := b.model.Complete(t.Context(), req)
	if err != nil {
		t.Fatalf("first Complete: %v", err)
	}
	want := Response{
		Content:    []Block{{Kind: KindToolUse, ToolUseID: "call_abc123", ToolName: "read_file", Input: json.RawMessage(`{"path":"team/notes.md"}`)}},
		StopReason: StopToolUse,
		Usage:      Usage{InputTokens: 80, OutputTokens: 18},
	}
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("first response = %+v, want %+v", first, want)
	}
	assertJSON(t, "tools", b.fake.body(t, 0)["tools"], `[{"type": "function", "function": {
	  "name": "read_file", "description": "Read a file in the memory directory.",
	  "parameters": {"type": "object", "properties": {"path": {"type": "string", "maxLength": 200}},
	                 "required": ["path"], "additionalProperties": false}
	}}]`)

	req.Messages = append(req.Messages, first.Message(), Message{Role: RoleUser, Content: []Block{
		ToolResultBlock("call_abc123", "# Notes\nDeploy on Fridays is banned.", false),
		ToolResultBlock("call_other", "no such file", true),
		TextBlock("Answer briefly."),
	}})
	if _, err := b.model.Complete(t.Context(), req); err != nil {
		t.Fatalf("second Complete: %v", err)
	}
	assertJSON(t, "follow-up messages", b.fake.body(t, 1)["messages"], `[
	  {"role": "user", "content": "What do the notes say?"},
	  {"role": "assistant", "tool_calls": [{"id": "call_abc123", "type": "function",
	    "function": {"name": "read_file", "arguments": "{\"path\":\"team/notes.md\"}"}}]},
	  {"role": "tool", "tool_call_id": "call_abc123", "content": "# Notes\nDeploy on Fridays is banned."},
	  {"role": "tool", "tool_call_id": "call_other", "content": "Error: no such file"},
	  {"role": "user", "content": "Answer briefly."}
	]`)
}

// Compatible servers differ from api.openai.com in small ways the provider absorbs.
func TestOpenAICompatQuirks(t *testing.T) {
	t.Parallel()
	// Older Ollama: finish_reason "stop" with tool calls; some llama.cpp builds:
	// no call id; small models: arguments that are not JSON.
	quirky := `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,
	  "finish_reason":"stop","message":{"role":"assistant","content":"Reading.","tool_calls":[
	    {"type":"function","function":{"name":"read_file","arguments":"{path: notes.md}"}}]}}],
	  "usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}}`
	b := setup(t, ProviderOpenAI, Config{}, reply{body: quirky}, reply{body: openAITextReply})
	req := Request{Messages: []Message{userText("go")}, Tools: []Tool{{Name: "read_file"}}}
	first, err := b.model.Complete(t.Context(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if first.StopReason != StopToolUse || first.Text() != "Reading." {
		t.Errorf("response = %+v", first)
	}
	use := first.ToolUses()[0]
	if use.ToolUseID != "call_0" || string(use.Input) != `"{path: notes.md}"` {
		t.Errorf("tool_use = %+v", use)
	}
	req.Messages = append(req.Messages, first.Message(), Message{Role: RoleUser, Content: []Block{ToolResultBlock(use.ToolUseID, "bad arguments", true)}})
	if _, err := b.model.Complete(t.Context(), req); err != nil {
		t.Fatalf("second Complete: %v", err)
	}
	// The model sees its own arguments again, exactly as it wrote them.
	assertJSON(t, "assistant turn", b.fake.body(t, 1)["messages"].([]any)[1], `{"role": "assistant", "content": "Reading.",
	  "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "read_file", "arguments": "{path: notes.md}"}}]}`)
	assertJSON(t, "tool schema", b.fake.body(t, 0)["tools"], `[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}}]`)
}

func TestOpenAIWithoutKey(t *testing.T) {
	t.Parallel()
	f := newFake(t, "/v1/chat/completions", reply{body: openAITextReply})
	m, err := newModel(Config{Provider: ProviderOpenAI, Model: "llama3.1", BaseURL: f.srv.URL + "/v1"}, fastBackoff)
	if err != nil {
		t.Fatalf("newModel: %v", err)
	}
	if _, err := m.Complete(t.Context(), Request{Messages: []Message{userText("Hi")}}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if got := f.header(0).Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
}

// api.openai.com's reasoning models accept only max_completion_tokens.
func TestOpenAIMaxTokensField(t *testing.T) {
	t.Parallel()
	req := Request{Messages: []Message{userText("Hi")}}
	for _, tc := range []struct {
		compatible bool
		want       string
	}{{true, `{"max_tokens":4096}`}, {false, `{"max_completion_tokens":4096}`}} {
		p := &openAIProvider{model: "m", compatible: tc.compatible}
		params, err := p.params(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(params)
		var m map[string]any
		json.Unmarshal(raw, &m)
		delete(m, "model")
		delete(m, "messages")
		assertJSON(t, "limits", m, tc.want)
	}
}

func TestOpenAIStopReasons(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reason           string
		toolCalls, refus bool
		want             string
	}{
		{"stop", false, false, StopEndTurn},
		{"stop", true, false, StopToolUse},
		{"tool_calls", true, false, StopToolUse},
		{"function_call", true, false, StopToolUse},
		{"length", false, false, StopMaxTokens},
		{"length", true, false, StopMaxTokens},
		{"content_filter", false, false, StopOther},
		{"stop", false, true, StopOther},
	} {
		if got := openAIStop(tc.reason, tc.toolCalls, tc.refus); got != tc.want {
			t.Errorf("openAIStop(%q, %v, %v) = %s, want %s", tc.reason, tc.toolCalls, tc.refus, got, tc.want)
		}
	}
}

func TestOpenAINoChoices(t *testing.T) {
	t.Parallel()
	b := setup(t, ProviderOpenAI, Config{}, reply{body: `{"id":"x","object":"chat.completion","choices":[],"usage":{}}`})
	_, err := b.model.Complete(t.Context(), Request{Messages: []Message{userText("Hi")}})
	if err == nil || b.fake.requests() != 1 {
		t.Fatalf("err = %v after %d requests, want an error and no retry", err, b.fake.requests())
	}
}
