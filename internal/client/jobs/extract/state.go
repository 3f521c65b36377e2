package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/teammem/teammem/internal/client/filelock"
	"github.com/teammem/teammem/internal/client/memdir"
)

// StateFile is the name of the extraction state in the state directory.
const StateFile = "extract.json"

// stateTTL is how long a session's entry is kept after its last run; a
// session resumed later simply starts over from its first message.
const stateTTL = 30 * 24 * time.Hour

// State is the extraction state of every session of one memory directory.
type State struct {
	// Sessions maps a session id to its state.
	Sessions map[string]SessionState `json:"sessions"`
}

// SessionState is what extraction remembers about one session between runs.
type SessionState struct {
	// Cursor is the uuid of the last transcript message already considered;
	// "" means none, so the next run looks at the whole transcript.
	Cursor string `json:"cursor,omitempty"`
	// TurnsSince counts eligible turns (with prose, no direct memory write)
	// since the last successful extraction, for the Every throttle.
	TurnsSince int `json:"turns_since"`
	// LastRun is when extraction last ran for the session.
	LastRun time.Time `json:"last_run"`
	// LastOutcome is the last run's Report.Outcome, or "coalesced" when a
	// call found another one running.
	LastOutcome string `json:"last_outcome,omitempty"`
	// LastSkipReason is the last run's Report.SkipReason.
	LastSkipReason string `json:"last_skip_reason,omitempty"`
}

// LoadState reads the state kept in dir; a missing file is an empty state.
func LoadState(dir string) (State, error) {
	st := State{Sessions: map[string]SessionState{}}
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read extraction state: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return State{Sessions: map[string]SessionState{}}, fmt.Errorf("extraction state %s is not valid JSON: %w", filepath.Join(dir, StateFile), err)
	}
	if st.Sessions == nil {
		st.Sessions = map[string]SessionState{}
	}
	return st, nil
}

// updateSession applies change to session's entry under the state file's
// lock, re-reading the file first, so runs for other sessions that saved in
// the meantime are kept. Entries idle for longer than stateTTL are dropped.
func updateSession(dir, session string, now time.Time, change func(*SessionState)) error {
	unlock, err := filelock.Lock(filepath.Join(dir, StateFile+".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	st, err := LoadState(dir)
	if err != nil {
		// A corrupt file loses only cursors: start over rather than never
		// extracting again.
		st = State{Sessions: map[string]SessionState{}}
	}
	s := st.Sessions[session]
	change(&s)
	st.Sessions[session] = s
	for id, s := range st.Sessions {
		if now.Sub(s.LastRun) > stateTTL {
			delete(st.Sessions, id)
		}
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if _, err := memdir.WriteAtomic(dir, StateFile, append(b, '\n')); err != nil {
		return fmt.Errorf("save extraction state: %w", err)
	}
	return nil
}

// lockSession takes the session's extraction lock without waiting. ok is
// false when another process holds it.
func lockSession(dir, session string) (unlock func(), ok bool, err error) {
	h := sha256.Sum256([]byte(session))
	unlock, err = filelock.TryLock(filepath.Join(dir, "extract-"+hex.EncodeToString(h[:8])+".lock"))
	if errors.Is(err, filelock.ErrBusy) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return unlock, true, nil
}
