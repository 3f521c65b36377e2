package llm

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestRequestValidate(t *testing.T) {
	t.Parallel()
	ok := userText("hi")
	neg := -1.0
	for _, tc := range []struct {
		name string
		req  Request
		want string // substring of the error; empty means valid
	}{
		{"valid", Request{Messages: []Message{ok}, Tools: []Tool{readTool, {Name: "list"}}}, ""},
		{"no messages", Request{}, "no messages"},
		{"bad role", Request{Messages: []Message{{Role: "system", Content: []Block{TextBlock("x")}}}}, "unknown role"},
		{"empty message", Request{Messages: []Message{{Role: RoleUser}}}, "no content"},
		{"unknown kind", Request{Messages: []Message{{Role: RoleUser, Content: []Block{{Kind: "image"}}}}}, "unknown kind"},
		{"tool_use from user", Request{Messages: []Message{{Role: RoleUser, Content: []Block{{Kind: KindToolUse, ToolUseID: "1", ToolName: "x"}}}}}, "outside an assistant"},
		{"tool_use without id", Request{Messages: []Message{ok, {Role: RoleAssistant, Content: []Block{{Kind: KindToolUse, ToolName: "x"}}}}}, "needs ToolUseID"},
		{"tool_use with bad input", Request{Messages: []Message{ok, {Role: RoleAssistant, Content: []Block{{Kind: KindToolUse, ToolUseID: "1", ToolName: "x", Input: json.RawMessage("{")}}}}}, "not valid JSON"},
		{"tool_result from assistant", Request{Messages: []Message{{Role: RoleAssistant, Content: []Block{ToolResultBlock("1", "x", false)}}}}, "outside a user"},
		{"tool_result without id", Request{Messages: []Message{{Role: RoleUser, Content: []Block{ToolResultBlock("", "x", false)}}}}, "needs ToolUseID"},
		{"tool without name", Request{Messages: []Message{ok}, Tools: []Tool{{}}}, "no name"},
		{"duplicate tool", Request{Messages: []Message{ok}, Tools: []Tool{readTool, readTool}}, "duplicate"},
		{"schema not an object", Request{Messages: []Message{ok}, Tools: []Tool{{Name: "x", InputSchema: json.RawMessage(`[1]`)}}}, "not a JSON object"},
		{"schema of another type", Request{Messages: []Message{ok}, Tools: []Tool{{Name: "x", InputSchema: json.RawMessage(`{"type":"string"}`)}}}, "want \"object\""},
		{"negative max tokens", Request{Messages: []Message{ok}, MaxTokens: -5}, "MaxTokens"},
		{"negative temperature", Request{Messages: []Message{ok}, Temperature: &neg}, "Temperature"},
	} {
		err := tc.req.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: err = %v", tc.name, err)
		case tc.want != "" && (err == nil || !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want ErrInvalidRequest mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestDescribeBody(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body, typ, msg string
	}{
		{anthropicRateLimited, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"},
		{openAIBadRequest, "invalid_request_error", "model 'nope' not found"},
		{`{"error":"model \"llama9\" not found, try pulling it first"}`, "", `model "llama9" not found, try pulling it first`},
		{`{"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400}`, "BadRequestError", "max_tokens is too large"},
		{"upstream connect error\n", "", "upstream connect error"},
		{"", "", ""},
		{strings.Repeat("x", 2000), "", strings.Repeat("x", maxMessage) + "…"},
	} {
		res := &http.Response{Body: io.NopCloser(strings.NewReader(tc.body))}
		typ, msg := describeBody(res)
		if typ != tc.typ || msg != tc.msg {
			t.Errorf("describeBody(%.40q) = %q, %q; want %q, %q", tc.body, typ, msg, tc.typ, tc.msg)
		}
		if again, _ := io.ReadAll(res.Body); string(again) != tc.body {
			t.Errorf("describeBody(%.40q) consumed the body", tc.body)
		}
	}
}

func TestResponseHelpers(t *testing.T) {
	t.Parallel()
	use := Block{Kind: KindToolUse, ToolUseID: "t1", ToolName: "read_file", Input: json.RawMessage(`{}`)}
	r := Response{Content: []Block{TextBlock("a"), use, TextBlock("b")}}
	if r.Text() != "a\nb" {
		t.Errorf("Text() = %q", r.Text())
	}
	if uses := r.ToolUses(); len(uses) != 1 || uses[0].ToolUseID != "t1" {
		t.Errorf("ToolUses() = %+v", uses)
	}
	if m := r.Message(); m.Role != RoleAssistant || len(m.Content) != 3 {
		t.Errorf("Message() = %+v", m)
	}
	u := Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheCreationTokens: 4}
	if sum := u.Add(u); sum != (Usage{2, 4, 6, 8}) || u.TotalInputTokens() != 8 {
		t.Errorf("Add = %+v, TotalInputTokens = %d", sum, u.TotalInputTokens())
	}
}
