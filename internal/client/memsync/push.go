package memsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// MaxBatchBytes keeps each batch body under the size the stock client uses.
const MaxBatchBytes = 200_000

// maxConflictRounds bounds how often one batch is merged and retried.
const maxConflictRounds = 5

// pushPlan is the local side of a push: what changed since the bases.
type pushPlan struct {
	upserts []wire.BatchUpsert
	deletes []wire.BatchDelete
	content map[string]string // local content by key
}

// planPush compares the local files with the synced bases. It is pure: files
// that were skipped (too big, symlinks, secrets) are present but not sent,
// so they are never mistaken for deletions. It reads ss and changes
// nothing. A new file under a key this machine saw deleted (ss.Deleted)
// names that deletion, so the server takes it for the re-creation it is;
// a file just merged with overlap, unchanged since (ss.Overlaps), says so,
// so that the machines pulling it hear of it too.
func planPush(files []memdir.File, present map[string]bool, ss *ScopeState) pushPlan {
	base := ss.Base
	p := pushPlan{content: map[string]string{}}
	for _, f := range files {
		p.content[f.Key] = string(f.Content)
		if base[f.Key] == f.Checksum {
			continue
		}
		b := base[f.Key] // "" for a new file: create-only
		u := wire.BatchUpsert{Key: f.Key, Content: string(f.Content), Base: &b, Overlap: ss.Overlaps[f.Key] == f.Checksum}
		if b == "" {
			u.Recreates = ss.Deleted[f.Key]
		}
		p.upserts = append(p.upserts, u)
	}
	for _, k := range sortedKeys(base) {
		if !present[k] {
			b := base[k]
			p.deletes = append(p.deletes, wire.BatchDelete{Key: k, Base: &b})
		}
	}
	return p
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// batches splits upserts so each request body stays under MaxBatchBytes;
// deletes ride with the first batch. An entry larger than the limit goes
// alone.
func batches(p pushPlan) [][]wire.BatchUpsert {
	var out [][]wire.BatchUpsert
	var cur []wire.BatchUpsert
	size := 64
	for _, u := range p.upserts {
		k, _ := json.Marshal(u.Key)
		c, _ := json.Marshal(u.Content)
		cost := len(k) + len(c) + 120 // field names, base checksum, punctuation
		if size+cost > MaxBatchBytes && len(cur) > 0 {
			out = append(out, cur)
			cur, size = nil, 64
		}
		cur = append(cur, u)
		size += cost
	}
	if len(cur) > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}

// push uploads local changes since the bases, merging three ways whenever
// the server moved on.
func (e *Engine) push(ctx context.Context, scope teammem.Scope, ss *ScopeState, rep *Report) error {
	files, skipped, err := e.scan(scope, ss, nil)
	if err != nil {
		return err
	}
	present := map[string]bool{}
	for _, s := range skipped {
		present[s.Key] = true
		rep.Skipped = append(rep.Skipped, s)
	}
	clean := files[:0]
	for _, f := range files {
		present[f.Key] = true
		if ss.Base[f.Key] != f.Checksum {
			if found, ok := e.scanSecrets(string(f.Content)); ok {
				rep.Skipped = append(rep.Skipped, secretSkip(f.Key, found))
				continue
			}
		}
		clean = append(clean, f)
	}
	plan := planPush(clean, present, ss)
	skipHeld(ss, &plan, rep)
	e.guardPushedDeletes(ss, &plan, rep)
	if len(plan.upserts)+len(plan.deletes) == 0 {
		return nil
	}
	deletes := plan.deletes
	parts := batches(plan)
	for i, up := range parts {
		if e.Progress != nil && len(parts) > 1 {
			e.Progress(scope, "push", i, len(parts))
		}
		if err := e.pushBatch(ctx, scope, ss, rep, up, deletes, plan.content); err != nil {
			return err
		}
		deletes = nil
	}
	return nil
}

// pushBatch sends one batch, resolving 409s by merging and retrying.
func (e *Engine) pushBatch(ctx context.Context, scope teammem.Scope, ss *ScopeState, rep *Report,
	upserts []wire.BatchUpsert, deletes []wire.BatchDelete, local map[string]string) error {
	for round := 0; ; round++ {
		if len(upserts)+len(deletes) == 0 {
			return nil
		}
		res, err := e.Client.Batch(ctx, scope, upserts, deletes)
		if refused := refusedUpserts(err, upserts); len(refused) > 0 {
			// Each such round drops at least one file: it ends.
			rep.Skipped = append(rep.Skipped, refused...)
			upserts, round = withoutKeys(upserts, refused), round-1
			continue
		}
		var ce *apiclient.ConflictError
		if errors.As(err, &ce) && round < maxConflictRounds {
			if upserts, deletes, err = e.resolve(scope, ss, rep, ce.Conflicts, upserts, deletes, local); err != nil {
				return err
			}
			continue
		}
		var held *apiclient.HeldError
		if errors.As(err, &held) {
			e.held(ss, rep, held.Proposal, heldSkips(rep, res, upserts), deletes)
			return nil
		}
		if err != nil {
			return err
		}
		return e.committed(scope, ss, rep, res, upserts, deletes)
	}
}

// held records a batch the server held for review: each file stays as it
// is locally, its base unchanged, and is not sent again while it holds
// the same content.
func (e *Engine) held(ss *ScopeState, rep *Report, p teammem.Proposal, upserts []wire.BatchUpsert, deletes []wire.BatchDelete) {
	if ss.Held == nil {
		ss.Held = map[string]HeldFile{}
	}
	for _, u := range upserts {
		ss.Held[u.Key] = HeldFile{Checksum: teammem.EntryChecksum(u.Content), Proposal: p.ID}
		rep.HeldForReview = appendOnce(rep.HeldForReview, u.Key)
	}
	for _, d := range deletes {
		ss.Held[d.Key] = HeldFile{Proposal: p.ID}
		rep.HeldForReview = appendOnce(rep.HeldForReview, d.Key)
	}
}

// skipHeld takes out of a push plan what the server holds for review
// already, and forgets held files that changed since (they go again) or
// whose server copy caught up (an admin approved them).
func skipHeld(ss *ScopeState, p *pushPlan, rep *Report) {
	if len(ss.Held) == 0 {
		return
	}
	up := p.upserts[:0]
	for _, u := range p.upserts {
		h, ok := ss.Held[u.Key]
		switch {
		case ok && h.Checksum == teammem.EntryChecksum(u.Content):
			rep.HeldForReview = appendOnce(rep.HeldForReview, u.Key)
			continue
		case ok:
			delete(ss.Held, u.Key)
		}
		up = append(up, u)
	}
	p.upserts = up
	del := p.deletes[:0]
	for _, d := range p.deletes {
		if h, ok := ss.Held[d.Key]; ok && h.Checksum == "" {
			rep.HeldForReview = appendOnce(rep.HeldForReview, d.Key)
			continue
		}
		del = append(del, d)
	}
	p.deletes = del
	for k, h := range ss.Held {
		_, local := p.content[k]
		caught := h.Checksum != "" && ss.Base[k] == h.Checksum
		gone := h.Checksum == "" && ss.Base[k] == "" // the deletion was approved
		if caught || gone || (!local && h.Checksum != "") {
			delete(ss.Held, k)
		}
	}
}

// resolve merges each conflicting key with the server's current version and
// returns the batch to retry.
func (e *Engine) resolve(scope teammem.Scope, ss *ScopeState, rep *Report, conflicts []teammem.Conflict,
	upserts []wire.BatchUpsert, deletes []wire.BatchDelete, local map[string]string) ([]wire.BatchUpsert, []wire.BatchDelete, error) {
	root, _ := e.root(scope)
	byKey := map[string]teammem.Conflict{}
	for _, c := range conflicts {
		byKey[c.Key] = c
	}
	var nextUp []wire.BatchUpsert
	for _, u := range upserts {
		c, ok := byKey[u.Key]
		if !ok {
			nextUp = append(nextUp, u)
			continue
		}
		if c.Checksum == "" { // deleted (or never created) there: our edit recreates it
			empty := ""
			u.Base = &empty
			delete(ss.Base, u.Key)
			nextUp = append(nextUp, u)
			continue
		}
		if c.Content == u.Content {
			// The server already holds exactly this: a resend of a batch
			// whose answer was lost, or the same edit made elsewhere.
			ss.synced(u.Key, c.Checksum)
			if err := e.States.SetBase(scope, u.Key, c.Content); err != nil {
				return nil, nil, err
			}
			rep.Pushed = appendOnce(rep.Pushed, u.Key)
			continue
		}
		baseContent, ok := e.States.BaseContent(scope, u.Key)
		if !ok || ss.Base[u.Key] == "" {
			baseContent = ""
		}
		merged, overlap := Merge3(baseContent, u.Content, c.Content)
		if merged != u.Content {
			if _, err := memdir.WriteAtomic(root, u.Key, []byte(merged)); err != nil {
				return nil, nil, fmt.Errorf("write merged %s: %w", u.Key, err)
			}
			local[u.Key] = merged
		}
		e.merged(ss, rep, u.Key, merged, overlap)
		ss.synced(u.Key, c.Checksum)
		if err := e.States.SetBase(scope, u.Key, c.Content); err != nil {
			return nil, nil, err
		}
		if merged == c.Content {
			continue // the server already has exactly this
		}
		sum := c.Checksum
		nextUp = append(nextUp, wire.BatchUpsert{Key: u.Key, Content: merged, Base: &sum, Overlap: overlap || u.Overlap})
	}
	var nextDel []wire.BatchDelete
	for _, d := range deletes {
		c, ok := byKey[d.Key]
		switch {
		case !ok:
			nextDel = append(nextDel, d)
		case c.Checksum == "":
			delete(ss.Base, d.Key) // already gone there
			_ = e.States.DropBase(scope, d.Key)
		default:
			// Edited there, deleted here: the edit wins, nothing is lost.
			if _, err := memdir.WriteAtomic(root, d.Key, []byte(c.Content)); err != nil {
				return nil, nil, err
			}
			rep.Pulled = appendOnce(rep.Pulled, d.Key)
			ss.synced(d.Key, c.Checksum)
			if err := e.States.SetBase(scope, d.Key, c.Content); err != nil {
				return nil, nil, err
			}
		}
	}
	return nextUp, nextDel, nil
}

// committed records what the server accepted as the new bases.
func (e *Engine) committed(scope teammem.Scope, ss *ScopeState, rep *Report, res wire.WriteResult, upserts []wire.BatchUpsert, deletes []wire.BatchDelete) error {
	secrets := map[string]teammem.SkippedSecret{}
	byKeySum := map[string]teammem.SkippedSecret{} // keys holding a secret, which the report does not name
	for _, s := range res.SkippedSecrets {
		if s.KeyChecksum != "" {
			byKeySum[s.KeyChecksum] = s
			continue
		}
		secrets[s.Path] = s
	}
	tombstoned := map[string]bool{}
	for _, k := range res.SkippedTombstoned {
		tombstoned[k] = true
	}
	for _, u := range upserts {
		secret, refused := secrets[u.Key]
		if !refused && len(byKeySum) > 0 {
			secret, refused = byKeySum[teammem.EntryChecksum(u.Key)]
		}
		switch {
		case refused:
			rep.Skipped = append(rep.Skipped, serverSecretSkip(secret))
		case tombstoned[u.Key]:
			// The server deleted exactly this content, by a deletion this
			// machine never saw: a stale copy, refused. A push never
			// deletes: the file stays and is reported; a pull that brings
			// the deletion applies it (then writing the file again is a
			// re-creation).
			rep.Skipped = append(rep.Skipped, Skip{Key: u.Key, Kind: SkipStaleCopy})
		default:
			ss.synced(u.Key, teammem.EntryChecksum(u.Content))
			if err := e.States.SetBase(scope, u.Key, u.Content); err != nil {
				return err
			}
			rep.Pushed = appendOnce(rep.Pushed, u.Key)
		}
	}
	gone := map[string]bool{}
	for _, k := range res.Deleted {
		gone[k] = true
	}
	for _, d := range deletes {
		delete(ss.Base, d.Key)
		if gone[d.Key] {
			ss.sawDeleted(d.Key, res.Version) // the tombstone is this write's
		}
		if err := e.States.DropBase(scope, d.Key); err != nil {
			return err
		}
		rep.DeletedRemote = appendOnce(rep.DeletedRemote, d.Key)
	}
	// Our write moved the head. If nobody else wrote since our last pull the
	// mirror now matches it; otherwise the version stays where our pulls got
	// to and an unknown checksum makes the next pull fetch the rest.
	if ss.SpaceID == "" {
		// The first write to a space that did not exist names it. A
		// different name stays unadopted: the next pull then sees the space
		// was replaced.
		ss.SpaceID = res.SpaceID
	}
	if res.Version == ss.Version+1 {
		ss.Version, ss.Checksum = res.Version, res.Checksum
	} else {
		ss.Checksum = ""
	}
	return nil
}

func appendOnce(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}
