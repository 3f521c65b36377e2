package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// TestBodyLimitCountsAsPush sends pushes over the body limit through both
// APIs, announced by Content-Length and streamed without one: each is a
// 413 on its own route, a push refused with request_too_large and a hit
// of the max_body_bytes cap. A write that is no push is not counted as one.
func TestBodyLimitCountsAsPush(t *testing.T) {
	t.Parallel()
	const limit = 4096
	e := newV1Env(t, MustOpenStore(t), func(c *httpapi.Config) { c.MaxBodyBytes = limit; c.WriteRate = 0 })
	k := e.keys[teammem.RoleOwner]
	big := strings.Repeat("x", 2*limit)
	claude := `{"entries":{"a.md":"` + big + `"}}`
	batch := `{"upserts":[{"key":"a.md","content":"` + big + `"}]}`
	send := func(method, path, body string, stream bool) {
		t.Helper()
		var rd io.Reader = strings.NewReader(body)
		if stream {
			rd = io.MultiReader(rd) // no length known: sent chunked
		}
		req, err := http.NewRequest(method, e.url+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+k)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "request_too_large") {
			t.Errorf("%s %s (stream %v) = %d %.200s, want 413 request_too_large", method, path, stream, res.StatusCode, b)
		}
	}
	for _, stream := range []bool{false, true} {
		send("PUT", "/api/claude_code/team_memory?repo=acme/widgets", claude, stream)
		send("PUT", team+"/entries/a.md", big, stream)
		send("POST", team+"/batch", batch, stream)
		send("PATCH", "/v1/org", `{"name":"`+big+`"}`, stream) // no push
	}
	metrics := string(e.do("GET", "/metrics", testMetricsToken, nil).want(t, 200).Body)
	for _, want := range []string{
		`teammem_http_requests_total{code="413",method="PUT",route="/api/claude_code/team_memory"} 2`,
		`teammem_http_requests_total{code="413",method="PUT",route="/v1/repos/{owner}/{name}/{scope}/entries/*"} 2`,
		`teammem_http_requests_total{code="413",method="POST",route="/v1/repos/{owner}/{name}/{scope}/batch"} 2`,
		`teammem_http_requests_total{code="413",method="PATCH",route="/v1/org"} 2`,
		`teammem_pushes_total{api="claude_code",org="acme",outcome="request_too_large"} 2`,
		`teammem_pushes_total{api="v1",org="acme",outcome="request_too_large"} 4`,
		`teammem_caps_hit_total{cap="max_body_bytes",org="acme"} 6`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "teammem_pushes_total{") && !strings.Contains(line, "request_too_large") && !strings.HasSuffix(line, " 0") {
			t.Errorf("a refused body counted as another push outcome: %s", line)
		}
	}
}
