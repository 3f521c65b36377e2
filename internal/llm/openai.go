package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// openAIProvider speaks OpenAI chat completions (POST {base}/chat/completions)
// through openai-go v3, against api.openai.com or a compatible server.
type openAIProvider struct {
	chat  openai.ChatCompletionService
	model string
	// compatible is set when BaseURL points elsewhere than api.openai.com.
	// Ollama, vLLM and llama.cpp understand max_tokens; OpenAI's reasoning
	// models accept only max_completion_tokens.
	compatible bool
}

// toolErrorPrefix marks a failed tool result: chat completions have no
// is_error field, so the model learns of the failure from the text.
const toolErrorPrefix = "Error: "

func newOpenAI(c Config) *openAIProvider {
	opts := []option.RequestOption{
		option.WithEnvironmentProduction(),
		option.WithHTTPClient(&http.Client{}),
		option.WithMaxRetries(0),
	}
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	if c.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(c.BaseURL))
	}
	// The service rather than openai.NewClient: NewClient also reads
	// OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID and custom headers
	// from the environment, and Config is the only source of truth here.
	return &openAIProvider{
		chat:       openai.NewChatCompletionService(opts...),
		model:      c.Model,
		compatible: c.BaseURL != "",
	}
}

func (p *openAIProvider) prepare(req Request) (attempt, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (Response, *http.Response, error) {
		var raw *http.Response
		cc, err := p.chat.New(ctx, params, option.WithResponseInto(&raw))
		if err != nil {
			return Response{}, raw, err
		}
		resp, err := openAIResponse(cc)
		return resp, raw, err
	}, nil
}

// params converts req. The system prompt becomes the first message.
func (p *openAIProvider) params(req Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{Model: p.model}
	if p.compatible {
		params.MaxTokens = openai.Int(int64(maxTokens(req)))
	} else {
		params.MaxCompletionTokens = openai.Int(int64(maxTokens(req)))
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		if m.Role == RoleAssistant {
			params.Messages = append(params.Messages, openAIAssistant(m.Content))
		} else {
			params.Messages = append(params.Messages, openAIUser(m.Content)...)
		}
	}
	for _, t := range req.Tools {
		schema, err := schemaObject(t.InputSchema)
		if err != nil {
			return params, invalidf("tool %s: %v", t.Name, err)
		}
		schema["type"] = "object"
		fn := openai.FunctionDefinitionParam{Name: t.Name, Parameters: openai.FunctionParameters(schema)}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	return params, nil
}

// openAIUser converts a user turn: each tool_result becomes a "tool" message,
// and they come first because they must directly follow the assistant
// message that made the calls; the text follows as one "user" message.
func openAIUser(content []Block) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	var texts []string
	for _, b := range content {
		switch b.Kind {
		case KindToolResult:
			text := b.Text
			if b.IsError {
				text = toolErrorPrefix + text
			}
			out = append(out, openai.ToolMessage(text, b.ToolUseID))
		case KindText:
			texts = append(texts, b.Text)
		}
	}
	if len(texts) > 0 {
		// One string rather than content parts: older compatible servers
		// accept only strings.
		out = append(out, openai.UserMessage(strings.Join(texts, "\n")))
	}
	return out
}

// openAIAssistant converts an assistant turn: text becomes content, each
// tool_use a function tool call with its Input as the arguments string.
// Thinking blocks, which only Anthropic returns, are left out.
func openAIAssistant(content []Block) openai.ChatCompletionMessageParamUnion {
	var msg openai.ChatCompletionAssistantMessageParam
	var texts []string
	for _, b := range content {
		switch b.Kind {
		case KindText:
			texts = append(texts, b.Text)
		case KindToolUse:
			msg.ToolCalls = append(msg.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       b.ToolUseID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.ToolName, Arguments: arguments(b.Input)},
				},
			})
		}
	}
	if len(texts) > 0 {
		msg.Content.OfString = openai.String(strings.Join(texts, "\n"))
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &msg}
}

// arguments turns Input back into the arguments string the model produced,
// undoing validInput's quoting of arguments that were not JSON.
func arguments(in json.RawMessage) string {
	in = inputOrEmpty(in)
	var s string
	if in[0] == '"' && json.Unmarshal(in, &s) == nil {
		return s
	}
	return string(in)
}

var errNoChoices = errors.New("no choices")

// openAIResponse converts the first choice.
func openAIResponse(cc *openai.ChatCompletion) (Response, error) {
	if len(cc.Choices) == 0 {
		return Response{}, errNoChoices
	}
	choice := cc.Choices[0]
	var r Response
	if choice.Message.Content != "" {
		r.Content = append(r.Content, TextBlock(choice.Message.Content))
	}
	if choice.Message.Refusal != "" {
		r.Content = append(r.Content, TextBlock(choice.Message.Refusal))
	}
	for i, tc := range choice.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // custom tools are never offered
		}
		id := tc.ID
		if id == "" { // some llama.cpp builds omit ids; results must still refer to the call
			id = fmt.Sprintf("call_%d", i)
		}
		r.Content = append(r.Content, Block{Kind: KindToolUse, ToolUseID: id, ToolName: tc.Function.Name, Input: validInput([]byte(tc.Function.Arguments))})
	}
	r.StopReason = openAIStop(choice.FinishReason, len(r.ToolUses()) > 0, choice.Message.Refusal != "")
	u := cc.Usage
	cached, written := u.PromptTokensDetails.CachedTokens, u.PromptTokensDetails.CacheWriteTokens
	r.Usage = Usage{
		InputTokens:         int(max(0, u.PromptTokens-cached-written)),
		OutputTokens:        int(u.CompletionTokens),
		CacheReadTokens:     int(cached),
		CacheCreationTokens: int(written),
	}
	return r, nil
}

// openAIStop maps finish_reason. Some compatible servers (older Ollama)
// report "stop" for a turn that calls tools, so tool calls win over "stop".
func openAIStop(reason string, toolCalls, refused bool) string {
	switch {
	case refused:
		return StopOther
	case reason == "tool_calls" || reason == "function_call":
		return StopToolUse
	case (reason == "stop" || reason == "") && toolCalls:
		return StopToolUse
	case reason == "stop":
		return StopEndTurn
	case reason == "length":
		return StopMaxTokens
	default:
		return StopOther
	}
}
