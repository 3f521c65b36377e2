package memsync

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/teammem/teammem/internal/client/filelock"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/teammem"
)

// ScopeState is what the client remembers of one synced space. It lives in
// the user's config dir, never inside the memory directory.
type ScopeState struct {
	// SpaceID is the incarnation of the server's space the mirror follows
	// ("" before the first sync, or from a server that names none). Another
	// SpaceID means another space: nothing it lacks is a deletion.
	SpaceID string `json:"space_id,omitempty"`
	// Version and Checksum are the server head the mirror last matched.
	Version  int64  `json:"version"`
	Checksum string `json:"checksum"`
	// Base maps each synced key to the checksum both sides agreed on; a
	// copy of that content is kept under base/<scope>/ for three-way merges.
	Base map[string]string `json:"base"`
	// Foreign maps the server's entries that are not mirrored here (refused
	// keys, entries too large to write) to their checksums. With Base it is
	// what the client knows of the server's space at Version, which is how a
	// pull checks that the server's history continues the one it synced.
	Foreign map[string]string `json:"foreign,omitempty"`
	// Deleted maps each key this machine saw deleted on the server (a
	// deletion it pushed or pulled) to the version of that deletion, until
	// the key is synced again. A file that reappears under such a key is a
	// deliberate re-creation: the push names the deletion (Recreates), so
	// the server writes it instead of refusing it as a stale copy.
	Deleted map[string]int64 `json:"deleted,omitempty"`
	// HeldDeletes lists the remote deletions the last pull did not apply
	// because they were more than the mass-delete guard allows.
	HeldDeletes []string `json:"held_deletes,omitempty"`
	// Held maps each file the server held for review (team_writes: review,
	// or its poisoning checks) to what was held: until the file changes
	// again, or the server's copy catches up with it, it stays local and
	// is not sent again.
	Held map[string]HeldFile `json:"held,omitempty"`
	// Overlaps maps each file whose last merge kept both sides of an
	// overlapping edit to the checksum the merge wrote: the file is worth a
	// review until it changes again.
	Overlaps map[string]string `json:"overlaps,omitempty"`
	// Reset says why the last sync found the server's space was not a
	// continuation of the one synced before (kept until a sync finds it is).
	Reset    string    `json:"reset,omitempty"`
	ResetAt  time.Time `json:"reset_at,omitzero"`
	LastSync time.Time `json:"last_sync,omitzero"`
	// LastError is the last sync failure, cleared by a success.
	LastError string `json:"last_error,omitempty"`
	// Suppressed names why the watcher stopped pushing after a permanent
	// failure; cleared by a local deletion or a restart (reference §3.15).
	Suppressed   string    `json:"suppressed,omitempty"`
	SuppressedAt time.Time `json:"suppressed_at,omitzero"`
}

// sawDeleted remembers that the server deleted key at version v (0:
// unknown, which names no deletion); synced forgets it again.
func (ss *ScopeState) sawDeleted(key string, v int64) {
	if v > 0 {
		ss.Deleted[key] = v
	}
}

// maxRememberedDeletes bounds ScopeState.Deleted. A deletion forgotten
// past it costs only this: writing that file again with exactly the
// deleted content is refused as a stale copy (reported; the file stays).
const maxRememberedDeletes = 10_000

// pruneDeleted keeps the newest maxRememberedDeletes deletions.
func (ss *ScopeState) pruneDeleted() {
	if len(ss.Deleted) <= maxRememberedDeletes {
		return
	}
	keys := make([]string, 0, len(ss.Deleted))
	for k := range ss.Deleted {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(ss.Deleted[b], ss.Deleted[a]) })
	for _, k := range keys[maxRememberedDeletes:] {
		delete(ss.Deleted, k)
	}
}

// synced records key's new base, which ends any deletion remembered for it.
func (ss *ScopeState) synced(key, checksum string) {
	ss.Base[key] = checksum
	delete(ss.Deleted, key)
}

// HeldFile is one file of a held write: the checksum of the content held
// ("" for a held deletion) and the proposal that holds it.
type HeldFile struct {
	Checksum string `json:"checksum"`
	Proposal int64  `json:"proposal"`
}

// State is the persisted sync state of one memory directory.
type State struct {
	MemoryDir string                        `json:"memory_dir"`
	Repo      string                        `json:"repo"`
	Server    string                        `json:"server"`
	Scopes    map[teammem.Scope]*ScopeState `json:"scopes"`
}

// Scope returns the state of scope, creating it when missing.
func (s *State) Scope(scope teammem.Scope) *ScopeState {
	if s.Scopes == nil {
		s.Scopes = map[teammem.Scope]*ScopeState{}
	}
	st := s.Scopes[scope]
	if st == nil {
		st = &ScopeState{Checksum: teammem.EmptySpaceChecksum} // an unsynced mirror is empty, like the server
		s.Scopes[scope] = st
	}
	if st.Base == nil {
		st.Base = map[string]string{}
	}
	if st.Foreign == nil {
		st.Foreign = map[string]string{}
	}
	if st.Overlaps == nil {
		st.Overlaps = map[string]string{}
	}
	if st.Deleted == nil {
		st.Deleted = map[string]int64{}
	}
	return st
}

// StateStore keeps one memory directory's state under dir.
type StateStore struct {
	dir string
}

// StateDir returns the state directory of a memory dir for a repo and
// server: <config dir>/teammem/state/<hash>. Changing server or repo starts
// from fresh state, so bases never mix.
func StateDir(configDir, memoryDir, repo, server string) string {
	h := sha256.Sum256([]byte(memoryDir + "\x00" + repo + "\x00" + server))
	return filepath.Join(configDir, "teammem", "state", hex.EncodeToString(h[:8]))
}

// OpenState returns the store in dir, creating it (0700).
func OpenState(dir string) (*StateStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create state dir: %w", err)
	}
	return &StateStore{dir: dir}, nil
}

// Dir is the state directory.
func (s *StateStore) Dir() string { return s.dir }

// Load reads the state; a missing file is an empty state.
func (s *StateStore) Load() (*State, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "state.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return &State{}, nil
	}
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("state file %s is corrupt (%v); delete it to resync from scratch", filepath.Join(s.dir, "state.json"), err)
	}
	return &st, nil
}

// Save writes the state atomically.
func (s *StateStore) Save(st *State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	_, err = memdir.WriteAtomic(s.dir, "state.json", b)
	return err
}

// baseRoot is where base copies of a scope's files live.
func (s *StateStore) baseRoot(scope teammem.Scope) string {
	return filepath.Join(s.dir, "base", string(scope))
}

// BaseContent returns the remembered base of key ("" and false when none).
func (s *StateStore) BaseContent(scope teammem.Scope, key string) (string, bool) {
	b, err := memdir.ReadFile(s.baseRoot(scope), key)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// SetBase remembers content as the base of key.
func (s *StateStore) SetBase(scope teammem.Scope, key, content string) error {
	_, err := memdir.WriteAtomic(s.baseRoot(scope), key, []byte(content))
	return err
}

// DropBase forgets the base of key.
func (s *StateStore) DropBase(scope teammem.Scope, key string) error {
	_, err := memdir.Remove(s.baseRoot(scope), key)
	return err
}

// Lock takes the state's exclusive lock so that two teammem processes (a
// watcher and a hook, say) never sync one directory at once. It blocks.
func (s *StateStore) Lock() (unlock func(), err error) {
	return filelock.Lock(filepath.Join(s.dir, "lock"))
}
