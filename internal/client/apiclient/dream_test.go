package apiclient

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/apiclienttest"
	"github.com/teammem/teammem/internal/wire"
)

func TestDreamApplyConflictCarriesChangedPaths(t *testing.T) {
	t.Parallel()
	var beta string
	sc := &script{Replies: []func(http.ResponseWriter, *http.Request){func(w http.ResponseWriter, r *http.Request) {
		beta = r.Header.Get("anthropic-beta")
		apiclienttest.AnthropicError(http.StatusConflict, "conflict_error", "the input store changed",
			map[string]any{"changed_paths": []string{"/a.md"}})(w, r)
	}}}
	c, _ := newTestClient(t, serve(t, sc))
	_, err := c.DreamApply(context.Background(), "drm_1")
	var ce *DreamConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.ChangedPaths, []string{"/a.md"}) || teammem.ErrorCode(err) != teammem.EConflict {
		t.Fatalf("err %v (%T)", err, err)
	}
	if beta != wire.DreamsBeta || sc.Count() != 1 {
		t.Errorf("beta %q, %d requests", beta, sc.Count())
	}
}

func TestDreamErrorsFromAnthropicEnvelope(t *testing.T) {
	t.Parallel()
	sc := &script{Replies: []func(http.ResponseWriter, *http.Request){
		apiclienttest.AnthropicError(http.StatusForbidden, "permission_error", "this key may not read the store", nil)}}
	c, _ := newTestClient(t, serve(t, sc))
	_, err := c.DreamGet(context.Background(), "drm_1")
	if f := FailureOf(err); !f.KeyRefused() || teammem.ErrorMessage(err) != "this key may not read the store" {
		t.Fatalf("err %v, failure %+v", err, f)
	}
	if _, err := c.DreamGet(context.Background(), "../me"); teammem.ErrorCode(err) != teammem.EInvalid || sc.Count() != 1 {
		t.Fatalf("a bad id: %v after %d requests", err, sc.Count())
	}
}
