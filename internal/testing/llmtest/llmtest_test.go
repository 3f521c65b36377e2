package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/teammem/teammem/internal/llm"
)

var readTool = llm.Tool{
	Name:        "read_file",
	Description: "Read a file in the memory directory.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
}

func ask(text string) llm.Request {
	return llm.Request{
		System:    "You keep the team's memory.",
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(text)}}},
		Tools:     []llm.Tool{readTool},
		MaxTokens: 1000,
	}
}

func TestScript(t *testing.T) {
	t.Parallel()
	s := NewScript(ToolUse("t1", "read_file", map[string]string{"path": "team/a.md"}), Text("done"))
	req := ask("summarise")
	first, err := s.Complete(t.Context(), req)
	if err != nil {
		t.Fatalf("first: %v", err)
	}
	if first.StopReason != llm.StopToolUse || string(first.ToolUses()[0].Input) != `{"path":"team/a.md"}` {
		t.Errorf("first = %+v", first)
	}
	req.Messages = append(req.Messages, first.Message(), llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("t1", "# A", false)}})
	second, err := s.Complete(t.Context(), req)
	if err != nil || second.Text() != "done" || second.StopReason != llm.StopEndTurn {
		t.Fatalf("second = %+v, %v", second, err)
	}
	req.Messages[0].Content[0].Text = "changed after the call"
	reqs := s.Requests()
	if len(reqs) != 2 || len(reqs[1].Messages) != 3 || reqs[0].Messages[0].Content[0].Text != "summarise" {
		t.Errorf("recorded %+v", reqs)
	}
	if s.Remaining() != 0 {
		t.Errorf("Remaining() = %d", s.Remaining())
	}
	if _, err := s.Complete(t.Context(), req); !errors.Is(err, ErrExhausted) {
		t.Errorf("third call err = %v, want ErrExhausted", err)
	}
}

func TestScriptErrors(t *testing.T) {
	t.Parallel()
	s := NewScript(Fail(http.StatusTooManyRequests, "slow down"))
	if _, err := s.Complete(t.Context(), llm.Request{}); !errors.Is(err, llm.ErrInvalidRequest) {
		t.Errorf("invalid request err = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Complete(ctx, ask("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled err = %v", err)
	}
	_, err := s.Complete(t.Context(), ask("x"))
	var e *llm.Error
	if !errors.As(err, &e) || e.StatusCode != 429 || e.Message != "slow down" {
		t.Errorf("err = %v, want a 429 *llm.Error", err)
	}
	if len(s.Requests()) != 1 {
		t.Errorf("recorded %d requests, want only the one that reached the script", len(s.Requests()))
	}
}

// serverCase wires a real client to one provider's fake through the environment.
type serverCase struct {
	provider string
	start    func(testing.TB, *Script) string
	env      map[string]string
}

var serverCases = []serverCase{
	{llm.ProviderAnthropic, AnthropicServer, map[string]string{llm.EnvAnthropicKey: "sk-ant-test"}},
	{llm.ProviderOpenAI, OpenAIServer, nil},
}

// model builds the real client from the environment a user would set.
func (sc serverCase) model(t *testing.T, s *Script) llm.Model {
	t.Helper()
	env := map[string]string{
		llm.EnvProvider: sc.provider,
		llm.EnvModel:    "test-model",
		llm.EnvBaseURL:  sc.start(t, s),
	}
	for k, v := range sc.env {
		env[k] = v
	}
	cfg, err := llm.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("ConfigFromEnv: %v", err)
	}
	m, err := llm.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

func TestServersToolLoop(t *testing.T) {
	t.Parallel()
	for _, sc := range serverCases {
		t.Run(sc.provider, func(t *testing.T) {
			t.Parallel()
			answer := Text("Fridays are deploy-free.")
			answer.Response.Usage = llm.Usage{InputTokens: 40, OutputTokens: 8, CacheReadTokens: 100, CacheCreationTokens: 20}
			s := NewScript(ToolUse("call_1", "read_file", map[string]string{"path": "team/deploys.md"}), answer)
			m := sc.model(t, s)

			req := ask("When can we deploy?")
			first, err := m.Complete(t.Context(), req)
			if err != nil {
				t.Fatalf("first: %v", err)
			}
			use := first.ToolUses()
			if first.StopReason != llm.StopToolUse || len(use) != 1 || use[0].ToolUseID != "call_1" || string(use[0].Input) != `{"path":"team/deploys.md"}` {
				t.Fatalf("first = %+v", first)
			}
			req.Messages = append(req.Messages, first.Message(), llm.Message{Role: llm.RoleUser, Content: []llm.Block{
				llm.ToolResultBlock("call_1", "No deploys on Fridays.", false),
			}})
			second, err := m.Complete(t.Context(), req)
			if err != nil {
				t.Fatalf("second: %v", err)
			}
			if second.Text() != "Fridays are deploy-free." || second.StopReason != llm.StopEndTurn || second.Usage != answer.Response.Usage {
				t.Errorf("second = %+v", second)
			}
			// The fake decodes the wire request back into the request sent.
			got := s.Requests()
			if len(got) != 2 || !reflect.DeepEqual(canonical(t, got[1]), canonical(t, req)) {
				t.Errorf("the fake saw\n %+v\nwant\n %+v", got[len(got)-1], req)
			}
			if calls := s.Calls(); calls[0].Body == nil || !json.Valid(calls[0].Body) {
				t.Errorf("raw body not recorded: %q", calls[0].Body)
			}
		})
	}
}

func TestServersErrorReplies(t *testing.T) {
	t.Parallel()
	for _, sc := range serverCases {
		t.Run(sc.provider, func(t *testing.T) {
			t.Parallel()
			s := NewScript(Fail(429, "slow down"), Fail(503, "busy"), Text("ok"), Fail(400, "bad request, really"))
			m := sc.model(t, s)
			resp, err := m.Complete(t.Context(), ask("x"))
			if err != nil || resp.Text() != "ok" || len(s.Calls()) != 3 {
				t.Fatalf("after retries: %+v, %v, %d calls", resp, err, len(s.Calls()))
			}
			_, err = m.Complete(t.Context(), ask("y"))
			var e *llm.Error
			if !errors.As(err, &e) || e.StatusCode != 400 || e.Message != "bad request, really" || e.Type != "invalid_request_error" {
				t.Fatalf("err = %v, want the scripted 400", err)
			}
			if len(s.Calls()) != 4 {
				t.Errorf("%d calls, want 4: a 400 is not retried", len(s.Calls()))
			}
		})
	}
}

// canonical re-encodes the JSON in req, whose key order the wire may change.
func canonical(t *testing.T, req llm.Request) llm.Request {
	t.Helper()
	req.Tools = append([]llm.Tool(nil), req.Tools...)
	for i, tool := range req.Tools {
		var v any
		if err := json.Unmarshal(tool.InputSchema, &v); err != nil {
			t.Fatalf("tool %s: %v", tool.Name, err)
		}
		req.Tools[i].InputSchema, _ = json.Marshal(v)
	}
	return req
}

// errorRecorder stands in for a test to observe the fakes' complaints.
type errorRecorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestServersReportAnExhaustedScript(t *testing.T) {
	t.Parallel()
	for _, sc := range serverCases {
		rec := &errorRecorder{TB: t}
		s := NewScript()
		env := map[string]string{llm.EnvProvider: sc.provider, llm.EnvModel: "m", llm.EnvBaseURL: sc.start(rec, s), llm.EnvAnthropicKey: "k"}
		cfg, err := llm.ConfigFromEnv(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		m, _ := llm.New(cfg)
		_, err = m.Complete(t.Context(), ask("x"))
		var e *llm.Error
		if !errors.As(err, &e) || e.StatusCode != 400 || !strings.Contains(e.Message, "no more replies") {
			t.Errorf("%s: err = %v", sc.provider, err)
		}
		if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "no more replies") {
			t.Errorf("%s: the test was told %q", sc.provider, rec.errs)
		}
	}
}

func TestAnthropicServerWantsAKey(t *testing.T) {
	t.Parallel()
	url := AnthropicServer(t, NewScript(Text("never")))
	res, err := http.Post(url+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","max_tokens":1,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Type  string `json:"type"`
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	json.NewDecoder(res.Body).Decode(&body)
	if res.StatusCode != 401 || body.Type != "error" || body.Error.Type != "authentication_error" {
		t.Errorf("status %d body %+v, want 401 authentication_error", res.StatusCode, body)
	}
}

func TestAnthropicServerThinking(t *testing.T) {
	t.Parallel()
	think := ToolUse("toolu_1", "read_file", map[string]string{"path": "a.md"})
	think.Response.Content = append([]llm.Block{{Kind: llm.KindThinking, Text: "Check the notes."}}, think.Response.Content...)
	s := NewScript(think, Text("done"))
	m := serverCases[0].model(t, s)
	req := ask("go")
	first, err := m.Complete(t.Context(), req)
	if err != nil || len(first.Content) != 2 || first.Content[0].Kind != llm.KindThinking || first.Content[0].Text != "Check the notes." {
		t.Fatalf("first = %+v, %v", first, err)
	}
	req.Messages = append(req.Messages, first.Message(), llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("toolu_1", "x", false)}})
	if _, err := m.Complete(t.Context(), req); err != nil {
		t.Fatalf("second: %v", err)
	}
	if got := s.Requests()[1].Messages[1].Content[0]; got.Kind != llm.KindThinking || got.Text != "Check the notes." {
		t.Errorf("thinking sent back as %+v", got)
	}
	if !strings.Contains(string(s.Calls()[1].Body), `"signature":"llmtest-signature"`) {
		t.Errorf("signature not sent back: %s", s.Calls()[1].Body)
	}
}
