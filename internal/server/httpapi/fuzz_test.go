package httpapi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// Fuzz targets for request decoding: whatever the body or path, the API
// answers a 2xx (or 304) or a JSON error of the closed set, never a 500.
// Each fuzzing process gets one handler on a real SQLite store.

// fuzzBundle is a handler on a fresh store with org "acme" and an owner.
type fuzzBundle struct {
	h   http.Handler
	key string
}

func newFuzzBundle(f *testing.F) *fuzzBundle {
	f.Helper()
	st := MustOpenStore(f)
	org := MustOrg(f, st, "acme", teammem.OrgSettings{})
	_, key := MustUserKey(f, st, org, "owner", teammem.RoleOwner)
	return &fuzzBundle{h: httpapi.New(st, nil, testConfig(), nil, nil).Handler(), key: key}
}

// serve runs one request through the handler. u is the path and query as
// a client would send them.
func (b *fuzzBundle) serve(method string, u *url.URL, body []byte, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/", bytes.NewReader(body))
	req.URL, req.RequestURI = u, u.RequestURI()
	req.Header.Set("Authorization", "Bearer "+b.key)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	b.h.ServeHTTP(rec, req)
	return rec
}

// errorTypes is the closed set of error codes (style rule 3, plus gone).
var errorTypes = map[string]bool{"invalid": true, "unauthorized": true, "forbidden": true, "not_found": true,
	"conflict": true, "gone": true, "precondition_failed": true, "too_large": true, "secret_detected": true,
	"rate_limited": true, "unavailable": true, "internal": true}

// checkAnswer fails t unless rec is a success or a JSON error body of the
// closed set, and never a 5xx.
func checkAnswer(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("%s: %d %s", what, rec.Code, rec.Body)
	}
	if rec.Code < 300 || rec.Code == http.StatusNotModified {
		return
	}
	var eb struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	ct := rec.Header().Get("Content-Type")
	if !strings.HasPrefix(ct, "application/json") || json.Unmarshal(rec.Body.Bytes(), &eb) != nil ||
		!errorTypes[eb.Error.Type] || eb.Error.Message == "" {
		t.Fatalf("%s: %d is not a JSON error (Content-Type %q): %q", what, rec.Code, ct, rec.Body)
	}
}

// bodySeeds are request bodies valid and invalid for both write routes.
var bodySeeds = []string{
	`{"entries":{"MEMORY.md":"- [a](a.md)\n","a.md":"---\nname: a\n---\nbody\n"}}`,
	`{"entries":{}}`,
	`{"upserts":[{"key":"notes/a.md","content":"x","base":""}],"deletes":[{"key":"old.md"}]}`,
	`{"upserts":[{"key":"a.md","content":"y","base":"sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"}]}`,
	`{"upserts":[],"deletes":[],"if_match":"*"}`,
	``, `{`, `null`, `[]`, `"entries"`, `{"entries":null}`, `{"entries":[]}`, `{"entries":{"a.md":1}}`,
	`{"entries":{"../x":"y"}}`, `{"entries":{"a.md":"\u0000"}}`, `{"entries":{"a.md":"\ud800"}}`,
	"{\"entries\":{\"a\xff.md\":\"x\"}}", `{"entries":{"a.md":"1"}} trailing`, `{"upserts":[{"key":"a.md"}]}`,
	`{"upserts":[{"key":"a.md","content":"x","base":1}]}`, `{"version":1e999}`, `[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]`,
	`{"entries":{"a.md":"x"},"entries":{"b.md":"y"}}`, "\x1f\x8b\x08\x00garbage",
}

// FuzzTeamMemoryPut decodes arbitrary bodies on the Claude Code PUT.
func FuzzTeamMemoryPut(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	b := newFuzzBundle(f)
	u := &url.URL{Path: "/api/claude_code/team_memory", RawQuery: "repo=acme/fuzz"}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := b.serve("PUT", u, body, "Content-Type", "application/json")
		checkAnswer(t, "PUT team_memory", rec)
		if rec.Code == http.StatusOK && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("200 body is not JSON: %q", rec.Body)
		}
	})
}

// FuzzBatch decodes arbitrary bodies on the /v1 batch.
func FuzzBatch(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	b := newFuzzBundle(f)
	u := &url.URL{Path: "/v1/repos/acme/fuzz/team/batch"}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := b.serve("POST", u, body, "Content-Type", "application/json")
		checkAnswer(t, "POST batch", rec)
		if rec.Code == http.StatusOK && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("200 body is not JSON: %q", rec.Body)
		}
	})
}

// FuzzEntryKey puts and gets an entry at an arbitrary path segment, sent
// both as given and escaped. A key the server accepts is a key ValidateKey
// accepts, and reads back with the content written (unless the path ends
// in /history, which names the history route).
func FuzzEntryKey(f *testing.F) {
	for _, s := range []string{"MEMORY.md", "notes/a.md", "ü/日本.md", "a b.md", "", ".", "..", "../x", "/abs", "a//b",
		"a/./b", `a\b`, "%2e%2e/x", "a%2Fb", "%00", "a\x00b", "．．／x", "\x7f", "\u0085", "trailing/",
		strings.Repeat("k", 513), "x/history", "x/restore", "%zz", "a?b", "a#b", "%"} {
		f.Add(s)
	}
	b := newFuzzBundle(f)
	const prefix = "/v1/repos/acme/fuzz/team/entries/"
	f.Fuzz(func(t *testing.T, seg string) {
		for _, raw := range []string{prefix + seg, prefix + url.PathEscape(seg)} {
			u, err := url.Parse(raw)
			if err != nil || u.Path == "" {
				continue // no client can send it
			}
			u.Host, u.Scheme = "", ""
			content := fmt.Sprintf("# fuzz %x\n", sha256.Sum256([]byte(raw)))
			put := b.serve("PUT", u, []byte(content), "Content-Type", "text/markdown")
			checkAnswer(t, "PUT "+raw, put)
			get := b.serve("GET", u, nil)
			checkAnswer(t, "GET "+raw, get)
			if put.Code != http.StatusOK {
				continue
			}
			var res struct {
				Key     string   `json:"key"`
				Written []string `json:"written"`
			}
			if err := json.Unmarshal(put.Body.Bytes(), &res); err != nil {
				t.Fatalf("PUT %s: 200 body is not JSON: %q", raw, put.Body)
			}
			if err := teammem.ValidateKey(res.Key); err != nil {
				t.Fatalf("PUT %s stored key %q that ValidateKey refuses: %v", raw, res.Key, err)
			}
			if strings.HasSuffix(u.EscapedPath(), "/history") {
				continue // the history route, as api/openapi.yaml documents for such keys
			}
			if get.Code != http.StatusOK || get.Body.String() != content {
				t.Fatalf("PUT %s stored %q; GET answers %d %q", raw, res.Key, get.Code, get.Body)
			}
		}
	})
}

// storeFuzzBundle is a fuzzBundle with an API store holding one memory.
type storeFuzzBundle struct {
	*fuzzBundle
	base, mem string
}

func newStoreFuzzBundle(f *testing.F) *storeFuzzBundle {
	f.Helper()
	b := newFuzzBundle(f)
	rec := b.serve("POST", &url.URL{Path: "/v1/memory_stores", RawQuery: "beta=true"}, []byte(`{"name":"fuzz"}`))
	var s struct{ ID string }
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &s) != nil {
		f.Fatalf("create store: %d %s", rec.Code, rec.Body)
	}
	base := "/v1/memory_stores/" + s.ID
	rec = b.serve("POST", &url.URL{Path: base + "/memories"}, []byte(`{"path":"/dir/a.md","content":"a"}`))
	var m struct{ ID string }
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &m) != nil {
		f.Fatalf("create memory: %d %s", rec.Code, rec.Body)
	}
	return &storeFuzzBundle{fuzzBundle: b, base: base, mem: m.ID}
}

// checkStoreFuzzAnswer fails t on a 5xx, or on a refusal that is not a
// clear 4xx in Anthropic's envelope.
func checkStoreFuzzAnswer(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code < 300 {
		return
	}
	if msg := checkStoreAnswer(rec.Code, rec.Header(), rec.Body.Bytes()); msg != "" {
		t.Fatalf("%s: %s", what, msg)
	}
}

// FuzzMemoryStoreWrite decodes arbitrary bodies on a memory create and
// update. A memory the server accepts has a valid id and a path MemoryKey
// accepts.
func FuzzMemoryStoreWrite(f *testing.F) {
	for _, s := range []string{`{"path":"/a.md","content":"x"}`, `{"path":"/n/b.md","content":"y","precondition":{"type":"not_exists"}}`,
		`{"content":"z","precondition":{"type":"content_sha256","content_sha256":"` + strings.Repeat("0", 64) + `"}}`,
		`{"path":"/a/../b.md","content":"x"}`, `{"path":"/e\u0301.md","content":"x"}`, `{"path":"/a\u202eb","content":"x"}`,
		`{"path":1}`, `{"content":["x"]}`, `{`, ``, `null`, "{\"path\":\"/\xff\",\"content\":\"x\"}", `{"path":"/x.md","content":"\ud800"}`,
		`{"path":"/` + strings.Repeat("a/", 21) + `x","content":"x"}`} {
		f.Add([]byte(s))
	}
	b := newStoreFuzzBundle(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, u := range []*url.URL{{Path: b.base + "/memories"}, {Path: b.base + "/memories/" + b.mem}} {
			rec := b.serve("POST", u, body, "Content-Type", "application/json")
			checkStoreFuzzAnswer(t, "POST "+u.Path, rec)
			if rec.Code != http.StatusOK {
				continue
			}
			var m struct{ ID, Path string }
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || !teammem.ValidMemoryID(m.ID) {
				t.Fatalf("POST %s: 200 is not a memory: %q", u.Path, rec.Body)
			}
			if _, err := teammem.MemoryKey(m.Path); err != nil {
				t.Fatalf("POST %s stored path %q that MemoryKey refuses: %v", u.Path, m.Path, err)
			}
		}
	})
}

// FuzzMemoryStoreQuery sends arbitrary path tails and query strings to the
// store's read routes.
func FuzzMemoryStoreQuery(f *testing.F) {
	for _, s := range [][2]string{{"memories", "limit=100&path_prefix=%2F&depth=1&order_by=path&order=asc"},
		{"memories", "page=AAAA"}, {"memories", "limit=0"}, {"memories", "depth=-1"}, {"memories", "path_prefix=a/"},
		{"memories/export", "view=basic"}, {"memories/export", "view=x"}, {"memory_versions", "created_at%5Bgte%5D=x"},
		{"memory_versions", "operation=nope&page=0"}, {"memory_versions/memver_1", ""}, {"memories/mem_%00", ""},
		{"..%2F..", ""}, {"memories//x", "%zz"}, {"memory_versions/memver_99999999999999999999", "view=full"}} {
		f.Add(s[0], s[1])
	}
	b := newStoreFuzzBundle(f)
	f.Fuzz(func(t *testing.T, tail, query string) {
		u, err := url.Parse(b.base + "/" + tail)
		if err != nil || u.Path == "" {
			return // no client can send it
		}
		u.Host, u.Scheme, u.RawQuery = "", "", query
		rec := b.serve("GET", u, nil)
		checkStoreFuzzAnswer(t, "GET "+u.String(), rec)
	})
}
