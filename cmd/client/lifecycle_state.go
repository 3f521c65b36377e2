package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/teammem/teammem/internal/client/filelock"
	"github.com/teammem/teammem/internal/client/memdir"
)

// lifecycleFile keeps, in the local state dir, which parts the hooks
// skipped before starting anything, and why: skips no command run would
// record (no model, Claude Code's own engine), for `teammem status`.
const lifecycleFile = "lifecycle.json"

// hookSkip is one part's current run of skips with the same reason.
type hookSkip struct {
	Reason string    `json:"reason"`
	Count  int       `json:"count"`
	Since  time.Time `json:"since"`
	Last   time.Time `json:"last"`
	// LoggedAt is when hook.log last said so. A rolling day, not the
	// calendar date: hooks either side of midnight say it once.
	LoggedAt time.Time `json:"logged_at,omitzero"`
}

// logSkipEvery is how often hook.log repeats an unexpected skip.
const logSkipEvery = 24 * time.Hour

// lifecycleState is lifecycleFile's content.
type lifecycleState struct {
	Skips map[string]hookSkip `json:"skips"`
}

// loadLifecycle reads the state; missing or corrupt files are empty.
func loadLifecycle(stateDir string) lifecycleState {
	st := lifecycleState{Skips: map[string]hookSkip{}}
	if b, err := os.ReadFile(filepath.Join(stateDir, lifecycleFile)); err == nil {
		_ = json.Unmarshal(b, &st)
	}
	if st.Skips == nil {
		st.Skips = map[string]hookSkip{}
	}
	return st
}

// noteParts records, under a lock, the outcome of one hook event for the
// given parts: a skip reason adds to that part's count (a new reason
// starts it over), "" (the part ran) clears it. It returns the parts whose
// skip hook.log has not mentioned in the last 24 hours, marking them as
// mentioned, so a skip is logged at most once a day.
func noteParts(stateDir string, now time.Time, reasons map[string]string) (toLog []string) {
	unlock, err := filelock.Lock(filepath.Join(stateDir, lifecycleFile+".lock"))
	if err != nil {
		return nil
	}
	defer unlock()
	st := loadLifecycle(stateDir)
	changed := false
	for part, reason := range reasons {
		s, had := st.Skips[part]
		switch {
		case reason == "" && had:
			delete(st.Skips, part)
			changed = true
		case reason == "":
		default:
			if s.Reason != reason {
				s = hookSkip{Reason: reason, Since: now}
			}
			s.Count++
			s.Last = now
			if s.LoggedAt.IsZero() || now.Sub(s.LoggedAt) >= logSkipEvery || now.Before(s.LoggedAt) {
				s.LoggedAt = now
				toLog = append(toLog, part)
			}
			st.Skips[part] = s
			changed = true
		}
	}
	if changed {
		if b, err := json.MarshalIndent(st, "", "  "); err == nil {
			_, _ = memdir.WriteAtomic(stateDir, lifecycleFile, append(b, '\n'))
		}
	}
	sort.Strings(toLog)
	return toLog
}
