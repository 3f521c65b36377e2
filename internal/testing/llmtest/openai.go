package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/llm"
)

// OpenAIServer serves OpenAI chat completions (POST /v1/chat/completions)
// from s until the test ends and returns its base URL including /v1, the
// value for TEAMMEM_LLM_BASE_URL with TEAMMEM_LLM_PROVIDER=openai. Like
// Ollama it needs no key.
func OpenAIServer(t testing.TB, s *Script) string {
	t.Helper()
	return serve(t, s, wire{
		name:       "openai",
		path:       "/v1/chat/completions",
		authorized: func(*http.Request) bool { return true },
		decode:     decodeOpenAI,
		encode:     encodeOpenAI,
		fail:       failOpenAI,
	}).URL + "/v1"
}

// errorPrefix is how the client marks a failed tool result in a tool message.
const errorPrefix = "Error: "

// openAIRequest is the subset of a chat completions request the client sends.
type openAIRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"` // a string, text parts or null
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
}

// decodeOpenAI maps chat messages back onto turns: system messages become
// System; tool messages become tool_result blocks of a user turn, which a
// following user message joins; "Error: " marks a failed result.
func decodeOpenAI(body []byte) (llm.Request, string, error) {
	var in openAIRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return llm.Request{}, "", err
	}
	if in.Model == "" {
		return llm.Request{}, "", errors.New("model is required")
	}
	req := llm.Request{Temperature: in.Temperature}
	for _, limit := range []*int{in.MaxTokens, in.MaxCompletionTokens} {
		if limit != nil {
			req.MaxTokens = *limit
		}
	}
	var system []string
	for i, m := range in.Messages {
		text, err := openAIText(m.Content)
		if err != nil {
			return llm.Request{}, "", fmt.Errorf("messages.%d: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			req.Messages = appendUser(req.Messages, llm.TextBlock(text))
		case "tool":
			isErr := strings.HasPrefix(text, errorPrefix)
			block := llm.ToolResultBlock(m.ToolCallID, strings.TrimPrefix(text, errorPrefix), isErr)
			req.Messages = appendUser(req.Messages, block)
		case "assistant":
			var content []llm.Block
			if text != "" {
				content = append(content, llm.TextBlock(text))
			}
			for _, tc := range m.ToolCalls {
				content = append(content, llm.Block{Kind: llm.KindToolUse, ToolUseID: tc.ID, ToolName: tc.Function.Name, Input: rawInput(tc.Function.Arguments)})
			}
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: content})
		default:
			return llm.Request{}, "", fmt.Errorf("messages.%d: unexpected role %q", i, m.Role)
		}
	}
	req.System = strings.Join(system, "\n")
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters})
	}
	return req, in.Model, nil
}

// appendUser adds b to the last turn when it is the user's, else starts one.
func appendUser(msgs []llm.Message, b llm.Block) []llm.Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == llm.RoleUser {
		msgs[n-1].Content = append(msgs[n-1].Content, b)
		return msgs
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: []llm.Block{b}})
}

// openAIText decodes content: a string, an array of text parts, or null.
func openAIText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var texts []string
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("unexpected content part %q", p.Type)
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

func encodeOpenAI(w http.ResponseWriter, model string, n int64, resp llm.Response) {
	texts, uses := textAndToolUses(resp)
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if len(texts) > 0 {
		msg["content"] = strings.Join(texts, "\n")
	}
	if len(uses) > 0 {
		var calls []map[string]any
		for _, u := range uses {
			calls = append(calls, map[string]any{
				"id": u.ToolUseID, "type": "function",
				"function": map[string]string{"name": u.ToolName, "arguments": string(inputJSON(u.Input))},
			})
		}
		msg["tool_calls"] = calls
	}
	finish := map[string]string{
		llm.StopEndTurn: "stop", llm.StopToolUse: "tool_calls", llm.StopMaxTokens: "length", llm.StopOther: "content_filter",
	}[resp.StopReason]
	u := resp.Usage
	details := map[string]int{"cached_tokens": u.CacheReadTokens}
	if u.CacheCreationTokens > 0 {
		details["cache_write_tokens"] = u.CacheCreationTokens
	}
	writeJSON(w, http.StatusOK, map[string]string{"x-request-id": requestID("req_llmtest_", n)}, map[string]any{
		"id":      requestID("chatcmpl-llmtest-", n),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   model,
		"choices": []map[string]any{{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage": map[string]any{
			"prompt_tokens":         u.TotalInputTokens(),
			"completion_tokens":     u.OutputTokens,
			"total_tokens":          u.TotalInputTokens() + u.OutputTokens,
			"prompt_tokens_details": details,
		},
	})
}

// openAIErrorType names an error status the way the API does.
func openAIErrorType(status int) string {
	switch {
	case status == 429:
		return "requests"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func failOpenAI(w http.ResponseWriter, status int, message, retryAfter string) {
	writeJSON(w, status, map[string]string{"retry-after": retryAfter, "x-request-id": "req_llmtest_error"}, map[string]any{
		"error": map[string]any{"message": statusMessage(status, message), "type": openAIErrorType(status), "param": nil, "code": nil},
	})
}
