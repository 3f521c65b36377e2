package memdir

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime returns the inode change time, which moves on every write and
// metadata change, even one that restores the modification time.
func changeTime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctimespec.Sec, st.Ctimespec.Nsec)
	}
	return time.Time{}
}
