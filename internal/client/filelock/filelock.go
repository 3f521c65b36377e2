// Package filelock holds the client's locks between processes: an
// exclusive flock(2) on a lock file or a directory, which the kernel drops
// when its holder exits or dies, so a crashed holder never blocks the next
// one; and the liveness rule of the lock files that name their holder's
// PID (the dream's and session memory's), for which no kernel lock exists.
//
// Lock files keep the names and places their callers give them: clients of
// an older version running beside a newer one take the same files.
package filelock

import (
	"fmt"
	"os"
	"syscall"
)

// ErrBusy is TryLock's answer when another holder has the lock. It is
// syscall.EWOULDBLOCK itself, unwrapped, so errors.Is works with either.
var ErrBusy error = syscall.EWOULDBLOCK

// Lock takes the exclusive lock of path (created 0600 when missing),
// waiting for another holder to let go. unlock releases it.
func Lock(path string) (unlock func(), err error) { return lockFile(path, true) }

// TryLock takes the exclusive lock of path (created 0600 when missing)
// without waiting: ErrBusy when another holder has it.
func TryLock(path string) (unlock func(), err error) { return lockFile(path, false) }

func lockFile(path string, wait bool) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err // a *PathError: it names the file already
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	return hold(f, how)
}

// LockDir takes the exclusive lock of the directory dir itself, waiting
// for another holder. It serves lock files whose own check another program
// does without any kernel lock (the dream's): teammem processes serialise
// on the directory, the other program is not held up.
func LockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return hold(f, syscall.LOCK_EX)
}

// hold flocks the open file f; on failure it closes f.
func hold(f *os.File, how int) (unlock func(), err error) {
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
