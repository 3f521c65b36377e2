package memsync

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/testing/apiclienttest"
)

// script is the fake server of the engine's tests against a hostile or
// flaky server; apiclient's own tests cover the requests.
type script = apiclienttest.Script

var (
	status = apiclienttest.Error
	okJSON = apiclienttest.OK
	serve  = apiclienttest.Serve
)

// newTestClient is a client of srv whose retries do not wait.
func newTestClient(t *testing.T, srv *httptest.Server) *apiclient.Client {
	t.Helper()
	noWait := func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	return &apiclient.Client{BaseURL: srv.URL, Key: "tmk_test_key", Repo: "acme/widgets", Sleep: noWait}
}
