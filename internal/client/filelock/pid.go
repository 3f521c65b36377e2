package filelock

import (
	"syscall"
	"time"
)

// Alive reports whether pid names a running process other than init:
// kill(pid, 0) succeeds and pid > 1. EPERM (a process of another user)
// counts as dead, as in Claude Code's own check of its dream lock, so both
// programs judge a lock the same way.
func Alive(pid int) bool {
	return pid > 1 && syscall.Kill(pid, 0) == nil
}

// Holds reports whether the process pid, which took a lock at since, still
// holds it at now: it is Alive and took the lock less than stale ago. A
// lock that fails either belongs to a dead or wedged process and may be
// taken over.
func Holds(pid int, since, now time.Time, stale time.Duration) bool {
	return now.Sub(since) < stale && Alive(pid)
}
