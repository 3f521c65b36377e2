// Package memsync is the client's sync engine: it keeps the memory
// directory's team/ subdirectory in sync with the repo's team space and the
// rest with the caller's personal space, over the /v1 API. It remembers the
// base of every synced file, so concurrent edits merge three ways instead of
// one side winning, and deletions travel both ways as tombstones.
//
// Invariants: nothing is written outside the memory directory (every key is
// checked by memdir before use); no local edit is lost (a conflicting edit is
// merged and re-uploaded, a local edit of a remotely deleted file is kept);
// files with secrets never leave the machine.
package memsync

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/memdir"
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/teammem"
)

// MaxFileBytes is the largest file synced (the server's default entry cap).
const MaxFileBytes = 250_000

// Engine syncs one memory directory.
type Engine struct {
	Client    *Client
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
}

// Scopes lists both scopes in sync order.
var Scopes = []teammem.Scope{teammem.ScopeTeam, teammem.ScopePersonal}

// root returns the local directory of a scope and the top-level names it
// excludes: team/ is the team space; everything else is personal.
func (e *Engine) root(scope teammem.Scope) (string, []string) {
	if scope == teammem.ScopeTeam {
		return filepath.Join(e.MemoryDir, "team"), nil
	}
	return e.MemoryDir, []string{"team"}
}

// keyAllowed reports whether a key from the server may be written for a
// scope: the personal space must never reach into team/.
func keyAllowed(scope teammem.Scope, key string) error {
	if err := teammem.ValidateKey(key); err != nil {
		return err
	}
	if scope == teammem.ScopePersonal && (key == "team" || strings.HasPrefix(key, "team/")) {
		return teammem.Errorf(teammem.EInvalid, "personal key %q would write into team/", key)
	}
	return nil
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
	Skipped       []Skip        `json:"skipped"`
	Version       int64         `json:"version"`
	Checksum      string        `json:"checksum"`
	// Verified reports whether the checksum recomputed from the mirror
	// equals the server's.
	Verified bool `json:"verified"`
}

// Sync pulls then pushes scope, under the state lock.
func (e *Engine) Sync(ctx context.Context, scope teammem.Scope, pull, push bool) (*Report, error) {
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
	err = e.run(ctx, scope, ss, rep, pull, push)
	if err != nil {
		ss.LastError = err.Error()
	} else {
		ss.LastError, ss.LastSync = "", time.Now().UTC()
	}
	rep.Version, rep.Checksum = ss.Version, ss.Checksum
	if serr := e.States.Save(st); err == nil {
		err = serr
	}
	return rep, err
}

func (e *Engine) run(ctx context.Context, scope teammem.Scope, ss *ScopeState, rep *Report, pull, push bool) error {
	if pull {
		if err := e.pull(ctx, scope, ss, rep); err != nil {
			return &StepError{Step: StepPull, Scope: scope, Err: err}
		}
	}
	if push {
		if err := e.push(ctx, scope, ss, rep); err != nil {
			return &StepError{Step: StepPush, Scope: scope, Err: err}
		}
		if pull && ss.Checksum == "" { // others wrote while we pushed: catch up
			if err := e.pull(ctx, scope, ss, rep); err != nil {
				return &StepError{Step: StepPull, Scope: scope, Err: err}
			}
		}
	}
	verified, err := e.verify(scope, ss)
	rep.Verified = verified
	return err
}

// verify recomputes the space checksum from the mirror: the local files
// whose content matches their synced base.
func (e *Engine) verify(scope teammem.Scope, ss *ScopeState) (bool, error) {
	root, exclude := e.root(scope)
	files, _, err := memdir.Scan(root, memdir.ScanOptions{Exclude: exclude, MaxBytes: MaxFileBytes, Cache: &e.scans})
	if err != nil {
		return false, err
	}
	sums := map[string]string{}
	for _, f := range files {
		if ss.Base[f.Key] != "" {
			sums[f.Key] = f.Checksum
		}
	}
	return len(sums) == len(ss.Base) && teammem.SpaceChecksum(sums) == ss.Checksum, nil
}

// Pending lists local changes a push would send (new or edited keys, keys
// deleted locally) and the files a push holds back (too big, symlinks,
// secrets), which stay on this machine.
func (e *Engine) Pending(scope teammem.Scope, ss *ScopeState) (changed, deleted []string, held []Skip, err error) {
	root, exclude := e.root(scope)
	files, skipped, err := memdir.Scan(root, memdir.ScanOptions{Exclude: exclude, MaxBytes: MaxFileBytes, Cache: &e.scans})
	if err != nil {
		return nil, nil, nil, err
	}
	changed, deleted, held = []string{}, []string{}, []Skip{}
	present := map[string]bool{}
	for _, s := range skipped {
		present[s.Key] = true // too big or a symlink now: not a deletion
		held = append(held, scanSkip(s))
	}
	for _, f := range files {
		present[f.Key] = true
		if ss.Base[f.Key] == f.Checksum {
			continue
		}
		if found, ok := e.scanSecrets(string(f.Content)); ok {
			held = append(held, secretSkip(f.Key, found))
			continue
		}
		changed = append(changed, f.Key)
	}
	for k := range ss.Base {
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
