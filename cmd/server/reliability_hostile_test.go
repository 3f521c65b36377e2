package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Hostile run shape: hostileRequests malformed requests from hostileWorkers
// workers against one server whose body limit is hostileBodyLimit.
const (
	hostileRequests  = 10_000
	hostileWorkers   = 8
	hostileBodyLimit = 64 << 10
	hostileAdminKey  = "hostile-admin-key-0123456789abcdefghijkl"
)

// hostileReq is one generated request.
type hostileReq struct {
	method  string
	path    string // raw, already escaped as it goes on the wire
	query   string // raw
	header  http.Header
	body    []byte
	chunked bool // send without Content-Length
}

func (h hostileReq) String() string {
	b := h.body
	if len(b) > 120 {
		b = b[:120]
	}
	hdr := make([]string, 0, len(h.header))
	for k, v := range h.header {
		s := strings.Join(v, ",")
		if len(s) > 60 {
			s = s[:60] + "…"
		}
		hdr = append(hdr, k+": "+s)
	}
	p := h.path
	if len(p) > 200 {
		p = p[:200] + "…"
	}
	return fmt.Sprintf("%s %s?%.100s %v body(%d, chunked=%v)=%q", h.method, p, h.query, hdr, len(h.body), h.chunked, b)
}

// hostileGen draws requests from one seeded source.
type hostileGen struct{ r *rand.Rand }

func (g *hostileGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g *hostileGen) chance(p float64) bool    { return g.r.Float64() < p }

// garbage returns a path segment, query value or header-safe string that
// is wrong in one of many ways; escaped says whether it goes in a URL.
func (g *hostileGen) garbage(escaped bool) string {
	switch g.r.IntN(14) {
	case 0:
		return ""
	case 1:
		return strings.Repeat("a", 1+g.r.IntN(6000)) // overlong
	case 2:
		return "ü✓日本語"
	case 3:
		return "．．／etc" // fullwidth traversal
	case 4:
		return g.pick("..", ".", "../../etc/passwd", "a/../../b", "%2e%2e", "%2E%2E%2Fx")
	case 5:
		if escaped {
			return g.pick("%00", "a%00b", "%2F", "a%2Fb", "%5C", "%zz", "%", "%C3%28", "%FF%FE")
		}
		return g.pick("\xff\xfe", "a\xc3\x28b")
	case 6:
		return fmt.Sprint(g.r.Int64())
	case 7:
		return g.pick("-1", "0", "99999999999999999999999", "1e308", "NaN", "0x10", " 1")
	case 8:
		return g.pick("null", "true", "{}", "[]", `"x"`)
	case 9:
		return g.pick("a b", "a+b", "a;b", "a,b", "'", `"`, "<script>", "{}")
	case 10:
		return g.pick("team", "personal", "TEAM", "other")
	case 11:
		return "acme"
	default:
		return fmt.Sprintf("x%d", g.r.IntN(100))
	}
}

// segment escapes a garbage string for a path unless it is already
// escaped on purpose.
func (g *hostileGen) segment() string {
	s := g.garbage(true)
	if strings.Contains(s, "%") || !g.chance(0.7) {
		return s
	}
	return url.PathEscape(s)
}

// entryKey is a valid key most of the time, else one of the rejected forms
// (as escaped on the wire).
func (g *hostileGen) entryKey() string {
	if g.chance(0.5) {
		return g.pick("MEMORY.md", "notes/a.md", "deep/er/file.md", "ü.md", "a%20b.md")
	}
	return g.pick("", ".", "..", "../x", "a//b", "a/./b", "a/../b", "%2e%2e/x", "a%2Fb", "a%5Cb", "%00", "a%00b",
		"%EF%BC%8E%EF%BC%8E%EF%BC%8Fx", "%01", "%7F", "%C2%85", "%FF", url.PathEscape(strings.Repeat("k", 600)), "trailing/",
		"x/history", "x/restore", g.segment())
}

// route returns a method and raw path, mostly following the API's route
// templates with some segments replaced.
func (g *hostileGen) route() (method, path string) {
	repo := "acme/hostile"
	if g.chance(0.25) {
		repo = g.segment() + "/" + g.segment()
	}
	scope := "team"
	if g.chance(0.2) {
		scope = g.pick("personal", g.segment())
	}
	space := "/v1/repos/" + repo + "/" + scope
	methods := []string{"GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "PROPFIND"}
	if g.chance(0.15) {
		return g.storeRoute(methods)
	}
	switch g.r.IntN(20) {
	case 0, 1, 2, 3:
		return g.pick("GET", "PUT", "PUT", "HEAD", "POST"), "/api/claude_code/team_memory"
	case 4, 5, 6:
		return g.pick("POST", "POST", "GET", "DELETE"), space + "/batch"
	case 7, 8, 9:
		return g.pick("GET", "PUT", "PUT", "DELETE", "POST"), space + "/entries/" + g.entryKey()
	case 10:
		return "POST", space + "/entries/" + g.entryKey() + "/restore"
	case 11:
		return "GET", space + "/entries/" + g.entryKey() + "/history"
	case 12:
		return g.pick("GET", "DELETE"), space + g.pick("", "/", "/changes", "/MEMORY.md", "/export")
	case 13:
		return "GET", "/v1/repos/" + repo + g.pick("", "/events")
	case 14:
		return g.pick("GET", "PATCH"), "/v1/org" + g.pick("", "/audit", "/users", "/keys")
	case 15:
		return g.pick("POST", "PATCH", "DELETE"), "/v1/org/" + g.pick("users/", "keys/") + g.segment()
	case 16:
		return "POST", "/v1/telemetry/events"
	case 17:
		return g.pick("GET", "POST", "PATCH"), "/v1/admin/orgs" + g.pick("", "/"+g.segment())
	case 18:
		return g.pick(methods...), g.pick("/healthz", "/readyz", "/metrics", "/v1/me", "/v1/repos", "/", "/v1", "/v2/x")
	default:
		return g.pick(methods...), "/x/" + g.segment() + "/" + g.segment()
	}
}

// storeRoute returns a method and raw path of the memory store routes,
// with ids malformed or unknown (the run has no store of its own to name).
func (g *hostileGen) storeRoute(methods []string) (method, path string) {
	id := g.pick("memstore_"+fmt.Sprintf("%032x", g.r.Uint64()), "memstore_", "memstore_ZZ", "mem_x", g.segment())
	mem := g.pick("mem_"+fmt.Sprintf("%x", g.r.Uint64()), "mem_", "mem_%00", "memver_1", g.segment())
	ver := g.pick("memver_1", "memver_0", "memver_01", "memver_99999999999999999999", g.segment())
	base := "/v1/memory_stores/" + id
	switch g.r.IntN(8) {
	case 0:
		return g.pick("GET", "POST", "POST"), "/v1/memory_stores"
	case 1:
		return g.pick("GET", "POST", "DELETE", "PATCH"), base + g.pick("", "/", "/archive", "//")
	case 2:
		return g.pick("GET", "POST", "POST"), base + "/memories"
	case 3:
		return "GET", base + "/memories/export"
	case 4:
		return g.pick("GET", "POST", "DELETE"), base + "/memories/" + mem
	case 5:
		return g.pick("GET", "POST"), base + "/memory_versions" + g.pick("", "/"+ver, "/"+ver+"/redact")
	case 6:
		return g.pick(methods...), base + "/memories/" + g.entryKey()
	default:
		return g.pick(methods...), base + strings.Repeat("/"+g.segment(), 1+g.r.IntN(22))
	}
}

// query returns a raw query string for the path.
func (g *hostileGen) query(path string) string {
	if !strings.Contains(path, "team_memory") {
		if g.chance(0.3) {
			return g.pick("since=", "view=", "limit=", "before=", "repo=", "action=", "actor=", "x=", "depth=", "page=",
				"path_prefix=", "created_at%5Bgte%5D=", "operation=", "expected_content_sha256=") + url.QueryEscape(g.garbage(false))
		}
		if g.chance(0.2) {
			return g.pick("since=0", "view=hashes", "view=head", "limit=1", "since=-1", "limit=100000", "%zz", "a=%00")
		}
		return ""
	}
	repo := "repo=acme/hostile"
	if g.chance(0.3) {
		repo = "repo=" + g.pick(g.segment(), url.QueryEscape(g.garbage(false)), "", "a/b/c/d/e", "%2e%2e/x")
	}
	if g.chance(0.1) {
		return g.pick("", "view=hashes", "repo=a&repo=b")
	}
	return repo + g.pick("", "", "&view=hashes", "&view="+url.QueryEscape(g.garbage(false)))
}

// jsonGarbage returns a body that is wrong in one of many ways.
func (g *hostileGen) jsonGarbage() []byte {
	switch g.r.IntN(16) {
	case 0:
		return nil
	case 1:
		return []byte(g.pick("null", "true", "1", `"x"`, "[]", "{}", " "))
	case 2: // truncated valid body
		b := g.validBody()
		return b[:g.r.IntN(len(b)+1)]
	case 3: // deep nesting
		n := 1 + g.r.IntN(20000)
		return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
	case 4:
		n := 1 + g.r.IntN(20000)
		return []byte(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n))
	case 5:
		return []byte(g.pick(`{"entries":1e999999}`, `{"version":123456789012345678901234567890}`, `{"version":-1}`,
			`{"version":1.5}`, `{"since":1e308}`, `{"events":[{"name":"x","fields":{"n":1e400}}]}`))
	case 6:
		return []byte(g.pick(`{"entries":["a"]}`, `{"entries":{"a":1}}`, `{"entries":{"a":null}}`, `{"upserts":"x"}`,
			`{"upserts":[{"key":1,"content":2}]}`, `{"upserts":[{"key":"a.md"}]}`, `{"deletes":[{"key":null}]}`,
			`{"upserts":[{"key":"a.md","content":"x","base":7}]}`, `{"name":["x"]}`, `{"events":"x"}`,
			`{"max_entries":"x"}`, `{"secret_policy":"maybe"}`, `{"secret_allowlist":{"regexes":["("]}}`, `{"role":"god"}`,
			`{"path":1,"content":2}`, `{"path":"/a/../b","content":"x"}`, `{"path":"/x","content":"x","precondition":{"type":"nope"}}`,
			`{"name":"","metadata":{"k":1}}`))
	case 7: // invalid UTF-8 and NUL in keys and content
		return []byte(g.pick("{\"entries\":{\"a\xff.md\":\"x\"}}", "{\"entries\":{\"a.md\":\"\xc3\x28\"}}",
			`{"entries":{"a.md":"nul\u0000byte"}}`, `{"entries":{"\u0000":"x"}}`,
			"{\"upserts\":[{\"key\":\"k.md\",\"content\":\"\xed\xa0\x80\"}]}", `{"entries":{"a.md":"\ud800"}}`))
	case 8:
		return bytes.Repeat([]byte("x"), hostileBodyLimit+1+g.r.IntN(4096)) // over the limit
	case 9:
		return []byte(`{"entries":{"big.md":"` + strings.Repeat("y", hostileBodyLimit) + `"}}`)
	case 10: // gzip magic and garbage
		return append([]byte{0x1f, 0x8b, 0x08, 0x00}, g.randomBytes(64)...)
	case 11:
		return g.randomBytes(1 + g.r.IntN(512))
	case 12: // duplicate and unknown fields, trailing data
		return []byte(g.pick(`{"entries":{"a.md":"1"},"entries":{"b.md":"2"}}`, `{"entries":{"a.md":"1"}} {"x":1}`,
			`{"entries":{"a.md":"1"},"unknown":true}`, `{"upserts":[],"deletes":[]}`, `{"name":"x","name":"y"}`))
	case 13: // every rejected key form in a body
		return []byte(fmt.Sprintf(`{"entries":{%q:"x"},"upserts":[{"key":%q,"content":"x"}]}`, g.pick(rejectedKeys...), g.pick(rejectedKeys...)))
	default:
		return g.validBody()
	}
}

// rejectedKeys lists key forms the server must refuse (reference §3.9).
var rejectedKeys = []string{"", ".", "..", "../x", "/abs", "a//b", "a/./b", "a\\b", "%2e%2e/x", "a%2Fb", "\x00", "a\x00b",
	"．．／x", "\x01", "\x7f", "\u0085", "trailing/", strings.Repeat("k", 513), "a/\u2024\u2024/b"}

// validBody returns a well-formed body for one of the write routes.
func (g *hostileGen) validBody() []byte {
	k := g.pick("a.md", "notes/b.md", "MEMORY.md", "ü.md")
	bodies := []any{
		map[string]any{"entries": map[string]string{k: fmt.Sprint(g.r.IntN(5))}},
		map[string]any{"upserts": []map[string]any{{"key": k, "content": fmt.Sprint(g.r.IntN(5)), "base": nil}}, "deletes": []map[string]any{{"key": "gone.md"}}},
		map[string]any{"upserts": []map[string]any{{"key": k, "content": "x", "base": "sha256:00"}}},
		map[string]any{"version": 1 + g.r.IntN(3)},
		map[string]any{"events": []map[string]any{{"name": "tengu_team_mem_sync_pull", "fields": map[string]any{"n": 1}}}},
		map[string]any{"name": "hostile", "read_only": true},
		map[string]any{"slug": fmt.Sprintf("org-%d", g.r.IntN(1000)), "name": "x"},
		map[string]any{"handle": fmt.Sprintf("u%d", g.r.IntN(1000)), "role": g.pick("member", "viewer", "owner")},
	}
	b, _ := json.Marshal(bodies[g.r.IntN(len(bodies))])
	return b
}

func (g *hostileGen) randomBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return b
}

// header returns hostile headers; most requests carry a valid key so that
// handlers are reached.
func (g *hostileGen) header(path string) http.Header {
	h := http.Header{}
	key := bootstrapKey
	if strings.HasPrefix(path, "/v1/admin") && g.chance(0.8) {
		key = hostileAdminKey
	}
	switch g.r.IntN(12) {
	case 0:
		h.Set("Authorization", g.pick("Bearer", "Bearer ", "Basic "+key, "Bearer tmk_x_y", "Bearer "+strings.Repeat("k", 8000), "bearer  "+key+"  ", "Token "+key))
	case 1:
		h.Set("x-api-key", g.pick("", "x", key, key+"x", strings.Repeat("é", 500)))
	case 2: // nothing
	default:
		h.Set("Authorization", "Bearer "+key)
	}
	if g.chance(0.2) {
		h.Set(g.pick("If-Match", "If-None-Match"), g.pick("*", `""`, `"`, `W/"x"`, ",,,", "sha256:", `"sha256:00", *`,
			strings.Repeat(`"a",`, 2000), "\t", `"`+checksum("x")+`"`, g.garbage(false)))
	}
	if g.chance(0.2) {
		h.Set("Content-Type", g.pick("", "text/plain", "application/json; charset=latin1", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", ";;;", "application/json"))
	}
	if g.chance(0.05) {
		h.Set("Content-Encoding", g.pick("gzip", "br", "identity", "x"))
	}
	if g.chance(0.05) {
		h.Set("X-Filler", strings.Repeat("f", 1+g.r.IntN(40_000))) // large, within the 64 KiB header limit
	}
	if g.chance(0.1) {
		h.Set(g.pick("X-Request-Id", "X-Teammem-Client", "User-Agent", "Last-Event-ID", "Accept"), g.pick(strings.Repeat("r", 5000), "../../", "ü", "t1.p2", "t-1.p", "x", "*/*"))
	}
	return h
}

// next draws one request.
func (g *hostileGen) next() hostileReq {
	method, path := g.route()
	req := hostileReq{method: method, path: path, query: g.query(path), header: g.header(path)}
	if method != "GET" && method != "HEAD" || g.chance(0.05) {
		req.body = g.jsonGarbage()
		req.chunked = g.chance(0.15)
	}
	if strings.Contains(path, "/entries/") && method == "PUT" && g.chance(0.5) {
		req.body = g.pick2([]byte("# a memory\n"), []byte("nul\x00"), []byte("\xff\xfe"), bytes.Repeat([]byte("m"), hostileBodyLimit+1), nil)
	}
	return req
}

func (g *hostileGen) pick2(xs ...[]byte) []byte { return xs[g.r.IntN(len(xs))] }

// hostileResult tallies a run.
type hostileResult struct {
	tally
	notJSON   atomic.Int64 // non-2xx/304 answers of the API without a JSON error body
	foreign   atomic.Int64 // answers net/http gave before the API saw the request
	clientErr atomic.Int64 // requests the Go client refused to send
	resent    atomic.Int64 // requests resent without their body after a broken connection
	mu        sync.Mutex
	failures  []string
}

func (r *hostileResult) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.failures) < 30 {
		r.failures = append(r.failures, fmt.Sprintf(format, args...))
	}
}

// TestReliabilityHostileRequests sends 10 000 malformed requests from a
// seeded generator at one server: random methods, broken paths and queries,
// garbage headers and bodies, every rejected key form. No answer may be a
// 5xx, the server must not panic, and every non-2xx answer other than 304
// (and HEAD's) must be a JSON error body {"error":{"type":...}} served as
// application/json.
func TestReliabilityHostileRequests(t *testing.T) {
	s := startServer(t, "sqlite://"+filepath.Join(t.TempDir(), "teammem.db"),
		fmt.Sprintf("TEAMMEM_MAX_BODY_BYTES=%d", hostileBodyLimit), "TEAMMEM_ADMIN_KEY="+hostileAdminKey, "TEAMMEM_LOG_LEVEL=debug")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	base, _ := url.Parse(s.URL)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	hc := &http.Client{Transport: tr, Timeout: relTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res := &hostileResult{}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range hostileWorkers {
		wg.Go(func() {
			g := &hostileGen{r: rand.New(rand.NewPCG(seed, uint64(w)))}
			for next.Add(1) <= hostileRequests {
				hostileSend(hc, base, g.next(), res)
			}
		})
	}
	wg.Wait()

	logs := s.logs.String()
	for _, bad := range []string{`"msg":"panic"`, "http: panic serving", "goroutine ", "superfluous response.WriteHeader"} {
		if strings.Contains(logs, bad) {
			i := strings.Index(logs, bad)
			t.Errorf("server log holds %q: %.2000s", bad, logs[max(0, i-500):])
		}
	}
	for _, f := range res.failures {
		t.Error(f)
	}
	if n := count5xx(res.status); n > 0 {
		t.Errorf("%d answers were 5xx", n)
	}
	if r := newRelClient(bootstrapKey).do("GET", s.URL+"/v1/me", nil); r.Status != 200 {
		t.Errorf("the server is unwell after the run: /v1/me = %d %s", r.Status, r.Body)
	}
	answers, errs := res.total()
	t.Logf("%d requests: %d answered %s; %d transport errors, %d refused by the Go client, %d resent without a body after a broken connection; %d answered by net/http itself; %d API errors without a JSON body",
		hostileRequests, answers, statusString(res.status), errs, res.clientErr.Load(), res.resent.Load(), res.foreign.Load(), res.notJSON.Load())
}

// hostileSend sends one request and checks its answer.
func hostileSend(hc *http.Client, base *url.URL, h hostileReq, res *hostileResult) {
	hostileSendOnce(hc, base, h, res, false)
}

// hostileSendOnce sends h; resent says whether this is the second try.
func hostileSendOnce(hc *http.Client, base *url.URL, h hostileReq, res *hostileResult, resent bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u := &url.URL{Scheme: base.Scheme, Host: base.Host, Opaque: h.path, RawQuery: h.query}
	var body io.Reader
	if h.body != nil {
		body = bytes.NewReader(h.body)
		if h.chunked {
			body = io.MultiReader(body) // hides the length: sent chunked
		}
	}
	req, err := http.NewRequestWithContext(ctx, h.method, base.String(), body)
	if err != nil {
		res.clientErr.Add(1)
		return
	}
	req.URL, req.Host, req.Header = u, base.Host, h.header
	resp, err := hc.Do(req)
	if err != nil {
		if strings.Contains(err.Error(), "net/http: invalid header") || strings.Contains(err.Error(), "can't write control character") {
			res.clientErr.Add(1)
			return
		}
		// net/http answers some malformed requests (a bad escape in the
		// path) with 400 and closes the connection, before reading the body:
		// writing the rest of the body then fails, as does the next request
		// that picked the same kept-alive connection. Such a request is sent
		// once more, without its body, and that answer is checked as any.
		if !resent {
			res.resent.Add(1)
			h.body, h.chunked = nil, false
			hostileSendOnce(hc, base, h, res, true)
			return
		}
		if _, perr := url.PathUnescape(h.path); perr != nil {
			// A bad escape in the path is refused by net/http as it reads the
			// request line: it answers 400 and closes, and with a large header
			// still being written the close can reset the connection before
			// the client reads that 400. Not an API answer either way.
			res.foreign.Add(1)
			return
		}
		res.add(relResp{Err: err})
		res.fail("transport error %v on %s", err, h)
		return
	}
	defer resp.Body.Close()
	r := relResp{Status: resp.StatusCode, Header: resp.Header}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		r.Body, _ = io.ReadAll(resp.Body)
	}
	res.add(r)
	checkHostileAnswer(h, r, res)
}

// checkHostileAnswer applies the rules every answer must follow.
func checkHostileAnswer(h hostileReq, r relResp, res *hostileResult) {
	if r.Status >= 500 {
		res.fail("%d %s on %s", r.Status, r.Body, h)
	}
	if r.Header.Get("X-Request-Id") == "" {
		res.foreign.Add(1) // net/http refused the request before the API saw it (e.g. a bad escape)
		if r.Status < 400 {
			res.fail("%d without X-Request-Id on %s", r.Status, h)
		}
		return
	}
	if h.method == "HEAD" || r.Status < 300 || r.Status == 304 {
		return
	}
	var eb struct {
		Error *struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	ct := r.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "application/json") || json.Unmarshal(r.Body, &eb) != nil || eb.Error == nil || eb.Error.Type == "" {
		res.notJSON.Add(1)
		res.fail("%d answer is not a JSON error (Content-Type %q): %.200q on %s", r.Status, ct, r.Body, h)
	}
}
