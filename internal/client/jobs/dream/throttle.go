package dream

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ScanInterval is the least time between two session scans (reference
// §6.2, SESSION_SCAN_INTERVAL_MS). When the session gate fails the lock's
// mtime does not move, so without it every check past the time gate would
// list the transcripts again.
const ScanInterval = 10 * time.Minute

// throttleFile is the scan throttle's state in Dreamer.StateDir: the time
// of the last session scan in Unix milliseconds. The reference keeps it in
// memory for the life of a session; a CLI run per hook persists it.
const throttleFile = "dream-last-scan"

// throttled reports whether a session scan at now would come less than
// ScanInterval after the last one. A last scan in the future (the clock
// went back) does not throttle.
func throttled(stateDir string, now time.Time) (bool, time.Duration) {
	if stateDir == "" {
		return false, 0
	}
	b, err := os.ReadFile(filepath.Join(stateDir, throttleFile))
	if err != nil {
		return false, 0
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return false, 0
	}
	since := now.Sub(time.UnixMilli(ms))
	return since >= 0 && since < ScanInterval, since
}

// recordScan persists now as the last scan. A failure to write is ignored:
// it costs a later scan, never a consolidation.
func recordScan(stateDir string, now time.Time) {
	if stateDir == "" {
		return
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return
	}
	p := filepath.Join(stateDir, throttleFile)
	tmp := p + ".tmp" + strconv.Itoa(os.Getpid())
	if os.WriteFile(tmp, []byte(strconv.FormatInt(now.UnixMilli(), 10)+"\n"), 0o600) != nil {
		os.Remove(tmp)
		return
	}
	if os.Rename(tmp, p) != nil {
		os.Remove(tmp)
	}
}
