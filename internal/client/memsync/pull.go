package memsync

import (
	"context"
	"errors"
	"io/fs"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// pull brings the server's changes since the last sync to disk: a cheap
// head check first, then only the changed entries (the full snapshot only
// when the server forgot deletions that old). A server whose space does not
// continue the history this mirror synced (restored from an older backup,
// replaced, or forgotten) is reconciled instead: nothing it lacks is taken
// for a deletion. moved, set when the server announced a change of a space
// this mirror has synced, skips the head check: the changes' answer carries
// the head, checked the same way below, and a request for them that fails
// falls back to the head check, which tells a forgotten space.
func (e *Engine) pull(ctx context.Context, scope teammem.Scope, ss *ScopeState, rep *Report, moved bool) error {
	moved = moved && ss.Version > 0
	if !moved {
		head, changed, err := e.Client.HeadIfChanged(ctx, scope, ss.Checksum)
		if err != nil || !changed {
			rep.NotModified = err == nil
			return err
		}
		if reason := discontinuity(ss, head); reason != "" {
			return e.reconcile(ctx, scope, ss, rep, reason)
		}
		if head.Version == 0 && ss.Version == 0 && len(ss.Base) == 0 {
			rep.NotModified = true // nothing here, nothing there
			return nil
		}
	}
	head, changes, gone, err := e.Client.Changes(ctx, scope, ss.Version)
	if err != nil && moved && ctx.Err() == nil {
		return e.pull(ctx, scope, ss, rep, false)
	}
	if err != nil {
		return err
	}
	if moved && !gone && len(changes) == 0 && head.Version == ss.Version && head.Checksum == ss.Checksum {
		rep.NotModified = true // this machine's own write, announced back to it
		return nil
	}
	if gone {
		if head, changes, err = e.snapshotChanges(ctx, scope, ss); err != nil {
			return err
		}
	}
	switch reason := discontinuity(ss, head); {
	case reason != "": // the space moved between the two reads
		return e.reconcile(ctx, scope, ss, rep, reason)
	case !gone && !leadsTo(ss, changes, head):
		return e.reconcile(ctx, scope, ss, rep, ResetRestored)
	}
	changes = e.guardPulledDeletes(scope, ss, changes, rep)
	for i, c := range changes {
		if e.Progress != nil && len(changes) > 20 {
			e.Progress(scope, "pull", i, len(changes))
		}
		if err := e.applyRemote(scope, ss, c, rep); err != nil {
			return err
		}
	}
	ss.SpaceID = head.SpaceID
	if len(rep.HeldLocalDeletes) == 0 {
		// Held deletions keep the mirror at the old version, so the next
		// sync meets them again.
		ss.Version, ss.Checksum = head.Version, head.Checksum
	}
	return nil
}

// snapshotChanges turns a full snapshot into a change list: every live
// entry, and a deletion for every synced key the snapshot lacks. It is for
// a client that fell behind the server's tombstone retention (410) on a
// space that continues its history; the mass-delete guard still applies.
func (e *Engine) snapshotChanges(ctx context.Context, scope teammem.Scope, ss *ScopeState) (wire.SpaceHead, []wire.Change, error) {
	head, entries, err := e.Client.Snapshot(ctx, scope)
	if err != nil {
		return head, nil, err
	}
	live := map[string]bool{}
	for i := range entries {
		entries[i].Op = "upsert"
		live[entries[i].Key] = true
	}
	for k, sum := range ss.Base {
		if !live[k] {
			entries = append(entries, wire.Change{Key: k, Op: "delete", Checksum: sum})
		}
	}
	return head, entries, nil
}

// readLocal returns a local file's content; exists is false when missing.
func readLocal(root, key string) (content string, exists bool, err error) {
	b, err := memdir.ReadFile(root, key)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	return string(b), err == nil, err
}

// applyRemote applies one remote change to the mirror without losing a
// local edit: an untouched file takes the server's version, a file edited
// on both sides is merged three ways, a locally edited file deleted remotely
// is kept (and re-uploaded by the next push).
func (e *Engine) applyRemote(scope teammem.Scope, ss *ScopeState, c wire.Change, rep *Report) error {
	root, _ := e.root(scope)
	if skip := e.refuseRemote(scope, c); skip != nil {
		delete(ss.Foreign, c.Key)
		return e.skipRemote(ss, c, rep, *skip)
	}
	delete(ss.Foreign, c.Key)
	local, exists, err := readLocal(root, c.Key)
	if err != nil {
		return e.skipRemote(ss, c, rep, Skip{Key: c.Key, Kind: SkipWriteFailed, Detail: err.Error()})
	}
	base := ss.Base[c.Key]
	localSum := teammem.EntryChecksum(local)
	if c.Op == "delete" {
		switch {
		case exists && localSum != base && localSum != c.Checksum:
			rep.KeptLocal = append(rep.KeptLocal, c.Key) // edited here: keep it
		case exists:
			if _, err := memdir.Remove(root, c.Key); err != nil {
				return err
			}
			rep.RemovedLocal = append(rep.RemovedLocal, c.Key)
		}
		delete(ss.Base, c.Key)
		ss.sawDeleted(c.Key, c.Version)
		return e.States.DropBase(scope, c.Key)
	}
	remote := *c.Content
	c.Checksum = teammem.EntryChecksum(remote) // computed, not taken on trust
	next, overlap, merged := remote, false, false
	switch {
	case !exists && base != "" && base == c.Checksum:
		return nil // deleted here and unchanged there: the push sends the delete
	case exists && localSum == c.Checksum:
		next = local
	case exists && localSum != base && base != "" || exists && base == "":
		// Changed on both sides (or created on both): merge, nothing lost.
		baseContent, _ := e.States.BaseContent(scope, c.Key)
		if base == "" {
			baseContent = ""
		}
		next, overlap = Merge3(baseContent, local, remote)
		merged = true
	}
	if next != local || !exists {
		written, err := memdir.WriteAtomic(root, c.Key, []byte(next))
		if err != nil {
			return e.skipRemote(ss, c, rep, Skip{Key: c.Key, Kind: SkipWriteFailed, Detail: err.Error()})
		}
		if written && !merged {
			rep.Pulled = append(rep.Pulled, c.Key)
			if c.Overlap {
				// Another machine's merge kept both sides of an overlapping
				// edit: worth a review here too, until the file changes.
				rep.PulledOverlaps = appendOnce(rep.PulledOverlaps, c.Key)
				rep.Overlapped = appendOnce(rep.Overlapped, c.Key)
				ss.Overlaps[c.Key] = c.Checksum
			}
		}
	}
	if merged {
		// Merging into another machine's overlapping merge keeps its overlap.
		e.merged(ss, rep, c.Key, next, overlap || c.Overlap)
	}
	ss.synced(c.Key, c.Checksum)
	return e.States.SetBase(scope, c.Key, remote)
}
