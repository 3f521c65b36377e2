//go:build unix

package dream

import (
	"os"
	"syscall"
)

// processAlive reports whether kill(pid, 0) succeeds; any error, EPERM
// included, means dead.
func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// lockDir takes an exclusive flock on dir and returns its release. When the
// directory cannot be opened or locked (some network filesystems) it
// returns a no-op: the lock file's own check still applies.
func lockDir(dir string) (unlock func()) {
	f, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}
