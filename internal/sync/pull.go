package memsync

import (
	"context"
	"errors"
	"io/fs"
	"slices"

	"github.com/teammem/teammem/internal/memdir"
	"github.com/teammem/teammem/internal/teammem"
)

// pull brings the server's changes since the last sync to disk: a cheap
// head check first, then only the changed entries (the full snapshot only
// when the server forgot deletions that old).
func (e *Engine) pull(ctx context.Context, scope teammem.Scope, ss *ScopeState, rep *Report) error {
	if _, changed, err := e.Client.HeadIfChanged(ctx, scope, ss.Checksum); err != nil || !changed {
		rep.NotModified = err == nil
		return err
	}
	head, changes, gone, err := e.Client.Changes(ctx, scope, ss.Version)
	if err != nil {
		return err
	}
	if gone {
		if head, changes, err = e.snapshotChanges(ctx, scope, ss); err != nil {
			return err
		}
	}
	for i, c := range changes {
		if e.Progress != nil && len(changes) > 20 {
			e.Progress(scope, "pull", i, len(changes))
		}
		if err := e.applyRemote(scope, ss, c, rep); err != nil {
			return err
		}
	}
	ss.Version, ss.Checksum = head.Version, head.Checksum
	return nil
}

// snapshotChanges turns a full snapshot into a change list: every live
// entry, and a deletion for every synced key the snapshot lacks.
func (e *Engine) snapshotChanges(ctx context.Context, scope teammem.Scope, ss *ScopeState) (Head, []RemoteEntry, error) {
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
			entries = append(entries, RemoteEntry{Key: k, Op: "delete", Checksum: sum})
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
func (e *Engine) applyRemote(scope teammem.Scope, ss *ScopeState, c RemoteEntry, rep *Report) error {
	root, _ := e.root(scope)
	if err := keyAllowed(scope, c.Key); err != nil {
		rep.Skipped = append(rep.Skipped, Skip{Key: c.Key, Kind: SkipRefusedKey, Detail: teammem.ErrorMessage(err)})
		return nil
	}
	if limit := e.Client.EntryLimit(); c.Content != nil && len(*c.Content) > limit {
		// Never written, and the base stays: the entry is not taken for synced.
		rep.Skipped = append(rep.Skipped, Skip{Key: c.Key, Kind: SkipTooLarge, Limit: int64(limit)})
		return nil
	}
	local, exists, err := readLocal(root, c.Key)
	if err != nil {
		rep.Skipped = append(rep.Skipped, Skip{Key: c.Key, Kind: SkipWriteFailed, Detail: err.Error()})
		return nil
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
		return e.States.DropBase(scope, c.Key)
	}
	if c.Content == nil {
		return nil
	}
	remote := *c.Content
	c.Checksum = teammem.EntryChecksum(remote) // computed, not taken on trust
	next := remote
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
		next, _ = Merge3(baseContent, local, remote)
		rep.Merged = append(rep.Merged, c.Key)
	}
	if next != local || !exists {
		written, err := memdir.WriteAtomic(root, c.Key, []byte(next))
		if err != nil {
			rep.Skipped = append(rep.Skipped, Skip{Key: c.Key, Kind: SkipWriteFailed, Detail: err.Error()})
			return nil
		}
		if written && !slices.Contains(rep.Merged, c.Key) {
			rep.Pulled = append(rep.Pulled, c.Key)
		}
	}
	ss.Base[c.Key] = c.Checksum
	return e.States.SetBase(scope, c.Key, remote)
}
