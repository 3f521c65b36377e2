package sessionmem

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/client/filelock"
)

// Lock timing.
const (
	// LockStale is how long an update's lock is honoured while its holder
	// lives: an update runs under a shorter deadline (UpdateTimeout), so a
	// lock older than this belongs to a wedged process and is reclaimed. A
	// dead holder's lock is reclaimed at once.
	LockStale = 10 * time.Minute
	// UpdateTimeout bounds one update's model work.
	UpdateTimeout = 5 * time.Minute
	// WaitStale is the age past which a waiter stops waiting for an
	// in-flight update (the reference's 60 s, §7.5).
	WaitStale = 60 * time.Second
	// DefaultWait is how long compaction waits for an in-flight update
	// (the reference's 15 s, §7.5).
	DefaultWait = 15 * time.Second
	// pollInterval is how often a waiter looks again (the reference's 1 s).
	pollInterval = time.Second
)

// Holder is the process holding a session's update lock.
type Holder struct {
	PID     int
	Started time.Time
}

// lockPath is the session's update lock; its body is "<pid> <unix ms>".
func lockPath(stateDir, session string) string {
	return filepath.Join(stateDir, StateDirName, session+".update")
}

// CurrentHolder returns the live holder of the session's update lock, if
// one holds it and its lock is not stale at now.
func CurrentHolder(stateDir, session string, now time.Time) (Holder, bool) {
	b, err := os.ReadFile(lockPath(stateDir, session))
	if err != nil {
		return Holder{}, false
	}
	h, ok := parseHolder(string(b))
	if !ok || !filelock.Holds(h.PID, h.Started, now, LockStale) {
		return Holder{}, false
	}
	return h, true
}

func parseHolder(body string) (Holder, bool) {
	f := strings.Fields(body)
	if len(f) != 2 {
		return Holder{}, false
	}
	pid, err1 := strconv.Atoi(f[0])
	ms, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return Holder{}, false
	}
	return Holder{PID: pid, Started: time.UnixMilli(ms)}, true
}

// acquire takes the session's update lock for pid at now, or reports the
// live holder. Teammem processes decide under a guard flock, so two that
// find a stale lock together cannot both reclaim it. release removes the
// lock if it is still ours.
func acquire(stateDir, session string, pid int, now time.Time) (release func(), holder Holder, ok bool, err error) {
	if err := os.MkdirAll(filepath.Join(stateDir, StateDirName), 0o700); err != nil {
		return nil, Holder{}, false, fmt.Errorf("session-memory lock: %w", err)
	}
	path := lockPath(stateDir, session)
	unguard, err := filelock.Lock(path + ".guard")
	if err != nil {
		return nil, Holder{}, false, err
	}
	defer unguard()
	if h, busy := CurrentHolder(stateDir, session, now); busy {
		return nil, h, false, nil
	}
	body := fmt.Sprintf("%d %d\n", pid, now.UnixMilli())
	if err := writeFileAtomic(path, []byte(body)); err != nil {
		return nil, Holder{}, false, fmt.Errorf("session-memory lock: %w", err)
	}
	return func() {
		unguard, err := filelock.Lock(path + ".guard")
		if err == nil {
			defer unguard()
		}
		if b, err := os.ReadFile(path); err == nil && string(b) == body {
			os.Remove(path)
		}
	}, Holder{}, true, nil
}

// WaitIdle waits, up to limit, until no live update holds the session's
// lock, looking once a second. An update started more than WaitStale ago
// is not waited for. It reports whether the session is idle.
func WaitIdle(ctx context.Context, stateDir, session string, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		h, busy := CurrentHolder(stateDir, session, time.Now())
		if !busy || time.Since(h.Started) > WaitStale {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(min(pollInterval, time.Until(deadline))):
		}
	}
}
