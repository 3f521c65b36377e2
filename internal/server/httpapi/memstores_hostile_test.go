package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// anthropicErrorTypes are the error types of Anthropic's envelope that the
// store routes answer (storeErrorTypes, plus the body limit's).
var anthropicErrorTypes = map[string]bool{"invalid_request_error": true, "authentication_error": true,
	"permission_error": true, "not_found_error": true, "conflict_error": true, "memory_path_conflict_error": true,
	"memory_precondition_failed_error": true, "rate_limit_error": true,
	"overloaded_error": true, "api_error": true, "request_too_large": true}

// checkStoreAnswer returns what is wrong with a store route's answer to a
// request it must refuse: anything but a 4xx in Anthropic's envelope, served
// as JSON, with an error type of the set and a message.
func checkStoreAnswer(status int, header http.Header, body []byte) string {
	if status < 400 || status >= 500 {
		return fmt.Sprintf("status %d, want a 4xx", status)
	}
	var eb struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	ct := header.Get("Content-Type")
	if !strings.HasPrefix(ct, "application/json") || json.Unmarshal(body, &eb) != nil || eb.Type != "error" ||
		!anthropicErrorTypes[eb.Error.Type] || eb.Error.Message == "" {
		return fmt.Sprintf("%d is not Anthropic's error envelope (Content-Type %q): %.300q", status, ct, body)
	}
	if !json.Valid(body) || !utf8Valid(body) {
		return "the error body is not valid UTF-8 JSON"
	}
	return ""
}

func utf8Valid(b []byte) bool { return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) }

// hostileStoreReq is one request a store route must refuse. path is raw,
// as it goes on the wire (escapes and all), relative to the store.
type hostileStoreReq struct {
	method, path, query string
	body                []byte
}

func (h hostileStoreReq) String() string {
	p, b := h.path, h.body
	if len(p) > 120 {
		p = p[:120] + "…"
	}
	if len(b) > 80 {
		b = b[:80]
	}
	return fmt.Sprintf("%s %s?%.120s %q", h.method, p, h.query, b)
}

// hostileStoreRequests lists the attack families of the hostile test on
// the memory store routes: bad paths (in the URL and in bodies), bad ids
// (malformed, or another tenant's), bad query values and bad bodies. st,
// mem and ver are a store the caller may write and one of its memories and
// versions; their* are another org's.
func hostileStoreRequests(st, mem, ver, theirStore, theirMem, theirVer string) []hostileStoreReq {
	base := "/v1/memory_stores/" + st
	var out []hostileStoreReq
	add := func(method, path, query string, body any) {
		var b []byte
		switch v := body.(type) {
		case nil:
		case string:
			b = []byte(v)
		case []byte:
			b = v
		default:
			b, _ = json.Marshal(v)
		}
		out = append(out, hostileStoreReq{method, path, query, b})
	}
	long := strings.Repeat("a", 6000)
	// Bad store ids, memory ids and version ids in the URL.
	storeIDs := []string{"", "memstore_", "memstore_" + strings.ToUpper(strings.TrimPrefix(st, "memstore_")), st + "0",
		"memstore_" + strings.Repeat("a", 65), "memstore_zz", "memstore_..", "memstore_%2e%2e", "%2e%2e", "..", ".",
		"memstore_%00", "memstore_a%2Fb", "memstore_%E2%80%AE", "memstore_e%CC%81", "memstore_%FF", "memstore_%C3%28",
		long, "mem_x", theirStore, url.PathEscape(theirStore + "/../" + st)}
	for _, id := range storeIDs {
		add("GET", "/v1/memory_stores/"+id, "beta=true", nil)
		add("GET", "/v1/memory_stores/"+id+"/memories", "", nil)
		add("GET", "/v1/memory_stores/"+id+"/memories/export", "view=basic", nil)
		add("POST", "/v1/memory_stores/"+id+"/memories", "", map[string]any{"path": "/x.md", "content": "x"})
		add("POST", "/v1/memory_stores/"+id+"/archive", "", nil)
		add("DELETE", "/v1/memory_stores/"+id, "", nil)
	}
	memIDs := []string{"mem_", "mem_" + strings.Repeat("a", 121), "mem_a%2Fb", "mem_%00", "mem_a.b", "mem_%E2%80%AE",
		"MEM_abc", "memver_1", st, "%2e%2e", long, theirMem, mem + "%00", url.PathEscape(mem + "/x")}
	for _, id := range memIDs {
		add("GET", base+"/memories/"+id, "", nil)
		add("POST", base+"/memories/"+id, "", map[string]any{"content": "x"})
		add("DELETE", base+"/memories/"+id, "", nil)
	}
	verIDs := []string{"memver_", "memver_0", "memver_01", "memver_-1", "memver_1.5", "memver_99999999999999999999",
		"memver_9223372036854775807", "memver_%00", "memver_1%2F2", "mem_1", long, theirVer, ver + "0000000"}
	for _, id := range verIDs {
		add("GET", base+"/memory_versions/"+id, "", nil)
		add("POST", base+"/memory_versions/"+id+"/redact", "", nil)
	}
	// Bad URL shapes: doubled slashes, dot segments, too many segments.
	for _, p := range []string{"/v1/memory_stores//memories", base + "//memories", base + "/memories//" + mem, base + "/./memories",
		base + "/memories/../memories", base + "/memories/" + mem + "/x", base + strings.Repeat("/a", 21), base + "/memories/export/x",
		base + "/memory_versions/" + ver + "/redact/x", "/v1/memory_stores/" + st + "%2Fmemories", base + "/%6Demories"} {
		add("GET", p, "", nil)
		add("POST", p, "", map[string]any{"path": "/x.md", "content": "x"})
	}
	add("PUT", base+"/memories", "", map[string]any{"path": "/x.md", "content": "x"}) // no such method
	add("PATCH", base, "", map[string]any{"name": "x"})
	// Bad memory paths in bodies, on create and on rename.
	badPaths := []any{"", "/", "x.md", "/a/../b.md", "/./a.md", "/a/./b.md", "//a.md", "/a//b.md", "/dir/", "/a\x00b.md",
		"/a\u202eb.md", "/a\u200bb.md", "/a\u2028b.md", "/a\x7fb.md", "/\u0085x.md", "/" + strings.Repeat("p", 1025),
		"/" + strings.Repeat("a/", 20) + "x.md", "/e\u0301.md", "/%2e%2e/x.md", "/a%2Fb/../../x.md", "/a\\b.md",
		"/．．／x.md", "/trailing./x.md", "/x.md ", 1, true, nil, []string{"/x.md"}, map[string]any{}}
	for _, p := range badPaths {
		add("POST", base+"/memories", "", map[string]any{"path": p, "content": "x"})
		add("POST", base+"/memories", "", map[string]any{"path": p, "content": "x", "precondition": map[string]any{"type": "not_exists"}})
		if p != nil {
			add("POST", base+"/memories/"+mem, "", map[string]any{"path": p})
		}
	}
	// Bad bodies: wrong types, huge, truncated, invalid UTF-8, odd JSON.
	good := `{"path":"/fresh.md","content":"fresh"}`
	bodies := []string{``, `{`, `null`, `[]`, `"x"`, `1`, good[:len(good)/2], good + ` {"x":1}`, good + `garbage`,
		`{"path":"/y.md","content":1}`, `{"path":"/y.md","content":["x"]}`, `{"path":"/y.md","content":{"a":1}}`,
		`{"path":"/y.md"}`, `{"path":"/y.md","content":null}`, `{"path":"/y.md","content":"x","precondition":"not_exists"}`,
		`{"path":"/y.md","content":"x","precondition":{"type":"nope"}}`, `{"path":"/y.md","content":"x","precondition":{"type":"content_sha256"}}`,
		`{"path":"/y.md","content":"x","precondition":{"type":"content_sha256","content_sha256":"zz"}}`,
		"{\"path\":\"/y\xff.md\",\"content\":\"x\"}", "{\"path\":\"/y.md\",\"content\":\"\xc3\x28\"}",
		`{"path":"/y.md","content":"\ud800"}`, `{"path":"/y.md","content":"nul\u0000"}`,
		`{"path":"/y.md","content":"` + strings.Repeat("c", teammem.MaxMemoryBytes+1) + `"}`,
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000), strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000),
		"\x1f\x8b\x08\x00garbage", `{"path":"/y.md","content":"x","path":"/z.md","content":1}`}
	for _, b := range bodies {
		add("POST", base+"/memories", "", b)
	}
	updates := []string{`{"content":1}`, `{"content":"x","precondition":{"type":"not_exists"}}`,
		`{"content":"x","precondition":{"type":"content_sha256","content_sha256":"` + strings.Repeat("0", 64) + `"}}`,
		`{"content":"x","precondition":{"type":"content_sha256","content_sha256":"` + strings.Repeat("g", 64) + `"}}`,
		`{"content":"` + strings.Repeat("c", teammem.MaxMemoryBytes+1) + `"}`, `{"path":""}`, `{`, `[]`}
	for _, b := range updates {
		add("POST", base+"/memories/"+mem, "", b)
	}
	add("POST", base+"/memories", "", bytes.Repeat([]byte("x"), 4<<20+1)) // over the body limit
	storeBodies := []string{`{}`, `{"name":""}`, `{"name":1}`, `{"name":"` + strings.Repeat("n", 256) + `"}`, `{"name":"a\u0001b"}`,
		"{\"name\":\"a\xffb\"}", `{"name":"x","description":"` + strings.Repeat("d", 1025) + `"}`, `{"name":"x","metadata":{"k":1}}`,
		`{"name":"x","metadata":{"":"v"}}`, `{"name":"x","metadata":{"k":"` + strings.Repeat("v", 513) + `"}}`,
		`{"name":"x","metadata":` + manyPairs(17) + `}`, `{"name":"x","metadata":[]}`, `{"name":null}`}
	for _, b := range storeBodies {
		add("POST", "/v1/memory_stores", "beta=true", b)
	}
	add("POST", base, "beta=true", `{"name":""}`) // an API store's update with a bad name
	// Bad query values: limits, depth, cursors, dates, views, prefixes.
	cursor := func(s string) string { return url.QueryEscape(base64.RawURLEncoding.EncodeToString([]byte(s))) }
	lists := []string{"limit=0", "limit=-1", "limit=101", "limit=1e3", "limit=abc", "limit=99999999999999999999", "limit=%00",
		"view=full&limit=21", "depth=-1", "depth=21", "depth=x", "depth=1.5", "page=" + cursor("no-nul"), "page=%00", "page=!!!",
		"page=" + strings.Repeat("A", 6000), "page=" + cursor("\xff\xfe\x00x"), "view=huge", "order_by=created_at", "order=desc",
		"path_prefix=a/", "path_prefix=/a", "path_prefix=/../", "path_prefix=%2F..%2F", "path_prefix=/%00/", "path_prefix=//",
		"path_prefix=/a//", "path_prefix=/e%CC%81/", "path_prefix=/%E2%80%AE/", "path_prefix=/" + strings.Repeat("p", 1100) + "/"}
	for _, q := range lists {
		add("GET", base+"/memories", q, nil)
	}
	versions := []string{"limit=0", "limit=101", "limit=x", "page=0", "page=-5", "page=abc", "page=99999999999999999999",
		"operation=renamed", "operation=", "view=x", "created_at%5Bgte%5D=yesterday", "created_at%5Blte%5D=2026-13-01T00:00:00Z",
		"created_at%5Bgte%5D=" + strings.Repeat("9", 200), "created_at%5Blte%5D=%00"}
	for _, q := range versions {
		if q == "operation=" {
			continue // empty means no filter
		}
		add("GET", base+"/memory_versions", q, nil)
	}
	stores := []string{"limit=0", "limit=101", "page=abc", "page=0", "created_at%5Bgte%5D=x", "created_at%5Blte%5D=2026-02-30"}
	for _, q := range stores {
		add("GET", "/v1/memory_stores", q, nil)
	}
	for _, q := range []string{"view=x", "view=FULL"} {
		add("GET", base+"/memories/export", q, nil)
		add("GET", base+"/memories/"+mem, q, nil)
		add("GET", base+"/memory_versions/"+ver, q, nil)
	}
	for _, q := range []string{"expected_content_sha256=zz", "expected_content_sha256=" + strings.Repeat("a", 63),
		"expected_content_sha256=" + strings.Repeat("0", 64), "expected_content_sha256=%00"} {
		add("DELETE", base+"/memories/"+mem, q, nil)
	}
	return out
}

func manyPairs(n int) string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = "v"
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestMemoryStoreHostileInput sends every request of hostileStoreRequests
// to a real server on both drivers, with both dialects' headers: each is
// refused with a clear 4xx in Anthropic's envelope (never a 5xx), and
// nothing changed afterwards, in the caller's store or the other org's.
func TestMemoryStoreHostileInput(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		key := e.keys[teammem.RoleOwner]
		s := e.do("POST", "/v1/memory_stores?beta=true", key, map[string]any{"name": "target"}).want(t, 200).JSON(t)
		store := s["id"].(string)
		mem := e.do("POST", "/v1/memory_stores/"+store+"/memories", key, map[string]any{"path": "/keep/a.md", "content": "keep"}).want(t, 200).JSON(t)
		other := MustOrg(t, st, "other", teammem.OrgSettings{})
		_, okey := MustUserKey(t, st, other, "eve", teammem.RoleOwner)
		ts := e.do("POST", "/v1/memory_stores?beta=true", okey, map[string]any{"name": "theirs"}).want(t, 200).JSON(t)
		tm := e.do("POST", "/v1/memory_stores/"+ts["id"].(string)+"/memories", okey, map[string]any{"path": "/t.md", "content": "theirs"}).want(t, 200).JSON(t)

		snapshot := func(k, id string) string {
			exp := e.do("GET", "/v1/memory_stores/"+id+"/memories/export", k, nil).want(t, 200).Body
			vs := e.do("GET", "/v1/memory_stores/"+id+"/memory_versions?view=full&limit=20", k, nil).want(t, 200).Body
			sg := e.do("GET", "/v1/memory_stores/"+id, k, nil).want(t, 200).Body
			return string(exp) + string(vs) + string(sg)
		}
		mine, theirs := snapshot(key, store), snapshot(okey, ts["id"].(string))
		stores := e.do("GET", "/v1/memory_stores?include_archived=true", key, nil).want(t, 200).Body

		reqs := hostileStoreRequests(store, mem["id"].(string), mem["memory_version_id"].(string),
			ts["id"].(string), tm["id"].(string), tm["memory_version_id"].(string))
		failures := 0
		for i, h := range reqs {
			hdr := cliHeaders
			if i%2 == 1 {
				hdr = []string{"anthropic-beta", "agent-memory-2026-07-22", "anthropic-version", "2026-10-21"}
			}
			status, header, body := rawDo(t, e.url, h, key, hdr...)
			if msg := checkStoreAnswer(status, header, body); msg != "" {
				failures++
				t.Errorf("%s: %s", h, msg)
				if failures > 20 {
					t.Fatal("too many failures")
				}
			}
		}
		t.Logf("%d hostile requests refused", len(reqs))
		if got := snapshot(key, store); got != mine {
			t.Errorf("the caller's store changed:\n%s\nwas\n%s", got, mine)
		}
		if got := snapshot(okey, ts["id"].(string)); got != theirs {
			t.Errorf("the other org's store changed")
		}
		if got := e.do("GET", "/v1/memory_stores?include_archived=true", key, nil).want(t, 200).Body; !bytes.Equal(got, stores) {
			t.Errorf("the org's stores changed: %s, was %s", got, stores)
		}
	})
}

// rawDo sends h with its path exactly as given (no re-escaping).
func rawDo(t *testing.T, base string, h hostileStoreReq, key string, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Opaque, u.RawQuery = h.path, h.query
	var rd io.Reader
	if h.body != nil {
		rd = bytes.NewReader(h.body)
	}
	req, err := http.NewRequestWithContext(t.Context(), h.method, base, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.URL = u
	req.Header.Set("Authorization", "Bearer "+key)
	if h.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", h, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}
