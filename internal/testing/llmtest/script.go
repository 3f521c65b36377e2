// Package llmtest fakes language models for tests of the packages that use
// them. A Script is an llm.Model that answers with scripted replies and
// records what it was asked. AnthropicServer and OpenAIServer put a Script
// behind an in-process HTTP server speaking the provider's real wire format,
// so end-to-end tests can run the real client with TEAMMEM_LLM_BASE_URL
// pointed at them.
package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/teammem/teammem/internal/llm"
)

// Reply is one scripted model turn: a Response, or an error when Status is
// set to something other than 200.
type Reply struct {
	// Response is the model's answer. An empty StopReason is inferred:
	// tool_use when Content has a tool_use block, else end_turn.
	Response llm.Response
	// Status, when neither 0 nor 200, makes the reply an error: the servers
	// answer with this HTTP status and the provider's error body; Script
	// returns an *llm.Error with this StatusCode.
	Status int
	// Message explains an error reply.
	Message string
	// RetryAfter is the Retry-After header of an error reply. The servers
	// send "0" for 429 and 5xx replies when it is empty, so that retries in
	// tests do not wait.
	RetryAfter string
}

// Text returns a reply that ends the turn with text.
func Text(text string) Reply {
	return Reply{Response: llm.Response{Content: []llm.Block{llm.TextBlock(text)}, StopReason: llm.StopEndTurn}}
}

// ToolUse returns a reply that calls one tool. input is encoded with
// encoding/json (json.RawMessage passes through); it panics if that fails.
func ToolUse(id, name string, input any) Reply {
	raw, err := json.Marshal(input)
	if err != nil {
		panic(fmt.Sprintf("llmtest.ToolUse(%q): %v", name, err))
	}
	block := llm.Block{Kind: llm.KindToolUse, ToolUseID: id, ToolName: name, Input: raw}
	return Reply{Response: llm.Response{Content: []llm.Block{block}, StopReason: llm.StopToolUse}}
}

// Fail returns an error reply with an HTTP status, e.g. 429 or 500.
func Fail(status int, message string) Reply {
	return Reply{Status: status, Message: message}
}

// failed reports whether r is an error reply.
func (r Reply) failed() bool { return r.Status != 0 && r.Status != http.StatusOK }

// response returns r's Response with the stop reason filled in.
func (r Reply) response() llm.Response {
	resp := r.Response
	resp.Content = slices.Clone(resp.Content)
	if resp.StopReason == "" {
		resp.StopReason = llm.StopEndTurn
		if len(resp.ToolUses()) > 0 {
			resp.StopReason = llm.StopToolUse
		}
	}
	return resp
}

// ErrExhausted is returned, and answered by the servers with a 400, when a
// Script is asked for more replies than it holds.
var ErrExhausted = errors.New("llmtest: script has no more replies")

// Call is one request a Script answered.
type Call struct {
	Request llm.Request
	// Body is the raw HTTP request body when the call came through a
	// server, nil for direct Complete calls.
	Body []byte
}

// Script is an llm.Model that returns scripted replies in order and records
// every request. It is safe for concurrent use.
type Script struct {
	mu      sync.Mutex
	replies []Reply
	calls   []Call
}

var _ llm.Model = (*Script)(nil)

// NewScript returns a Script that answers with replies, in order.
func NewScript(replies ...Reply) *Script {
	return &Script{replies: replies}
}

// Add appends replies to the script.
func (s *Script) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Name implements llm.Model.
func (s *Script) Name() string { return "llmtest/script" }

// Complete implements llm.Model. It returns an error wrapping
// llm.ErrInvalidRequest for a request that fails Validate, an *llm.Error for
// an error reply or a done context, and ErrExhausted when no reply is left.
func (s *Script) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, &llm.Error{Provider: "llmtest", Message: "gave up: " + err.Error(), Err: err, Attempts: 1}
	}
	if err := req.Validate(); err != nil {
		return llm.Response{}, err
	}
	r, err := s.take(req, nil)
	if err != nil {
		return llm.Response{}, err
	}
	if r.failed() {
		return llm.Response{}, &llm.Error{Provider: "llmtest", StatusCode: r.Status, Message: r.Message, Attempts: 1}
	}
	return r.response(), nil
}

// take records a call and returns the next reply.
func (s *Script) take(req llm.Request, body []byte) (Reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Request: cloneRequest(req), Body: slices.Clone(body)})
	if len(s.calls) > len(s.replies) {
		return Reply{}, fmt.Errorf("%w (request %d, %d scripted)", ErrExhausted, len(s.calls), len(s.replies))
	}
	return s.replies[len(s.calls)-1], nil
}

// Calls returns the calls answered so far, oldest first.
func (s *Script) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Requests returns the requests answered so far, oldest first.
func (s *Script) Requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	reqs := make([]llm.Request, len(s.calls))
	for i, c := range s.calls {
		reqs[i] = c.Request
	}
	return reqs
}

// Remaining returns how many scripted replies have not been used.
func (s *Script) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(0, len(s.replies)-len(s.calls))
}

// cloneRequest copies req deeply enough that the caller reusing its slices
// cannot change what was recorded.
func cloneRequest(req llm.Request) llm.Request {
	out := req
	out.Tools = slices.Clone(req.Tools)
	out.Messages = make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		out.Messages[i] = llm.Message{Role: m.Role, Content: slices.Clone(m.Content)}
	}
	if req.Temperature != nil {
		t := *req.Temperature
		out.Temperature = &t
	}
	return out
}
