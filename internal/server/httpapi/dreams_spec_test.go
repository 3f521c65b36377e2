package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"
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
