package memsync

import (
	"context"
	"maps"
	"time"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// The reasons a sync finds that the server's space is not a continuation of
// the one this mirror last synced. In each case the mirror's files are kept
// and treated as local changes; nothing the server lacks is deleted here.
const (
	// ResetRestored: the same space, but its history no longer leads from
	// what was synced to the server's head (restored from an older backup,
	// or written to after such a restore).
	ResetRestored = "restored"
	// ResetReplaced: another space answers at the same place (a new server
	// at the same URL, a re-created database, a key of another org).
	ResetReplaced = "replaced"
	// ResetForgotten: the server has no such space (any more), although this
	// mirror synced one.
	ResetForgotten = "forgotten"
)

// ResetMessage says, for people, what a reset reason means and what the
// client did about it.
func ResetMessage(reason string) string {
	what := map[string]string{
		ResetRestored:  "the server's memory went back in time (restored from an older backup?)",
		ResetReplaced:  "the server's space is not the one last synced (a new or reset server, or another org)",
		ResetForgotten: "the server no longer has this space (deleted repo or reset server)",
	}[reason]
	if what == "" {
		return ""
	}
	return what + "; local files were kept and are uploaded again, merged with what the server has"
}

// discontinuity returns the reason head cannot continue the history the
// mirror synced, or "" when it can. A mirror that never synced anything
// continues any space.
func discontinuity(ss *ScopeState, head wire.SpaceHead) string {
	switch {
	case ss.Version == 0 && len(ss.Base) == 0:
		return ""
	case head.SpaceID == "" && head.Version == 0:
		return ResetForgotten
	case ss.SpaceID != "" && head.SpaceID != "" && head.SpaceID != ss.SpaceID:
		return ResetReplaced
	case head.Version < ss.Version:
		return ResetRestored
	case head.Version == ss.Version && ss.Checksum != "" && head.Checksum != ss.Checksum:
		return ResetRestored
	}
	return ""
}

// leadsTo reports whether applying changes to what the client knows of the
// server's space at its synced version gives head's checksum: whether the
// server's history since then continues the one the client saw. A restored
// backup that was written to again fails this even when its version has
// caught up.
func leadsTo(ss *ScopeState, changes []wire.Change, head wire.SpaceHead) bool {
	sums := make(map[string]string, len(ss.Base)+len(ss.Foreign)+len(changes))
	maps.Copy(sums, ss.Base)
	maps.Copy(sums, ss.Foreign)
	for _, c := range changes {
		if c.Op == "delete" {
			delete(sums, c.Key)
		} else {
			sums[c.Key] = c.Checksum
		}
	}
	return teammem.SpaceChecksum(sums) == head.Checksum
}

// reconcile rebuilds the bases from a full snapshot of a space that does not
// continue the synced history. It never deletes, on either side: a file only
// on the server is written here, a file only here loses its base (so the
// next push uploads it as new), and a file on both sides that differs is
// merged without a base, keeping every line of both (a union merge).
func (e *Engine) reconcile(ctx context.Context, scope teammem.Scope, ss *ScopeState, rep *Report, reason string) error {
	head, entries, err := e.Client.Snapshot(ctx, scope)
	if err != nil {
		return err
	}
	known := ss.Base
	ss.Base, ss.Foreign, ss.HeldDeletes = map[string]string{}, map[string]string{}, nil
	// Deletions seen in the old history name versions of that history.
	ss.Deleted = map[string]int64{}
	for i, r := range entries {
		if e.Progress != nil && len(entries) > 20 {
			e.Progress(scope, "pull", i, len(entries))
		}
		if err := e.adopt(scope, ss, r, rep); err != nil {
			return err
		}
	}
	for k := range known {
		if _, ok := ss.Base[k]; !ok {
			if err := e.States.DropBase(scope, k); err != nil {
				return err
			}
		}
	}
	ss.Version, ss.Checksum, ss.SpaceID = head.Version, head.Checksum, head.SpaceID
	ss.Reset, ss.ResetAt = reason, time.Now().UTC()
	rep.Reset = reason
	return nil
}

// adopt takes one entry of a reconciling snapshot as the new base of its
// key, bringing the local file up to it without losing a local line.
func (e *Engine) adopt(scope teammem.Scope, ss *ScopeState, r wire.Change, rep *Report) error {
	if skip := e.refuseRemote(scope, r); skip != nil {
		return e.skipRemote(ss, r, rep, *skip)
	}
	root, _ := e.root(scope)
	remote := *r.Content
	sum := teammem.EntryChecksum(remote)
	local, exists, err := readLocal(root, r.Key)
	if err != nil {
		return e.skipRemote(ss, r, rep, Skip{Key: r.Key, Kind: SkipWriteFailed, Detail: err.Error()})
	}
	switch {
	case !exists:
		if _, err := memdir.WriteAtomic(root, r.Key, []byte(remote)); err != nil {
			return e.skipRemote(ss, r, rep, Skip{Key: r.Key, Kind: SkipWriteFailed, Detail: err.Error()})
		}
		rep.Pulled = append(rep.Pulled, r.Key)
	case teammem.EntryChecksum(local) != sum:
		merged, overlap := MergeUnion(local, remote)
		if merged != local {
			if _, err := memdir.WriteAtomic(root, r.Key, []byte(merged)); err != nil {
				return e.skipRemote(ss, r, rep, Skip{Key: r.Key, Kind: SkipWriteFailed, Detail: err.Error()})
			}
		}
		e.merged(ss, rep, r.Key, merged, overlap)
	}
	ss.synced(r.Key, sum)
	return e.States.SetBase(scope, r.Key, remote)
}

// refuseRemote returns why an entry from the server must not be written
// here, or nil when it may be.
func (e *Engine) refuseRemote(scope teammem.Scope, r wire.Change) *Skip {
	if err := e.keyAllowed(scope, r.Key); err != nil {
		return &Skip{Key: r.Key, Kind: SkipRefusedKey, Detail: teammem.ErrorMessage(err)}
	}
	if r.Op != "delete" && r.Content == nil {
		return &Skip{Key: r.Key, Kind: SkipNoContent}
	}
	if limit := e.Client.EntryLimit(); r.Op != "delete" && len(*r.Content) > limit {
		// Never written, and remembered as foreign: the server holds it.
		return &Skip{Key: r.Key, Kind: SkipTooLarge, Limit: int64(limit)}
	}
	return nil
}

// skipRemote reports an entry from the server that is not mirrored here and
// remembers it as foreign, so the client still knows the server holds it.
func (e *Engine) skipRemote(ss *ScopeState, r wire.Change, rep *Report, skip Skip) error {
	rep.Skipped = append(rep.Skipped, skip)
	if r.Op != "delete" && teammem.ValidateKey(r.Key) == nil {
		ss.Foreign[r.Key] = r.Checksum
	}
	return nil
}

// merged records a merge of key that wrote content; an overlapping merge is
// kept in the state until the file changes again, so status can point at it.
func (e *Engine) merged(ss *ScopeState, rep *Report, key, content string, overlap bool) {
	rep.Merged = appendOnce(rep.Merged, key)
	if overlap {
		rep.Overlapped = appendOnce(rep.Overlapped, key)
		ss.Overlaps[key] = teammem.EntryChecksum(content)
	}
}
