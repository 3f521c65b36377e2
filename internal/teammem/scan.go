package teammem

import "context"

// PreScanBytes is the size above which a write into an existing space reads
// the space's entry heads (without the lock) so it scans only the upserts
// that change content; a smaller request is scanned whole, which costs less
// than the read.
const PreScanBytes = 64 << 10

// scanner scans a write's upserts before the space's lock is taken, and
// answers Plan's questions under the lock from what it found. Content Plan
// asks about that was not scanned (an entry changed between the scan and
// the lock) is noted as missing: the write then rolls back, scans it
// outside the lock and plans again. No scan ever holds a write lock.
type scanner struct {
	w       *Writer
	org     Org
	done    map[string]scanResult
	missing []Upsert
}

type scanResult struct {
	content  string // what was scanned
	findings []SkippedSecret
}

// before scans the upserts the plan will likely need.
func (s *scanner) before(ctx context.Context, store Store, space Space, req WriteRequest, sums map[string]string) error {
	if s.w.Scanner == nil {
		return nil
	}
	var heads map[string]Entry
	if space.ID != 0 && upsertBytes(req) > PreScanBytes {
		h, err := store.EntryHeads(ctx, s.org.ID, space.ID)
		if err != nil {
			return err
		}
		heads = h
	}
	for _, u := range req.Upserts {
		if h, ok := heads[u.Key]; ok && !h.Deleted && h.Checksum == sums[u.Key] {
			continue // unchanged: Plan will not ask
		}
		s.scan(u.Key, u.Content)
	}
	return nil
}

// lookup is PlanInput.Scan: the findings of content scanned before, or
// none, noting the content as missing.
func (s *scanner) lookup(key, content string) []SkippedSecret {
	if s.w.Scanner == nil {
		return nil
	}
	// The same string as the request's: the comparison is a pointer check,
	// not a second pass over the content.
	if r, ok := s.done[key]; ok && r.content == content {
		return r.findings
	}
	s.missing = append(s.missing, Upsert{Key: key, Content: content})
	return nil
}

// rescan scans what the last plan found missing.
func (s *scanner) rescan() {
	for _, u := range s.missing {
		s.scan(u.Key, u.Content)
	}
	s.missing = nil
}

func (s *scanner) scan(key, content string) {
	s.done[key] = scanResult{content: content, findings: s.w.Scanner.ScanEntry(s.org, key, content)}
}

func upsertBytes(req WriteRequest) int {
	n := 0
	for _, u := range req.Upserts {
		n += len(u.Content)
	}
	return n
}
