// Package mcprelay relays an MCP session between a local agent on stdio
// and teammem's remote MCP endpoint (/mcp, the Streamable HTTP transport),
// message for message: the tools, resources and notifications all live in
// the server, so `teammem mcp` and a remote agent get one implementation.
// The relay adds what only the machine can do: after a write tool call
// succeeds, it tells its caller the scope changed, so that the local
// memory directory is pulled and Claude Code on this machine sees it.
package mcprelay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// Relay is one agent's session. Endpoint is the server's /mcp URL (with
// ?repo= when the session is bound to a repository) and Key the teammem
// key sent as a bearer token. In and Out are the agent's stdio: one
// JSON-RPC message per line. Log receives the relay's own diagnostics,
// never Out, which is the protocol channel.
type Relay struct {
	Endpoint string
	Key      string
	HTTP     *http.Client
	In       io.Reader
	Out      io.Writer
	Log      io.Writer
	// Changed, when set, is called (from its own goroutine, one at a time)
	// after a write tool call succeeded, with the scopes it wrote. Run
	// returns only after the calls for the writes answered before the
	// agent closed its input.
	Changed func(ctx context.Context, scopes []teammem.Scope)

	outMu   sync.Mutex
	mu      sync.Mutex
	session string // Mcp-Session-Id, once the server gave one
	version string // the negotiated protocol version
	writes  map[string][]teammem.Scope
	changes chan []teammem.Scope
}

// MaxLine bounds one message from the agent.
const MaxLine = 16 << 20

// message is the part of a JSON-RPC message the relay reads; the message
// itself is forwarded as it came.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// Run relays until the agent closes its input or ctx ends, then ends the
// server's session. It returns an error only for a relay that could not
// work at all (the agent's input unreadable); a failed request is answered
// to the agent as a JSON-RPC error.
func (r *Relay) Run(ctx context.Context) error {
	// Pulls run under the caller's ctx, not the session's: an agent that
	// closes its input right after a write still gets what it wrote pulled.
	outer := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.writes = map[string][]teammem.Scope{}
	r.changes = make(chan []teammem.Scope, 64)
	inputDone := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	if r.Changed != nil {
		wg.Go(func() {
			for {
				select {
				case <-outer.Done():
					return
				case s := <-r.changes:
					r.Changed(outer, s)
				case <-inputDone:
					// Every answer is out: the pulls queued are the last.
					for {
						select {
						case s := <-r.changes:
							r.Changed(outer, s)
						default:
							return
						}
					}
				}
			}
		})
	}
	// The agent's input is read on its own goroutine, so that a signal
	// (ctx) ends the relay at once even while stdin stays open: an agent
	// may signal its server before closing the pipe, and kill it soon
	// after. A read still blocked then ends with the process.
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		in := bufio.NewScanner(r.In)
		in.Buffer(make([]byte, 64<<10), MaxLine)
		for in.Scan() {
			line := bytes.TrimSpace(in.Bytes())
			if len(line) == 0 {
				continue
			}
			select {
			case lines <- bytes.Clone(line):
			case <-ctx.Done():
				return
			}
		}
		readErr <- in.Err()
	}()
	var calls sync.WaitGroup
	for msg := range r.messages(ctx, lines) {
		var m message
		if err := json.Unmarshal(msg, &m); err != nil {
			r.reply(nil, -32700, "parse error: "+err.Error())
			continue
		}
		r.noteWrite(m)
		if m.Method == "initialize" || m.Method == "" || len(m.ID) == 0 {
			// The session id comes with initialize's answer: nothing else
			// may go out before it. Notifications and the agent's answers
			// keep their place among the messages too (initialized before
			// the first request, a cancellation after its request); the
			// transport accepts them at once (202).
			r.post(ctx, msg, m)
		} else {
			// A request may take long: the next ones do not wait for it.
			calls.Go(func() { r.post(ctx, msg, m) })
		}
		if m.Method == "notifications/initialized" {
			wg.Go(func() { r.listen(ctx) })
		}
	}
	calls.Wait()
	close(inputDone)
	r.end()
	cancel()
	select {
	case err := <-readErr:
		if err != nil {
			return fmt.Errorf("reading the agent's messages: %w", err)
		}
	default:
	}
	return nil
}

// messages yields the agent's messages until its input ends or ctx does.
func (r *Relay) messages(ctx context.Context, lines <-chan []byte) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for {
			select {
			case <-ctx.Done():
				return
			case line, ok := <-lines:
				if !ok || !yield(line) {
					return
				}
			}
		}
	}
}

// post sends one message from the agent and relays what answers it.
func (r *Relay) post(ctx context.Context, body []byte, m message) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.Endpoint, bytes.NewReader(body))
	if err != nil {
		r.fail(m, err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	r.headers(req)
	res, err := r.HTTP.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			r.fail(m, err)
		}
		return
	}
	defer res.Body.Close()
	if m.Method == "initialize" {
		r.mu.Lock()
		r.session = res.Header.Get("Mcp-Session-Id")
		r.mu.Unlock()
	}
	switch ct := res.Header.Get("Content-Type"); {
	case res.StatusCode == http.StatusAccepted:
	case res.StatusCode >= 300:
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
		r.fail(m, fmt.Errorf("the teammem server answered %s: %s", res.Status, strings.TrimSpace(string(b))))
	case strings.HasPrefix(ct, "text/event-stream"):
		r.events(res.Body)
	default:
		b, err := io.ReadAll(io.LimitReader(res.Body, MaxLine))
		if err != nil {
			r.fail(m, err)
			return
		}
		r.deliver(b)
	}
}

// listen opens the stream of the server's own messages (notifications
// such as resources/updated) and relays it while the session lasts.
func (r *Relay) listen(ctx context.Context) {
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.Endpoint, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		r.headers(req)
		res, err := r.HTTP.Do(req)
		if err != nil {
			return
		}
		ok := res.StatusCode == http.StatusOK && strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream")
		if ok {
			r.events(res.Body)
		}
		res.Body.Close()
		if !ok {
			return // the server offers no such stream (405) or refused it
		}
	}
}

// end closes the server's session, as the transport asks of a client
// that is done.
func (r *Relay) end() {
	r.mu.Lock()
	id := r.session
	r.mu.Unlock()
	if id == "" {
		return
	}
	// The relay's context may be over (a signal): the goodbye gets a
	// short one of its own.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, r.Endpoint, nil)
	if err != nil {
		return
	}
	r.headers(req)
	if res, err := r.HTTP.Do(req); err == nil {
		res.Body.Close()
	}
}

// headers sets the key, the session and the protocol version.
func (r *Relay) headers(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+r.Key)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.session != "" {
		req.Header.Set("Mcp-Session-Id", r.session)
	}
	if r.version != "" {
		req.Header.Set("Mcp-Protocol-Version", r.version)
	}
}

// events relays the data of each server-sent event.
func (r *Relay) events(body io.Reader) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				r.deliver([]byte(strings.Join(data, "\n")))
			}
			data = data[:0]
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if len(data) > 0 {
		r.deliver([]byte(strings.Join(data, "\n")))
	}
}

// deliver writes one message from the server to the agent, noting the
// protocol version initialize agreed on and the writes that succeeded.
func (r *Relay) deliver(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		r.logf("teammem mcp: the server sent a message that is not JSON: %v", err)
		return
	}
	var m message
	if json.Unmarshal(compact.Bytes(), &m) == nil && len(m.ID) > 0 && m.Method == "" {
		r.answered(m)
	}
	r.outMu.Lock()
	defer r.outMu.Unlock()
	compact.WriteByte('\n')
	if _, err := r.Out.Write(compact.Bytes()); err != nil {
		r.logf("teammem mcp: writing to the agent: %v", err)
	}
}

// reply answers the agent with a JSON-RPC error of the relay's own.
func (r *Relay) reply(id json.RawMessage, code int, text string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": text}})
	r.deliver(b)
}

// fail answers a request that could not be relayed; a notification's
// failure is only logged.
func (r *Relay) fail(m message, err error) {
	if len(m.ID) == 0 {
		r.logf("teammem mcp: %s: %v", m.Method, err)
		return
	}
	r.reply(m.ID, -32603, err.Error())
}

func (r *Relay) logf(format string, args ...any) {
	if r.Log != nil {
		fmt.Fprintf(r.Log, format+"\n", args...)
	}
}
