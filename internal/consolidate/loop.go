// Package consolidate is the one dream engine both sides run: the model's
// tool loop (Runner over a Toolbox), the consolidation prompt (the system
// prompt, the four phases — orient, gather, consolidate, prune and index —
// and the index caps), parameterised by where the memory lives (the
// client's memory directory or a server memory store), and TreeToolbox,
// the memory tools over an abstract Tree plus read-only session material.
// It imports only shared packages.
package consolidate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/teammem/teammem/internal/llm"
)

// Toolbox is what a Runner lets the model use: the tools it declares, and
// their answers. The client's memory directory sandbox, a TreeToolbox over
// a memory store and narrower boxes (a session's notes file, a daily log)
// implement it.
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

// Runner runs a model against a toolbox until it stops calling tools, the
// turn limit is reached, ctx ends or BeforeTurn says stop.
type Runner struct {
	Model   llm.Model
	Toolbox Toolbox
	System  string
	// MaxTurns bounds the model calls (0: 10).
	MaxTurns int
	// MaxTokens bounds each reply (0: the provider default).
	MaxTokens int
	// OnTurn, when set, hears each assistant turn (text and tool calls).
	OnTurn func(turn int, text string, toolCalls int)
	// BeforeTurn, when set, is called before every model call with the
	// number of the turn about to run (1 for the first) and the usage so
	// far; a non-nil error stops the run and Run returns it unwrapped, with
	// the Result so far. The server uses it for cancel, token budgets and
	// heartbeats.
	BeforeTurn func(ctx context.Context, turn int, used llm.Usage) error
}

// Result is what a run did. It is filled in also when Run fails: Usage is
// the sum over every reply received, so a run stopped by ctx, BeforeTurn or
// a failed model call still reports what it spent.
type Result struct {
	Turns        int
	HitTurnLimit bool
	Final        string   // the model's last text
	Touched      []string // keys written, edited or deleted
	Denied       []string // refusals the toolbox issued
	Usage        llm.Usage
}

// Run sends prompt as the first user message and loops: every tool call is
// answered by the toolbox, until a reply calls no tool, the turn limit is
// reached, ctx ends (ctx.Err() is returned) or BeforeTurn returns an error.
func (r *Runner) Run(ctx context.Context, prompt string) (res Result, err error) {
	maxTurns := r.MaxTurns
	if maxTurns <= 0 {
		maxTurns = 10
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(prompt)}}}
	defer func() {
		res.Touched, res.Denied = r.Toolbox.Touched(), r.Toolbox.Denied()
	}()
	for res.Turns < maxTurns {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if r.BeforeTurn != nil {
			if err := r.BeforeTurn(ctx, res.Turns+1, res.Usage); err != nil {
				return res, err
			}
		}
		resp, err := r.Model.Complete(ctx, llm.Request{System: r.System, Messages: msgs, Tools: r.Toolbox.Tools(), MaxTokens: r.MaxTokens})
		res.Usage = res.Usage.Add(resp.Usage) // a failed call may still report what it spent
		if err != nil {
			return res, fmt.Errorf("model turn %d: %w", res.Turns+1, err)
		}
		res.Turns++
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
		results := make([]llm.Block, 0, len(uses))
		for _, u := range uses {
			out, isErr := r.Toolbox.Call(u.ToolName, u.Input)
			results = append(results, llm.ToolResultBlock(u.ToolUseID, out, isErr))
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: results})
	}
	res.HitTurnLimit = true
	return res, nil
}
