package httpapi

import (
	"context"
	"net/http"
	"sync"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// indexOf returns the MEMORY.md of a space's entries as Claude Code loads
// it (truncated, with the warning when a limit was hit), and whether it was
// rendered from the topic files because the space stores none.
func indexOf(entries []teammem.Entry) (string, bool) {
	topics := make([]teammem.TopicFile, 0, len(entries))
	for _, e := range entries {
		if e.Key == teammem.IndexName {
			return teammem.TruncateIndex(e.Content).Content, false
		}
		topics = append(topics, teammem.TopicFile{Key: e.Key, Content: e.Content})
	}
	return teammem.TruncateIndex(teammem.RenderIndex(topics)).Content, true
}

// spaceIndex returns the MEMORY.md of the request's space, rendered once per
// space version. The entries are read with their head in one snapshot, so
// the text cached under a version is that version's.
func (s *Server) spaceIndex(ctx context.Context, sr *spaceReq) (cachedIndex, error) {
	if sr.space.ID == 0 {
		text, rendered := indexOf(nil)
		return cachedIndex{checksum: sr.space.Checksum, text: text, rendered: rendered}, nil
	}
	if e, ok := s.index.get(sr.space.ID, sr.space.Version); ok {
		return e, nil
	}
	head, entries, err := s.store.SpaceSnapshot(ctx, sr.p.Org.ID, sr.space.ID, true)
	if err != nil {
		return cachedIndex{}, err
	}
	text, rendered := indexOf(entries)
	e := cachedIndex{version: head.Version, checksum: head.Checksum, text: text, rendered: rendered}
	s.index.put(head.ID, e)
	return e, nil
}

// maxIndexCacheBytes bounds the rendered indexes kept per replica. A
// truncated index is at most 25,000 UTF-16 units, so this holds hundreds.
const maxIndexCacheBytes = 16 << 20

// indexCache holds the rendered MEMORY.md of each space at one version.
// Rendering reads every topic file and parses its frontmatter; a space's
// content at a version never changes, so a rendering needs no
// invalidation: a request for a newer version misses and replaces it.
type indexCache struct {
	mu     sync.Mutex
	spaces map[int64]cachedIndex
	bytes  int
	limit  int
}

type cachedIndex struct {
	version  int64
	checksum string
	text     string
	rendered bool
}

func newIndexCache(limit int) *indexCache {
	return &indexCache{spaces: map[int64]cachedIndex{}, limit: limit}
}

// get returns the index of space at version, if cached.
func (c *indexCache) get(space, version int64) (cachedIndex, bool) {
	c.mu.Lock()
	e, ok := c.spaces[space]
	c.mu.Unlock()
	return e, ok && e.version == version
}

// put caches a space's index unless a newer version is cached already (a
// slow request must not replace a fresher rendering). Past the byte bound
// it drops other spaces' indexes, in no particular order.
func (c *indexCache) put(space int64, e cachedIndex) {
	if len(e.text) > c.limit/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.spaces[space]; ok {
		if old.version >= e.version {
			return
		}
		c.bytes -= len(old.text)
		delete(c.spaces, space)
	}
	for id, old := range c.spaces {
		if c.bytes+len(e.text) <= c.limit {
			break
		}
		c.bytes -= len(old.text)
		delete(c.spaces, id)
	}
	c.spaces[space] = e
	c.bytes += len(e.text)
}

// getIndexLint serves GET .../MEMORY.md?lint=1: the index as Claude Code
// loads it with what `teammem index --lint` reports about the space and
// the poisoning checks' findings on its live entries (the same rules the
// writes were checked with, run on the current content).
func (s *Server) getIndexLint(w http.ResponseWriter, r *http.Request, sr *spaceReq) error {
	var entries []teammem.Entry
	if sr.space.ID != 0 {
		var err error
		if _, entries, err = s.store.SpaceSnapshot(r.Context(), sr.p.Org.ID, sr.space.ID, true); err != nil {
			return err
		}
	}
	text, rendered := indexOf(entries)
	var index string
	hasIndex := false
	files := make([]teammem.TopicFile, 0, len(entries))
	findings := []teammem.PoisonFinding{}
	for _, e := range entries {
		if e.Key == teammem.IndexName {
			index, hasIndex = e.Content, true
		}
		files = append(files, teammem.TopicFile{Key: e.Key, Content: e.Content})
		if s.writer.Poison != nil {
			findings = append(findings, s.writer.Poison.CheckEntry(e.Key, e.Content)...)
		}
	}
	tr := teammem.TruncateIndex(index)
	w.Header().Set("ETag", `"`+sr.space.Checksum+`"`)
	w.Header().Set("X-Teammem-Index", "stored")
	if rendered {
		w.Header().Set("X-Teammem-Index", "rendered")
	}
	writeJSON(w, http.StatusOK, wire.IndexLint{Content: text, Rendered: rendered, Truncated: hasIndex && tr.Truncated(),
		Problems: nonNil(teammem.LintIndex(index, hasIndex, files)), Findings: findings})
	return nil
}
