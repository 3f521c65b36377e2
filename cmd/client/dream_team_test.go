package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/testing/apiclienttest"
	"github.com/teammem/teammem/internal/wire"
)

// dreamServer is a scripted fake of the server's Dreams API: each route
// answers from its own script, and the create request is kept.
type dreamServer struct {
	URL    string
	routes map[string]*apiclienttest.Script // "METHOD path" → answers

	mu      sync.Mutex
	created *http.Request
	body    wire.DreamCreateRequest
}

func newDreamServer(t *testing.T, routes map[string]*apiclienttest.Script) *dreamServer {
	t.Helper()
	ds := &dreamServer{routes: routes}
	if ds.routes["POST /v1/repos/acme/widgets/team/memory_store"] == nil {
		ds.routes["POST /v1/repos/acme/widgets/team/memory_store"] = script(apiclienttest.OK(map[string]any{
			"id": "memstore_team1", "type": "memory_store", "path": "/v1/memory_stores/memstore_team1", "scope": "team"}))
	}
	srv := apiclienttest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/dreams" {
			ds.mu.Lock()
			ds.created = r
			_ = json.NewDecoder(r.Body).Decode(&ds.body)
			ds.mu.Unlock()
		}
		s := ds.routes[r.Method+" "+r.URL.Path]
		if s == nil {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		s.ServeHTTP(w, r)
	}))
	ds.URL = srv.URL
	return ds
}

// hits is how many requests route received.
func (ds *dreamServer) hits(route string) int {
	if s := ds.routes[route]; s != nil {
		return s.Count()
	}
	return 0
}

func script(replies ...func(http.ResponseWriter, *http.Request)) *apiclienttest.Script {
	return &apiclienttest.Script{Replies: replies}
}

// aDream is dream drm_1 in status with tokens input tokens used.
func aDream(status string, tokens int64) wire.Dream {
	return wire.Dream{ID: "drm_1", Type: "dream", Status: status, Model: wire.DreamModel{ID: "m1", Speed: "standard"},
		Inputs:         []wire.DreamInput{{Type: wire.DreamInputMemoryStore, MemoryStoreID: "memstore_team1"}},
		OutputBehavior: wire.DreamOutputBehavior{Type: wire.BehaviorCreateNew}, Usage: wire.DreamUsage{InputTokens: tokens, OutputTokens: 7},
		CreatedAt: time.Now(), Review: wire.DreamReview{State: wire.ReviewNone}}
}

func completedDream() wire.Dream {
	d := aDream(wire.DreamCompleted, 300)
	d.Review.State = wire.ReviewPending
	d.Outputs = []wire.DreamOutput{{Type: "memory_store", MemoryStoreID: "memstore_out1"}}
	return d
}

func strp(s string) *string { return &s }

// aDiff merges /a.md and /b.md into /x.md.
var aDiff = wire.DreamDiff{DreamID: "drm_1", InputStoreID: "memstore_team1", OutputStoreID: "memstore_out1", Changes: []wire.DreamChange{
	{Path: "/x.md", Change: wire.ChangeMerged, Before: strp("deploy on fridays\n"), After: strp("never deploy on fridays\n"), MergedFrom: []string{"/a.md", "/b.md"}},
	{Path: "/b.md", Change: wire.ChangeDeleted, Before: strp("dup\n")},
}}

// runTeamDream runs teammem with args against ds and returns stdout,
// stderr and the exit code.
func runTeamDream(t *testing.T, ctx context.Context, ds *dreamServer, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	cfg := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return env[k]
	}
	var out, errb bytes.Buffer
	a := newApp(getenv, strings.NewReader(""), &out, &errb)
	a.dreamPoll = time.Millisecond
	root := a.root()
	root.SetArgs(append([]string{"--server", ds.URL, "--api-key", "k-test", "--repo", "acme/widgets", "--dir", t.TempDir()}, args...))
	code := exitCode(root.ExecuteContext(ctx), a)
	return out.String(), errb.String(), code
}

func TestDreamTeamProgressThenDiff(t *testing.T) {
	t.Parallel()
	ds := newDreamServer(t, map[string]*apiclienttest.Script{
		"POST /v1/dreams":           script(apiclienttest.OK(aDream(wire.DreamPending, 0))),
		"GET /v1/dreams/drm_1":      script(apiclienttest.OK(aDream(wire.DreamRunning, 100)), apiclienttest.OK(aDream(wire.DreamRunning, 100)), apiclienttest.OK(completedDream())),
		"GET /v1/dreams/drm_1/diff": script(apiclienttest.OK(aDiff)),
	})
	out, errOut, code := runTeamDream(t, context.Background(), ds, map[string]string{"TEAMMEM_DREAM_MODEL": "m1"}, "dream", "--team", "--instructions", "merge dups")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"=== merged /x.md (merged from /a.md, /b.md)", "--- a/x.md\n+++ b/x.md", "-deploy on fridays", "+never deploy on fridays",
		"=== deleted /b.md", "+++ /dev/null", "2 memories changed: 1 merged, 1 deleted", "teammem dream --team --apply drm_1", "--discard drm_1"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	// Plain lines, one per change of status or tokens: the repeated
	// running answer adds none.
	if strings.Count(errOut, "running, 107 tokens") != 1 || !strings.Contains(errOut, "dream drm_1: completed, 307 tokens") {
		t.Errorf("progress:\n%s", errOut)
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if got := ds.created.Header.Get("anthropic-beta"); got != wire.DreamsBeta {
		t.Errorf("anthropic-beta %q", got)
	}
	b := ds.body
	if b.Model.ID != "m1" || len(b.Inputs) != 1 || b.Inputs[0].MemoryStoreID != "memstore_team1" || b.Instructions == nil || *b.Instructions != "merge dups" || b.OutputBehavior != nil {
		t.Errorf("create body %+v", b)
	}
	if ds.hits("POST /v1/dreams/drm_1/apply") != 0 {
		t.Error("applied without --apply")
	}
}

func TestDreamTeamApply(t *testing.T) {
	t.Parallel()
	applied := completedDream()
	applied.Review.State = wire.ReviewApplied
	ds := newDreamServer(t, map[string]*apiclienttest.Script{
		"POST /v1/dreams":             script(apiclienttest.OK(aDream(wire.DreamPending, 0))),
		"GET /v1/dreams/drm_1":        script(apiclienttest.OK(completedDream())),
		"GET /v1/dreams/drm_1/diff":   script(apiclienttest.OK(aDiff)),
		"POST /v1/dreams/drm_1/apply": script(apiclienttest.OK(applied)),
	})
	out, errOut, code := runTeamDream(t, context.Background(), ds, nil, "dream", "--team", "--model", "m1", "--apply")
	if code != 0 || !strings.Contains(out, "Applied dream drm_1 to the team store (2 memories)") || ds.hits("POST /v1/dreams/drm_1/apply") != 1 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	// Later, by id: no new dream.
	out, errOut, code = runTeamDream(t, context.Background(), ds, nil, "dream", "--team", "--apply", "drm_1")
	if code != 0 || !strings.Contains(out, "Applied dream drm_1") || ds.hits("POST /v1/dreams") != 1 || ds.hits("POST /v1/dreams/drm_1/apply") != 2 {
		t.Fatalf("apply by id: exit %d\n%s%s", code, out, errOut)
	}
}

func TestDreamTeamApplyConflict(t *testing.T) {
	t.Parallel()
	ds := newDreamServer(t, map[string]*apiclienttest.Script{
		"POST /v1/dreams":           script(apiclienttest.OK(aDream(wire.DreamPending, 0))),
		"GET /v1/dreams/drm_1":      script(apiclienttest.OK(completedDream())),
		"GET /v1/dreams/drm_1/diff": script(apiclienttest.OK(aDiff)),
		"POST /v1/dreams/drm_1/apply": script(apiclienttest.AnthropicError(http.StatusConflict, "conflict_error", "the input store changed",
			map[string]any{"changed_paths": []string{"/a.md", "/y.md"}})),
	})
	out, errOut, code := runTeamDream(t, context.Background(), ds, nil, "dream", "--team", "--model", "m1", "--apply")
	if code != 1 || !strings.Contains(errOut, "nothing was applied") || !strings.Contains(errOut, "  /a.md\n  /y.md\n") ||
		!strings.Contains(errOut, "2 memories changed since it started") || strings.Contains(out, "Applied") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if ds.hits("POST /v1/dreams/drm_1/apply") != 1 {
		t.Errorf("apply sent %d times, want once", ds.hits("POST /v1/dreams/drm_1/apply"))
	}
}

func TestDreamTeamFailed(t *testing.T) {
	t.Parallel()
	failed := aDream(wire.DreamFailed, 900)
	failed.Error = &wire.DreamError{Type: "timeout", Message: "the dream ran out of time"}
	ds := newDreamServer(t, map[string]*apiclienttest.Script{
		"POST /v1/dreams":      script(apiclienttest.OK(aDream(wire.DreamPending, 0))),
		"GET /v1/dreams/drm_1": script(apiclienttest.OK(aDream(wire.DreamRunning, 10)), apiclienttest.OK(failed)),
	})
	out, errOut, code := runTeamDream(t, context.Background(), ds, nil, "dream", "--team", "--model", "m1", "--apply")
	if code != 1 || !strings.Contains(errOut, "dream drm_1 failed: timeout: the dream ran out of time") || out != "" {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestDreamTeamInterruptCancels(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ds := newDreamServer(t, map[string]*apiclienttest.Script{
		"POST /v1/dreams": script(apiclienttest.OK(aDream(wire.DreamPending, 0))),
		// The first poll's answer comes with a Ctrl-C.
		"GET /v1/dreams/drm_1": script(func(w http.ResponseWriter, r *http.Request) {
			cancel()
			apiclienttest.OK(aDream(wire.DreamRunning, 10))(w, r)
		}),
		"POST /v1/dreams/drm_1/cancel": script(apiclienttest.OK(aDream(wire.DreamCanceled, 10))),
	})
	out, errOut, code := runTeamDream(t, ctx, ds, nil, "dream", "--team", "--model", "m1")
	if code != exitInterrupted || !strings.Contains(errOut, "interrupted: canceled dream drm_1 on the server") || ds.hits("POST /v1/dreams/drm_1/cancel") != 1 {
		t.Fatalf("exit %d, %d cancels\n%s%s", code, ds.hits("POST /v1/dreams/drm_1/cancel"), out, errOut)
	}
}

func TestDreamTeamNeedsModel(t *testing.T) {
	t.Parallel()
	ds := newDreamServer(t, map[string]*apiclienttest.Script{})
	out, errOut, code := runTeamDream(t, context.Background(), ds, nil, "dream", "--team")
	if code != exitUsage || !strings.Contains(errOut, "--model") || !strings.Contains(errOut, "TEAMMEM_DREAM_MODEL") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if n := ds.hits("POST /v1/dreams"); n != 0 {
		t.Errorf("%d creates without a model", n)
	}
}

func TestDreamTeamFlagMistakes(t *testing.T) {
	t.Parallel()
	ds := newDreamServer(t, map[string]*apiclienttest.Script{})
	for _, args := range [][]string{
		{"dream", "--model", "m1"},             // a team flag without --team
		{"dream", "drm_1"},                     // an id without --team
		{"dream", "--team", "--force"},         // a local flag with --team
		{"dream", "--team", "--discard"},       // discard needs an id
		{"dream", "--team", "--apply", "nope"}, // not a dream id
		{"dream", "--team", "--apply", "--discard", "drm_1"},
		{"dream", "--team", "--update-existing", "--apply", "--model", "m1"},
	} {
		if out, errOut, code := runTeamDream(t, context.Background(), ds, nil, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s%s", args, code, exitUsage, out, errOut)
		}
	}
}

func TestDreamTeamUpdateExistingAndDiscard(t *testing.T) {
	t.Parallel()
	done := aDream(wire.DreamCompleted, 50)
	done.OutputBehavior = wire.DreamOutputBehavior{Type: wire.BehaviorUpdateExisting, MemoryStoreID: "memstore_team1"}
	discarded := completedDream()
	discarded.Review.State = wire.ReviewDiscarded
	ds := newDreamServer(t, map[string]*apiclienttest.Script{
		"POST /v1/dreams":               script(apiclienttest.OK(aDream(wire.DreamPending, 0))),
		"GET /v1/dreams/drm_1":          script(apiclienttest.OK(done)),
		"POST /v1/dreams/drm_1/discard": script(apiclienttest.OK(discarded)),
	})
	out, errOut, code := runTeamDream(t, context.Background(), ds, nil, "dream", "--team", "--model", "m1", "--update-existing")
	if code != 0 || !strings.Contains(out, "wrote into the team store directly") || ds.hits("GET /v1/dreams/drm_1/diff") != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	ds.mu.Lock()
	ob := ds.body.OutputBehavior
	ds.mu.Unlock()
	if ob == nil || ob.Type != wire.BehaviorUpdateExisting || ob.MemoryStoreID != "memstore_team1" {
		t.Errorf("output_behavior %+v", ob)
	}
	out, errOut, code = runTeamDream(t, context.Background(), ds, nil, "dream", "--team", "--discard", "drm_1")
	if code != 0 || !strings.Contains(out, "Discarded dream drm_1") || ds.hits("POST /v1/dreams/drm_1/discard") != 1 {
		t.Fatalf("discard: exit %d\n%s%s", code, out, errOut)
	}
}
