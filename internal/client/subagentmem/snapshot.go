package subagentmem

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// File names of the snapshot protocol (reference §8.3).
const (
	// SnapshotFile is the snapshot's metadata, {"updatedAt": "<ISO time>"}.
	// It is never copied into an agent's memory.
	SnapshotFile = "snapshot.json"
	// MarkerFile, in an agent's memory directory, records the snapshot it
	// was seeded from: {"syncedFrom": "<updatedAt applied>"}.
	MarkerFile = ".snapshot-synced.json"
)

// Decision is what a snapshot means for an agent's memory directory.
type Decision string

// The decisions Check returns.
const (
	// DecisionNone: no valid snapshot, or the directory is up to date.
	DecisionNone Decision = "none"
	// DecisionInitialize: a snapshot exists and the directory holds no
	// Markdown file yet; Initialize seeds it. Claude Code does the same when
	// it loads the agent.
	DecisionInitialize Decision = "initialize"
	// DecisionUpdate: the snapshot is newer than the one the directory was
	// seeded from, or the directory has memory but no valid marker. Claude
	// Code asks the user (its "prompt-update"); teammem only reports it and
	// never overwrites memory.
	DecisionUpdate Decision = "update-available"
)

// Status is a snapshot's state relative to one memory directory.
type Status struct {
	Decision Decision `json:"decision"`
	// UpdatedAt is the snapshot's updatedAt; "" when there is no valid
	// snapshot.
	UpdatedAt string `json:"updated_at,omitempty"`
	// SyncedFrom is the directory marker's syncedFrom; "" when the marker
	// is missing or invalid.
	SyncedFrom string `json:"synced_from,omitempty"`
}

// ReadSnapshot returns the updatedAt of the snapshot in dir. ok is false
// when snapshot.json is missing, is not a JSON object, or has no non-empty
// string updatedAt; extra keys are ignored.
func ReadSnapshot(dir string) (updatedAt string, ok bool) {
	var meta struct {
		UpdatedAt any `json:"updatedAt"`
	}
	if !readJSON(filepath.Join(dir, SnapshotFile), &meta) {
		return "", false
	}
	s, isString := meta.UpdatedAt.(string)
	return s, isString && s != ""
}

// ReadMarker returns the syncedFrom of memDir's marker; ok is false when
// the marker is missing or holds no non-empty string syncedFrom.
func ReadMarker(memDir string) (syncedFrom string, ok bool) {
	var m struct {
		SyncedFrom any `json:"syncedFrom"`
	}
	if !readJSON(filepath.Join(memDir, MarkerFile), &m) {
		return "", false
	}
	s, isString := m.SyncedFrom.(string)
	return s, isString && s != ""
}

// readJSON decodes the JSON object in a regular file into v and reports
// whether that worked.
func readJSON(path string, v any) bool {
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(b)), "{") {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

// Check decides what the snapshot in snapshotDir means for memDir, in
// Claude Code's order: no valid snapshot → none; no Markdown file at
// memDir's top level (or no memDir) → initialize; no valid marker, or a
// snapshot dated after the marker → update-available; else none. A date
// that does not parse compares as not newer, so it gives none.
func Check(snapshotDir, memDir string) Status {
	updatedAt, ok := ReadSnapshot(snapshotDir)
	if !ok {
		return Status{Decision: DecisionNone}
	}
	st := Status{Decision: DecisionNone, UpdatedAt: updatedAt}
	if !hasMarkdown(memDir) {
		st.Decision = DecisionInitialize
		return st
	}
	syncedFrom, ok := ReadMarker(memDir)
	st.SyncedFrom = syncedFrom
	if !ok || after(updatedAt, syncedFrom) {
		st.Decision = DecisionUpdate
	}
	return st
}

// hasMarkdown reports whether dir holds a regular file named *.md at its
// top level.
func hasMarkdown(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") {
			return true
		}
	}
	return false
}

// after reports whether date a is later than date b, both parsed the way
// JavaScript's Date does for the forms snapshots use. Either failing to
// parse gives false, as NaN comparisons do.
func after(a, b string) bool {
	ta, okA := parseDate(a)
	tb, okB := parseDate(b)
	return okA && okB && ta.After(tb)
}

// parseDate reads the ISO 8601 forms Date.parse accepts: with a zone
// (RFC 3339), a local date-time without one, or a date alone (UTC).
func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, true
		}
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// Result says what Initialize did.
type Result struct {
	// Copied lists the file names copied into the memory directory.
	Copied []string `json:"copied"`
	// Kept lists snapshot files not copied because the memory directory
	// already had a file of that name.
	Kept []string `json:"kept,omitempty"`
	// SyncedFrom is the updatedAt written to the marker.
	SyncedFrom string `json:"synced_from"`
}

// ErrNotInitialize is returned by Initialize when Check does not decide
// "initialize" for the directory: memory exists (or there is no snapshot)
// and nothing may be touched.
var ErrNotInitialize = errors.New("agent memory is not waiting for initialization from its snapshot")

// Initialize seeds memDir from the snapshot in snapshotDir, which Check
// must decide "initialize" for (else ErrNotInitialize, nothing changed):
// it creates memDir, copies every regular top-level file of the snapshot
// except snapshot.json (and a stray marker) without ever replacing an
// existing file, then writes the marker with the snapshot's updatedAt.
// Like Claude Code it stops at the first copy error and then writes no
// marker, so a later run tries again.
func Initialize(snapshotDir, memDir string) (Result, error) {
	st := Check(snapshotDir, memDir)
	if st.Decision != DecisionInitialize {
		return Result{}, ErrNotInitialize
	}
	res := Result{Copied: []string{}, SyncedFrom: st.UpdatedAt}
	if err := os.MkdirAll(memDir, 0o755); err != nil {
		return res, fmt.Errorf("initialize agent memory: %w", err)
	}
	entries, err := os.ReadDir(snapshotDir)
	if err != nil {
		return res, fmt.Errorf("initialize agent memory: read snapshot: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || name == SnapshotFile || name == MarkerFile {
			continue
		}
		data, err := os.ReadFile(filepath.Join(snapshotDir, name))
		if err != nil {
			return res, fmt.Errorf("initialize agent memory: copy %s: %w", name, err)
		}
		created, err := createNew(memDir, name, data)
		if err != nil {
			return res, fmt.Errorf("initialize agent memory: copy %s: %w", name, err)
		}
		if created {
			res.Copied = append(res.Copied, name)
		} else {
			res.Kept = append(res.Kept, name)
		}
	}
	marker, _ := json.Marshal(map[string]string{"syncedFrom": st.UpdatedAt})
	if err := replace(memDir, MarkerFile, marker); err != nil {
		return res, fmt.Errorf("initialize agent memory: write %s: %w", MarkerFile, err)
	}
	return res, nil
}

// tempPrefix names the temporary files Initialize creates.
const tempPrefix = ".agentmem-tmp-"

// createNew writes data to dir/name unless something already exists
// there, and reports whether it wrote. The file appears whole: it is
// written to a temp file and hard-linked into place, which fails rather
// than replaces. Where hard links are not supported it falls back to an
// exclusive create.
func createNew(dir, name string, data []byte) (bool, error) {
	dst := filepath.Join(dir, name)
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	err = os.Link(tmp, dst)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	case !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.ENOTSUP) && !errors.Is(err, syscall.EXDEV):
		return false, err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err == nil, err
}

// replace atomically writes data to dir/name, replacing what is there.
func replace(dir, name string, data []byte) error {
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeTemp writes data to a new synced 0644 temp file in dir.
func writeTemp(dir string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
