package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// TestMetricsOnAPIListener checks who gets /metrics on the API listener:
// nobody without a metrics token configured, and with one only a request
// that carries it as a bearer token. MetricsHandler, for the metrics
// listener, serves them either way.
func TestMetricsOnAPIListener(t *testing.T) {
	t.Parallel()
	st := MustOpenStore(t)
	org := MustOrg(t, st, "acme", teammem.OrgSettings{})
	_, apiKey := MustUserKey(t, st, org, "ann", teammem.RoleOwner)
	get := func(t *testing.T, url string, header ...string) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}

	t.Run("no token", func(t *testing.T) {
		cfg := testConfig()
		cfg.MetricsToken = ""
		srv := httpapi.New(st, nil, cfg, nil, nil)
		ts := httptest.NewServer(srv.Handler())
		t.Cleanup(ts.Close)
		for _, h := range [][]string{nil, {"Authorization", "Bearer " + testMetricsToken}, {"Authorization", "Bearer " + apiKey}} {
			if code, _, body := get(t, ts.URL, h...); code != http.StatusNotFound {
				t.Errorf("GET /metrics with %v = %d, want 404: %.200s", h, code, body)
			}
		}
		ms := httptest.NewServer(srv.MetricsHandler())
		t.Cleanup(ms.Close)
		if code, _, body := get(t, ms.URL); code != http.StatusOK || !strings.Contains(body, "teammem_http_requests_total") {
			t.Errorf("metrics listener = %d: %.200s", code, body)
		}
	})

	t.Run("token", func(t *testing.T) {
		ts := httptest.NewServer(httpapi.New(st, nil, testConfig(), nil, nil).Handler())
		t.Cleanup(ts.Close)
		for _, h := range [][]string{
			nil,
			{"Authorization", "Bearer " + apiKey}, // an API key is no metrics token
			{"Authorization", "Bearer " + testMetricsToken + "x"}, // nor a longer string
			{"Authorization", "Bearer " + testMetricsToken[:20]},  // nor its prefix
			{"Authorization", "Basic " + testMetricsToken},
			{"x-api-key", testMetricsToken}, // only the bearer header carries it
		} {
			code, hdr, body := get(t, ts.URL, h...)
			if code != http.StatusUnauthorized || hdr.Get("WWW-Authenticate") == "" || strings.Contains(body, "teammem_") {
				t.Errorf("GET /metrics with %v = %d %v: %.200s", h, code, hdr, body)
			}
		}
		code, _, body := get(t, ts.URL, "Authorization", "Bearer "+testMetricsToken)
		if code != http.StatusOK || !strings.Contains(body, `teammem_http_requests_total{code="401",method="GET",route="/metrics"} 6`) {
			t.Errorf("GET /metrics with the token = %d: %.500s", code, body)
		}
	})
}
