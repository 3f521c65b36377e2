package main_test

import (
	"context"
	"errors"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/teammem/teammem/internal/testing/secrettest"
)

// stdioSession connects the official Go SDK's client to the built
// `teammem mcp` of machine m, as an agent does over stdio.
func stdioSession(t *testing.T, ctx context.Context, m *machine, opts *mcp.ClientOptions, env ...string) (*mcp.ClientSession, *syncBuffer, error) {
	t.Helper()
	cmd := exec.Command(clientBin, "mcp")
	cmd.Dir, cmd.Env = m.repo, append(slices.Clone(m.env), env...)
	logs := &syncBuffer{}
	cmd.Stderr = logs
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "0.9"}, opts).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, logs, err
}

// toolText calls a tool and returns its text and whether it is an error.
func toolText(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var out strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out.WriteString(tc.Text)
		}
	}
	return out.String(), res.IsError
}

// putRaw writes one entry over /v1 with key, as another client would.
func putRaw(t *testing.T, server, key, path, content string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, server+path, strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT %s: %d", path, resp.StatusCode)
	}
}

// TestMCPStdio drives `teammem mcp`, the stdio transport, with the
// official Go SDK against the built server, as TestMCPMemoryCommands does
// the HTTP one: tools and resources listed, every command, search and
// recent, a resource-change notification from another client's write, a
// secret refused and stored nowhere, a held write, cancellation, and a
// wrong key.
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	const remote = "git@github.com:acme/widgets.git"
	m := newMachine(t, srv, remote)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	updated := make(chan string, 16)
	cs, logs, err := stdioSession(t, ctx, m, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updated <- req.Params.URI
	}})
	if err != nil {
		t.Fatalf("connecting to teammem mcp: %v\n%s", err, logs.String())
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if want := []string{"create", "delete", "insert", "recent", "rename", "search", "str_replace", "view"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	steps := []struct {
		tool    string
		args    map[string]any
		want    string
		wantErr bool
	}{
		{"create", map[string]any{"path": "/memories/team/notes/go.md", "file_text": "zero\none\ntwo\n"}, "File created successfully at: /memories/team/notes/go.md", false},
		{"str_replace", map[string]any{"path": "/memories/team/notes/go.md", "old_str": "two", "new_str": "TWO"}, "The memory file has been edited.", false},
		{"insert", map[string]any{"path": "/memories/team/notes/go.md", "insert_line": 0, "insert_text": "first\n"}, "The file /memories/team/notes/go.md has been edited.", false},
		{"view", map[string]any{"path": "/memories/team/notes/go.md"}, "     1\tfirst\n     2\tzero\n     3\tone\n     4\tTWO", false},
		{"rename", map[string]any{"old_path": "/memories/team/notes/go.md", "new_path": "/memories/team/go.md"}, "Successfully renamed /memories/team/notes/go.md to /memories/team/go.md", false},
		{"create", map[string]any{"path": "/memories/personal/mine.md", "file_text": "my own zero\n"}, "File created successfully at: /memories/personal/mine.md", false},
		{"view", map[string]any{"path": "/memories"}, "/memories/team/go.md", false},
		{"search", map[string]any{"query": "zero"}, "[[zero]]", false},
		{"recent", map[string]any{}, "go.md", false},
		{"delete", map[string]any{"path": "/memories/personal/mine.md"}, "Successfully deleted /memories/personal/mine.md", false},
		{"view", map[string]any{"path": "/memories/personal/mine.md"}, "The path /memories/personal/mine.md does not exist. Please provide a valid path.", true},
	}
	for _, s := range steps {
		if got, isErr := toolText(t, ctx, cs, s.tool, s.args); isErr != s.wantErr || !strings.Contains(got, s.want) {
			t.Fatalf("%s %v = %q (error %v), want %q (error %v)", s.tool, s.args, got, isErr, s.want, s.wantErr)
		}
	}
	// Resources, and a subscriber told of another client's write.
	const uri = "teammem://acme/widgets/team/go.md"
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Resources, func(r *mcp.Resource) bool { return r.URI == uri }) {
		t.Fatalf("resources lack %s: %v", uri, res.Resources)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	putRaw(t, srv, serverKey, "/v1/repos/acme/widgets/team/entries/go.md", "changed elsewhere\n")
	select {
	case got := <-updated:
		if got != uri {
			t.Fatalf("updated %s, want %s", got, uri)
		}
	case <-ctx.Done():
		t.Fatal("no notifications/resources/updated after another client's write")
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "changed elsewhere\n" {
		t.Fatalf("read %s = %v, %v", uri, read, err)
	}
	// A secret is refused, never repeated, and stored nowhere.
	secret := secrettest.Token("github-pat")
	got, isErr := toolText(t, ctx, cs, "create", map[string]any{"path": "/memories/team/token.md", "file_text": "token: " + secret + "\n"})
	if !isErr || !strings.Contains(got, "secret") || strings.Contains(got, secret) {
		t.Fatalf("create with a secret = %q (error %v)", got, isErr)
	}
	if got, isErr := toolText(t, ctx, cs, "view", map[string]any{"path": "/memories/team/token.md"}); !isErr {
		t.Fatalf("the refused file is there: %q", got)
	}
	// Cancellation: a call whose context ends is abandoned, and the
	// session goes on.
	cctx, ccancel := context.WithCancel(ctx)
	ccancel()
	if _, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "zero"}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a canceled call: %v", err)
	}
	if got, isErr := toolText(t, ctx, cs, "view", map[string]any{"path": "/memories/team/go.md"}); isErr || !strings.Contains(got, "changed elsewhere") {
		t.Fatalf("after a canceled call: %q (error %v)", got, isErr)
	}

	// A member's write under team_writes: review is held, and says so.
	v1Do(t, srv, serverKey, http.MethodPost, "/v1/org/users", map[string]any{"handle": "dev", "role": "member"}, 201, nil)
	var created struct {
		Key string `json:"key"`
	}
	v1Do(t, srv, serverKey, http.MethodPost, "/v1/org/keys", map[string]any{"user": "dev", "name": "agent"}, 201, &created)
	v1Do(t, srv, serverKey, http.MethodPatch, "/v1/org", map[string]any{"team_writes": "review"}, 200, nil)
	dev, _, err := stdioSession(t, ctx, m, nil, "TEAMMEM_API_KEY="+created.Key)
	if err != nil {
		t.Fatal(err)
	}
	if got, isErr := toolText(t, ctx, dev, "create", map[string]any{"path": "/memories/team/held.md", "file_text": "please review\n"}); isErr || !strings.Contains(got, "Held for review") || !strings.Contains(got, "proposal") {
		t.Fatalf("a member's held create = %q (error %v)", got, isErr)
	}
	if got, isErr := toolText(t, ctx, dev, "view", map[string]any{"path": "/memories/team/held.md"}); !isErr {
		t.Fatalf("the held file is live: %q", got)
	}

	// A wrong key gets no session, and the key is not shown.
	if _, logs, err := stdioSession(t, ctx, m, nil, "TEAMMEM_API_KEY=tmk_wrongwrong_0123456789abcdefghijklmnop"); err == nil {
		t.Fatal("a wrong key opened a session")
	} else if strings.Contains(err.Error()+logs.String(), "tmk_wrongwrong") {
		t.Fatalf("the wrong key is shown: %v %s", err, logs.String())
	}
}
