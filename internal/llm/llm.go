// Package llm puts language model providers behind one small interface.
//
// A [Model] completes a [Request] (a system prompt, a conversation of text,
// tool_use and tool_result blocks, and the tools the model may call) into a
// [Response]. Two providers implement it: the Anthropic Messages API and
// OpenAI-compatible chat completions (api.openai.com, Ollama, vLLM,
// llama.cpp), each through its official Go SDK. [New] builds one from a
// [Config], usually read by [ConfigFromEnv].
//
// Both providers share one retry policy: 429, 5xx and connection errors are
// retried with capped exponential backoff and jitter, a Retry-After header is
// honoured, other 4xx fail at once, and every attempt is bounded by
// Config.Timeout. Every provider failure is an [*Error], and no error
// carries the API key. The llmtest subpackage fakes models for tests.
//
// The client binary links this package; the server must not.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Model is a language model that completes conversations.
type Model interface {
	// Complete sends req and returns the model's reply. It returns an error
	// wrapping ErrInvalidRequest when req fails Validate, and an *Error for
	// every provider failure (HTTP status, timeout, connection, cancellation).
	Complete(ctx context.Context, req Request) (Response, error)
	// Name reports the provider and model, as "anthropic/claude-sonnet-4-5".
	Name() string
}

// Role says who wrote a Message.
type Role string

// The roles of a conversation. The system prompt is Request.System, not a role.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockKind says what a Block holds.
type BlockKind string

// The kinds of content block.
const (
	// KindText is prose, from either role.
	KindText BlockKind = "text"
	// KindToolUse is a tool call by the assistant: ToolUseID, ToolName, Input.
	KindToolUse BlockKind = "tool_use"
	// KindToolResult is the user's answer to a tool call: ToolUseID, Text,
	// IsError.
	KindToolResult BlockKind = "tool_result"
	// KindThinking is reasoning the model returned before answering; Text
	// holds it, empty when the provider redacted it. Keep it in the assistant
	// turn you send back (Response.Message does): Anthropic requires the
	// thinking that preceded a tool call on the next request. Providers
	// without thinking leave these blocks out.
	KindThinking BlockKind = "thinking"
)

// Stop reasons of a Response. Providers' finer reasons are folded into these.
const (
	StopEndTurn   = "end_turn"   // the model finished its turn
	StopToolUse   = "tool_use"   // the model wants the results of its tool calls
	StopMaxTokens = "max_tokens" // the reply was cut off by MaxTokens or the context window
	StopOther     = "other"      // refusal, content filter, pause, or anything unknown
)

// DefaultMaxTokens is the reply budget used when Request.MaxTokens is zero.
const DefaultMaxTokens = 4096

// Message is one turn of a conversation.
type Message struct {
	Role    Role
	Content []Block
}

// Block is one piece of a message. Which fields are used depends on Kind.
type Block struct {
	Kind BlockKind
	// Text is the prose of a text block or the output of a tool_result block.
	Text string
	// ToolUseID links a tool_result to the tool_use it answers.
	ToolUseID string
	// ToolName is the tool a tool_use block calls.
	ToolName string
	// Input holds a tool_use block's arguments as a JSON value (an object for
	// well-behaved models). In responses it is always valid JSON: when an
	// OpenAI-compatible server returns arguments that are not JSON, Input is
	// that text as a JSON string.
	Input json.RawMessage
	// IsError marks a tool_result that reports a failure.
	IsError bool

	// opaque is what the provider needs to accept a thinking block back: its
	// signature, or the encrypted reasoning when redacted is set.
	opaque   string
	redacted bool
}

// Tool describes a tool the model may call.
type Tool struct {
	Name        string
	Description string
	// InputSchema is a JSON Schema object describing the tool's input. Empty
	// means an object with no declared properties.
	InputSchema json.RawMessage
}

// Request is one completion request.
type Request struct {
	System   string
	Messages []Message
	Tools    []Tool
	// MaxTokens bounds the reply; zero means DefaultMaxTokens.
	MaxTokens int
	// Temperature, when set, is sent to OpenAI-compatible servers. The
	// Anthropic provider ignores it: the Messages API version that
	// anthropic-sdk-go v2 speaks (2026-10-21) has no temperature parameter.
	Temperature *float64
}

// Response is the model's reply.
type Response struct {
	// Content holds text, tool_use and thinking blocks, in the model's order.
	Content []Block
	// StopReason is one of StopEndTurn, StopToolUse, StopMaxTokens, StopOther.
	StopReason string
	Usage      Usage
}

// Usage counts the tokens of one completion.
type Usage struct {
	// InputTokens counts input tokens that were neither read from nor written
	// to the prompt cache; the whole prompt is TotalInputTokens.
	InputTokens         int
	OutputTokens        int
	CacheReadTokens     int
	CacheCreationTokens int
}

// TotalInputTokens returns the size of the whole prompt, cached or not.
func (u Usage) TotalInputTokens() int {
	return u.InputTokens + u.CacheReadTokens + u.CacheCreationTokens
}

// Add returns the sum of u and v, for totals over several turns.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:         u.InputTokens + v.InputTokens,
		OutputTokens:        u.OutputTokens + v.OutputTokens,
		CacheReadTokens:     u.CacheReadTokens + v.CacheReadTokens,
		CacheCreationTokens: u.CacheCreationTokens + v.CacheCreationTokens,
	}
}

// TextBlock returns a text block.
func TextBlock(text string) Block { return Block{Kind: KindText, Text: text} }

// ToolResultBlock returns the tool_result block answering the tool_use toolUseID.
func ToolResultBlock(toolUseID, text string, isError bool) Block {
	return Block{Kind: KindToolResult, ToolUseID: toolUseID, Text: text, IsError: isError}
}

// Text returns the text blocks of r joined by newlines.
func (r Response) Text() string {
	var parts []string
	for _, b := range r.Content {
		if b.Kind == KindText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ToolUses returns the tool_use blocks of r, in order.
func (r Response) ToolUses() []Block {
	var uses []Block
	for _, b := range r.Content {
		if b.Kind == KindToolUse {
			uses = append(uses, b)
		}
	}
	return uses
}

// Message returns r as the assistant turn to append to the conversation.
func (r Response) Message() Message {
	return Message{Role: RoleAssistant, Content: r.Content}
}

// ErrInvalidRequest is wrapped by the errors of Request.Validate: the request
// is malformed and sending it again will not help.
var ErrInvalidRequest = errors.New("invalid model request")

// Validate reports whether r is well formed: at least one message, known
// roles and block kinds, tool_use only from the assistant and tool_result
// only from the user, ids and names present, Input and schemas valid JSON,
// tool names unique. Errors wrap ErrInvalidRequest.
func (r Request) Validate() error {
	if len(r.Messages) == 0 {
		return invalidf("no messages")
	}
	for i, m := range r.Messages {
		if err := m.validate(); err != nil {
			return invalidf("message %d: %v", i, err)
		}
	}
	seen := make(map[string]bool, len(r.Tools))
	for i, t := range r.Tools {
		if err := t.validate(); err != nil {
			return invalidf("tool %d: %v", i, err)
		}
		if seen[t.Name] {
			return invalidf("tool %d: duplicate name %q", i, t.Name)
		}
		seen[t.Name] = true
	}
	if r.MaxTokens < 0 {
		return invalidf("negative MaxTokens %d", r.MaxTokens)
	}
	if r.Temperature != nil && *r.Temperature < 0 {
		return invalidf("negative Temperature %g", *r.Temperature)
	}
	return nil
}

func (m Message) validate() error {
	if m.Role != RoleUser && m.Role != RoleAssistant {
		return fmt.Errorf("unknown role %q", m.Role)
	}
	if len(m.Content) == 0 {
		return errors.New("no content")
	}
	for j, b := range m.Content {
		if err := b.validate(m.Role); err != nil {
			return fmt.Errorf("block %d: %v", j, err)
		}
	}
	return nil
}

func (b Block) validate(role Role) error {
	switch b.Kind {
	case KindText:
		return nil
	case KindToolUse:
		if role != RoleAssistant {
			return errors.New("tool_use outside an assistant message")
		}
		if b.ToolUseID == "" || b.ToolName == "" {
			return errors.New("tool_use needs ToolUseID and ToolName")
		}
		if len(b.Input) > 0 && !json.Valid(b.Input) {
			return fmt.Errorf("tool_use %s: Input is not valid JSON", b.ToolUseID)
		}
		return nil
	case KindToolResult:
		if role != RoleUser {
			return errors.New("tool_result outside a user message")
		}
		if b.ToolUseID == "" {
			return errors.New("tool_result needs ToolUseID")
		}
		return nil
	case KindThinking:
		if role != RoleAssistant {
			return errors.New("thinking outside an assistant message")
		}
		return nil
	default:
		return fmt.Errorf("unknown kind %q", b.Kind)
	}
}

func (t Tool) validate() error {
	if t.Name == "" {
		return errors.New("no name")
	}
	if len(t.InputSchema) == 0 {
		return nil
	}
	if _, err := schemaObject(t.InputSchema); err != nil {
		return fmt.Errorf("%s: %v", t.Name, err)
	}
	return nil
}

// schemaObject splits a JSON Schema object into its top-level members,
// keeping each value's JSON text as it is (both SDKs would turn a decoded
// json.Number into a string). An empty schema is an object with no declared
// properties.
func schemaObject(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 {
		return map[string]any{"type": "object"}, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return nil, errors.New("InputSchema is not a JSON object")
	}
	out := make(map[string]any, len(members))
	for k, v := range members {
		out[k] = v
	}
	if t, ok := members["type"]; ok {
		var s string
		if json.Unmarshal(t, &s) != nil || s != "object" {
			return nil, fmt.Errorf("InputSchema has type %s, want \"object\"", t)
		}
	}
	return out, nil
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidRequest, fmt.Sprintf(format, args...))
}
