package main_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// dreamEnv configures the server's model as the fake at base.
func dreamEnv(base string, more ...string) []string {
	return append([]string{"TEAMMEM_LLM_PROVIDER=anthropic", "TEAMMEM_LLM_MODEL=claude-fake", "TEAMMEM_LLM_BASE_URL=" + base,
		"ANTHROPIC_API_KEY=fake-key", "TEAMMEM_LLM_MAX_RETRIES=0", "TEAMMEM_DREAM_HEARTBEAT=100ms",
		"TEAMMEM_DREAM_STALE_AFTER=30s"}, more...) // a loaded machine may delay a live heartbeat
}

// sdk is the official Go SDK on s with the bootstrap key.
func sdk(s *server) anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(s.URL), option.WithAPIKey(bootstrapKey), option.WithMaxRetries(0))
}

// mustStore creates a memory store holding files.
func mustStore(t *testing.T, c anthropic.Client, name string, files map[string]string) string {
	t.Helper()
	ctx := t.Context()
	st, err := c.Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if _, err := c.Beta.MemoryStores.Memories.New(ctx, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/" + p, Content: anthropic.String(files[p])}); err != nil {
			t.Fatal(err)
		}
	}
	return st.ID
}

// storeFiles reads a store's memories (path without the slash → content).
func storeFiles(t *testing.T, c anthropic.Client, id string) map[string]string {
	t.Helper()
	out := map[string]string{}
	iter := c.Beta.MemoryStores.Memories.ListAutoPaging(t.Context(), id, anthropic.BetaMemoryStoreMemoryListParams{Limit: anthropic.Int(20), View: "full"})
	for iter.Next() {
		m := iter.Current()
		out[strings.TrimPrefix(m.Path, "/")] = m.Content
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// newDream creates a create_new dream of store with the fake model.
func newDream(t *testing.T, c anthropic.Client, store string) *anthropic.BetaDream {
	t.Helper()
	d, err := c.Beta.Dreams.New(t.Context(), anthropic.BetaDreamNewParams{
		Inputs: []anthropic.BetaDreamInputUnionParam{{OfMemoryStore: &anthropic.BetaDreamMemoryStoreInputParam{MemoryStoreID: store}}},
		Model:  anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-fake")},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// waitDream polls a dream until it is final.
func waitDream(t *testing.T, c anthropic.Client, id string) *anthropic.BetaDream {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		d, err := c.Beta.Dreams.Get(context.Background(), id, anthropic.BetaDreamGetParams{})
		if err == nil && (d.Status == anthropic.BetaDreamStatusCompleted || d.Status == anthropic.BetaDreamStatusFailed || d.Status == anthropic.BetaDreamStatusCanceled) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("dream %s not final: %v %s", id, err, d.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// e2eUsage is what every scripted reply spends, as a provider reports it.
var e2eUsage = llm.Usage{InputTokens: 812, OutputTokens: 96, CacheReadTokens: 1500, CacheCreationTokens: 40}

var (
	e2eBefore = llmtest.ConsolidationBefore
	e2eAfter  = llmtest.ConsolidationAfter
)

// e2eScript merges the duplicates, fixes the contradicted fact and
// rewrites the index.
func e2eScript() []llmtest.Reply { return llmtest.ConsolidationScript(e2eUsage) }

// TestDreamE2E runs the scripted consolidation in the built server with
// its model behind TEAMMEM_LLM_BASE_URL, through the SDK, to completed.
func TestDreamE2E(t *testing.T) {
	forEachDB(t, func(t *testing.T, dsn string) {
		script := llmtest.NewScript(e2eScript()...)
		s := startServer(t, dsn, dreamEnv(llmtest.AnthropicServer(t, script))...)
		c := sdk(s)
		in := mustStore(t, c, "team notes", e2eBefore)
		d := waitDream(t, c, newDream(t, c, in).ID)
		if d.Status != anthropic.BetaDreamStatusCompleted || len(d.Outputs) != 1 || !strings.Contains(d.RawJSON(), `"review":{"state":"pending"`) {
			t.Fatalf("dream %s\nlogs:\n%s", d.RawJSON(), s.logs.String())
		}
		if d.Usage.InputTokens != 7*812 || d.Usage.OutputTokens != 7*96 || d.Usage.CacheReadInputTokens != 7*1500 || d.Usage.CacheCreationInputTokens != 7*40 {
			t.Fatalf("usage %s", d.Usage.RawJSON())
		}
		if got := storeFiles(t, c, d.Outputs[0].MemoryStoreID); !maps.Equal(got, e2eAfter) {
			t.Fatalf("output %v", got)
		}
		if got := storeFiles(t, c, in); !maps.Equal(got, e2eBefore) {
			t.Fatalf("input changed %v", got)
		}
		t.Logf("before (%s): %q\nafter (%s): %q\nusage: %s", in, e2eBefore, d.Outputs[0].MemoryStoreID, e2eAfter, d.Usage.RawJSON())
	})
}

// fakeModel is the fake model behind a holding proxy: calls counts the
// requests it saw, heldBodies are those it held.
type fakeModel struct {
	URL        string
	calls      atomic.Int32
	mu         sync.Mutex
	heldBodies [][]byte
}

// heldWith reports how many held requests contained marker.
func (m *fakeModel) heldWith(marker string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, b := range m.heldBodies {
		if bytes.Contains(b, []byte(marker)) {
			n++
		}
	}
	return n
}

// holdingModel serves script, except that a request for which hold
// (given its call number and body) reports true is held until its caller
// gives up or the test ends, then answered 503: a model turn in flight.
// GET /held?marker=X answers how many held requests contained X, for
// scripts that wait for one.
func holdingModel(t *testing.T, script *llmtest.Script, hold func(call int32, body []byte) bool) *fakeModel {
	target, _ := url.Parse(llmtest.AnthropicServer(t, script))
	proxy := httputil.NewSingleHostReverseProxy(target)
	m := &fakeModel{}
	done := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/held" {
			fmt.Fprint(w, m.heldWith(r.URL.Query().Get("marker")))
			return
		}
		body, _ := io.ReadAll(r.Body)
		if hold(m.calls.Add(1), body) {
			m.mu.Lock()
			m.heldBodies = append(m.heldBodies, body)
			m.mu.Unlock()
			select {
			case <-r.Context().Done():
			case <-done:
			}
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { close(done); ts.Close() })
	m.URL = ts.URL
	return m
}

// stallingModel answers the first call from script and holds every later
// one until the test ends: a model turn in flight when the server dies.
func stallingModel(t *testing.T, script *llmtest.Script) (string, *atomic.Int32) {
	m := holdingModel(t, script, func(call int32, _ []byte) bool { return call > 1 })
	return m.URL, &m.calls
}

// TestDreamKill9: kill -9 of the server in the middle of a dream's model
// turn, then a restart on the same database: the dream ends failed with
// internal_error (never left running) and the create_new input is
// untouched.
func TestDreamKill9(t *testing.T) {
	forEachDB(t, func(t *testing.T, dsn string) {
		script := llmtest.NewScript(e2eScript()...)
		base, calls := stallingModel(t, script)
		env := dreamEnv(base, "TEAMMEM_DREAM_STALE_AFTER=1s")
		s := startServer(t, dsn, env...)
		c := sdk(s)
		in := mustStore(t, c, "team notes", e2eBefore)
		d := newDream(t, c, in)
		deadline := time.Now().Add(30 * time.Second)
		for calls.Load() < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("the dream never reached its second turn; logs:\n%s", s.logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		s.kill(t)
		s = startServer(t, dsn, env...)
		c = sdk(s)
		got := waitDream(t, c, d.ID)
		if got.Status != anthropic.BetaDreamStatusFailed || got.Error.Type != "internal_error" || !strings.Contains(got.Error.Message, "stopped") {
			t.Fatalf("after kill -9: %s", got.RawJSON())
		}
		if files := storeFiles(t, c, in); !maps.Equal(files, e2eBefore) {
			t.Fatalf("input changed %v", files)
		}
	})
}

// TestDreamReplicas: two replicas on one Postgres run 10 dreams; each ran
// on exactly one of them (one model conversation per dream at the fake
// model, one "dream ended" line per dream across both logs).
func TestDreamReplicas(t *testing.T) {
	t.Parallel()
	dsn := databases(t)["postgres"](t)
	var replies []llmtest.Reply
	for range 10 {
		r := llmtest.Text("nothing to consolidate")
		r.Response.Usage = e2eUsage
		replies = append(replies, r)
	}
	script := llmtest.NewScript(replies...)
	env := dreamEnv(llmtest.AnthropicServer(t, script), "TEAMMEM_DREAM_ORG_CONCURRENCY=10", "TEAMMEM_DREAM_WORKERS=3")
	a, b := startServer(t, dsn, env...), startServer(t, dsn, env...)
	ids := map[string]string{}
	for i := range 10 {
		c := sdk([]*server{a, b}[i%2])
		name := fmt.Sprintf("store-%02d", i)
		ids[newDream(t, c, mustStore(t, c, name, map[string]string{"a.md": "a fact\n"})).ID] = name
	}
	c := sdk(a)
	for id := range ids {
		if d := waitDream(t, c, id); d.Status != anthropic.BetaDreamStatusCompleted {
			t.Fatalf("%s", d.RawJSON())
		}
	}
	perStore := map[string]int{}
	for _, req := range script.Requests() {
		for _, name := range ids {
			if strings.Contains(req.Messages[0].Content[0].Text, "Memory store: "+name+"\n") {
				perStore[name]++
			}
		}
	}
	ran := map[string]int{}
	for _, s := range []*server{a, b} {
		for _, line := range strings.Split(s.logs.String(), "\n") {
			for id := range ids {
				if strings.Contains(line, `"msg":"dream ended"`) && strings.Contains(line, `"dream":"`+id+`"`) {
					ran[id]++
				}
			}
		}
	}
	for id, name := range ids {
		if perStore[name] != 1 || ran[id] != 1 {
			t.Errorf("dream %s (%s): %d conversations, ended on %d replicas", id, name, perStore[name], ran[id])
		}
	}
	t.Logf("conversations per store %v", perStore)
}
