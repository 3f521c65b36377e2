package httpapi_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// archiveAfterLoad is a real store that archives a store right after a
// request loaded it, once armed: the interleaving of a write racing an
// archive, made deterministic.
type archiveAfterLoad struct {
	teammem.Store
	armed atomic.Bool
}

func (s *archiveAfterLoad) MemoryStoreGet(ctx context.Context, orgID int64, uid string) (teammem.MemoryStore, error) {
	m, err := s.Store.MemoryStoreGet(ctx, orgID, uid)
	if err == nil && s.armed.CompareAndSwap(true, false) {
		at := time.Now()
		if _, err := s.Store.MemoryStoreUpdate(ctx, orgID, m.Space.ID, teammem.MemoryStoreUpdateParams{ArchivedAt: &at}); err != nil {
			return m, err
		}
	}
	return m, err // as loaded: not archived
}

// TestMemoryStoreArchiveRace archives a store between a request's load of
// it and its write, on both drivers, for each kind of write: the write is
// refused with the message Claude Code's client maps to store_archived,
// and nothing of it lands.
func TestMemoryStoreArchiveRace(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		racy := &archiveAfterLoad{Store: st}
		e := newV1Env(t, racy, nil)
		key := e.keys[teammem.RoleOwner]
		// A delete is not among them: an archived store's memories can
		// still be deleted (TestArchivedStoreTakesDeletes).
		writes := []struct {
			name string
			do   func(base, id string) resp
		}{
			{"create", func(base, _ string) resp {
				return e.do("POST", base+"/memories?beta=true", key, map[string]any{"path": "/new.md", "content": "raced"})
			}},
			{"update", func(base, id string) resp {
				return e.do("POST", base+"/memories/"+id+"?beta=true", key, map[string]any{"content": "raced"})
			}},
			{"rename", func(base, id string) resp {
				return e.do("POST", base+"/memories/"+id+"?beta=true", key, map[string]any{"path": "/moved.md"})
			}},
			{"store fields", func(base, _ string) resp {
				return e.do("POST", base+"?beta=true", key, map[string]any{"name": "raced"})
			}},
		}
		for _, w := range writes {
			s := e.do("POST", "/v1/memory_stores?beta=true", key, map[string]any{"name": w.name}).want(t, 200).JSON(t)
			base := "/v1/memory_stores/" + s["id"].(string)
			m := e.do("POST", base+"/memories?beta=true", key, map[string]any{"path": "/a.md", "content": "before"}).want(t, 200).JSON(t)
			id := m["id"].(string)
			racy.armed.Store(true)
			r := w.do(base, id).want(t, 400)
			if typ, msg := errMessage(t, r); typ != "invalid_request_error" || msg != teammem.MsgArchived {
				t.Fatalf("%s racing an archive: %s %q", w.name, typ, msg)
			}
			if racy.armed.Load() {
				t.Fatalf("%s: the store was never loaded, so nothing raced", w.name)
			}
			got := e.do("GET", base+"?beta=true", key, nil).want(t, 200).JSON(t)
			if got["archived_at"] == nil || got["name"] != w.name {
				t.Fatalf("%s: store after the race = %s", w.name, jsonString(got))
			}
			lines := ndjson(t, e.do("GET", base+"/memories/export", key, nil).want(t, 200).Body)
			if len(lines) != 3 || lines[1]["path"] != "/a.md" || lines[1]["content"] != "before" {
				t.Fatalf("%s: the store after the race = %v", w.name, lines)
			}
		}
	})
}
