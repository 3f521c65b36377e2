package memdir

import (
	"fmt"
	"os"
	"syscall"
)

// Flock takes an exclusive flock on path (created 0600), waiting for it
// when wait is set and failing with syscall.EWOULDBLOCK (unwrapped, so
// callers can test for it) otherwise. The kernel drops the lock when the
// process dies, so a crashed holder never blocks the next one.
func Flock(path string, wait bool) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, err
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
