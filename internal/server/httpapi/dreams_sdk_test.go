package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// fakeRunner is a DreamRunner that runs nothing: it records what was
// enqueued, so the tests move dreams along with the store's own methods.
type fakeRunner struct {
	models []string
	mu     sync.Mutex
	queued []string
}

func (f *fakeRunner) Models() []string { return f.models }

func (f *fakeRunner) Enqueue(_ context.Context, d teammem.Dream) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queued = append(f.queued, d.ID)
	return nil
}

// newDreamEnv is a v1Env whose server runs dreams with model "m1".
func newDreamEnv(t *testing.T, st teammem.Store) (*v1Env, *fakeRunner) {
	runner := &fakeRunner{models: []string{"m1", "m2"}}
	return newV1Env(t, st, func(c *httpapi.Config) { c.Dreams = runner }), runner
}

// dreamOnly is the create params of a dream over one store (teammem's
// extension: no sessions input).
func dreamOnly(storeID string, update bool) anthropic.BetaDreamNewParams {
	p := anthropic.BetaDreamNewParams{
		Inputs: []anthropic.BetaDreamInputUnionParam{{OfMemoryStore: &anthropic.BetaDreamMemoryStoreInputParam{MemoryStoreID: storeID}}},
		Model:  anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("m1")},
	}
	if update {
		p.OutputBehavior = anthropic.BetaOutputBehaviorUnionParam{OfUpdateExisting: &anthropic.BetaOutputBehaviorUpdateExistingParam{MemoryStoreID: storeID}}
	}
	return p
}

// wantAPIError checks an SDK error's status and envelope type.
func wantAPIError(t *testing.T, err error, status int, typ string) *anthropic.Error {
	t.Helper()
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != status || !strings.Contains(apiErr.RawJSON(), `"type":"`+typ+`"`) {
		t.Fatalf("error = %v, want %d %s", err, status, typ)
	}
	return apiErr
}

// TestDreamsSDK drives the Dreams API's whole non-running lifecycle with
// the official Go SDK on both drivers.
func TestDreamsSDK(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e, runner := newDreamEnv(t, st)
		ctx := t.Context()
		c := anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(e.keys[teammem.RoleOwner]), option.WithMaxRetries(0))
		store, err := c.Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "notes"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.Beta.Dreams.New(ctx, dreamOnly(store.ID, false))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(d.ID, "drm_") || d.Status != anthropic.BetaDreamStatusPending || len(d.Inputs) != 1 || d.Inputs[0].MemoryStoreID != store.ID ||
			len(d.Outputs) != 0 || d.Model.ID != "m1" || d.Model.Speed != "standard" || d.OutputBehavior.Type != "create_new" ||
			d.JSON.Instructions.Raw() != "null" || d.JSON.SessionID.Raw() != "null" || d.JSON.Error.Raw() != "null" || d.JSON.EndedAt.Raw() != "null" {
			t.Fatalf("created %s", d.RawJSON())
		}
		if !strings.Contains(d.RawJSON(), `"review":{"state":"none","at":null}`) {
			t.Fatalf("no review extension: %s", d.RawJSON())
		}
		if len(runner.queued) != 1 || runner.queued[0] != d.ID {
			t.Fatalf("enqueued %v", runner.queued)
		}
		got, err := c.Beta.Dreams.Get(ctx, d.ID, anthropic.BetaDreamGetParams{})
		if err != nil || got.ID != d.ID || !got.CreatedAt.Equal(d.CreatedAt) {
			t.Fatalf("get: %v %+v", err, got)
		}

		// update_existing holds the store: a second one is a 409 the SDK
		// must not retry; cancel (pending: released at once) frees it.
		u := dreamOnlyWith(store.ID, "steer it")
		held, err := c.Beta.Dreams.New(ctx, u)
		if err != nil || held.OutputBehavior.Type != "update_existing" || held.OutputBehavior.MemoryStoreID != store.ID || held.Instructions != "steer it" {
			t.Fatalf("update_existing: %v %s", err, held.RawJSON())
		}
		_, err = c.Beta.Dreams.New(ctx, dreamOnly(store.ID, true))
		apiErr := wantAPIError(t, err, http.StatusConflict, "conflict_error")
		if apiErr.Response.Header.Get("X-Should-Retry") != "false" || !strings.Contains(apiErr.RawJSON(), held.ID) {
			t.Fatalf("409 %s, x-should-retry %q", apiErr.RawJSON(), apiErr.Response.Header.Get("X-Should-Retry"))
		}
		canceled, err := c.Beta.Dreams.Cancel(ctx, held.ID, anthropic.BetaDreamCancelParams{})
		if err != nil || canceled.Status != anthropic.BetaDreamStatusCanceled || canceled.EndedAt.IsZero() {
			t.Fatalf("cancel: %v %+v", err, canceled)
		}
		again, err := c.Beta.Dreams.Cancel(ctx, held.ID, anthropic.BetaDreamCancelParams{})
		if err != nil || !again.EndedAt.Equal(canceled.EndedAt) {
			t.Fatalf("cancel again: %v %+v", err, again)
		}
		if _, err := c.Beta.Dreams.New(ctx, dreamOnly(store.ID, true)); err != nil {
			t.Fatalf("update_existing after the holder was released: %v", err)
		}

		// Archive: pending is a 400; a dream moved to completed by the
		// store archives, twice the same; cancelling it is a 400.
		_, err = c.Beta.Dreams.Archive(ctx, d.ID, anthropic.BetaDreamArchiveParams{})
		wantAPIError(t, err, http.StatusBadRequest, "invalid_request_error")
		now := time.Now()
		if _, err := st.DreamStart(ctx, e.org.ID, d.ID, teammem.DreamStartParams{At: now, RunSessionID: "sesn_run"}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DreamOutputSet(ctx, e.org.ID, d.ID, teammem.DreamOutputParams{SpaceID: 999, StoreUID: "beef"}); err != nil {
			t.Fatal(err)
		}
		running, _ := c.Beta.Dreams.Get(ctx, d.ID, anthropic.BetaDreamGetParams{})
		if running.Status != anthropic.BetaDreamStatusRunning || running.SessionID != "sesn_run" || len(running.Outputs) != 1 || running.Outputs[0].MemoryStoreID != "memstore_beef" {
			t.Fatalf("running %s", running.RawJSON())
		}
		_, err = c.Beta.Dreams.Archive(ctx, d.ID, anthropic.BetaDreamArchiveParams{})
		wantAPIError(t, err, http.StatusBadRequest, "invalid_request_error")
		usage := teammem.DreamUsage{InputTokens: 7, OutputTokens: 3, CacheCreationInputTokens: 2, CacheReadInputTokens: 1}
		if _, err := st.DreamFinish(ctx, e.org.ID, d.ID, teammem.DreamFinishParams{Status: teammem.DreamCompleted, At: now, Usage: usage}); err != nil {
			t.Fatal(err)
		}
		_, err = c.Beta.Dreams.Cancel(ctx, d.ID, anthropic.BetaDreamCancelParams{})
		wantAPIError(t, err, http.StatusBadRequest, "invalid_request_error")
		a1, err := c.Beta.Dreams.Archive(ctx, d.ID, anthropic.BetaDreamArchiveParams{})
		if err != nil || a1.ArchivedAt.IsZero() || a1.Status != anthropic.BetaDreamStatusCompleted || a1.Usage.InputTokens != 7 || a1.Usage.CacheReadInputTokens != 1 ||
			!strings.Contains(a1.RawJSON(), `"review":{"state":"pending"`) {
			t.Fatalf("archive: %v %s", err, a1.RawJSON())
		}
		a2, err := c.Beta.Dreams.Archive(ctx, d.ID, anthropic.BetaDreamArchiveParams{})
		if err != nil || !a2.ArchivedAt.Equal(a1.ArchivedAt) {
			t.Fatalf("archive again: %v %+v", err, a2)
		}
		testDreamsListSDK(t, c, e, store.ID)
		testDreamsErrorsSDK(t, e, st, store.ID, d.ID)
	})
}

// dreamOnlyWith is an update_existing dream of storeID with instructions.
func dreamOnlyWith(storeID, instructions string) anthropic.BetaDreamNewParams {
	p := dreamOnly(storeID, true)
	p.Instructions = anthropic.String(instructions)
	p.Model = anthropic.BetaDreamNewParamsModelUnion{OfBetaDreamModelConfig: &anthropic.BetaDreamModelConfigParam{ID: "m2", Speed: "standard"}}
	return p
}

// testDreamsListSDK: the list's filters and pages, through the SDK. The
// org holds three dreams then: d (completed, archived), one canceled and
// one pending update_existing; three more pending are made here.
func testDreamsListSDK(t *testing.T, c anthropic.Client, e *v1Env, storeID string) {
	ctx := t.Context()
	for range 3 {
		if _, err := c.Beta.Dreams.New(ctx, dreamOnly(storeID, false)); err != nil {
			t.Fatal(err)
		}
	}
	var all []anthropic.BetaDream
	iter := c.Beta.Dreams.ListAutoPaging(ctx, anthropic.BetaDreamListParams{Limit: anthropic.Int(2), IncludeArchived: anthropic.Bool(true)})
	for iter.Next() {
		all = append(all, iter.Current())
	}
	if err := iter.Err(); err != nil || len(all) != 6 {
		t.Fatalf("listed %d dreams (%v), want 6", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].CreatedAt.After(all[i-1].CreatedAt) {
			t.Fatalf("not newest first at %d", i)
		}
	}
	count := func(p anthropic.BetaDreamListParams) int {
		t.Helper()
		p.Limit = anthropic.Int(100)
		page, err := c.Beta.Dreams.List(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Data)
	}
	if n := count(anthropic.BetaDreamListParams{}); n != 5 {
		t.Errorf("default list shows %d, want 5 (the archived one hidden)", n)
	}
	if n := count(anthropic.BetaDreamListParams{Statuses: []anthropic.BetaDreamStatus{anthropic.BetaDreamStatusCanceled}}); n != 1 {
		t.Errorf("statuses[]=canceled: %d, want 1", n)
	}
	if n := count(anthropic.BetaDreamListParams{Statuses: []anthropic.BetaDreamStatus{anthropic.BetaDreamStatusPending, anthropic.BetaDreamStatusCompleted},
		IncludeArchived: anthropic.Bool(true)}); n != 5 {
		t.Errorf("pending+completed with archived: %d, want 5", n)
	}
	oldest := all[len(all)-1].CreatedAt
	if n := count(anthropic.BetaDreamListParams{CreatedAtGt: anthropic.Time(oldest), IncludeArchived: anthropic.Bool(true)}); n != 5 {
		t.Errorf("created_at[gt] oldest: %d, want 5", n)
	}
	if n := count(anthropic.BetaDreamListParams{CreatedAtLt: anthropic.Time(oldest.Add(time.Microsecond)), IncludeArchived: anthropic.Bool(true)}); n != 1 {
		t.Errorf("created_at[lt] just after the oldest: %d, want 1", n)
	}
	r := e.do("GET", "/v1/dreams?created_at[gte]="+oldest.Format(time.RFC3339Nano)+"&created_at[lte]="+oldest.Format(time.RFC3339Nano)+"&include_archived=true",
		e.keys[teammem.RoleOwner], nil)
	if data, _ := r.JSON(t)["data"].([]any); r.Status != 200 || len(data) != 1 {
		t.Errorf("created_at[gte]&[lte] the oldest: %d %s", r.Status, r.Body)
	}
	if r := e.do("GET", "/v1/dreams?statuses=running,nope", e.keys[teammem.RoleOwner], nil); r.Status != 400 {
		t.Errorf("a bad status: %d", r.Status)
	}
	if r := e.do("GET", "/v1/dreams?page=bogus", e.keys[teammem.RoleOwner], nil); r.Status != 400 {
		t.Errorf("a bad page: %d", r.Status)
	}
}

// testDreamsErrorsSDK: every documented refusal, through the SDK.
func testDreamsErrorsSDK(t *testing.T, e *v1Env, st teammem.Store, storeID, dreamID string) {
	ctx := t.Context()
	client := func(key string) anthropic.Client {
		return anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(key), option.WithMaxRetries(0))
	}
	owner := client(e.keys[teammem.RoleOwner])
	bad := dreamOnly(storeID, false)
	bad.Model = anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-elsewhere")}
	_, err := owner.Beta.Dreams.New(ctx, bad)
	if apiErr := wantAPIError(t, err, http.StatusBadRequest, "invalid_request_error"); !strings.Contains(apiErr.RawJSON(), "m1, m2") {
		t.Fatalf("a model not allowed: %s", apiErr.RawJSON())
	}
	bad = dreamOnly(storeID, false)
	bad.Instructions = anthropic.String(strings.Repeat("x", 4097))
	_, err = owner.Beta.Dreams.New(ctx, bad)
	wantAPIError(t, err, http.StatusBadRequest, "invalid_request_error")
	for _, body := range []string{`{"inputs":[{"type":"memory_store","memory_store_id":"` + storeID + `"}],"model":"m1","extra":true}`,
		`{"inputs":[{"type":"memory_store","memory_store_id":"` + storeID + `"}],"model":{"id":"m1","speed":"fast"}}`,
		`{"inputs":[],"model":"m1"}`, `[1]`} {
		if r := e.do("POST", "/v1/dreams", e.keys[teammem.RoleOwner], body); r.Status != 400 || !strings.Contains(string(r.Body), "invalid_request_error") {
			t.Errorf("POST %s: %d %s", body, r.Status, r.Body)
		}
	}
	// A sessions input names sessions this server cannot show the key.
	withSessions := dreamOnly(storeID, false)
	withSessions.Inputs = append(withSessions.Inputs, anthropic.BetaDreamInputUnionParam{OfSessions: &anthropic.BetaDreamSessionsInputParam{SessionIDs: []string{"sesn_0123456789abcdef0123456789abcdef"}}})
	_, err = owner.Beta.Dreams.New(ctx, withSessions)
	wantAPIError(t, err, http.StatusNotFound, "not_found_error")

	// A read-only key may not dream into the store (403), another org's
	// key sees neither the store nor the dream (404).
	ro := client(MustExtraKey(t, st, e.org, e.users[teammem.RoleMember], true))
	_, err = ro.Beta.Dreams.New(ctx, dreamOnly(storeID, true))
	wantAPIError(t, err, http.StatusForbidden, "permission_error")
	_, err = ro.Beta.Dreams.Cancel(ctx, dreamID, anthropic.BetaDreamCancelParams{})
	wantAPIError(t, err, http.StatusForbidden, "permission_error")
	other := MustOrg(t, st, "other", teammem.OrgSettings{})
	_, otherKey := MustUserKey(t, st, other, "eve", teammem.RoleOwner)
	stranger := client(otherKey)
	_, err = stranger.Beta.Dreams.New(ctx, dreamOnly(storeID, false))
	wantAPIError(t, err, http.StatusNotFound, "not_found_error")
	_, err = stranger.Beta.Dreams.Get(ctx, dreamID, anthropic.BetaDreamGetParams{})
	wantAPIError(t, err, http.StatusNotFound, "not_found_error")
	_, err = stranger.Beta.Dreams.Archive(ctx, dreamID, anthropic.BetaDreamArchiveParams{})
	wantAPIError(t, err, http.StatusNotFound, "not_found_error")
	if page, err := stranger.Beta.Dreams.List(ctx, anthropic.BetaDreamListParams{IncludeArchived: anthropic.Bool(true)}); err != nil || len(page.Data) != 0 {
		t.Fatalf("another org lists %v %v", err, page)
	}
	_, err = owner.Beta.Dreams.Get(ctx, "drm_nope", anthropic.BetaDreamGetParams{})
	wantAPIError(t, err, http.StatusNotFound, "not_found_error")

	// team_dream off (here for one repo) refuses its team store, naming the setting.
	repo, err := st.RepoEnsure(ctx, e.org.ID, "acme/app")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := st.SpaceEnsure(ctx, e.org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Beta.Dreams.New(ctx, dreamOnly(teammem.StoreID(sp), false)); err != nil {
		t.Fatalf("a team store under manual: %v", err)
	}
	if r := e.do("PATCH", "/v1/org", e.keys[teammem.RoleOwner], map[string]any{"team_dream_repos": map[string]string{"acme/app": "off"}}); r.Status != 200 {
		t.Fatalf("patch team_dream_repos: %d %s", r.Status, r.Body)
	}
	_, err = owner.Beta.Dreams.New(ctx, dreamOnly(teammem.StoreID(sp), false))
	if apiErr := wantAPIError(t, err, http.StatusBadRequest, "invalid_request_error"); !strings.Contains(apiErr.RawJSON(), "team_dream") {
		t.Fatalf("team_dream off: %s", apiErr.RawJSON())
	}
}

// TestDreamsNeedAModel: a server without a model answers every create
// with a 400 that says what to configure.
func TestDreamsNeedAModel(t *testing.T) {
	st := MustOpenStore(t)
	for _, runner := range []httpapi.DreamRunner{nil, &fakeRunner{}} {
		e := newV1Env(t, st, func(c *httpapi.Config) { c.Dreams = runner })
		c := anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(e.keys[teammem.RoleOwner]), option.WithMaxRetries(0))
		store, err := c.Beta.MemoryStores.New(t.Context(), anthropic.BetaMemoryStoreNewParams{Name: "n"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Beta.Dreams.New(t.Context(), dreamOnly(store.ID, false))
		if apiErr := wantAPIError(t, err, http.StatusBadRequest, "invalid_request_error"); !strings.Contains(apiErr.RawJSON(), "TEAMMEM_LLM_MODEL") {
			t.Fatalf("no model: %s", apiErr.RawJSON())
		}
		st = MustOpenStore(t) // the next env makes its org afresh
	}
}
