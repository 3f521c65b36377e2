package mcprelay_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/teammem/teammem/internal/client/mcprelay"
	"github.com/teammem/teammem/internal/teammem"
)

const key = "tm_test_key"

// upstream is a real MCP server over Streamable HTTP on a loopback
// listener, behind a bearer check, standing in for teammem's /mcp: the
// relay is tested on the transport alone.
type upstream struct {
	url      string
	server   *mcp.Server
	mu       sync.Mutex
	clients  []string
	deletes  int // DELETEs of a session: clients saying goodbye
	canceled chan struct{}
}

type pathArgs struct {
	Path     string `json:"path"`
	FileText string `json:"file_text,omitempty"`
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{canceled: make(chan struct{}, 1)}
	u.server = mcp.NewServer(&mcp.Implementation{Name: "upstream"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			u.mu.Lock()
			defer u.mu.Unlock()
			u.clients = append(u.clients, req.Session.InitializeParams().ClientInfo.Name)
		},
	})
	mcp.AddTool(u.server, &mcp.Tool{Name: "create"}, func(_ context.Context, _ *mcp.CallToolRequest, a pathArgs) (*mcp.CallToolResult, any, error) {
		if strings.Contains(a.FileText, "refuse") {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "refused"}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "File created successfully at: " + a.Path}}}, nil, nil
	})
	mcp.AddTool(u.server, &mcp.Tool{Name: "view"}, func(_ context.Context, _ *mcp.CallToolRequest, a pathArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "viewed " + a.Path}}}, nil, nil
	})
	mcp.AddTool(u.server, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ pathArgs) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		u.canceled <- struct{}{}
		return nil, nil, ctx.Err()
	})
	u.server.AddResource(&mcp.Resource{URI: "teammem://acme/app/team/MEMORY.md", Name: "MEMORY.md", MIMEType: "text/markdown"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "- index\n"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.server }, nil)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+"http://"+r.Host+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "a teammem key is required", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodDelete {
			u.mu.Lock()
			u.deletes++
			u.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	u.url = s.URL + "/mcp?repo=acme/app"
	return u
}

// agent runs a relay between an SDK client (the agent, on pipes standing
// in for stdio) and the upstream.
func agent(t *testing.T, u *upstream, k string, changed func(context.Context, []teammem.Scope), opts *mcp.ClientOptions) (*mcp.ClientSession, <-chan error) {
	t.Helper()
	agentIn, relayOut := io.Pipe()
	relayIn, agentOut := io.Pipe()
	r := &mcprelay.Relay{Endpoint: u.url, Key: k, HTTP: &http.Client{}, In: relayIn, Out: relayOut, Log: io.Discard, Changed: changed}
	done := make(chan error, 1)
	go func() { done <- r.Run(t.Context()); relayOut.Close() }()
	c := mcp.NewClient(&mcp.Implementation{Name: "codex", Version: "1.2"}, opts)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: agentIn, Writer: agentOut}, nil)
	if err != nil {
		agentOut.Close()
		return nil, done
	}
	t.Cleanup(func() { cs.Close() })
	return cs, done
}

func TestRelayForwardsASession(t *testing.T) {
	u := newUpstream(t)
	var mu sync.Mutex
	var pulls [][]teammem.Scope
	updated := make(chan string, 1)
	cs, _ := agent(t, u, key, func(_ context.Context, s []teammem.Scope) {
		mu.Lock()
		defer mu.Unlock()
		pulls = append(pulls, s)
	}, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updated <- req.Params.URI
	}})
	if cs == nil {
		t.Fatal("the agent could not initialize through the relay")
	}
	ctx := t.Context()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"create", "slow", "view"}) {
		t.Fatalf("tools through the relay: %v", names)
	}
	u.mu.Lock()
	clients := slices.Clone(u.clients)
	u.mu.Unlock()
	if !slices.Equal(clients, []string{"codex"}) {
		t.Fatalf("the server should meet the agent's own clientInfo: %v", clients)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create", Arguments: map[string]any{"path": "/memories/team/a.md", "file_text": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("create: %v %v", res, err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "File created successfully at: /memories/team/a.md" {
		t.Fatalf("create's result: %q", got)
	}
	// A view and a refused create pull nothing.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": "/memories/personal"}}); err != nil {
		t.Fatal(err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "create", Arguments: map[string]any{"path": "/memories/personal/b.md", "file_text": "refuse"}})
	if err != nil || !res.IsError {
		t.Fatalf("a refused create should come back as a tool error: %v %v", res, err)
	}
	waitFor(t, "the pull after the create", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(pulls) > 0
	})
	mu.Lock()
	if len(pulls) != 1 || !slices.Equal(pulls[0], []teammem.Scope{teammem.ScopeTeam}) {
		t.Fatalf("pulls: %v", pulls)
	}
	mu.Unlock()

	// The server's own messages reach the agent over the standalone stream.
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "teammem://acme/app/team/MEMORY.md"}); err != nil {
		t.Fatal(err)
	}
	if err := u.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "teammem://acme/app/team/MEMORY.md"}); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updated:
		if uri != "teammem://acme/app/team/MEMORY.md" {
			t.Fatalf("updated %q", uri)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no resources/updated reached the agent")
	}

	// Cancelling a call reaches the server's handler.
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"path": "/memories"}})
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond) // let the call reach the server before it is cancelled
	cancel()
	select {
	case <-u.canceled:
	case <-time.After(30 * time.Second):
		t.Fatal("the cancellation never reached the server")
	}
	if err := <-errc; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
}

// TestRelayEndsOnSignal cancels the relay's context (as SIGINT does
// `teammem mcp`'s) while the agent keeps stdin open: Run returns anyway,
// and says goodbye to the server. Claude Code signals its stdio servers
// before it closes their input, and kills them half a second later.
func TestRelayEndsOnSignal(t *testing.T) {
	u := newUpstream(t)
	agentIn, relayOut := io.Pipe()
	relayIn, agentOut := io.Pipe()
	t.Cleanup(func() { agentOut.Close(); relayOut.Close() })
	ctx, cancel := context.WithCancel(t.Context())
	r := &mcprelay.Relay{Endpoint: u.url, Key: key, HTTP: &http.Client{}, In: relayIn, Out: relayOut, Log: io.Discard}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "2"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: agentIn, Writer: agentOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after the signal: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended, with the agent's input still open")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.deletes != 1 {
		t.Fatalf("the relay ended %d server sessions, want 1", u.deletes)
	}
}

func TestRelayWrongKey(t *testing.T) {
	u := newUpstream(t)
	cs, _ := agent(t, u, "tm_wrong", nil, nil)
	if cs != nil {
		t.Fatal("a wrong key initialized a session")
	}
}

func TestScopeOf(t *testing.T) {
	for path, want := range map[string]teammem.Scope{
		"/memories/team/a.md": teammem.ScopeTeam, "/memories/personal/x/y.md": teammem.ScopePersonal,
		"/memories/team": teammem.ScopeTeam, "/memories": "", "/memories/other/a.md": "", "team/a.md": "",
	} {
		got, ok := mcprelay.ScopeOf(path)
		if got != want || ok != (want != "") {
			t.Errorf("ScopeOf(%q) = %q, %v", path, got, ok)
		}
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// An agent that closes its input right after a write (a one-shot client
// such as the MCP Inspector's CLI) still gets the pull of what it wrote:
// Run returns only after it, and the pull's context outlives the input.
func TestRelayPullsAfterTheLastWrite(t *testing.T) {
	u := newUpstream(t)
	var mu sync.Mutex
	var pulls [][]teammem.Scope
	var errs []error
	cs, done := agent(t, u, key, func(ctx context.Context, s []teammem.Scope) {
		// A pull talks to the server, as the real one does.
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(u.url, "/mcp?repo=acme/app")+"/pull", nil)
		if err == nil {
			var res *http.Response
			if res, err = http.DefaultClient.Do(req); err == nil {
				_, err = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}
		mu.Lock()
		defer mu.Unlock()
		pulls, errs = append(pulls, s), append(errs, err)
	}, nil)
	if cs == nil {
		t.Fatal("the agent could not initialize through the relay")
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "create", Arguments: map[string]any{"path": "/memories/personal/a.md", "file_text": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("create: %v %v", res, err)
	}
	cs.Close() // closes the relay's input
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the relay did not end after its input closed")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(pulls) != 1 || !slices.Equal(pulls[0], []teammem.Scope{teammem.ScopePersonal}) || errs[0] != nil {
		t.Fatalf("pulls before Run returned: %v (errors %v)", pulls, errs)
	}
}
