package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRealClaudeCodeMCP runs the real Claude Code binary (TEAMMEM_CLAUDE_BIN)
// as `claude -p` with `teammem mcp` as its only MCP server, against a real
// teammem server and a fake Anthropic API, all on loopback. The fake model
// first calls mcp__teammem__create with a team memory, then (once the
// tool_result is back) ends the turn with text. The memory must be on the
// server, recorded as written over MCP by Claude Code (the handshake's
// client name), in the local memory directory the relay pulls after the
// write, and on another machine after its sync.
//
// As root the test re-runs itself in a network namespace holding lo alone;
// in any case Claude Code's proxy variables name a loopback proxy that
// refuses everything, so nothing it might send elsewhere leaves.
func TestRealClaudeCodeMCP(t *testing.T) {
	bin := claudeBin(t)
	if loopbackOnly(t) {
		return
	}
	srv := startServer(t)
	const remote = "git@github.com:acme/widgets.git"
	m := newMachine(t, srv, remote)
	mem := m.memDir()
	// The relay pulls into the memory directory only where one exists.
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}

	const (
		toolID  = "toolu_teammem_mcp_1"
		memPath = "/memories/team/mcp-note.md"
		text    = "# From Claude Code\nwritten over teammem mcp by the real binary\n"
		final   = "Saved it to the team memory."
	)
	input, _ := json.Marshal(map[string]string{"path": memPath, "file_text": text})
	var (
		mu        sync.Mutex
		bodies    [][]byte
		offered   bool   // a call named mcp__teammem__create to the model (a tool, or a deferred one for ToolSearch)
		result    string // the tool_result's content, as sent to the model
		resultErr bool
		pulled    bool // the file was in the local memory directory before the last answer
	)
	fake := fakeMessagesFunc(t, func(body []byte) []sseEvent {
		call := parseMessagesCall(body)
		mu.Lock()
		bodies = append(bodies, body)
		if slices.Contains(call.tools, "mcp__teammem__create") || strings.Contains(string(body), "mcp__teammem__create") {
			offered = true
		}
		mu.Unlock()
		if r, ok := call.results[toolID]; ok {
			// claude -p ends with this answer and closes teammem mcp's
			// stdin: the pull the write started must have landed first.
			deadline := time.Now().Add(30 * time.Second)
			for read(t, mem, "team/mcp-note.md") != text && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			mu.Lock()
			result, resultErr = r.content, r.isError
			pulled = read(t, mem, "team/mcp-note.md") == text
			mu.Unlock()
			return textAnswer(final)
		}
		// By default Claude Code defers MCP tools behind ToolSearch, and
		// accepts a call of one the model already knows by name.
		if slices.Contains(call.tools, "mcp__teammem__create") || slices.Contains(call.tools, "ToolSearch") {
			return toolUseAnswer(toolID, "mcp__teammem__create", string(input))
		}
		return textAnswer("ok")
	})

	// Anything Claude Code sends through a proxy meets a refusal on
	// loopback; the fake API and teammem's server are on 127.0.0.1.
	var refused []string
	refuser := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) //nolint:errcheck
		mu.Lock()
		refused = append(refused, r.Method+" "+r.Host)
		mu.Unlock()
		http.Error(w, "no traffic leaves this test", http.StatusForbidden)
	}))
	t.Cleanup(refuser.Close)

	// The teammem server and key reach teammem mcp through the MCP
	// config's env alone: Claude Code itself never has the key.
	cfg := map[string]any{"mcpServers": map[string]any{"teammem": map[string]any{
		"type": "stdio", "command": clientBin, "args": []string{"mcp"},
		"env": map[string]string{"TEAMMEM_SERVER": srv, "TEAMMEM_API_KEY": serverKey, "HOME": m.home,
			"XDG_CONFIG_HOME": filepath.Join(m.home, ".config"), "CLAUDE_CONFIG_DIR": filepath.Join(m.home, ".claude")},
	}}}
	cfgPath := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	debug := filepath.Join(t.TempDir(), "debug.txt")
	cmd := exec.Command(bin, "-p", "Remember for the team that this note was written over MCP.",
		"--mcp-config", cfgPath, "--strict-mcp-config", "--allowedTools", "mcp__teammem__create", "--debug-file", debug)
	cmd.Dir = m.repo
	cmd.Env = slices.DeleteFunc(slices.Clone(m.env), func(e string) bool {
		return strings.HasPrefix(e, "TEAMMEM_") || strings.HasPrefix(e, "ANTHROPIC_") || strings.HasPrefix(e, "CLAUDE_CODE_") ||
			strings.HasPrefix(strings.ToUpper(e), "HTTP_PROXY=") || strings.HasPrefix(strings.ToUpper(e), "HTTPS_PROXY=") ||
			strings.HasPrefix(strings.ToUpper(e), "NO_PROXY=")
	})
	cmd.Env = append(cmd.Env, "ANTHROPIC_BASE_URL="+fake.url, "ANTHROPIC_API_KEY="+fakeAnthropicKey,
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		// -p starts the first turn before --mcp-config servers connect
		// unless told to wait for them.
		"MCP_CONNECTION_NONBLOCKING=0",
		"HTTPS_PROXY="+refuser.URL, "HTTP_PROXY="+refuser.URL, "https_proxy="+refuser.URL, "http_proxy="+refuser.URL,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	out, err := runBounded(cmd, 120*time.Second)
	db, _ := os.ReadFile(debug)
	if err != nil {
		t.Fatalf("claude -p with teammem mcp: %v\n%s\nMCP lines of the debug log:\n%s", err, out, mcpLines(string(db)))
	}
	t.Logf("claude said: %s\nMCP lines of its debug log:\n%s", strings.TrimSpace(out), mcpLines(string(db)))
	// At the end Claude Code sends its stdio servers SIGINT, then SIGTERM
	// and SIGKILL a moment later to one still running.
	if strings.Contains(string(db), "SIGINT failed") {
		t.Errorf("teammem mcp outlived Claude Code's SIGINT")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refused) > 0 {
		t.Logf("refused at the loopback proxy: %v", refused)
	}
	if !offered {
		var offers [][]string
		for _, b := range bodies {
			offers = append(offers, parseMessagesCall(b).tools)
		}
		t.Fatalf("no Messages call offered mcp__teammem__create: teammem mcp's tools never reached the model (the calls offered %v)", offers)
	}
	if result == "" || resultErr || !strings.Contains(result, "File created successfully at: "+memPath) {
		t.Fatalf("the tool_result the model got = %q (is_error %v), want the create's success", result, resultErr)
	}
	contains(t, out, final)
	for _, b := range bodies {
		if strings.Contains(string(b), serverKey) {
			t.Fatal("a Messages call carries the teammem key")
		}
	}

	// Provenance: written over MCP, by the client the handshake named.
	req, _ := http.NewRequest(http.MethodGet, srv+"/v1/repos/acme/widgets/team/entries/mcp-note.md/history", nil)
	req.Header.Set("Authorization", "Bearer "+serverKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var h struct {
		Versions []struct {
			Op       string `json:"op"`
			API      string `json:"api"`
			ClientID string `json:"client_id"`
		} `json:"versions"`
	}
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil || res.StatusCode != http.StatusOK || len(h.Versions) != 1 {
		t.Fatalf("history: %d %v %+v", res.StatusCode, err, h)
	}
	v := h.Versions[0]
	t.Logf("history: %+v", v)
	if v.API != "mcp" || !strings.HasPrefix(v.ClientID, claudeMCPClient+"/") || !strings.HasSuffix(v.ClientID, "/2.1.332") {
		t.Fatalf("provenance = api %q client %q, want api mcp and client %s/<Claude Code's version>", v.API, v.ClientID, claudeMCPClient)
	}

	// The relay pulled the written scope on this machine; another machine
	// gets it from the server.
	if !pulled {
		t.Fatalf("the written memory was not pulled into this machine's memory directory: %q", read(t, mem, "team/mcp-note.md"))
	}
	other := newMachine(t, srv, remote)
	other.must("sync")
	if got := read(t, other.memDir(), "team/mcp-note.md"); got != text {
		t.Fatalf("another machine's sync got %q", got)
	}
}

// claudeMCPClient is the client name Claude Code gives in the MCP
// handshake.
const claudeMCPClient = "claude-code"

// messagesCall is what the fake model reads of a Messages call: the tools
// offered and the tool results sent back, by tool_use id.
type messagesCall struct {
	tools   []string
	results map[string]toolResult
}

type toolResult struct {
	content string // the text of the result
	isError bool
}

func parseMessagesCall(body []byte) messagesCall {
	var req struct {
		Tools    []struct{ Name string } `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	c := messagesCall{results: map[string]toolResult{}}
	if json.Unmarshal(body, &req) != nil {
		return c
	}
	for _, tl := range req.Tools {
		c.tools = append(c.tools, tl.Name)
	}
	for _, msg := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(msg.Content, &blocks) != nil {
			continue // a plain string
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			var text string
			if json.Unmarshal(b.Content, &text) != nil {
				var parts []struct{ Text string }
				json.Unmarshal(b.Content, &parts) //nolint:errcheck
				for _, p := range parts {
					text += p.Text
				}
			}
			c.results[b.ToolUseID] = toolResult{content: text, isError: b.IsError}
		}
	}
	return c
}

// mcpLines keeps the lines of a claude debug log about MCP.
func mcpLines(log string) string {
	var b strings.Builder
	for l := range strings.SplitSeq(log, "\n") {
		if strings.Contains(l, "[MCP]") || strings.Contains(l, `MCP server "`) || strings.Contains(l, "mcp__") {
			b.WriteString("  " + strings.TrimSpace(l) + "\n")
		}
	}
	return b.String()
}
