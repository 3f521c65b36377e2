package main_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPWatchPropagation joins the two ways an agent meets team memory:
// machine A's agent speaks MCP to `teammem mcp` (the official Go SDK's
// client over the built binary's stdio), machine B runs `teammem watch`.
// A memory A's agent creates is on B's disk within seconds (design: p50
// under 3 s); an edit saved on B's disk reaches A's session, whose view
// returns it and whose subscription to the file's resource is told.
func TestMCPWatchPropagation(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	const remote = "git@github.com:acme/widgets.git"
	a := newMachine(t, srv, remote)
	b := newMachine(t, srv, remote)
	B := b.memDir()
	b.watch(t)

	updated := make(chan string, 16)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cs, logs, err := stdioSession(t, ctx, a, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updated <- req.Params.URI
		}})
	if err != nil {
		t.Fatalf("connecting to teammem mcp: %v\n%s", err, logs.String())
	}
	t.Cleanup(func() {
		if s := logs.String(); s != "" {
			t.Logf("teammem mcp's stderr:\n%s", s)
		}
	})
	call := func(tool string, args map[string]any) string {
		t.Helper()
		out, isErr := toolText(t, ctx, cs, tool, args)
		if isErr {
			t.Fatalf("%s %v: %s", tool, args, out)
		}
		return out
	}

	// A → B: each create is on B's disk, through the server's live events.
	var took []time.Duration
	for i := range 5 {
		key := fmt.Sprintf("team/live-%d.md", i)
		text := fmt.Sprintf("# Live %d\nwritten by A's agent over MCP\n", i)
		start := time.Now()
		contains(t, call("create", map[string]any{"path": "/memories/" + key, "file_text": text}), "File created successfully")
		waitFile(t, B, key, text, 30*time.Second)
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	t.Logf("MCP create on A → file on B's disk: p50 %v, max %v (design target: p50 < 3 s)",
		took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))

	// B → A: B saves an edit on disk, watch pushes it (after its 2 s
	// debounce) and A's subscription hears of it.
	const uri = "teammem://acme/widgets/team/live-0.md"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	const edited = "# Live 0\nedited on B's disk\n"
	start := time.Now()
	b.write(B, "team/live-0.md", edited)
	deadline := time.After(30 * time.Second)
	for heard := false; !heard; {
		select {
		case got := <-updated:
			heard = got == uri
		case <-deadline:
			t.Fatalf("no notifications/resources/updated for %s within 30 s of B's edit", uri)
		}
	}
	t.Logf("edit saved on B → resources/updated on A's session: %v (2 s debounce included)", time.Since(start).Round(time.Millisecond))
	contains(t, call("view", map[string]any{"path": "/memories/team/live-0.md"}), "edited on B's disk")
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != edited {
		t.Fatalf("resources/read %s after B's edit: %v %v", uri, res, err)
	}
}
