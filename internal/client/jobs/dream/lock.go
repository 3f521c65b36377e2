package dream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/teammem/teammem/internal/client/filelock"
	"github.com/teammem/teammem/internal/client/memdir"
)

// HolderStale is how long a lock's holder is trusted: after it, the lock is
// reclaimed even when the holder is still alive (reference §6.3).
const HolderStale = time.Hour

// LockPath returns the lock file of a memory directory.
func LockPath(dir string) string { return filepath.Join(dir, memdir.LockFileName) }

// LastConsolidated returns the lock's mtime, which is the time of the last
// consolidation, in milliseconds; zero when there is no lock or it cannot be
// stat'ed.
func LastConsolidated(dir string) time.Time {
	fi, err := os.Stat(LockPath(dir))
	if err != nil {
		return time.Time{}
	}
	return msTime(fi.ModTime())
}

// Acquire takes the consolidation lock of the memory directory dir for
// pid, following the reference (§6.3):
//
//  1. Stat and read the lock. When both succeed its mtime is the prior
//     mtime and its body, trimmed and parsed like JavaScript's parseInt,
//     the holder; otherwise there is no lock.
//  2. A lock younger than HolderStale whose holder is alive blocks (ok
//     false). A holder is alive when kill(pid, 0) succeeds and pid > 1;
//     EPERM counts as dead. An older lock, a dead holder or an unparsable
//     body is reclaimed.
//  3. Create dir if needed and write pid as the body, which sets the mtime
//     to now.
//  4. Re-read: a body that is unreadable or not pid means another process
//     wrote after us and won (ok false).
//
// It returns the prior mtime (zero when there was no lock), which Rollback
// restores. Between teammem processes steps 1–4 run under an advisory lock
// on dir, so two started together cannot both win; against a process that
// does not take it the reference's last-writer-wins check applies.
func Acquire(dir string, pid int) (priorMtime time.Time, ok bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return time.Time{}, false, fmt.Errorf("acquire dream lock: %w", err)
	}
	// A directory that cannot be locked (some network filesystems) is
	// not serialised: the lock file's own check still applies.
	if unlock, err := filelock.LockDir(dir); err == nil {
		defer unlock()
	}
	path := LockPath(dir)
	priorMtime, _, held := lockState(path)
	if held {
		return priorMtime, false, nil
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return priorMtime, false, fmt.Errorf("acquire dream lock: %s is not a regular file", path)
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return priorMtime, false, fmt.Errorf("acquire dream lock: %w", err)
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return priorMtime, false, nil
	}
	if got, parsed := parsePID(string(body)); !parsed || got != int64(pid) {
		return priorMtime, false, nil
	}
	return priorMtime, true, nil
}

// LockHolder returns the process whose consolidation lock on dir blocks a
// dream now, as Acquire judges it; ok is false when none does.
func LockHolder(dir string) (pid int, ok bool) {
	_, pid, ok = lockState(LockPath(dir))
	return pid, ok
}

// lockState reads the lock at path (steps 1 and 2 of Acquire): its mtime
// (zero when there is no lock, or it cannot be read), and the holder that
// blocks a dream, if one does.
func lockState(path string) (mtime time.Time, holder int, held bool) {
	fi, statErr := os.Stat(path)
	body, readErr := os.ReadFile(path)
	if statErr != nil || readErr != nil {
		return time.Time{}, 0, false
	}
	mtime = msTime(fi.ModTime())
	pid, parsed := parsePID(string(body))
	if !parsed || pid != int64(int(pid)) {
		return mtime, 0, false
	}
	return mtime, int(pid), filelock.Holds(int(pid), mtime, time.Now(), HolderStale)
}

// Rollback undoes an Acquire whose consolidation did not happen: with a
// zero prior it deletes the lock; otherwise it empties the body (so the
// still-running holder no longer blocks anyone) and sets the mtime back to
// prior, so the time gate sees the previous consolidation again.
func Rollback(dir string, prior time.Time) error {
	path := LockPath(dir)
	if prior.IsZero() {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("roll back dream lock: %w", err)
		}
		return nil
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return fmt.Errorf("roll back dream lock: %w", err)
	}
	if err := os.Chtimes(path, prior, prior); err != nil {
		return fmt.Errorf("roll back dream lock: %w", err)
	}
	return nil
}

// parsePID reads a lock body as JavaScript's parseInt(body.trim(), 10)
// does: an optional sign and the leading decimal digits, ignoring anything
// after them. parsed is false when there are no digits; a number too large
// for int64 is parsed as -1, which no live process has.
func parsePID(body string) (pid int64, parsed bool) {
	s := strings.TrimFunc(body, func(r rune) bool { return unicode.IsSpace(r) && r != '\u0085' || r == '\uFEFF' })
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(s[:n], 10, 64)
	if err != nil {
		return -1, true
	}
	if neg {
		v = -v
	}
	return v, true
}

// msTime truncates t to milliseconds, the precision the reference's
// clock uses (§10).
func msTime(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()) }
