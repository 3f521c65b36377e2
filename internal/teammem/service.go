package teammem

import (
	"context"
	"time"
)

// SecretScanner finds secrets in an entry's content for an org (whose
// allowlist it applies). Findings never carry the secret.
type SecretScanner interface {
	ScanEntry(org Org, key, content string) []SkippedSecret
}

// Writer is the one write path of both APIs: validate → scan changed
// entries → (under the space lock) precondition, bases, secret policy,
// tombstones, caps → commit.
type Writer struct {
	Store              Store
	Scanner            SecretScanner // nil: no scanning
	Defaults           ServerDefaults
	TombstoneRetention time.Duration
	Now                func() time.Time // nil: time.Now
}

// Write commits req to the space as one version, or returns the error
// that says why nothing was written.
//
// A space that was never written has ID 0; ensure creates it (and its repo)
// and is called only once a plan against the empty space found something to
// commit, so a refused or empty write leaves no repo or space behind.
func (w *Writer) Write(ctx context.Context, org Org, space Space, ensure func(context.Context) (Space, error), actor Actor, req WriteRequest) (WriteResult, error) {
	limits := org.Limits(w.Defaults)
	if err := ValidateWrite(req, limits); err != nil {
		return WriteResult{}, err
	}
	// Plan scans only the upserts that would change stored content, which
	// it knows under the write lock. A small request (a delta push: its
	// upserts are the changed entries) is scanned before the lock instead,
	// since a scan under it holds up every writer of the space, and on
	// SQLite every writer; Plan then finds the results here. A large one,
	// such as a first full push, is left to Plan, so unchanged entries are
	// never scanned at length.
	scanned := map[string]scanResult{}
	if w.Scanner != nil && upsertBytes(req) <= PreScanBytes {
		for _, u := range req.Upserts {
			scanned[u.Key] = scanResult{content: u.Content, findings: w.scan(org, u.Key, u.Content)}
		}
	}
	plan := func(s Space, heads map[string]Entry, current func(string) (string, error)) ([]EntryChange, WriteResult, error) {
		in := PlanInput{Space: s, Heads: heads, Current: current, Limits: limits, TombstoneRetention: w.TombstoneRetention, Now: w.now(),
			Scan: func(key, content string) []SkippedSecret {
				// The same string as the request's: the comparison is a
				// pointer check, not a second hash of the content.
				if found, ok := scanned[key]; ok && found.content == content {
					return found.findings // scanned before the lock, or by the empty-space plan
				}
				findings := w.scan(org, key, content)
				scanned[key] = scanResult{content: content, findings: findings}
				return findings
			}}
		return Plan(req, in)
	}
	if space.ID == 0 {
		changes, res, err := plan(space, map[string]Entry{}, nil)
		if err != nil || len(changes) == 0 {
			res.Space = space
			return res, err
		}
		if space, err = ensure(ctx); err != nil {
			return WriteResult{}, err
		}
	}
	var res WriteResult
	head, err := w.Store.SpaceApply(ctx, org.ID, space.ID, actor, func(s Space, heads map[string]Entry, current func(string) (string, error)) ([]EntryChange, error) {
		changes, r, err := plan(s, heads, current)
		res = r
		return changes, err
	})
	res.Space = head
	return res, err
}

// PreScanBytes is the largest request whose upserts Write scans for secrets
// before taking the space's write lock.
const PreScanBytes = 64 << 10

func upsertBytes(req WriteRequest) int {
	n := 0
	for _, u := range req.Upserts {
		n += len(u.Content)
	}
	return n
}

func (w *Writer) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

type scanResult struct {
	content  string // what was scanned
	findings []SkippedSecret
}

func (w *Writer) scan(org Org, key, content string) []SkippedSecret {
	if w.Scanner == nil {
		return nil
	}
	return w.Scanner.ScanEntry(org, key, content)
}
