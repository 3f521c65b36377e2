package consolidate_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// turn is a scripted reply calling several tools at once, with usage.
func turn(usage llm.Usage, calls ...llm.Block) llmtest.Reply {
	return llmtest.Reply{Response: llm.Response{Content: calls, Usage: usage}}
}

// call is one tool_use block.
func call(id, name string, input map[string]any) llm.Block {
	raw, _ := json.Marshal(input)
	return llm.Block{Kind: llm.KindToolUse, ToolUseID: id, ToolName: name, Input: raw}
}

var oneTurn = llm.Usage{InputTokens: 100, OutputTokens: 10, CacheReadTokens: 5, CacheCreationTokens: 1}

// toolResults returns the tool results the model was sent in request i.
func toolResults(t *testing.T, s *llmtest.Script, i int) []llm.Block {
	t.Helper()
	reqs := s.Requests()
	if i >= len(reqs) {
		t.Fatalf("only %d requests", len(reqs))
	}
	msgs := reqs[i].Messages
	return msgs[len(msgs)-1].Content
}

func TestConsolidateScriptedDreamOverMemTree(t *testing.T) {
	t.Parallel()
	tree := consolidate.NewMemTree(map[string]string{
		"MEMORY.md":          "- [Deploy](deploy.md) — how to deploy\n- [Deploying](deploying.md) — deploys\n- [Staging](team/staging.md) — staging host\n",
		"deploy.md":          "---\nname: deploy\n---\nDeploy with `make deploy`.\n",
		"deploying.md":       "---\nname: deploying\n---\nDeploys need VPN access.\n",
		"team/staging.md":    "---\nname: staging\n---\nStaging listens on port 8080.\n",
		"team/unrelated.txt": "x",
	})
	sources := map[string]string{"sessions/sesn_0123.md": "Moved staging to port 9090 today.\n"}
	merged := "---\nname: deploy\n---\nDeploy with `make deploy`; it needs VPN access.\n"
	index := "- [Deploy](deploy.md) — how to deploy (VPN, make deploy)\n- [Staging](team/staging.md) — staging host and port\n"
	script := llmtest.NewScript(
		turn(oneTurn, call("1", "list", nil), call("2", "read", map[string]any{"path": "/MEMORY.md"})),
		turn(oneTurn, call("3", "read", map[string]any{"path": "deploy.md"}), call("4", "read", map[string]any{"path": "/deploying.md"}),
			call("5", "read", map[string]any{"path": "/team/staging.md"}), call("6", "grep", map[string]any{"pattern": "port", "path": "/sessions"})),
		turn(oneTurn, call("7", "write", map[string]any{"path": "/deploy.md", "content": merged}), call("8", "delete", map[string]any{"path": "deploying.md"}),
			call("9", "edit", map[string]any{"path": "/team/staging.md", "old_string": "port 8080", "new_string": "port 9090 (since 2026-03-06)"})),
		turn(oneTurn, call("10", "write", map[string]any{"path": "MEMORY.md", "content": index})),
		llmtest.Reply{Response: llm.Response{Content: []llm.Block{llm.TextBlock("Merged deploying.md into deploy.md; staging now on 9090.")}, Usage: oneTurn}},
	)
	box := consolidate.NewTreeToolbox(context.Background(), tree, sources)
	r := &consolidate.Runner{Model: script, Toolbox: box, System: consolidate.StoreSystem, MaxTurns: 10}
	prompt := consolidate.StorePrompt(consolidate.StoreInput{Now: time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC),
		Sessions: []consolidate.Session{{ID: "sesn_0123"}}})
	res, err := r.Run(context.Background(), prompt)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"MEMORY.md":          index,
		"deploy.md":          merged,
		"team/staging.md":    "---\nname: staging\n---\nStaging listens on port 9090 (since 2026-03-06).\n",
		"team/unrelated.txt": "x",
	}
	got := tree.Files()
	if len(got) != len(want) {
		t.Fatalf("files = %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if strings.Join(res.Touched, ",") != "deploy.md,deploying.md,team/staging.md,MEMORY.md" {
		t.Errorf("touched = %v", res.Touched)
	}
	if len(res.Denied) != 0 || res.Turns != 5 || res.HitTurnLimit || !strings.Contains(res.Final, "Merged") {
		t.Errorf("result = %+v", res)
	}
	if wantUsage := (llm.Usage{InputTokens: 500, OutputTokens: 50, CacheReadTokens: 25, CacheCreationTokens: 5}); res.Usage != wantUsage {
		t.Errorf("usage = %+v, want %+v", res.Usage, wantUsage)
	}
	listing := toolResults(t, script, 1)[0].Text
	if !strings.Contains(listing, "/sessions/sesn_0123.md (34 bytes) (read-only session material)") || !strings.Contains(listing, "/team/staging.md") {
		t.Errorf("list = %q", listing)
	}
	if g := toolResults(t, script, 2)[3].Text; g != "/sessions/sesn_0123.md:1: Moved staging to port 9090 today." {
		t.Errorf("grep = %q", g)
	}
	if req := script.Requests()[0]; req.System != consolidate.StoreSystem || len(req.Tools) != 7 {
		t.Errorf("system or tools wrong: %d tools", len(req.Tools))
	}
}

// stepTree is a MemTree whose writes fail with err for paths in fail.
type stepTree struct {
	*consolidate.MemTree
	fail map[string]error
}

func (s stepTree) Write(ctx context.Context, path, content string) error {
	if err := s.fail[path]; err != nil {
		return err
	}
	return s.MemTree.Write(ctx, path, content)
}

func TestTreeToolboxTreeWriteErrorsAreToolErrors(t *testing.T) {
	t.Parallel()
	refusal := errors.New("refused by the write path: the content contains an AWS access key")
	tree := stepTree{consolidate.NewMemTree(map[string]string{"a.md": "old"}), map[string]error{"a.md": refusal, "b.md": refusal}}
	box := consolidate.NewTreeToolbox(context.Background(), tree, nil)
	mustCall(t, box, "read", `{"path":"a.md"}`, false)
	for _, c := range []struct{ name, input string }{
		{"write", `{"path":"/b.md","content":"x"}`},
		{"edit", `{"path":"a.md","old_string":"old","new_string":"new"}`},
	} {
		out := mustCall(t, box, c.name, c.input, true)
		if !strings.Contains(out, refusal.Error()) {
			t.Errorf("%s: %q does not carry the tree's error", c.name, out)
		}
	}
	if d := box.Denied(); len(d) != 2 || !strings.Contains(d[1], "AWS access key") {
		t.Errorf("denied = %v", d)
	}
	if len(box.Touched()) != 0 || tree.Files()["a.md"] != "old" {
		t.Errorf("a refused write changed something: %v %v", box.Touched(), tree.Files())
	}
}

// mustCall calls a tool and checks its isError.
func mustCall(t *testing.T, box consolidate.Toolbox, name, input string, wantErr bool) string {
	t.Helper()
	out, isErr := box.Call(name, json.RawMessage(input))
	if isErr != wantErr {
		t.Fatalf("%s %s: isError = %v (%q)", name, input, isErr, out)
	}
	return out
}
