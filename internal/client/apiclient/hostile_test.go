package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// TestClientRefusesRedirects: a redirect to another port is reported, not
// followed; the other listener never hears from the client, key or not.
func TestClientRefusesRedirects(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		okJSON(me)(w, r)
	}))
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		sc := &script{Replies: []func(http.ResponseWriter, *http.Request){func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, code)
		}}}
		c, _ := newTestClient(t, serve(t, sc))
		_, errMe := c.WhoAmI(context.Background())
		_, errBatch := c.Batch(context.Background(), teammem.ScopeTeam, []wire.BatchUpsert{{Key: "a.md", Content: "x", Base: new(string)}}, nil)
		for _, err := range []error{errMe, errBatch} {
			var re *RedirectError
			f := FailureOf(err)
			if !errors.As(err, &re) || re.Status != code || !strings.HasPrefix(re.Location, other.URL) ||
				f.Code != CodeRedirect || !strings.Contains(f.Message, "answered a redirect") {
				t.Fatalf("%d: err %v, failure %+v", code, err, f)
			}
		}
		if sc.Count() != 2 {
			t.Fatalf("%d: %d requests, want 2 (a redirect is not retried)", code, sc.Count())
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the redirect target got %d requests", n)
	}
}

// TestClientBoundsAnswers: answers over the limit are refused, whether or
// not they announce their length, and are not retried.
func TestClientBoundsAnswers(t *testing.T) {
	t.Parallel()
	huge := func(announce bool) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			body := `{"scope":"team","version":1,"changes":[{"key":"a.md","op":"upsert","content":"` + strings.Repeat("x", 8<<10) + `"}]}`
			if announce {
				w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			}
			w.Header().Set("Content-Type", "application/json")
			for i := 0; i < len(body); i += 512 { // chunked unless announced
				_, _ = w.Write([]byte(body[i:min(i+512, len(body))]))
				w.(http.Flusher).Flush()
			}
		}
	}
	for _, announce := range []bool{true, false} {
		sc := &script{Replies: []func(http.ResponseWriter, *http.Request){huge(announce)}}
		c, _ := newTestClient(t, serve(t, sc))
		c.MaxResponse = 4 << 10
		_, _, _, err := c.Changes(context.Background(), teammem.ScopeTeam, 0)
		var be *BadResponseError
		if !errors.As(err, &be) || !strings.Contains(be.Reason, "larger than") || sc.Count() != 1 {
			t.Fatalf("announce %v: %d requests, %v", announce, sc.Count(), err)
		}
	}
	// Answers without content have a small limit of their own.
	sc := &script{Replies: []func(http.ResponseWriter, *http.Request){okJSON(map[string]string{"pad": strings.Repeat("x", smallBodyLimit)})}}
	c, _ := newTestClient(t, serve(t, sc))
	if _, err := c.WhoAmI(context.Background()); FailureOf(err).Code != CodeBadResponse {
		t.Fatalf("oversized /v1/me: %v", err)
	}
	// And a body that is not JSON is named as such.
	sc = &script{Replies: []func(http.ResponseWriter, *http.Request){func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<html>sign in</html>"))
	}}}
	c, _ = newTestClient(t, serve(t, sc))
	if _, err := c.WhoAmI(context.Background()); !strings.Contains(FailureOf(err).Message, "not the JSON") {
		t.Fatalf("HTML answer: %v", err)
	}
}

// TestClientConflicts: a 409 comes back as the conflicts it lists, unless a
// conflicting entry is over the cap (the engine would write it).
func TestClientConflicts(t *testing.T) {
	t.Parallel()
	conflict := func(content string) func(http.ResponseWriter, *http.Request) {
		return status(409, teammem.EConflict, "conflict", map[string]any{"conflicts": []teammem.Conflict{
			{Key: "a.md", Checksum: teammem.EntryChecksum(content), Content: content}}})
	}
	sc := &script{Replies: []func(http.ResponseWriter, *http.Request){conflict("theirs\n")}}
	c, _ := newTestClient(t, serve(t, sc))
	_, err := c.Batch(context.Background(), teammem.ScopeTeam, []wire.BatchUpsert{{Key: "a.md", Content: "ours\n", Base: new(string)}}, nil)
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Content != "theirs\n" || teammem.ErrorCode(err) != teammem.EConflict {
		t.Fatalf("conflict: %v", err)
	}
	sc = &script{Replies: []func(http.ResponseWriter, *http.Request){conflict(strings.Repeat("x", MaxEntryBytes+1))}}
	c, _ = newTestClient(t, serve(t, sc))
	_, err = c.Batch(context.Background(), teammem.ScopeTeam, []wire.BatchUpsert{{Key: "a.md", Content: "ours\n", Base: new(string)}}, nil)
	if FailureOf(err).Code != CodeBadResponse {
		t.Fatalf("oversized conflict: %v", err)
	}
}
