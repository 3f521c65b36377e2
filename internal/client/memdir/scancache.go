package memdir

import (
	"io/fs"
	"os"
	"sync"
	"time"
)

// ScanCache lets repeated Scans of the same roots, as a long-running watch
// makes after every change, read again only the files that changed. A file
// is taken from the cache when it is the same file (device and inode) with
// the same size, modification time and, where the system has one, change
// time, and both times were already RacyWindow old when it was read: a file
// written in the same timestamp tick as it was read, or on a filesystem with
// coarse timestamps, is always read again (git's "racy" rule). The zero ScanCache is ready to use and safe for concurrent Scans.
type ScanCache struct {
	mu    sync.Mutex
	roots map[string]map[string]cachedFile // root → key → file
}

// RacyWindow is how old a file's modification time must be, when it is
// read, for a ScanCache to trust it later without reading it again.
const RacyWindow = 2 * time.Second

// clock is when a Scan reads; tests move it.
var clock = time.Now

type cachedFile struct {
	info   fs.FileInfo // of the file that was read
	ctime  time.Time
	readAt time.Time
	file   File
}

// lookup returns the cache entry of key under root (a Scan's cache key) if
// fi says the file is unchanged since it was read.
func (c *ScanCache) lookup(root, key string, fi fs.FileInfo) (cachedFile, bool) {
	c.mu.Lock()
	e, ok := c.roots[root][key]
	c.mu.Unlock()
	if !ok || !fi.ModTime().Equal(e.info.ModTime()) || fi.Size() != e.info.Size() ||
		!os.SameFile(fi, e.info) || !changeTime(fi).Equal(e.ctime) ||
		e.readAt.Sub(fi.ModTime()) < RacyWindow || e.readAt.Sub(e.ctime) < RacyWindow {
		return cachedFile{}, false
	}
	return e, true
}

// replace makes files the cache of root (a Scan's cache key): keys the
// Scan did not see are forgotten.
func (c *ScanCache) replace(root string, files map[string]cachedFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.roots == nil {
		c.roots = map[string]map[string]cachedFile{}
	}
	c.roots[root] = files
}
