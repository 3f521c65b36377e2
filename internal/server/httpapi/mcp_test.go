package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// bearer adds a teammem key to every request of an MCP client.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect opens an MCP session with the Go SDK's client at path.
func mcpConnect(t *testing.T, e *v1Env, path, key string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1.2"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: e.url + path,
		HTTPClient: &http.Client{Transport: bearer{key}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callText calls a tool and returns its text and whether it is an error.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func TestMCPMemoryCommands(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		cs := mcpConnect(t, e, "/mcp?repo=acme/widgets", e.keys[teammem.RoleMember])
		tools, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range tools.Tools {
			names = append(names, tl.Name)
		}
		if got := strings.Join(names, ","); !strings.Contains(got, "create") || !strings.Contains(got, "str_replace") || !strings.Contains(got, "recent") {
			t.Fatalf("tools = %s", got)
		}
		steps := []struct {
			tool    string
			args    map[string]any
			want    string
			wantErr bool
		}{
			{"create", map[string]any{"path": "/memories/team/notes/go.md", "file_text": "one\ntwo\nthree"}, "File created successfully at: /memories/team/notes/go.md", false},
			{"create", map[string]any{"path": "/memories/team/notes/go.md", "file_text": "x"}, "File /memories/team/notes/go.md already exists", true},
			{"view", map[string]any{"path": "/memories/team/notes/go.md", "view_range": []int{2, 3}}, "Here's the content of /memories/team/notes/go.md with line numbers:\n     2\ttwo\n     3\tthree", false},
			{"str_replace", map[string]any{"path": "/memories/team/notes/go.md", "old_str": "two", "new_str": "TWO"}, "The memory file has been edited.", false},
			{"str_replace", map[string]any{"path": "/memories/team/notes/go.md", "old_str": "nope", "new_str": "x"}, "No replacement was performed, old_str `nope` did not appear verbatim in /memories/team/notes/go.md.", true},
			{"str_replace", map[string]any{"path": "/memories/team/notes/go.md", "old_str": "e", "new_str": "x"}, "Multiple occurrences of old_str `e` in lines: 1, 3.", true},
			{"insert", map[string]any{"path": "/memories/team/notes/go.md", "insert_line": 0, "insert_text": "zero\n"}, "The file /memories/team/notes/go.md has been edited.", false},
			{"view", map[string]any{"path": "/memories"}, "/memories/team/notes/", false},
			{"rename", map[string]any{"old_path": "/memories/team/notes/go.md", "new_path": "/memories/team/go.md"}, "Successfully renamed /memories/team/notes/go.md to /memories/team/go.md", false},
			{"view", map[string]any{"path": "/memories/team/go.md"}, "     1\tzero\n     2\tone\n     3\tTWO", false},
			{"delete", map[string]any{"path": "/memories/team/go.md"}, "Successfully deleted /memories/team/go.md", false},
			{"view", map[string]any{"path": "/memories/team/go.md"}, "The path /memories/team/go.md does not exist. Please provide a valid path.", true},
			{"view", map[string]any{"path": "/etc"}, "Path must start with /memories, got: /etc", true},
			{"create", map[string]any{"path": "/memories/team/a.md", "file_text": "x", "repo": "acme/other"}, "bound to repo acme/widgets", true},
		}
		for _, s := range steps {
			got, isErr := callText(t, cs, s.tool, s.args)
			if isErr != s.wantErr || !strings.Contains(got, s.want) {
				t.Fatalf("%s %v = %q (error %v), want %q (error %v)", s.tool, s.args, got, isErr, s.want, s.wantErr)
			}
		}
		// Provenance: the dialect and the client's handshake name.
		r := e.do("GET", "/v1/repos/acme/widgets/team/entries/go.md/history", e.keys[teammem.RoleMember], nil).want(t, http.StatusOK)
		if body := string(r.Body); !strings.Contains(body, `"mcp"`) || !strings.Contains(body, "test-agent/1.2") {
			t.Fatalf("history = %s", body)
		}
	})
}

func TestMCPWrongKey(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), nil)
	r := e.do("POST", "/mcp", "not-a-key", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		"Content-Type", "application/json", "Accept", "application/json, text/event-stream").want(t, http.StatusUnauthorized)
	want := `Bearer resource_metadata="` + e.url + `/.well-known/oauth-protected-resource/mcp"`
	if got := r.Header.Get("WWW-Authenticate"); got != want {
		t.Fatalf("WWW-Authenticate = %q, want %q", got, want)
	}
	m := e.do("GET", "/.well-known/oauth-protected-resource/mcp", "", nil).want(t, http.StatusOK).JSON(t)
	if m["resource"] != e.url+"/mcp" || m["authorization_servers"] != nil {
		t.Fatalf("metadata = %v", m)
	}
	// Another key on a session it did not open.
	cs := mcpConnect(t, e, "/mcp", e.keys[teammem.RoleMember])
	e.do("POST", "/mcp", e.keys[teammem.RoleAdmin], `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Mcp-Session-Id", cs.ID()).want(t, http.StatusNotFound)
	// Without a bound repo a call must name one.
	if got, isErr := callText(t, cs, "view", map[string]any{"path": "/memories"}); !isErr || !strings.Contains(got, "name a repo") {
		t.Fatalf("view without repo = %q", got)
	}
	if got, isErr := callText(t, cs, "view", map[string]any{"path": "/memories", "repo": "acme/widgets"}); isErr {
		t.Fatalf("view with a repo argument = %q", got)
	}
}

// TestMCPSubscriptionEndsOnRevocation: an MCP session subscribed to a
// resource kept hearing of its changes after its key was revoked, as event
// streams once did. Now the next change ends that session instead, while
// another session of the same user, on a valid key, hears of it.
func TestMCPSubscriptionEndsOnRevocation(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, func(c *httpapi.Config) { c.StreamRecheck = time.Hour }) // only events re-check here
		e.do("PUT", team+"/entries/a.md", e.keys[teammem.RoleOwner], "before\n").want(t, 200)
		revoked := MustExtraKey(t, st, e.org, e.users[teammem.RoleMember], true)
		const uri = "teammem://acme/widgets/team/a.md"
		connect := func(key string) (*mcp.ClientSession, chan string) {
			updated := make(chan string, 8)
			c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1.2"}, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI }})
			cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: e.url + "/mcp?repo=acme/widgets",
				HTTPClient: &http.Client{Transport: bearer{key}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatalf("subscribe: %v", err)
			}
			return cs, updated
		}
		gone, goneUpdates := connect(revoked)
		_, keptUpdates := connect(e.keys[teammem.RoleMember])
		keys := e.do("GET", "/v1/org/keys", e.keys[teammem.RoleMember], nil).want(t, 200).JSON(t)["keys"].([]any)
		for _, k := range keys {
			if k := k.(map[string]any); k["read_only"] == true {
				e.do("DELETE", "/v1/org/keys/"+k["id"].(string), e.keys[teammem.RoleMember], nil).want(t, 200)
			}
		}
		e.do("PUT", team+"/entries/a.md", e.keys[teammem.RoleOwner], "after the revocation\n").want(t, 200)
		select {
		case got := <-keptUpdates:
			if got != uri {
				t.Fatalf("the valid session heard of %s, want %s", got, uri)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the session of a valid key heard nothing of the change")
		}
		select {
		case got := <-goneUpdates:
			t.Fatalf("the revoked key's session heard of %s after the revocation", got)
		case <-time.After(time.Second):
		}
		if _, err := gone.ListResources(t.Context(), nil); err == nil {
			t.Error("the revoked key's session still answers")
		}
	})
}
