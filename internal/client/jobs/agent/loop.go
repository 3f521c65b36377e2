package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/teammem/teammem/internal/llm"
)

// Toolbox is what a Runner lets the model use: the tools it declares, and
// their answers. *Sandbox is the memory directory's toolbox; other runs (a
// session's notes file, a daily log) bring narrower ones.
type Toolbox interface {
	// Tools returns the tool definitions sent with every request.
	Tools() []llm.Tool
	// Call runs one tool; isError marks failures and refusals, which the
	// model sees and may recover from.
	Call(name string, input json.RawMessage) (result string, isError bool)
	// Touched returns what the calls changed, as keys, in first-touch order.
	Touched() []string
	// Denied returns the refusals issued.
	Denied() []string
}

var _ Toolbox = (*Sandbox)(nil)

// Runner runs a model against a toolbox (usually a *Sandbox) until it stops
// calling tools or the turn limit is reached.
type Runner struct {
	Model    llm.Model
	Sandbox  Toolbox
	System   string
	MaxTurns int // 0: 10
	// MaxTokens bounds each reply (0: the provider default).
	MaxTokens int
	// OnTurn, when set, hears each assistant turn (text and tool calls).
	OnTurn func(turn int, text string, toolCalls int)
}

// Result is what a run did.
type Result struct {
	Turns        int
	HitTurnLimit bool
	Final        string   // the model's last text
	Touched      []string // keys written, edited or deleted
	Denied       []string // refusals the sandbox issued
	Usage        llm.Usage
}

// Run sends prompt as the first user message and loops: every tool call is
// answered by the sandbox, until a reply calls no tool, the turn limit is
// reached, or ctx ends.
func (r *Runner) Run(ctx context.Context, prompt string) (res Result, err error) {
	maxTurns := r.MaxTurns
	if maxTurns <= 0 {
		maxTurns = 10
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(prompt)}}}
	defer func() {
		res.Touched, res.Denied = r.Sandbox.Touched(), r.Sandbox.Denied()
	}()
	for res.Turns < maxTurns {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		resp, err := r.Model.Complete(ctx, llm.Request{System: r.System, Messages: msgs, Tools: r.Sandbox.Tools(), MaxTokens: r.MaxTokens})
		if err != nil {
			return res, fmt.Errorf("model turn %d: %w", res.Turns+1, err)
		}
		res.Turns++
		res.Usage = res.Usage.Add(resp.Usage)
		if t := resp.Text(); t != "" {
			res.Final = t
		}
		uses := resp.ToolUses()
		if r.OnTurn != nil {
			r.OnTurn(res.Turns, resp.Text(), len(uses))
		}
		msgs = append(msgs, resp.Message())
		if len(uses) == 0 {
			return res, nil
		}
		var results []llm.Block
		for _, u := range uses {
			out, isErr := r.Sandbox.Call(u.ToolName, u.Input)
			results = append(results, llm.ToolResultBlock(u.ToolUseID, out, isErr))
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: results})
	}
	res.HitTurnLimit = true
	return res, nil
}
