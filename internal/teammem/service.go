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
	scanned, err := w.prescan(ctx, org, space, req)
	if err != nil {
		return WriteResult{}, err
	}
	plan := func(s Space, heads map[string]Entry, current func(string) (string, error)) ([]EntryChange, WriteResult, error) {
		in := PlanInput{Space: s, Heads: heads, Current: current, Limits: limits, TombstoneRetention: w.TombstoneRetention, Now: w.now(),
			Scan: func(key, content string) []SkippedSecret {
				if found, ok := scanned[key]; ok && found.checksum == EntryChecksum(content) {
					return found.findings
				}
				return w.scan(org, key, content) // changed since the prescan: scan now
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

func (w *Writer) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

type scanResult struct {
	checksum string
	findings []SkippedSecret
}

// prescan scans, outside the write lock, the upserts whose content differs
// from what is stored, so the lock is held only for the database work.
func (w *Writer) prescan(ctx context.Context, org Org, space Space, req WriteRequest) (map[string]scanResult, error) {
	if w.Scanner == nil || len(req.Upserts) == 0 {
		return nil, nil
	}
	heads := map[string]Entry{}
	if space.ID != 0 {
		var err error
		if heads, err = w.Store.EntryHeads(ctx, org.ID, space.ID); err != nil {
			return nil, err
		}
	}
	out := make(map[string]scanResult, len(req.Upserts))
	for _, u := range req.Upserts {
		sum := EntryChecksum(u.Content)
		if h, ok := heads[u.Key]; ok && h.Checksum == sum {
			continue // stored as it is (or deleted as it is): never rescanned
		}
		out[u.Key] = scanResult{checksum: sum, findings: w.scan(org, u.Key, u.Content)}
	}
	return out, nil
}

func (w *Writer) scan(org Org, key, content string) []SkippedSecret {
	if w.Scanner == nil {
		return nil
	}
	return w.Scanner.ScanEntry(org, key, content)
}
