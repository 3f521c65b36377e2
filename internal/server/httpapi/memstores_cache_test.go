package httpapi_test

import (
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// TestMemoryStoreCachedBodies checks that listings and exports served from
// the body cache follow every write, on both drivers: each is read twice
// (the second from the cache), then after a write, a rename and a delete.
func TestMemoryStoreCachedBodies(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		key := e.keys[teammem.RoleMember]
		p := storePath(t, e, key)
		reads := []string{"/memories/export", "/memories/export?view=basic", "/memories?limit=100", "/memories?limit=1&view=full",
			"/memories?path_prefix=%2F&depth=1"}
		snap := func() string {
			var all []string
			for _, q := range reads {
				a := string(e.do("GET", p+q, key, nil, cliHeaders...).want(t, 200).Body)
				if b := string(e.do("GET", p+q, key, nil, cliHeaders...).want(t, 200).Body); a != b {
					t.Fatalf("%s twice at one version: %q then %q", q, a, b)
				}
				all = append(all, a)
			}
			return strings.Join(all, "\n")
		}
		prev := snap()
		m := e.do("POST", p+"/memories", key, map[string]any{"path": "/d/a.md", "content": "one"}, cliHeaders...).want(t, 200).JSON(t)
		id := m["id"].(string)
		steps := []func(){
			func() {
				e.do("POST", p+"/memories/"+id, key, map[string]any{"content": "two"}, cliHeaders...).want(t, 200)
			},
			func() {
				e.do("POST", p+"/memories/"+id, key, map[string]any{"path": "/e/a.md"}, cliHeaders...).want(t, 200)
			},
			func() { e.do("DELETE", p+"/memories/"+id, key, nil, cliHeaders...).want(t, 200) },
		}
		for i := -1; i < len(steps); i++ {
			if i >= 0 {
				steps[i]()
			}
			s := snap()
			if s == prev {
				t.Fatalf("after step %d the store reads as it did before: a stale cached body", i+1)
			}
			prev = s
		}
		if s := snap(); !strings.Contains(s, `"memory_count":0`) {
			t.Fatalf("after the delete: %s", s)
		}
	})
}
