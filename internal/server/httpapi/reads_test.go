package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// countingStore is a real store that counts the calls reading a space's
// entries, to see what a request reads. Nothing else is changed.
type countingStore struct {
	teammem.Store
	entryReads atomic.Int64
}

func (c *countingStore) SpaceSnapshot(ctx context.Context, orgID, spaceID int64, withContent bool) (teammem.Space, []teammem.Entry, error) {
	c.entryReads.Add(1)
	return c.Store.SpaceSnapshot(ctx, orgID, spaceID, withContent)
}

func (c *countingStore) EntriesList(ctx context.Context, orgID, spaceID int64, withContent bool) ([]teammem.Entry, error) {
	c.entryReads.Add(1)
	return c.Store.EntriesList(ctx, orgID, spaceID, withContent)
}

// TestIndexRenderedOncePerVersion: GET .../MEMORY.md re-read and re-parsed
// every topic file per request (60 × 227 KB took 3.3 s). It now renders
// once per space version: repeats read no entries, and a write renders the
// new version.
func TestIndexRenderedOncePerVersion(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		cs := &countingStore{Store: st}
		e := newV1Env(t, cs, nil)
		member := e.keys[teammem.RoleMember]
		for i := range 3 {
			body := fmt.Sprintf("---\nname: topic %d\ndescription: about %d\ntype: project\n---\nbody\n", i, i)
			e.do("PUT", fmt.Sprintf("%s/entries/t%d.md", team, i), member, body).want(t, 200)
		}
		before := cs.entryReads.Load()
		first := e.do("GET", team+"/MEMORY.md", member, nil).want(t, 200)
		for range 5 {
			again := e.do("GET", team+"/MEMORY.md", e.keys[teammem.RoleViewer], nil).want(t, 200)
			if string(again.Body) != string(first.Body) || again.Header.Get("ETag") != first.Header.Get("ETag") ||
				again.Header.Get("X-Teammem-Index") != "rendered" {
				t.Fatalf("cached index differs:\n%s\n%s", first.Body, again.Body)
			}
		}
		if n := cs.entryReads.Load() - before; n != 1 {
			t.Fatalf("6 requests for one version read the entries %d times, want once", n)
		}
		if !strings.Contains(string(first.Body), "topic 2") {
			t.Fatalf("index = %s", first.Body)
		}
		// A new version is rendered anew, and a stored MEMORY.md wins.
		e.do("PUT", team+"/entries/MEMORY.md", member, "# the index\n").want(t, 200)
		r := e.do("GET", team+"/MEMORY.md", member, nil).want(t, 200)
		if strings.TrimSpace(string(r.Body)) != "# the index" || r.Header.Get("X-Teammem-Index") != "stored" || r.Header.Get("ETag") == first.Header.Get("ETag") {
			t.Fatalf("after a write: %s %s", r.Header, r.Body)
		}
	})
}
