package sessionmem

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/teammem/teammem/internal/client/filelock"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// StateDirName is the directory, inside the caller's state directory,
// that holds one state file and one lock per session.
const StateDirName = "session-memory"

// State is what teammem remembers about one session's notes between runs.
type State struct {
	// SessionID names the session.
	SessionID string `json:"session_id"`
	// NotesPath is the session's notes file.
	NotesPath string `json:"notes_path,omitempty"`
	// Initialized reports that the context once reached Thresholds.Init.
	Initialized bool `json:"initialized"`
	// TokensAtLastUpdate is the context size the last update saw.
	TokensAtLastUpdate int64 `json:"tokens_at_last_update"`
	// LastSummarized is the uuid of the last record an update covered when
	// that update ran after a turn without tool calls (the reference's
	// lastSummarizedMessageId); "" otherwise.
	LastSummarized string `json:"last_summarized,omitempty"`
	// Scan is the transcript measured so far.
	Scan Scan `json:"scan"`
	// Updates counts the updates that ran to completion.
	Updates int `json:"updates"`
	// LastUpdate is when the last update completed.
	LastUpdate time.Time `json:"last_update,omitzero"`
	// LastRun, LastOutcome, LastSkipReason and LastMessage describe the last
	// check or run.
	LastRun        time.Time `json:"last_run,omitzero"`
	LastOutcome    string    `json:"last_outcome,omitempty"`
	LastSkipReason string    `json:"last_skip_reason,omitempty"`
	LastMessage    string    `json:"last_message,omitempty"`
}

// sessionIDRE is what a session id must look like to name files: Claude
// Code's are UUIDs; anything shaped like a plain file name is accepted.
var sessionIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidSessionID reports whether id can name a state file and a notes
// directory: letters, digits, '.', '_' and '-', not starting with a dot.
func ValidSessionID(id string) bool { return sessionIDRE.MatchString(id) }

// statePath returns the session's state file under stateDir.
func statePath(stateDir, session string) string {
	return filepath.Join(stateDir, StateDirName, session+".json")
}

// LoadState reads a session's state; a missing file is a fresh state.
func LoadState(stateDir, session string) (State, error) {
	st := State{SessionID: session}
	b, err := os.ReadFile(statePath(stateDir, session))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read session-memory state: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		// A corrupt file loses only progress: the session starts over.
		return State{SessionID: session}, nil
	}
	st.SessionID = session
	return st, nil
}

// ListStates returns the state of every session kept under stateDir, in no
// particular order.
func ListStates(stateDir string) []State {
	entries, _ := os.ReadDir(filepath.Join(stateDir, StateDirName))
	var out []State
	for _, e := range entries {
		name := e.Name()
		if filepath.Ext(name) != ".json" || !ValidSessionID(name[:len(name)-5]) {
			continue
		}
		if st, err := LoadState(stateDir, name[:len(name)-5]); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// updateState applies change to the session's state under the state
// file's lock, re-reading it first so concurrent hooks do not undo each
// other, and saves it atomically with mode 0600.
func updateState(stateDir, session string, change func(*State) error) (State, error) {
	dir := filepath.Join(stateDir, StateDirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return State{}, fmt.Errorf("session-memory state: %w", err)
	}
	unlock, err := filelock.Lock(statePath(stateDir, session) + ".lock")
	if err != nil {
		return State{}, err
	}
	defer unlock()
	st, err := LoadState(stateDir, session)
	if err != nil {
		return st, err
	}
	if err := change(&st); err != nil {
		return st, err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return st, err
	}
	if err := writeFileAtomic(statePath(stateDir, session), append(b, '\n')); err != nil {
		return st, fmt.Errorf("save session-memory state: %w", err)
	}
	return st, nil
}

// writeFileAtomic replaces path with data through a temp file (0600) in
// the same directory, fsynced and renamed over it.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
