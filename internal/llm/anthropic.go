package llm

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// anthropicProvider speaks the Anthropic Messages API (POST /v1/messages)
// through anthropic-sdk-go v2.
type anthropicProvider struct {
	client anthropic.Client
	model  string
}

func newAnthropic(c Config) *anthropicProvider {
	opts := []option.RequestOption{
		// The SDK would otherwise read ANTHROPIC_BASE_URL, profiles on disk and
		// other credentials; Config is the only source of truth here.
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(c.APIKey),
		option.WithHTTPClient(&http.Client{}),
		option.WithMaxRetries(0),
		// Without an explicit timeout the SDK refuses non-streaming requests
		// whose max_tokens suggests more than 10 minutes of generation. The
		// client's per-attempt context enforces the same bound.
		option.WithRequestTimeout(c.Timeout),
		// Spans could carry prompt content to a globally registered exporter;
		// teammem telemetry never carries content.
		option.WithoutOpenTelemetry(),
	}
	if c.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(c.BaseURL))
	}
	return &anthropicProvider{client: anthropic.NewClient(opts...), model: c.Model}
}

func (p *anthropicProvider) prepare(req Request) (attempt, error) {
	params, err := anthropicParams(p.model, req)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (Response, *http.Response, error) {
		var raw *http.Response
		msg, err := p.client.Messages.New(ctx, params, option.WithResponseInto(&raw))
		if err != nil {
			return Response{}, raw, err
		}
		return anthropicResponse(msg), raw, nil
	}, nil
}

// anthropicParams converts req. The system prompt goes in the top-level
// system field; top-level cache_control asks the API to cache the longest
// cacheable prefix, which an agent loop re-sends on every turn.
func anthropicParams(model string, req Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{
		Model:        anthropic.Model(model),
		MaxTokens:    int64(maxTokens(req)),
		CacheControl: anthropic.NewCacheControlEphemeralParam(),
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, m := range req.Messages {
		blocks := anthropicBlocks(m.Content)
		if m.Role == RoleAssistant {
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		} else {
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		}
	}
	for _, t := range req.Tools {
		schema, err := schemaObject(t.InputSchema)
		if err != nil {
			return p, invalidf("tool %s: %v", t.Name, err)
		}
		delete(schema, "type") // the SDK always writes "type": "object"
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: anthropic.ToolInputSchemaParam{ExtraFields: schema}}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return p, nil
}

// anthropicBlocks converts content blocks. Empty text is dropped because the
// API rejects empty text blocks.
func anthropicBlocks(content []Block) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, b := range content {
		switch b.Kind {
		case KindText:
			if b.Text != "" {
				out = append(out, anthropic.NewTextBlock(b.Text))
			}
		case KindToolUse:
			out = append(out, anthropic.NewToolUseBlock(b.ToolUseID, inputOrEmpty(b.Input), b.ToolName))
		case KindToolResult:
			res := anthropic.ToolResultBlockParam{ToolUseID: b.ToolUseID}
			if b.Text != "" {
				res.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: b.Text}}}
			}
			if b.IsError {
				res.IsError = anthropic.Bool(true)
			}
			out = append(out, anthropic.ContentBlockParamUnion{OfToolResult: &res})
		case KindThinking:
			if b.redacted {
				out = append(out, anthropic.NewRedactedThinkingBlock(b.opaque))
			} else {
				out = append(out, anthropic.NewThinkingBlock(b.opaque, b.Text))
			}
		}
	}
	return out
}

// anthropicResponse keeps text, tool_use and thinking blocks. Whether a
// model thinks when the request does not mention thinking depends on the
// model, so thinking is kept for the next turn. Server-tool blocks cannot
// occur: requests offer no server tools.
func anthropicResponse(m *anthropic.Message) Response {
	r := Response{
		StopReason: anthropicStop(m.StopReason),
		Usage: Usage{
			InputTokens:         int(m.Usage.InputTokens),
			OutputTokens:        int(m.Usage.OutputTokens),
			CacheReadTokens:     int(m.Usage.CacheReadInputTokens),
			CacheCreationTokens: int(m.Usage.CacheCreationInputTokens),
		},
	}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			r.Content = append(r.Content, TextBlock(b.Text))
		case "tool_use":
			r.Content = append(r.Content, Block{Kind: KindToolUse, ToolUseID: b.ID, ToolName: b.Name, Input: validInput(b.Input)})
		case "thinking":
			r.Content = append(r.Content, Block{Kind: KindThinking, Text: b.Thinking, opaque: b.Signature})
		case "redacted_thinking":
			r.Content = append(r.Content, Block{Kind: KindThinking, opaque: b.Data, redacted: true})
		}
	}
	return r
}

func anthropicStop(s anthropic.StopReason) string {
	switch s {
	case anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
		return StopEndTurn
	case anthropic.StopReasonToolUse:
		return StopToolUse
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return StopMaxTokens
	default:
		return StopOther
	}
}

func maxTokens(req Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return DefaultMaxTokens
}

// inputOrEmpty returns in, or an empty object when in is empty.
func inputOrEmpty(in json.RawMessage) json.RawMessage {
	if len(in) == 0 {
		return json.RawMessage("{}")
	}
	return in
}

// validInput returns a copy of in that is valid JSON: an empty object for
// nothing, in itself when valid, otherwise in as a JSON string.
func validInput(in []byte) json.RawMessage {
	switch {
	case len(in) == 0 || string(in) == "null":
		return json.RawMessage("{}")
	case json.Valid(in):
		return append(json.RawMessage(nil), in...)
	default:
		s, _ := json.Marshal(string(in))
		return s
	}
}
