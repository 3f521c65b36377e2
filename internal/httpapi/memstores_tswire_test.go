package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// Go-level checks of the wire details the TypeScript SDK reads (issue 22),
// next to its own conformance run in memstores_tssdk_test.go.

// TestRequestIDHeader: every response names its id under both
// X-Request-Id and request-id, the client's own id when it sent one.
func TestRequestIDHeader(t *testing.T) {
	e := newV1Env(t, MustOpenStore(t), nil)
	for _, c := range []struct {
		name, path, id string
	}{
		{"store route", "/v1/memory_stores?beta=true", ""},
		{"unknown store", "/v1/memory_stores/memstore_nope?beta=true", "trace-1"},
		{"healthz", "/healthz", "trace-2"},
	} {
		var hs []string
		if c.id != "" {
			hs = []string{"X-Request-Id", c.id}
		}
		r := e.do(http.MethodGet, c.path, e.keys[teammem.RoleOwner], nil, hs...)
		x, rid := r.Header.Get("X-Request-Id"), r.Header.Get("request-id")
		if x == "" || rid != x || (c.id != "" && rid != c.id) {
			t.Errorf("%s: X-Request-Id %q, request-id %q (sent %q)", c.name, x, rid, c.id)
		}
	}
}
