package httpapi_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// reviewDream is a completed create_new dream made for a review test:
// its input store holds input and its output store output, both written
// through the API; no worker ran it.
type reviewDream struct {
	ID, InputStoreID, OutputStoreID string
}

// MustReviewDream creates a store holding input, a create_new dream of it
// (as the key), and moves the dream to completed with an output store
// holding output, as a worker would: Base taken at start.
func MustReviewDream(t *testing.T, e *v1Env, key string, input, output map[string]string) reviewDream {
	t.Helper()
	ctx := t.Context()
	c := anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(key), option.WithMaxRetries(0))
	fill := func(name string, files map[string]string) string {
		m, err := c.Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range sortedKeys(files) {
			if _, err := c.Beta.MemoryStores.Memories.New(ctx, m.ID, anthropic.BetaMemoryStoreMemoryNewParams{
				Path: p, Content: anthropic.String(files[p])}); err != nil {
				t.Fatalf("write %s: %v", p, err)
			}
		}
		return m.ID
	}
	return mustCompleteDream(t, e, key, fill("team notes", input), fill("dream output", output))
}

// mustCompleteDream creates a create_new dream of the store in and moves
// it to completed with the store out as its output, Base taken now.
func mustCompleteDream(t *testing.T, e *v1Env, key, in, out string) reviewDream {
	t.Helper()
	ctx := t.Context()
	c := anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(key), option.WithMaxRetries(0))
	d, err := c.Beta.Dreams.New(ctx, dreamOnly(in, false))
	if err != nil {
		t.Fatal(err)
	}
	MustFinishDream(t, e.st, e.org.ID, d.ID, mustStoreSpace(t, e, in), mustStoreSpace(t, e, out))
	return reviewDream{ID: d.ID, InputStoreID: in, OutputStoreID: out}
}

// MustFinishDream moves the pending dream id of in to completed with out
// as its output, as a worker would: Base is in's state now.
func MustFinishDream(t *testing.T, st teammem.Store, orgID int64, id string, in, out teammem.Space) {
	t.Helper()
	ctx := t.Context()
	heads, err := st.EntriesList(ctx, orgID, in.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{}
	for _, h := range heads {
		base[h.Key] = h.Checksum
	}
	now := time.Now()
	if _, err := st.DreamStart(ctx, orgID, id, teammem.DreamStartParams{At: now, Base: base,
		OutputSpaceID: out.ID, OutputStoreUID: out.UID}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DreamFinish(ctx, orgID, id, teammem.DreamFinishParams{Status: teammem.DreamCompleted, At: now,
		Usage: teammem.DreamUsage{InputTokens: 1200, OutputTokens: 340}}); err != nil {
		t.Fatal(err)
	}
}

func mustStoreSpace(t *testing.T, e *v1Env, id string) teammem.Space {
	t.Helper()
	uid, _ := teammem.StoreUID(id)
	m, err := e.st.MemoryStoreGet(t.Context(), e.org.ID, uid)
	if err != nil {
		t.Fatal(err)
	}
	return m.Space
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// storeFiles is a store's memories as path → content.
func storeFiles(t *testing.T, e *v1Env, id string) map[string]string {
	t.Helper()
	list, err := e.st.EntriesList(t.Context(), e.org.ID, mustStoreSpace(t, e, id).ID, true)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, x := range list {
		m[teammem.MemoryPath(x.Key)] = x.Content
	}
	return m
}

// The consolidation the review tests apply: two duplicates merged, a
// contradicted fact corrected, the index rewritten.
var (
	reviewInput = map[string]string{
		"/MEMORY.md":  "- [Deploy](deploy.md)\n- [Tagging](tagging.md)\n- [Ports](ports.md)\n",
		"/deploy.md":  "---\nname: Deploy steps\ndescription: how we deploy the api\n---\nrun make release first\nthen tag the commit with vX.Y\n",
		"/tagging.md": "---\nname: Release tagging\ndescription: tags for releases\n---\nthen tag the commit with vX.Y\npush the tag to origin\n",
		"/ports.md":   "the api listens on port 8080\n",
		"/keep.md":    "unchanged memory\n",
	}
	reviewOutput = map[string]string{
		"/MEMORY.md": "- [Deploy](deploy.md): release, tag, push\n- [Ports](ports.md)\n",
		"/deploy.md": "---\nname: Deploy steps\ndescription: how we deploy the api\n---\nrun make release first\nthen tag the commit with vX.Y\npush the tag to origin\n",
		"/ports.md":  "the api listens on port 9090 (moved from 8080)\n",
		"/keep.md":   "unchanged memory\n",
		"/new.md":    "a fact the dream learned from a session\n",
	}
)

// TestDreamReview: diff, Apply, a stale Apply, Discard and their
// refusals, on both drivers.
func TestDreamReview(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e, _ := newDreamEnv(t, st)
		owner := e.keys[teammem.RoleMember]
		d := MustReviewDream(t, e, owner, reviewInput, reviewOutput)
		base := "/v1/dreams/" + d.ID

		var diff wire.DreamDiff
		mustJSON(t, e.do("GET", base+"/diff", owner, nil).want(t, 200).Body, &diff)
		got := map[string]string{}
		for _, c := range diff.Changes {
			got[c.Path] = c.Change + " " + strings.Join(c.MergedFrom, ",")
			if (c.Before == nil) != (c.Change == wire.ChangeAdded) || (c.After == nil) != (c.Change == wire.ChangeDeleted) ||
				(c.MemoryID == nil) != (c.Change == wire.ChangeAdded) {
				t.Errorf("change %+v: before/after/memory_id do not fit its kind", c)
			}
		}
		want := map[string]string{"/MEMORY.md": "rewritten ", "/deploy.md": "merged /tagging.md", "/ports.md": "rewritten ",
			"/tagging.md": "deleted ", "/new.md": "added "}
		if !jsonEqual(got, want) || diff.InputStoreID != d.InputStoreID || diff.OutputStoreID != d.OutputStoreID {
			t.Fatalf("diff = %v (%s → %s), want %v", got, diff.InputStoreID, diff.OutputStoreID, want)
		}

		// Refusals: a viewer cannot write the input (403); unknown is 404.
		e.do("POST", base+"/apply", e.keys[teammem.RoleViewer], "{}").want(t, http.StatusForbidden)
		e.do("POST", "/v1/dreams/drm_00000000000000000000000000000000/apply", owner, "{}").want(t, http.StatusNotFound)

		var applied wire.Dream
		mustJSON(t, e.do("POST", base+"/apply", owner, "{}").want(t, 200).Body, &applied)
		if applied.Review.State != wire.ReviewApplied || applied.Review.At == nil {
			t.Fatalf("applied: %+v", applied.Review)
		}
		if files := storeFiles(t, e, d.InputStoreID); !jsonEqual(files, reviewOutput) {
			t.Fatalf("input after apply = %v, want the output %v", files, reviewOutput)
		}
		// Again: the same answer, nothing written again; discard now is a 400.
		var again wire.Dream
		mustJSON(t, e.do("POST", base+"/apply", owner, "{}").want(t, 200).Body, &again)
		if again.Review.State != wire.ReviewApplied || !again.Review.At.Equal(*applied.Review.At) {
			t.Fatalf("apply again: %+v", again.Review)
		}
		e.do("POST", base+"/discard", owner, "{}").want(t, http.StatusBadRequest)
		wantAudit(t, e, "dream.applied", d.ID, 1)
		versions, err := st.EntryHistory(t.Context(), e.org.ID, mustStoreSpace(t, e, d.InputStoreID).ID, "ports.md")
		if err != nil || len(versions) != 2 || versions[0].API != "dream" {
			t.Fatalf("ports.md history %v %+v: want the newest version by api dream", err, versions)
		}

		testDreamStaleApply(t, e, owner)
		testDreamDiscard(t, e, owner)
		testDreamApplyHeld(t, e)
	})
}

// TestDreamApplySecret: an output memory holding a secret (planted below
// the write path, which would have refused it) is refused by Apply's own
// pass through the write path, naming no secret, and nothing is written.
func TestDreamApplySecret(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newStoreEnvWith(t, st, teammem.OrgSettings{}, func(c *httpapi.Config) { c.Dreams = &fakeRunner{models: []string{"m1"}} })
		testDreamApplySecret(t, e, e.keys[teammem.RoleMember])
	})
}

func testDreamApplySecret(t *testing.T, e *v1Env, key string) {
	d := MustReviewDream(t, e, key, reviewInput, reviewOutput)
	secret := "aws_access_key_id = AKIAQYLPMN5HHHFPZAM2\naws_secret_access_key = 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\n"
	out := mustStoreSpace(t, e, d.OutputStoreID)
	if _, err := teammem.SpaceApply(t.Context(), e.st, e.org.ID, out.ID, teammem.ApplyParams{
		Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
			return []teammem.EntryChange{{Key: "creds.md", Op: teammem.OpWrite, Content: secret}}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	r := e.do("POST", "/v1/dreams/"+d.ID+"/apply", key, "{}").want(t, http.StatusBadRequest)
	if !strings.Contains(string(r.Body), "invalid_request_error") || strings.Contains(string(r.Body), "AKIA") {
		t.Fatalf("secret apply: %s", r.Body)
	}
	if files := storeFiles(t, e, d.InputStoreID); !jsonEqual(files, reviewInput) {
		t.Fatalf("a refused apply wrote: %v", files)
	}
}

// testDreamApplyHeld: under team_writes: review a member's apply of a
// repository's team store is held as one proposal (202, Location), the
// store untouched and the review still pending; another apply meanwhile
// is a 409 naming the proposal, no second one made. Rejecting it returns
// the review to pending, so apply holds a new proposal; approving that one
// lands the result and marks the dream applied.
func testDreamApplyHeld(t *testing.T, e *v1Env) {
	member, owner := e.keys[teammem.RoleMember], e.keys[teammem.RoleOwner]
	var team struct {
		ID string `json:"id"`
	}
	mustJSON(t, e.do("POST", "/v1/repos/acme/held/team/memory_store", member, nil).want(t, 200).Body, &team)
	c := anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(member), option.WithMaxRetries(0))
	out, err := c.Beta.MemoryStores.New(t.Context(), anthropic.BetaMemoryStoreNewParams{Name: "held output"})
	if err != nil {
		t.Fatal(err)
	}
	e.do("PUT", "/v1/repos/acme/held/team/entries/a.md", member, "before\n").want(t, 200)
	if _, err := c.Beta.MemoryStores.Memories.New(t.Context(), out.ID, anthropic.BetaMemoryStoreMemoryNewParams{
		Path: "/a.md", Content: anthropic.String("after\n")}); err != nil {
		t.Fatal(err)
	}
	d := mustCompleteDream(t, e, member, team.ID, out.ID)
	e.do("PATCH", "/v1/org", owner, map[string]any{"team_writes": "review"}).want(t, 200)
	r := e.do("POST", "/v1/dreams/"+d.ID+"/apply", member, "{}").want(t, http.StatusAccepted)
	var held wire.Dream
	mustJSON(t, r.Body, &held)
	loc := r.Header.Get("Location")
	if held.Review.State != wire.ReviewPending || !strings.HasPrefix(loc, "/v1/proposals/") {
		t.Fatalf("held apply: review %s, Location %q", held.Review.State, loc)
	}
	if files := storeFiles(t, e, team.ID); files["/a.md"] != "before\n" {
		t.Fatalf("a held apply wrote: %v", files)
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(loc, "/v1/proposals/"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	r = e.do("POST", "/v1/dreams/"+d.ID+"/apply", member, "{}").want(t, http.StatusConflict)
	var body wire.AnthropicErrorBody
	mustJSON(t, r.Body, &body)
	if body.Error.Type != "conflict_error" || body.Error.ProposalID != id || !strings.Contains(body.Error.Message, "proposal "+strconv.FormatInt(id, 10)) {
		t.Fatalf("apply while held: %s", r.Body)
	}
	if ps, err := e.st.ProposalList(t.Context(), e.org.ID, teammem.ProposalFilter{Status: teammem.ProposalPending}); err != nil || len(ps) != 1 {
		t.Fatalf("pending proposals after a second apply: %d, %v", len(ps), err)
	}

	e.do("POST", loc+"/reject", owner, map[string]any{}).want(t, 200)
	var now wire.Dream
	mustJSON(t, e.do("GET", "/v1/dreams/"+d.ID, member, nil).want(t, 200).Body, &now)
	if now.Review.State != wire.ReviewPending {
		t.Fatalf("review after the rejection = %s, want pending", now.Review.State)
	}
	r = e.do("POST", "/v1/dreams/"+d.ID+"/apply", member, "{}").want(t, http.StatusAccepted)
	if loc2 := r.Header.Get("Location"); loc2 == loc || !strings.HasPrefix(loc2, "/v1/proposals/") {
		t.Fatalf("apply after the rejection: Location %q (first %q)", loc2, loc)
	} else {
		loc = loc2
	}
	e.do("POST", loc+"/approve", owner, map[string]any{}).want(t, 200)
	if files := storeFiles(t, e, team.ID); files["/a.md"] != "after\n" {
		t.Fatalf("after approval: %v", files)
	}
	mustJSON(t, e.do("GET", "/v1/dreams/"+d.ID, member, nil).want(t, 200).Body, &now)
	if now.Review.State != wire.ReviewApplied || now.Review.At == nil {
		t.Fatalf("review after the approval = %+v, want applied", now.Review)
	}
	mustJSON(t, e.do("POST", "/v1/dreams/"+d.ID+"/apply", member, "{}").want(t, 200).Body, &now)
	if now.Review.State != wire.ReviewApplied {
		t.Fatalf("apply after the approval: %+v", now.Review)
	}
	e.do("PATCH", "/v1/org", owner, map[string]any{"team_writes": "direct"}).want(t, 200)
}

// testDreamStaleApply: an input changed after the dream started answers
// 409 with changed_paths, and nothing is written.
func testDreamStaleApply(t *testing.T, e *v1Env, key string) {
	d := MustReviewDream(t, e, key, reviewInput, reviewOutput)
	c := anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(key), option.WithMaxRetries(0))
	if _, err := c.Beta.MemoryStores.Memories.New(t.Context(), d.InputStoreID, anthropic.BetaMemoryStoreMemoryNewParams{
		Path: "/late.md", Content: anthropic.String("written while the dream ran\n")}); err != nil {
		t.Fatal(err)
	}
	before := storeFiles(t, e, d.InputStoreID)
	r := e.do("POST", "/v1/dreams/"+d.ID+"/apply", key, "{}").want(t, http.StatusConflict)
	var body wire.AnthropicErrorBody
	mustJSON(t, r.Body, &body)
	if body.Error.Type != "conflict_error" || !jsonEqual(body.Error.ChangedPaths, []string{"/late.md"}) || r.Header.Get("X-Should-Retry") != "false" {
		t.Fatalf("stale apply: %s", r.Body)
	}
	if after := storeFiles(t, e, d.InputStoreID); !jsonEqual(after, before) {
		t.Fatalf("a stale apply wrote: %v, was %v", after, before)
	}
	var now wire.Dream
	mustJSON(t, e.do("GET", "/v1/dreams/"+d.ID, key, nil).want(t, 200).Body, &now)
	if now.Review.State != wire.ReviewPending {
		t.Fatalf("review after a stale apply = %s, want pending", now.Review.State)
	}
}

// testDreamDiscard: discard archives the output store, leaves the input
// alone, and is answered the same again; apply after it is a 400, as are
// both on a dream that is not completed.
func testDreamDiscard(t *testing.T, e *v1Env, key string) {
	d := MustReviewDream(t, e, key, reviewInput, reviewOutput)
	var disc wire.Dream
	mustJSON(t, e.do("POST", "/v1/dreams/"+d.ID+"/discard", key, "{}").want(t, 200).Body, &disc)
	if disc.Review.State != wire.ReviewDiscarded {
		t.Fatalf("discard: %+v", disc.Review)
	}
	uid, _ := teammem.StoreUID(d.OutputStoreID)
	if m, err := e.st.MemoryStoreGet(t.Context(), e.org.ID, uid); err != nil || !m.Archived() {
		t.Fatalf("output store after discard: %v archived=%v", err, m.Archived())
	}
	if files := storeFiles(t, e, d.InputStoreID); !jsonEqual(files, reviewInput) {
		t.Fatalf("discard changed the input: %v", files)
	}
	e.do("POST", "/v1/dreams/"+d.ID+"/discard", key, "{}").want(t, 200)
	e.do("POST", "/v1/dreams/"+d.ID+"/apply", key, "{}").want(t, http.StatusBadRequest)
	wantAudit(t, e, "dream.discarded", d.ID, 1)

	c := anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(key), option.WithMaxRetries(0))
	pending, err := c.Beta.Dreams.New(t.Context(), dreamOnly(d.InputStoreID, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"apply", "discard"} {
		e.do("POST", "/v1/dreams/"+pending.ID+"/"+verb, key, "{}").want(t, http.StatusBadRequest)
	}
	e.do("GET", "/v1/dreams/"+pending.ID+"/diff", key, nil).want(t, http.StatusBadRequest)
}

// wantAudit checks that n events of action target the dream, with the
// dream's provenance.
func wantAudit(t *testing.T, e *v1Env, action, dreamID string, n int) {
	t.Helper()
	events, err := e.st.AuditList(t.Context(), e.org.ID, teammem.AuditFilter{Action: action, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, ev := range events {
		if ev.Target == dreamID {
			found++
			if ev.Details["api"] != "dream" || ev.Details["dream"] != dreamID || ev.ActorID == 0 {
				t.Errorf("%s event without provenance: %+v", action, ev)
			}
		}
	}
	if found != n {
		t.Errorf("%d %s events for %s, want %d", found, action, dreamID, n)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
