package llm

import (
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"
)

// reply is one canned HTTP answer of a fake provider.
type reply struct {
	status int
	header map[string]string
	body   string
	// block makes the handler wait for the client to go away, signalling
	// arrived first; for timeout and cancellation tests.
	block bool
}

// fake is an in-process provider endpoint that records what it receives
// and answers with canned replies in the provider's wire format.
type fake struct {
	srv     *httptest.Server
	path    string
	arrived chan struct{}

	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	replies []reply
}

func newFake(t *testing.T, path string, replies ...reply) *fake {
	t.Helper()
	f := &fake{path: path, replies: replies, arrived: make(chan struct{}, 16)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != f.path {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	rep := f.replies[min(n, len(f.replies)-1)] // the last reply repeats
	f.mu.Unlock()
	f.arrived <- struct{}{}
	if rep.block {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second): // a bound for a broken client, not an expectation
		}
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(cmp.Or(rep.status, http.StatusOK))
	io.WriteString(w, rep.body)
}

// requests returns how many requests arrived.
func (f *fake) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// body returns request i decoded as generic JSON.
func (f *fake) body(t *testing.T, i int) map[string]any {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.bodies) {
		t.Fatalf("request %d never arrived (%d did)", i, len(f.bodies))
	}
	var m map[string]any
	if err := json.Unmarshal(f.bodies[i], &m); err != nil {
		t.Fatalf("request %d is not JSON: %v\n%s", i, err, f.bodies[i])
	}
	return m
}

func (f *fake) header(i int) http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers[i]
}

// fastBackoff keeps retry tests quick; the policy's shape is tested on its own.
var fastBackoff = backoffPolicy{base: time.Millisecond, max: 2 * time.Millisecond, jitter: func() float64 { return 0 }}

// testBundle is a model wired to a fake provider.
type testBundle struct {
	fake  *fake
	model Model
}

// setup starts a fake for provider and a model pointed at it. cfg supplies
// optional settings; Provider, Model, BaseURL and a key are filled in.
func setup(t *testing.T, provider string, cfg Config, replies ...reply) testBundle {
	t.Helper()
	cfg.Provider = provider
	cfg.Model = cmp.Or(cfg.Model, "test-model")
	cfg.APIKey = cmp.Or(cfg.APIKey, "sk-test-secret-key")
	var f *fake
	if provider == ProviderAnthropic {
		f = newFake(t, "/v1/messages", replies...)
		cfg.BaseURL = f.srv.URL
	} else {
		f = newFake(t, "/v1/chat/completions", replies...)
		cfg.BaseURL = f.srv.URL + "/v1"
	}
	m, err := newModel(cfg, fastBackoff)
	if err != nil {
		t.Fatalf("newModel: %v", err)
	}
	return testBundle{fake: f, model: m}
}

// assertJSON fails unless got, re-encoded, equals the JSON text want.
func assertJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	raw, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var g, w any
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got  %s\n want %s", what, raw, want)
	}
}

// userText is a one-block user message.
func userText(s string) Message {
	return Message{Role: RoleUser, Content: []Block{TextBlock(s)}}
}

// readTool is the tool the round-trip tests offer.
var readTool = Tool{
	Name:        "read_file",
	Description: "Read a file in the memory directory.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","maxLength":200}},"required":["path"],"additionalProperties":false}`),
}
