package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/llm"
)

// AnthropicServer serves the Anthropic Messages API (POST /v1/messages) from
// s until the test ends and returns its base URL, the value for
// TEAMMEM_LLM_BASE_URL with TEAMMEM_LLM_PROVIDER=anthropic. Like the real
// API it wants a key (x-api-key or a bearer token; any value will do), a
// model and max_tokens.
func AnthropicServer(t testing.TB, s *Script) string {
	t.Helper()
	return serve(t, s, wire{
		name:       "anthropic",
		path:       "/v1/messages",
		authorized: anthropicAuthorized,
		decode:     decodeAnthropic,
		encode:     encodeAnthropic,
		fail:       failAnthropic,
	}).URL
}

func anthropicAuthorized(r *http.Request) bool {
	return r.Header.Get("x-api-key") != "" || strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// anthropicRequest is the subset of a Messages API request the client sends.
type anthropicRequest struct {
	Model     string          `json:"model"`
	MaxTokens *int            `json:"max_tokens"`
	System    json.RawMessage `json:"system"` // a string or text blocks
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or blocks
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Temperature *float64 `json:"temperature"`
}

// anthropicBlock is a content block of a request.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or text blocks
	IsError   bool            `json:"is_error"`
	Thinking  string          `json:"thinking"`
}

func decodeAnthropic(body []byte) (llm.Request, string, error) {
	var in anthropicRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return llm.Request{}, "", err
	}
	if in.Model == "" || in.MaxTokens == nil {
		return llm.Request{}, "", errors.New("model and max_tokens are required")
	}
	system, err := anthropicText(in.System)
	if err != nil {
		return llm.Request{}, "", fmt.Errorf("system: %w", err)
	}
	req := llm.Request{System: system, MaxTokens: *in.MaxTokens, Temperature: in.Temperature}
	for i, m := range in.Messages {
		content, err := anthropicContent(m.Content)
		if err != nil {
			return llm.Request{}, "", fmt.Errorf("messages.%d: %w", i, err)
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.Role(m.Role), Content: content})
	}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, llm.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	return req, in.Model, nil
}

// anthropicContent decodes message content: a string or an array of blocks.
func anthropicContent(raw json.RawMessage) ([]llm.Block, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []llm.Block{llm.TextBlock(s)}, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	var out []llm.Block
	for _, b := range blocks {
		switch b.Type {
		case "text":
			out = append(out, llm.TextBlock(b.Text))
		case "tool_use":
			out = append(out, llm.Block{Kind: llm.KindToolUse, ToolUseID: b.ID, ToolName: b.Name, Input: b.Input})
		case "thinking":
			out = append(out, llm.Block{Kind: llm.KindThinking, Text: b.Thinking})
		case "redacted_thinking":
			out = append(out, llm.Block{Kind: llm.KindThinking})
		case "tool_result":
			text, err := anthropicText(b.Content)
			if err != nil {
				return nil, fmt.Errorf("tool_result %s: %w", b.ToolUseID, err)
			}
			out = append(out, llm.ToolResultBlock(b.ToolUseID, text, b.IsError))
		default:
			return nil, fmt.Errorf("unexpected block type %q", b.Type)
		}
	}
	return out, nil
}

// anthropicText decodes a string or an array of text blocks; absent is "".
func anthropicText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", err
	}
	var parts []string
	for _, b := range blocks {
		if b.Type != "text" {
			return "", fmt.Errorf("unexpected block type %q", b.Type)
		}
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n"), nil
}

func encodeAnthropic(w http.ResponseWriter, model string, n int64, resp llm.Response) {
	content := []map[string]any{}
	for _, b := range resp.Content {
		switch b.Kind {
		case llm.KindText:
			content = append(content, map[string]any{"type": "text", "text": b.Text})
		case llm.KindToolUse:
			content = append(content, map[string]any{"type": "tool_use", "id": b.ToolUseID, "name": b.ToolName, "input": inputJSON(b.Input)})
		case llm.KindThinking:
			content = append(content, map[string]any{"type": "thinking", "thinking": b.Text, "signature": "llmtest-signature"})
		}
	}
	stop := map[string]string{
		llm.StopEndTurn: "end_turn", llm.StopToolUse: "tool_use", llm.StopMaxTokens: "max_tokens", llm.StopOther: "refusal",
	}[resp.StopReason]
	writeJSON(w, http.StatusOK, map[string]string{"request-id": requestID("req_llmtest_", n)}, map[string]any{
		"id":            requestID("msg_llmtest_", n),
		"type":          "message",
		"role":          "assistant",
		"model":         model,
		"content":       content,
		"stop_reason":   stop,
		"stop_sequence": nil,
		"usage": map[string]int{
			"input_tokens":                resp.Usage.InputTokens,
			"output_tokens":               resp.Usage.OutputTokens,
			"cache_read_input_tokens":     resp.Usage.CacheReadTokens,
			"cache_creation_input_tokens": resp.Usage.CacheCreationTokens,
		},
	})
}

// anthropicErrorType names an error status the way the API does.
func anthropicErrorType(status int) string {
	switch status {
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

func failAnthropic(w http.ResponseWriter, status int, message, retryAfter string) {
	writeJSON(w, status, map[string]string{"retry-after": retryAfter, "request-id": "req_llmtest_error"}, map[string]any{
		"type":       "error",
		"error":      map[string]string{"type": anthropicErrorType(status), "message": statusMessage(status, message)},
		"request_id": "req_llmtest_error",
	})
}
