package teammem

import (
	"context"
	"errors"
	"runtime"
)

// PreScanBytes is the size above which a write into an existing space reads
// the space's entry heads (without the lock) so it scans only the upserts
// that change content; a smaller request is scanned whole, which costs less
// than the read.
const PreScanBytes = 64 << 10

// scanner runs a write's content checks — the secret scan and, for a team
// write, the poisoning checks — before the space's lock is taken, and
// answers Plan's questions under the lock from what it found. Content Plan
// asks about that was not checked (an entry changed between the checks and
// the lock) is noted as missing: the write then rolls back, checks it
// outside the lock and plans again. No check ever holds a write lock: on
// SQLite that lock is every org's.
type scanner struct {
	w       *Writer
	org     Org
	poison  PoisonChecker // nil: no poisoning checks
	done    map[string]scanResult
	missing []Upsert
}

type scanResult struct {
	content  string // what was checked
	findings []SkippedSecret
	// poison holds the poisoning findings of content the secret scan
	// passed (Plan asks only about those).
	poison []PoisonFinding
}

// checks reports whether the scanner has anything to run.
func (s *scanner) checks() bool { return s.w.Scanner != nil || s.poison != nil }

// before checks the upserts the plan will likely need.
func (s *scanner) before(ctx context.Context, store Store, space Space, req WriteRequest, sums map[string]string) error {
	if !s.checks() {
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
		if err := s.scan(ctx, u.Key, u.Content); err != nil {
			return err
		}
	}
	return nil
}

// result is what was found in content checked before, or false, noting the
// content as missing.
func (s *scanner) result(key, content string) (scanResult, bool) {
	// The same string as the request's: the comparison is a pointer check,
	// not a second pass over the content.
	if r, ok := s.done[key]; ok && r.content == content {
		return r, true
	}
	s.missing = append(s.missing, Upsert{Key: key, Content: content})
	return scanResult{}, false
}

// lookup is PlanInput.Scan: the secret findings of content scanned before.
func (s *scanner) lookup(key, content string) []SkippedSecret {
	if s.w.Scanner == nil {
		return nil
	}
	r, _ := s.result(key, content)
	return r.findings
}

// poisonLookup is PlanInput.Poison: the poisoning findings of content
// checked before.
func (s *scanner) poisonLookup(key, content string) []PoisonFinding {
	r, _ := s.result(key, content)
	return r.poison
}

// poisonFunc is PlanInput.Poison, nil when the write has no poisoning
// checks.
func (s *scanner) poisonFunc() func(key, content string) []PoisonFinding {
	if s.poison == nil {
		return nil
	}
	return s.poisonLookup
}

// rescan checks what the last plan found missing.
func (s *scanner) rescan(ctx context.Context) error {
	for _, u := range s.missing {
		if r, ok := s.done[u.Key]; !ok || r.content != u.Content {
			if err := s.scan(ctx, u.Key, u.Content); err != nil {
				return err
			}
		}
	}
	s.missing = nil
	return nil
}

// SharedCheckBytes is the entry size from which an entry's content checks
// take one of the Writer's check slots.
const SharedCheckBytes = 16 << 10

// The checks of large entries are the heaviest CPU work of the server (a
// 16 × 240 KB batch costs hundreds of milliseconds). Left unbounded, one
// org's concurrent batches take every core, and the writer holding the
// one SQLite writer turn — whose commit every other org's writes wait for
// — gets a sliver of one: its turn then lasts many times its own work.
// So large entries are checked in at most GOMAXPROCS-1 slots (at least
// one), one entry per slot at a time: a core stays free for the writer and
// for small writes, which never wait for a slot.

// checkSlots returns the Writer's slots for large entries' checks.
func (w *Writer) checkSlots() chan struct{} {
	w.slotsOnce.Do(func() {
		n := w.CheckSlots
		if n <= 0 {
			n = max(1, runtime.GOMAXPROCS(0)-1)
		}
		w.slots = make(chan struct{}, n)
	})
	return w.slots
}

// CheckSlot waits for one of the Writer's check slots and returns its
// release, or EUnavailable once ctx is done. Besides the checks of large
// entries, dialects take one to decode a large request body, work of the
// same weight.
func (w *Writer) CheckSlot(ctx context.Context) (release func(), err error) {
	slots := w.checkSlots()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, Errorf(EUnavailable, "request cancelled or timed out")
	}
}

// scan checks one entry, in a check slot when it is large.
func (s *scanner) scan(ctx context.Context, key, content string) error {
	if len(content) >= SharedCheckBytes {
		release, err := s.w.CheckSlot(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	r := scanResult{content: content}
	if s.w.Scanner != nil {
		// The key is stored, listed and shown like the content: a secret
		// in a file's name skips (or refuses) the file as one in its text
		// does, reported without the name.
		r.findings = KeyFindings(key, s.w.Scanner.ScanEntry(s.org, key, NameScanText(key)))
		if len(r.findings) == 0 {
			r.findings = s.w.Scanner.ScanEntry(s.org, key, content)
		}
	}
	// Only content the secret scan passed is checked for poisoning, so an
	// excerpt never shows a secret the scanner knows of.
	if s.poison != nil && len(r.findings) == 0 {
		r.poison = s.poison.CheckEntry(key, content)
	}
	s.done[key] = r
	return nil
}

func upsertBytes(req WriteRequest) int {
	n := 0
	for _, u := range req.Upserts {
		n += len(u.Content)
	}
	return n
}

// withholdSecrets is WithholdSecrets with the Writer's scanner.
func (w *Writer) withholdSecrets(org Org, err error) error {
	return WithholdSecrets(w.Scanner, org, err)
}

// WithholdSecrets returns err, or, when its message or a string detail
// repeats a secret a request carried (a refusal may name the key or slug it
// refuses, and those may hold a secret), the same refusal without it: the
// message says which rule found it, the details that held it are dropped.
// Only refusals are scanned, so a clean write pays nothing; a nil sc, or
// one that cannot scan, withholds nothing.
func WithholdSecrets(sc SecretScanner, org Org, err error) error {
	var te *Error
	if sc == nil || !errors.As(err, &te) {
		return err
	}
	scan := func(v string) []SkippedSecret {
		var out []SkippedSecret
		for _, f := range sc.ScanEntry(org, "error", NameScanText(v)) {
			if f.RuleID != RuleScannerUnavailable { // nothing to withhold: it found nothing
				out = append(out, f)
			}
		}
		return out
	}
	found := scan(te.Message)
	msg := te.Message
	if len(found) > 0 {
		msg = "a key or name in this request holds what looks like a secret (" + found[0].Label + "); use one without it"
	}
	details := make(map[string]any, len(te.Details))
	for k, v := range te.Details {
		if str, ok := v.(string); ok {
			if f := scan(str); len(f) > 0 {
				found = append(found, f...)
				continue
			}
		}
		details[k] = v
	}
	if len(found) == 0 {
		return err
	}
	return &Error{Code: te.Code, Message: msg, Reason: te.Reason, Details: details}
}
