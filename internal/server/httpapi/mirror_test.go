package httpapi_test

import (
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// TestKeysEveryClientCanMirror writes, through both APIs on both drivers,
// keys that no client could keep side by side on disk: each is refused with
// invalid naming the key, and nothing is written.
func TestKeysEveryClientCanMirror(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		k := e.keys[teammem.RoleMember]
		e.do("PUT", team+"/entries/notes/build.md", k, "make\n").want(t, 200)
		for _, key := range []string{"notes", "notes/build.md/deeper.md", "Notes/deploy.md", "notes/BUILD.md"} {
			r := e.do("POST", team+"/batch", k, map[string]any{"upserts": []map[string]any{{"key": key, "content": "x"}}}).want(t, 400)
			if msg := r.JSON(t)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, key) {
				t.Errorf("refusal of %q does not name it: %s", key, msg)
			}
			legacy := e.do("PUT", "/api/claude_code/team_memory?repo=acme/widgets", k, map[string]any{"entries": map[string]string{key: "x"}})
			legacy.want(t, 400)
		}
		for _, key := range []string{"notes/\u202etxt.md", "\ufeffMEMORY.md", "zero\u200bwidth.md", "trailing./a.md", "space /a.md"} {
			e.do("POST", team+"/batch", k, map[string]any{"upserts": []map[string]any{{"key": key, "content": "x"}}}).want(t, 400)
		}
		if r := e.do("GET", team+"?view=hashes", k, nil).want(t, 200).JSON(t); r["entry_count"] != 1.0 {
			t.Fatalf("refused writes stored something: %v", r)
		}
	})
}

// TestBodiesJSONWouldRepairAreRefused sends invalid UTF-8 and lone UTF-16
// surrogate escapes to both APIs: 400, where encoding/json alone would store
// U+FFFD in their place.
func TestBodiesJSONWouldRepairAreRefused(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		k := e.keys[teammem.RoleMember]
		for _, body := range []string{
			"{\"entries\":{\"a.md\":\"bad \xff byte\"}}",
			`{"entries":{"a.md":"lone high \ud800 surrogate"}}`,
			`{"entries":{"a.md":"lone low \udc00 surrogate"}}`,
			`{"entries":{"a.md":"reversed \udc00\ud800 pair"}}`,
			`{"entries":{"a.md":"cut \ud800"}}`,
		} {
			r := e.do("PUT", "/api/claude_code/team_memory?repo=acme/widgets", k, body, "Content-Type", "application/json").want(t, 400)
			if !strings.Contains(string(r.Body), "UTF") {
				t.Errorf("%q: %s", body, r.Body)
			}
			v1 := strings.Replace(body, `{"entries":{"a.md":`, `{"upserts":[{"key":"a.md","content":`, 1)
			v1 = strings.TrimSuffix(v1, "}}") + "}]}"
			e.do("POST", team+"/batch", k, v1, "Content-Type", "application/json").want(t, 400)
		}
		// A proper pair and escaped backslashes are fine.
		e.do("PUT", "/api/claude_code/team_memory?repo=acme/widgets", k,
			`{"entries":{"a.md":"emoji \ud83d\ude00 and \\ud800 as text"}}`, "Content-Type", "application/json").want(t, 200)
		g := e.do("GET", team+"/entries/a.md", k, nil).want(t, 200)
		if string(g.Body) != "emoji 😀 and \\ud800 as text" {
			t.Fatalf("stored %q", g.Body)
		}
	})
}
