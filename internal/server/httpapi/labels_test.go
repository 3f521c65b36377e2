package httpapi_test

import (
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/server/telemetry"
)

// standardMethods are the methods the request metrics keep as labels.
var standardMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"}

// pathShapes are the kinds of path a stranger can send: unrouted ones, and
// every route family with arbitrary segments. {x} is replaced by a random
// segment, so two requests of one shape have different paths.
var pathShapes = []string{
	"/", "/{x}", "/{x}/{x}/{x}", "/v1", "/v1/", "/v1/{x}", "/v1/repos/{x}", "/v1/admin/{x}",
	"/healthz/{x}", "/metrics", "/metrics/{x}", "/api/claude_code/team_memory", "/api/claude_code/{x}",
	"/v1/me", "/v1/repos", "/v1/org", "/v1/org/users/{x}", "/v1/org/keys/{x}", "/v1/telemetry/events",
	"/v1/admin/orgs", "/v1/admin/orgs/{x}", "/v1/repos/{x}/{x}", "/v1/repos/{x}/{x}/events",
	"/v1/repos/{x}/{x}/{x}/", "/v1/repos/{x}/{x}/{x}/batch", "/v1/repos/{x}/{x}/{x}/changes",
	"/v1/repos/{x}/{x}/{x}/MEMORY.md", "/v1/repos/{x}/{x}/{x}/export", "/v1/repos/{x}/{x}/{x}/entries/{x}/{x}",
}

// segment returns a random path segment.
func segment(rng *rand.Rand) string {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789-_."
	b := make([]byte, 1+rng.IntN(12))
	for i := range b {
		b[i] = chars[rng.IntN(len(chars))]
	}
	return string(b)
}

// randomMethod returns a method that is standard half of the time and an
// invented token otherwise.
func randomMethod(rng *rand.Rand) string {
	if rng.IntN(2) == 0 {
		return standardMethods[rng.IntN(len(standardMethods))]
	}
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := make([]byte, 3+rng.IntN(10))
	for i := range b {
		b[i] = chars[rng.IntN(len(chars))]
	}
	return string(b)
}

func fill(shape string, rng *rand.Rand) string {
	for strings.Contains(shape, "{x}") {
		shape = strings.Replace(shape, "{x}", segment(rng), 1)
	}
	return shape
}

// seriesCount returns how many series the registry exports, besides the Go
// runtime's and the process's.
func seriesCount(t *testing.T, m *telemetry.Metrics) int {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "teammem_") {
			n += len(f.GetMetric())
		}
	}
	return n
}

// TestMetricLabelsBounded sends unauthenticated requests with random
// methods and random paths: once every method class on every path shape,
// then thousands at random. The random ones add no series, and every label
// value is from its closed set.
func TestMetricLabelsBounded(t *testing.T) {
	t.Parallel()
	m := telemetry.New()
	srv := httpapi.New(MustOpenStore(t), nil, testConfig(), nil, m)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	send := func(method, path string) {
		t.Helper()
		req, err := http.NewRequest(method, ts.URL+path, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}

	rng := rand.New(rand.NewPCG(12, 2026))
	for _, shape := range pathShapes {
		for _, method := range append(slices.Clone(standardMethods), "BREW") {
			send(method, fill(shape, rng))
		}
	}
	before := seriesCount(t, m)
	const random = 3000
	for range random {
		send(randomMethod(rng), fill(pathShapes[rng.IntN(len(pathShapes))], rng))
	}
	after := seriesCount(t, m)
	t.Logf("series after %d requests of every method class on every path shape: %d; after %d more at random: %d",
		len(pathShapes)*(len(standardMethods)+1), before, random, after)
	if after != before {
		t.Errorf("random methods and paths added %d series", after-before)
	}

	routes := map[string]bool{telemetry.RouteUnmatched: true}
	rs, err := srv.Routes()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		routes[strings.TrimSuffix(r.Path, "/")] = true
	}
	methods := map[string]bool{telemetry.MethodOther: true}
	for _, m := range standardMethods {
		methods[m] = true
	}
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				switch {
				case l.GetName() == "method" && !methods[l.GetValue()]:
					t.Errorf("%s has method %q", f.GetName(), l.GetValue())
				case l.GetName() == "route" && !routes[l.GetValue()]:
					t.Errorf("%s has route %q, which is no route template", f.GetName(), l.GetValue())
				}
			}
		}
	}
}

// TestRequestSeriesBeforeAnyRequest: a server that has served nothing yet
// (Prometheus scrapes the metrics listener, not the API) already exports a
// request counter and a latency histogram at 0 for every route and method,
// so the dashboard's request and latency panels show data right after
// start instead of "No data" until the first request (issue 21 point 10).
func TestRequestSeriesBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	m := telemetry.New()
	srv := httpapi.New(MustOpenStore(t), nil, testConfig(), nil, m)
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]map[string]bool{}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range s.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if series[f.GetName()] == nil {
				series[f.GetName()] = map[string]bool{}
			}
			series[f.GetName()][l["method"]+" "+l["route"]] = true
		}
	}
	rs, err := srv.Routes()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		route := r.Path
		if route != "/" {
			route = strings.TrimSuffix(route, "/")
		}
		for _, name := range []string{"teammem_http_requests_total", "teammem_http_request_duration_seconds"} {
			if !series[name][r.Method+" "+route] {
				t.Errorf("%s has no series for %s %s before the first request", name, r.Method, route)
			}
		}
	}
}
