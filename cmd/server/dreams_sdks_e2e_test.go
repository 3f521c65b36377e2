package main_test

import (
	"bytes"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/teammem/teammem/internal/testing/llmtest"
	"github.com/teammem/teammem/internal/testing/tssdk"
)

// slowMarker is in the prompt of every dream of a store named "slow-…":
// the fake model holds those turns until the dream is canceled.
const slowMarker = "Memory store: slow-"

// TestDreamSDKsLive drives the whole Dreams lifecycle with both official
// SDKs against the built server running dreams on its (fake) model: the
// Go SDK, then the TypeScript SDK (testdata/tssdk/dreams_live.mjs), on one
// server per driver. Each creates a create_new and an update_existing dream and polls
// them to completed, cancels a dream whose model turn is in flight, lists
// with filters and pages, archives, and meets the documented refusals.
func TestDreamSDKsLive(t *testing.T) {
	ts := tssdk.Find(t)
	forEachDB(t, func(t *testing.T, dsn string) {
		script := llmtest.NewScript()
		for range 4 { // one turn for each dream that completes
			r := llmtest.Text("nothing to consolidate")
			r.Response.Usage = e2eUsage
			script.Add(r)
		}
		model := holdingModel(t, script, func(_ int32, body []byte) bool { return bytes.Contains(body, []byte(slowMarker)) })
		s := startServer(t, dsn, dreamEnv(model.URL)...)
		c := sdk(s)

		goSDKLifecycle(t, c, model)

		files := map[string]string{"a.md": "a fact\n"}
		checks := ts.Run(t, filepath.Join("testdata", "tssdk", "dreams_live.mjs"), nil, "TEAMMEM_URL="+s.URL, "TEAMMEM_KEY="+bootstrapKey, "TEAMMEM_MODEL_URL="+model.URL,
			"TEAMMEM_STORE="+mustStore(t, c, "ts notes", files), "TEAMMEM_TARGET="+mustStore(t, c, "ts target", files),
			"TEAMMEM_SLOW="+mustStore(t, c, "slow-ts", files))
		t.Logf("%d checks by the TypeScript SDK", len(checks))
		tssdk.Assert(t, checks)
		if n := script.Remaining(); n != 0 {
			t.Errorf("%d scripted model turns left: a dream that should have completed never ran", n)
		}
		if t.Failed() {
			t.Logf("server logs:\n%s", s.logs.String())
		}
	})
}

// goSDKLifecycle is the Go SDK's half of TestDreamSDKsLive.
func goSDKLifecycle(t *testing.T, c anthropic.Client, model *fakeModel) {
	ctx := t.Context()
	files := map[string]string{"a.md": "a fact\n"}
	in, target, slow := mustStore(t, c, "go notes", files), mustStore(t, c, "go target", files), mustStore(t, c, "slow-go", files)

	fresh := waitDream(t, c, newDream(t, c, in).ID)
	if fresh.Status != anthropic.BetaDreamStatusCompleted || len(fresh.Outputs) != 1 || fresh.Outputs[0].MemoryStoreID == in ||
		!strings.Contains(fresh.RawJSON(), `"review":{"state":"pending"`) || fresh.Usage.InputTokens != int64(e2eUsage.InputTokens) {
		t.Fatalf("create_new: %s", fresh.RawJSON())
	}
	update := waitDream(t, c, newUpdateDream(t, c, target).ID)
	if update.Status != anthropic.BetaDreamStatusCompleted || len(update.Outputs) != 1 || update.Outputs[0].MemoryStoreID != target ||
		!strings.Contains(update.RawJSON(), `"review":{"state":"none"`) {
		t.Fatalf("update_existing: %s", update.RawJSON())
	}

	// A running update_existing dream, its model turn held: it holds its
	// store, cannot be archived, and cancel stops it at once.
	running := newUpdateDream(t, c, slow)
	pollUntil(t, "the slow dream's model turn", func() bool { return model.heldWith(slowMarker+"go") > 0 })
	if d, err := c.Beta.Dreams.Get(ctx, running.ID, anthropic.BetaDreamGetParams{}); err != nil || d.Status != anthropic.BetaDreamStatusRunning {
		t.Fatalf("held dream: %v %s", err, d.RawJSON())
	}
	_, err := c.Beta.Dreams.New(ctx, updateParams(slow))
	if apiErr := wantSDKError(t, err, http.StatusConflict, "conflict_error"); !strings.Contains(apiErr.RawJSON(), running.ID) {
		t.Fatalf("409 does not name the holder: %s", apiErr.RawJSON())
	}
	_, err = c.Beta.Dreams.Archive(ctx, running.ID, anthropic.BetaDreamArchiveParams{})
	wantSDKError(t, err, http.StatusBadRequest, "invalid_request_error")
	canceled, err := c.Beta.Dreams.Cancel(ctx, running.ID, anthropic.BetaDreamCancelParams{})
	if err != nil || canceled.Status != anthropic.BetaDreamStatusCanceled || canceled.EndedAt.IsZero() {
		t.Fatalf("cancel running: %v %s", err, canceled.RawJSON())
	}
	// Once the worker has stopped, the store is free again.
	var next *anthropic.BetaDream
	pollUntil(t, "the canceled dream to release its store", func() bool {
		next, err = c.Beta.Dreams.New(ctx, updateParams(slow))
		return err == nil
	})
	if d, err := c.Beta.Dreams.Cancel(ctx, next.ID, anthropic.BetaDreamCancelParams{}); err != nil || d.Status != anthropic.BetaDreamStatusCanceled {
		t.Fatalf("cancel: %v %s", err, d.RawJSON())
	}

	// List: filters by status, one dream a page.
	if got := listIDs(t, c, anthropic.BetaDreamListParams{Statuses: []anthropic.BetaDreamStatus{anthropic.BetaDreamStatusCompleted}}); !sameIDs(got, fresh.ID, update.ID) {
		t.Fatalf("completed: %v", got)
	}
	if got := listIDs(t, c, anthropic.BetaDreamListParams{Statuses: []anthropic.BetaDreamStatus{anthropic.BetaDreamStatusCanceled}}); !sameIDs(got, running.ID, next.ID) {
		t.Fatalf("canceled: %v", got)
	}

	// Archive: final dreams only, idempotent, hidden from the default list.
	for _, id := range []string{fresh.ID, update.ID} {
		a, err := c.Beta.Dreams.Archive(ctx, id, anthropic.BetaDreamArchiveParams{})
		if err != nil || a.ArchivedAt.IsZero() {
			t.Fatalf("archive %s: %v %s", id, err, a.RawJSON())
		}
		if again, err := c.Beta.Dreams.Archive(ctx, id, anthropic.BetaDreamArchiveParams{}); err != nil || !again.ArchivedAt.Equal(a.ArchivedAt) {
			t.Fatalf("archive again %s: %v %s", id, err, again.RawJSON())
		}
	}
	if got := listIDs(t, c, anthropic.BetaDreamListParams{}); !sameIDs(got, running.ID, next.ID) {
		t.Fatalf("list after archive: %v", got)
	}
	if got := listIDs(t, c, anthropic.BetaDreamListParams{IncludeArchived: anthropic.Bool(true)}); len(got) != 4 {
		t.Fatalf("include_archived: %v", got)
	}
	_, err = c.Beta.Dreams.Cancel(ctx, fresh.ID, anthropic.BetaDreamCancelParams{})
	wantSDKError(t, err, http.StatusBadRequest, "invalid_request_error")
	_, err = c.Beta.Dreams.Get(ctx, "drm_00000000000000000000000000000000", anthropic.BetaDreamGetParams{})
	wantSDKError(t, err, http.StatusNotFound, "not_found_error")
	_, err = c.Beta.Dreams.New(ctx, anthropic.BetaDreamNewParams{Inputs: updateParams(in).Inputs,
		Model: anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("not-allowed")}})
	wantSDKError(t, err, http.StatusBadRequest, "invalid_request_error")
}

// updateParams are the create params of an update_existing dream of store.
func updateParams(store string) anthropic.BetaDreamNewParams {
	return anthropic.BetaDreamNewParams{
		Inputs:         []anthropic.BetaDreamInputUnionParam{{OfMemoryStore: &anthropic.BetaDreamMemoryStoreInputParam{MemoryStoreID: store}}},
		Model:          anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("claude-fake")},
		OutputBehavior: anthropic.BetaOutputBehaviorParamOfUpdateExisting(store),
	}
}

// newUpdateDream creates an update_existing dream of store.
func newUpdateDream(t *testing.T, c anthropic.Client, store string) *anthropic.BetaDream {
	t.Helper()
	d, err := c.Beta.Dreams.New(t.Context(), updateParams(store))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// listIDs walks the list one dream a page and returns the ids.
func listIDs(t *testing.T, c anthropic.Client, p anthropic.BetaDreamListParams) []string {
	t.Helper()
	p.Limit = anthropic.Int(1)
	var ids []string
	iter := c.Beta.Dreams.ListAutoPaging(t.Context(), p)
	for iter.Next() {
		ids = append(ids, iter.Current().ID)
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// sameIDs reports whether got holds exactly want, in any order.
func sameIDs(got []string, want ...string) bool {
	return slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want)))
}

// wantSDKError checks an SDK error's status and envelope type.
func wantSDKError(t *testing.T, err error, status int, typ string) *anthropic.Error {
	t.Helper()
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != status || !strings.Contains(apiErr.RawJSON(), `"type":"`+typ+`"`) {
		t.Fatalf("error = %v, want %d %s", err, status, typ)
	}
	return apiErr
}

// pollUntil polls cond until it holds, failing after a deadline.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain for %s", what)
		}
	}
}
