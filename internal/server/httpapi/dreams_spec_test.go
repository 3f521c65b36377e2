package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// TestDreamsResponsesMatchSpec validates every Dreams route's answers, and
// the requests it accepted, against api/openapi.yaml.
func TestDreamsResponsesMatchSpec(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Dreams = &fakeRunner{models: []string{"m1"}}
	b := setupSpec(t, cfg, nil)
	beta := map[string]string{"anthropic-beta": "dreaming-2026-04-21"}
	store := b.do(t, call{Method: http.MethodPost, Path: "/v1/memory_stores", Key: b.owner, Body: `{"name":"n"}`, Want: 200})
	var s struct{ ID string }
	if err := json.Unmarshal(store.Body, &s); err != nil {
		t.Fatal(err)
	}
	in := `{"inputs":[{"type":"memory_store","memory_store_id":"` + s.ID + `"}],"model":`
	created := b.do(t, call{Method: http.MethodPost, Path: "/v1/dreams", Key: b.owner, Header: beta, Body: in + `"m1"}`, Want: 200})
	var d struct{ ID string }
	if err := json.Unmarshal(created.Body, &d); err != nil {
		t.Fatal(err)
	}
	update := in + `{"id":"m1","speed":"standard"},"instructions":"x","output_behavior":{"type":"update_existing","memory_store_id":"` + s.ID + `"}}`
	b.do(t, call{Method: http.MethodPost, Path: "/v1/dreams", Key: b.owner, Body: update, Want: 200})
	for _, c := range []call{
		{Method: http.MethodPost, Path: "/v1/dreams", Body: update, Want: 409},
		{Method: http.MethodPost, Path: "/v1/dreams", Body: in + `"m9"}`, Want: 400},
		{Method: http.MethodGet, Path: "/v1/dreams/" + d.ID, Want: 200},
		{Method: http.MethodGet, Path: "/v1/dreams/drm_nope", Want: 404},
		{Method: http.MethodGet, Path: "/v1/dreams?limit=1&include_archived=true&statuses[]=pending&created_at[gte]=2020-01-01T00:00:00Z", Want: 200},
		{Method: http.MethodPost, Path: "/v1/dreams/" + d.ID + "/archive", Want: 400},
		{Method: http.MethodPost, Path: "/v1/dreams/" + d.ID + "/cancel", Want: 200},
		{Method: http.MethodPost, Path: "/v1/dreams/" + d.ID + "/archive", Want: 200},
		{Method: http.MethodGet, Path: "/v1/dreams", Want: 401},
	} {
		if c.Want != 401 {
			c.Key = b.owner
		}
		b.do(t, c)
	}
}

// TestDreamReviewMatchesSpec validates the review routes' answers (diff,
// apply, a stale apply's 409, discard, their 400s) against the spec.
func TestDreamReviewMatchesSpec(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Dreams = &fakeRunner{models: []string{"m1"}}
	b := setupSpec(t, cfg, nil)
	id := func(r reply) string {
		var v struct{ ID string }
		if err := json.Unmarshal(r.Body, &v); err != nil {
			t.Fatal(err)
		}
		return v.ID
	}
	post := func(path, body string, want int) reply {
		return b.do(t, call{Method: http.MethodPost, Path: path, Key: b.owner, Body: body, Want: want})
	}
	// Two dreams of one input, completed into one output each.
	in := id(post("/v1/memory_stores", `{"name":"in"}`, 200))
	post("/v1/memory_stores/"+in+"/memories", `{"path":"/a.md","content":"old"}`, 200)
	var dreams []string
	for range 2 {
		out := id(post("/v1/memory_stores", `{"name":"out"}`, 200))
		post("/v1/memory_stores/"+out+"/memories", `{"path":"/a.md","content":"new"}`, 200)
		d := id(post("/v1/dreams", `{"inputs":[{"type":"memory_store","memory_store_id":"`+in+`"}],"model":"m1"}`, 200))
		completeSpecDream(t, b, d, in, out)
		dreams = append(dreams, d)
	}
	b.do(t, call{Method: http.MethodGet, Path: "/v1/dreams/" + dreams[0] + "/diff", Key: b.owner, Want: 200})
	post("/v1/dreams/"+dreams[0]+"/apply", "", 200)
	post("/v1/dreams/"+dreams[1]+"/apply", "", 409) // the first one changed the input
	post("/v1/dreams/"+dreams[1]+"/discard", "", 200)
	post("/v1/dreams/"+dreams[1]+"/apply", "", 400)
}

// completeSpecDream moves dream d of store in to completed with output out.
func completeSpecDream(t *testing.T, b *specBundle, d, in, out string) {
	t.Helper()
	space := func(id string) teammem.Space {
		uid, _ := teammem.StoreUID(id)
		m, err := b.store.MemoryStoreGet(t.Context(), b.org.ID, uid)
		if err != nil {
			t.Fatal(err)
		}
		return m.Space
	}
	MustFinishDream(t, b.store, b.org.ID, d, space(in), space(out))
}
