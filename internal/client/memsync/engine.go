// Package memsync is the client's sync engine: it keeps the memory
// directory's team/ subdirectory in sync with the repo's team space and the
// rest with the caller's personal space, over the /v1 API (package
// apiclient). It remembers the base of every synced file, so concurrent
// edits merge three ways instead of one side winning, and deletions travel
// both ways as tombstones.
//
// Invariants: nothing is written outside the memory directory (every key is
// checked by memdir before use); no local edit is lost (a conflicting edit is
// merged and re-uploaded, a local edit of a remotely deleted file is kept);
// files with secrets never leave the machine.
package memsync

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/teammem"
)

// MaxFileBytes is the largest file synced: the largest entry the client
// accepts (the server's default entry cap).
const MaxFileBytes = apiclient.MaxEntryBytes

// Engine syncs one memory directory.
type Engine struct {
	Client    *apiclient.Client
	MemoryDir string
	States    *StateStore
	// Scanner scans files before upload; NewScanner, when set, builds it on
	// first use, so commands that push nothing never pay for the rules.
	Scanner    *secretscan.Scanner
	NewScanner func() (*secretscan.Scanner, error)
	scanOnce   sync.Once
	// scans lets a long-running engine (watch) re-read only changed files.
	scans memdir.ScanCache
	// Progress, when set, hears about long transfers (done of total files).
	Progress func(scope teammem.Scope, phase string, done, total int)
	// AllowMassDelete lets one sync delete more files than the mass-delete
	// guard allows (DeleteLimit), on either side.
	AllowMassDelete bool
	// Native, when set, says whether Claude Code's own sync was set up for
	// a scope of this memory dir (by `teammem claude`) and why: such a
	// scope is left alone as a whole, before Claude Code has marked its
	// mounts too. It is asked on every sync, so a running watch hears of it.
	Native func(scope teammem.Scope) (reason string, ok bool)
}

// Scopes lists both scopes in sync order.
var Scopes = []teammem.Scope{teammem.ScopeTeam, teammem.ScopePersonal}

// root returns the local directory of a scope and the top-level names it
// excludes: team/ is the team space; everything else is personal.
// Directories of Claude Code's own memory-store sync are left out too
// (see scan).
func (e *Engine) root(scope teammem.Scope) (string, []string) {
	if scope == teammem.ScopeTeam {
		return filepath.Join(e.MemoryDir, "team"), nil
	}
	return e.MemoryDir, []string{"team"}
}

// keyAllowed reports whether a key from the server may be written (or
// deleted) for a scope: the personal space must never reach into team/,
// and neither space into a directory Claude Code's own store sync owns.
func (e *Engine) keyAllowed(scope teammem.Scope, key string) error {
	if err := teammem.ValidateKey(key); err != nil {
		return err
	}
	if scope == teammem.ScopePersonal && (key == "team" || strings.HasPrefix(key, "team/")) {
		return teammem.Errorf(teammem.EInvalid, "personal key %q would write into team/", key)
	}
	root, _ := e.root(scope)
	if dir, marker, ok := memdir.StoreDir(root, key); ok {
		return teammem.Errorf(teammem.EInvalid, "%s lies in %s: %s", key, e.memoryPath(scope, dir), memdir.StoreReason(marker)+leftAlone)
	}
	return nil
}

// Exclusion is a directory of the memory dir that teammem leaves alone
// because Claude Code 2.1.212 or later syncs it with a memory store of its
// own (it holds .memory-sync or .memory-sync-basis). Nothing in it is read,
// pushed, deleted on the server or written by a pull; a file synced before
// the store was mounted stays on the server as it was.
type Exclusion struct {
	// Dir is relative to the memory dir, '/'-separated ("team/proj"); "."
	// is the memory dir itself, Claude Code's user store, which takes the
	// whole personal scope.
	Dir    string `json:"dir"`
	Reason string `json:"reason"`
}

// leftAlone ends the reason of every exclusion.
const leftAlone = "; teammem leaves it alone"

// memoryPath turns a directory relative to a scope's root into one
// relative to the memory dir.
func (e *Engine) memoryPath(scope teammem.Scope, dir string) string {
	if scope == teammem.ScopeTeam {
		return path.Join("team", dir)
	}
	return dir
}

// scopeExcluded returns the exclusion of a whole scope: its root holds a
// memory-store file. Claude Code mounts its user store at the memory dir,
// so that one turns off the personal scope; team/ itself is never a store,
// but is treated the same should it hold one.
func (e *Engine) scopeExcluded(scope teammem.Scope) (Exclusion, bool) {
	if e.Native != nil {
		if why, ok := e.Native(scope); ok {
			return Exclusion{Dir: e.memoryPath(scope, "."), Reason: why + leftAlone + ": the " + string(scope) + " scope is not synced"}, true
		}
	}
	root, _ := e.root(scope)
	m := memdir.StoreMarker(root)
	if m == "" {
		return Exclusion{}, false
	}
	return Exclusion{Dir: e.memoryPath(scope, "."), Reason: memdir.StoreReason(m) + leftAlone + ": the " + string(scope) + " scope is not synced"}, true
}

// scan reads a scope's local files for a push, status or verification.
// Directories Claude Code's store sync owns are not read: each is noted in
// rep (when not nil), and each synced key inside one comes back as
// skipped, so that it is never taken for a local deletion. A store mounted
// over a directory teammem synced before thus freezes those entries on the
// server instead of deleting them there.
func (e *Engine) scan(scope teammem.Scope, ss *ScopeState, rep *Report) ([]memdir.File, []Skip, error) {
	root, exclude := e.root(scope)
	files, skipped, err := memdir.Scan(root, memdir.ScanOptions{Exclude: exclude, MaxBytes: MaxFileBytes, Cache: &e.scans, SkipStores: true})
	if err != nil {
		return nil, nil, err
	}
	var kept []Skip
	for _, s := range skipped {
		if !s.IsStore() {
			kept = append(kept, scanSkip(s))
			continue
		}
		dir, synced := e.memoryPath(scope, s.Key), 0
		for _, k := range sortedKeys(ss.Base) {
			if strings.HasPrefix(k, s.Key+"/") {
				synced++
				kept = append(kept, Skip{Key: k, Kind: SkipLeftAlone,
					Detail: "in " + dir + ", " + s.Reason + ": not synced; the server keeps it as last synced"})
			}
		}
		if rep != nil {
			ex := Exclusion{Dir: dir, Reason: s.Reason + leftAlone}
			if synced > 0 {
				ex.Reason += fmt.Sprintf(" (%d files synced before stay on the server as they were)", synced)
			}
			rep.Excluded = append(rep.Excluded, ex)
		}
	}
	slices.SortFunc(kept, func(a, b Skip) int { return strings.Compare(a.Key, b.Key) })
	return files, kept, nil
}

// Exclusions lists the directories of a scope that teammem leaves to
// Claude Code's own memory-store sync, for status.
func (e *Engine) Exclusions(scope teammem.Scope, ss *ScopeState) ([]Exclusion, error) {
	if ex, ok := e.scopeExcluded(scope); ok {
		return []Exclusion{ex}, nil
	}
	rep := &Report{}
	if _, _, err := e.scan(scope, ss, rep); err != nil {
		return nil, err
	}
	return rep.Excluded, nil
}

// Report says what one sync of one scope did.
type Report struct {
	Scope         teammem.Scope `json:"scope"`
	NotModified   bool          `json:"not_modified"`
	Pulled        []string      `json:"pulled"`         // written locally from the server
	RemovedLocal  []string      `json:"removed_local"`  // deleted locally after a remote delete
	KeptLocal     []string      `json:"kept_local"`     // remote delete of a locally edited file: kept
	Pushed        []string      `json:"pushed"`         // uploaded
	DeletedRemote []string      `json:"deleted_remote"` // deletions sent
	Merged        []string      `json:"merged"`         // edited on both sides, merged three ways
	// Overlapped lists the merged files where both sides changed the same
	// lines: both sides' lines were kept, and the file is worth a review.
	// It includes PulledOverlaps.
	Overlapped []string `json:"overlapped"`
	// PulledOverlaps lists the files pulled as another machine's merge that
	// kept both sides of an overlapping edit (the server's change list said
	// so): worth a review here too.
	PulledOverlaps []string `json:"pulled_overlaps"`
	// Reset, when set, says the server's space did not continue the synced
	// history (ResetRestored, ResetReplaced, ResetForgotten): the mirror was
	// reconciled with it without deleting anything.
	Reset string `json:"reset,omitempty"`
	// HeldLocalDeletes and HeldRemoteDeletes are deletions the mass-delete
	// guard held back (more than DeleteLimit); AllowMassDelete lets them go.
	// HeldForReview lists the files the server holds for an admin's
	// review: kept local, not sent again until they change.
	HeldForReview     []string `json:"held_for_review"`
	HeldLocalDeletes  []string `json:"held_local_deletes"`
	HeldRemoteDeletes []string `json:"held_remote_deletes"`
	DeleteLimit       int      `json:"delete_limit,omitempty"`
	Skipped           []Skip   `json:"skipped"`
	// Excluded lists the directories left to Claude Code's own store sync.
	Excluded []Exclusion `json:"excluded,omitempty"`
	Version  int64       `json:"version"`
	Checksum string      `json:"checksum"`
	// Verified reports whether the checksum recomputed from the mirror
	// equals the server's.
	Verified bool `json:"verified"`
}

// Sync pulls then pushes scope, under the state lock. A scope whose root
// Claude Code's own store sync owns is not synced at all: the report only
// lists that exclusion.
func (e *Engine) Sync(ctx context.Context, scope teammem.Scope, pull, push bool) (*Report, error) {
	return e.sync(ctx, scope, syncSteps{pull: pull, push: push})
}

// SyncMoved pulls scope after the server said it moved (a live event):
// straight to its changes since the synced version, whose answer carries
// the head the usual head check would have read first. One round trip
// less on the way a change takes from one machine to another.
func (e *Engine) SyncMoved(ctx context.Context, scope teammem.Scope) (*Report, error) {
	return e.sync(ctx, scope, syncSteps{pull: true, moved: true})
}

// syncSteps says what one sync does.
type syncSteps struct {
	pull, push bool
	moved      bool // the server announced a change: pull skips the head check
}

func (e *Engine) sync(ctx context.Context, scope teammem.Scope, steps syncSteps) (*Report, error) {
	if ex, ok := e.scopeExcluded(scope); ok {
		return &Report{Scope: scope, Excluded: []Exclusion{ex}}, nil
	}
	unlock, err := e.States.Lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, err := e.States.Load()
	if err != nil {
		return nil, err
	}
	st.MemoryDir, st.Repo, st.Server = e.MemoryDir, e.Client.Repo, e.Client.BaseURL
	ss := st.Scope(scope)
	rep := &Report{Scope: scope}
	err = e.run(ctx, scope, ss, rep, steps)
	e.pruneOverlaps(scope, ss)
	ss.pruneDeleted()
	if err != nil {
		ss.LastError = err.Error()
	} else {
		ss.LastError, ss.LastSync = "", time.Now().UTC()
		if rep.Reset == "" {
			ss.Reset = "" // a later sync found the space continuing
		}
	}
	rep.Version, rep.Checksum = ss.Version, ss.Checksum
	if serr := e.States.Save(st); err == nil {
		err = serr
	}
	return rep, err
}

func (e *Engine) run(ctx context.Context, scope teammem.Scope, ss *ScopeState, rep *Report, steps syncSteps) error {
	if steps.pull {
		if err := e.pull(ctx, scope, ss, rep, steps.moved); err != nil {
			return &StepError{Step: StepPull, Scope: scope, Err: err}
		}
	}
	if steps.push {
		if err := e.push(ctx, scope, ss, rep); err != nil {
			return &StepError{Step: StepPush, Scope: scope, Err: err}
		}
		if steps.pull && ss.Checksum == "" { // others wrote while we pushed: catch up
			if err := e.pull(ctx, scope, ss, rep, false); err != nil {
				return &StepError{Step: StepPull, Scope: scope, Err: err}
			}
		}
	}
	verified, err := e.verify(scope, ss, rep)
	rep.Verified = verified
	return err
}

// verify recomputes the space checksum from the mirror: the local files
// whose content matches their synced base. It notes in rep the directories
// it left out.
func (e *Engine) verify(scope teammem.Scope, ss *ScopeState, rep *Report) (bool, error) {
	root, _ := e.root(scope)
	files, skipped, err := e.scan(scope, ss, rep)
	if err != nil {
		return false, err
	}
	sums := map[string]string{}
	for _, f := range files {
		if ss.Base[f.Key] != "" {
			sums[f.Key] = f.Checksum
		}
	}
	for _, s := range skipped {
		// Frozen in a store directory: it counts as last synced.
		if _, _, inStore := memdir.StoreDir(root, s.Key); inStore && ss.Base[s.Key] != "" {
			sums[s.Key] = ss.Base[s.Key]
		}
	}
	return len(sums) == len(ss.Base) && teammem.SpaceChecksum(sums) == ss.Checksum, nil
}

// Pending lists local changes a push would send (new or edited keys, keys
// deleted locally) and the files a push holds back (too big, symlinks,
// secrets), which stay on this machine.
func (e *Engine) Pending(scope teammem.Scope, ss *ScopeState) (changed, deleted []string, held []Skip, err error) {
	changed, deleted, held = []string{}, []string{}, []Skip{}
	if _, ok := e.scopeExcluded(scope); ok {
		return changed, deleted, held, nil // never synced: nothing pending
	}
	files, skipped, err := e.scan(scope, ss, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	present := map[string]bool{}
	for _, s := range skipped {
		present[s.Key] = true // too big or a symlink now: not a deletion
		held = append(held, s)
	}
	for _, f := range files {
		present[f.Key] = true
		if ss.Base[f.Key] == f.Checksum {
			continue
		}
		if h, ok := ss.Held[f.Key]; ok && h.Checksum == f.Checksum {
			held = append(held, heldSkip(f.Key, h))
			continue
		}
		if found, ok := e.scanSecrets(string(f.Content)); ok {
			held = append(held, secretSkip(f.Key, found))
			continue
		}
		changed = append(changed, f.Key)
	}
	for k := range ss.Base {
		if h, ok := ss.Held[k]; ok && h.Checksum == "" && !present[k] {
			held = append(held, heldSkip(k, h))
			continue
		}
		if !present[k] {
			deleted = append(deleted, k)
		}
	}
	slices.Sort(deleted)
	return changed, deleted, held, nil
}

// scanSecrets returns the first finding of content, if any.
func (e *Engine) scanSecrets(content string) (secretscan.Finding, bool) {
	e.scanOnce.Do(func() {
		if e.Scanner == nil && e.NewScanner != nil {
			e.Scanner, _ = e.NewScanner() // the rules are embedded: this cannot fail in practice
		}
	})
	if e.Scanner == nil {
		return secretscan.Finding{}, false
	}
	found := e.Scanner.Scan(content, nil)
	if len(found) == 0 {
		return secretscan.Finding{}, false
	}
	return found[0], true
}

// pruneOverlaps forgets the overlapping merges whose files changed since the
// merge wrote them (or are gone): someone has looked at them.
func (e *Engine) pruneOverlaps(scope teammem.Scope, ss *ScopeState) {
	root, _ := e.root(scope)
	for k, sum := range ss.Overlaps {
		if local, exists, err := readLocal(root, k); err == nil && (!exists || teammem.EntryChecksum(local) != sum) {
			delete(ss.Overlaps, k)
		}
	}
}

// Overlaps lists the files whose last merge kept both sides of an
// overlapping edit and that have not changed since.
func (e *Engine) Overlaps(scope teammem.Scope, ss *ScopeState) []string {
	root, _ := e.root(scope)
	out := []string{}
	for k, sum := range ss.Overlaps {
		if local, exists, err := readLocal(root, k); err == nil && exists && teammem.EntryChecksum(local) == sum {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// heldSkip is a held file as Pending reports it.
func heldSkip(key string, h HeldFile) Skip {
	return Skip{Key: key, Kind: SkipHeldForReview, Detail: fmt.Sprintf("proposal %d", h.Proposal)}
}

// first returns the first non-empty string.
func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
