//go:build !unix

package dream

import "os"

// processAlive reports whether a process with pid can be found; without
// kill(2) this is the closest check.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// lockDir is a no-op where flock is not available.
func lockDir(string) (unlock func()) { return func() {} }
