package memdir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// DefaultMaxBytes is the largest file Scan reads when ScanOptions.MaxBytes
// is zero: Claude Code's per-entry limit.
const DefaultMaxBytes = 250_000

// LockFileName is the auto-dream lock in the memory dir; it never syncs.
const LockFileName = ".consolidate-lock"

// Reasons a Skipped file was left out.
const (
	SkipSymlink    = "symlink"
	SkipNotRegular = "not a regular file"
	SkipUnreadable = "unreadable"
	SkipInvalid    = "invalid name"
	// SkipStore starts the reason of a directory left out by
	// ScanOptions.SkipStores; the memory-store file found follows in
	// parentheses: "Claude Code's own memory-store sync (.memory-sync)".
	SkipStore = "Claude Code's own memory-store sync"
	// A file over the limit is skipped with "larger than <MaxBytes> bytes",
	// "larger than 250000 bytes" by default.
)

// File is a regular file found by Scan.
type File struct {
	Key      string    // path relative to the scanned root, '/'-separated
	Size     int64     // bytes read
	ModTime  time.Time // modification time of the file that was read
	Content  []byte
	Checksum string // teammem.EntryChecksum of Content
}

// Skipped is something Scan found but did not read. It is still on disk, so
// a caller must not take its key for a deletion.
type Skipped struct {
	Key    string
	Reason string // one of the Skip constants, or "larger than N bytes"
}

// IsStore reports whether s is a directory ScanOptions.SkipStores left
// out: no key below it was read, so none of them is a deletion either.
func (s Skipped) IsStore() bool { return strings.HasPrefix(s.Reason, SkipStore) }

// TooLarge reports whether the file was skipped for being over MaxBytes, so
// callers can tell without parsing Reason.
func (s Skipped) TooLarge() bool { return strings.HasPrefix(s.Reason, tooLargePrefix) }

// tooLargePrefix starts the Reason of a file over MaxBytes.
const tooLargePrefix = "larger than "

// ScanOptions tunes Scan.
type ScanOptions struct {
	// Exclude lists top-level names to leave out silently, such as "team"
	// when scanning the personal part of the memory dir.
	Exclude []string
	// SkipStores leaves out every directory below the root that holds a
	// memory-store file (see StoreMarker), reporting it as Skipped with a
	// SkipStore reason. The root itself is not checked.
	SkipStores bool
	// MaxBytes is the largest file read; 0 means DefaultMaxBytes.
	MaxBytes int64
	// Cache, when set, lets this Scan reuse what an earlier Scan of the same
	// root with the same options read, for files that did not change. The
	// returned Content may then be shared with other Scans: never modify it.
	Cache *ScanCache
}

// Scan walks root recursively and returns its regular files with their
// content, and what it skipped and why, both sorted by key in byte order.
// Symlinks, to files or directories, are reported and never followed, as
// Claude Code's team sync does (reference §3.11); so are other non-regular
// files, files over MaxBytes, unreadable files and names that fail
// teammem.ValidateKey. The names IgnoredName lists are left out silently at
// any depth.
//
// A missing root yields no files and no error. A directory that cannot be
// listed is an error rather than a skip: its files would otherwise look
// deleted to a sync.
func Scan(root string, opt ScanOptions) ([]File, []Skipped, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	s := &scanner{root: root, opt: opt}
	if opt.Cache != nil {
		s.cacheKey = fmt.Sprintf("%s\x00%d\x00%v\x00%s", root, opt.MaxBytes, opt.SkipStores, strings.Join(opt.Exclude, "\x00"))
		s.seen = map[string]cachedFile{}
	}
	if err := s.walk(""); err != nil {
		return nil, nil, err
	}
	if opt.Cache != nil {
		opt.Cache.replace(s.cacheKey, s.seen)
	}
	slices.SortFunc(s.files, func(a, b File) int { return strings.Compare(a.Key, b.Key) })
	slices.SortFunc(s.skipped, func(a, b Skipped) int { return strings.Compare(a.Key, b.Key) })
	return s.files, s.skipped, nil
}

type scanner struct {
	root    string
	opt     ScanOptions
	files   []File
	skipped []Skipped

	cacheKey string                // of opt.Cache's entries for this root and options
	seen     map[string]cachedFile // what this Scan read or reused, for opt.Cache
}

// walk scans the directory at the '/'-separated relative path rel.
func (s *scanner) walk(rel string) error {
	entries, err := os.ReadDir(filepath.Join(s.root, filepath.FromSlash(rel)))
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return nil // removed while we walked
	case err != nil:
		return fmt.Errorf("scan %s: %w", s.root, err)
	}
	for _, e := range entries {
		name := e.Name()
		if IgnoredName(name) || (rel == "" && slices.Contains(s.opt.Exclude, name)) {
			continue
		}
		key := name
		if rel != "" {
			key = rel + "/" + name
		}
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0:
			s.skip(key, SkipSymlink)
		case t.IsDir():
			if m := s.storeMarker(key); m != "" {
				s.skip(key, StoreReason(m))
				continue
			}
			if err := s.walk(key); err != nil {
				return err
			}
		case !t.IsRegular():
			s.skip(key, SkipNotRegular)
		case teammem.ValidateKey(key) != nil:
			s.skip(key, SkipInvalid)
		default:
			s.read(key)
		}
	}
	return nil
}

// storeMarker returns the memory-store file of the directory at key when
// SkipStores asks for such directories to be left out.
func (s *scanner) storeMarker(key string) string {
	if !s.opt.SkipStores {
		return ""
	}
	return StoreMarker(filepath.Join(s.root, filepath.FromSlash(key)))
}

func (s *scanner) skip(key, reason string) {
	s.skipped = append(s.skipped, Skipped{Key: key, Reason: reason})
}

// read loads one regular file, skipping it when it is too large or cannot
// be read. The size is checked on the open file, which must still be the
// regular file at that path: one swapped for a symlink since the directory
// was listed is skipped as a symlink, not read through.
func (s *scanner) read(key string) {
	readAt := clock()
	p := filepath.Join(s.root, filepath.FromSlash(key))
	if s.seen != nil {
		// One lstat decides a cached file: it is this regular file, not a
		// symlink, and unchanged, so there is nothing to open.
		if lfi, err := os.Lstat(p); err == nil && lfi.Mode().IsRegular() && lfi.Size() <= s.opt.MaxBytes {
			if cached, ok := s.opt.Cache.lookup(s.cacheKey, key, lfi); ok {
				s.files = append(s.files, cached.file)
				s.seen[key] = cached
				return
			}
		}
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return // removed while we walked
	}
	if err != nil {
		s.skip(key, SkipUnreadable)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		s.skip(key, SkipUnreadable)
		return
	case !fi.Mode().IsRegular():
		s.skip(key, SkipNotRegular)
		return
	}
	if lfi, err := os.Lstat(p); err != nil || !os.SameFile(lfi, fi) {
		s.skip(key, SkipSymlink)
		return
	}
	switch {
	case fi.Size() > s.opt.MaxBytes:
		s.skip(key, s.tooLarge())
		return
	}
	b, err := io.ReadAll(io.LimitReader(f, s.opt.MaxBytes+1))
	switch {
	case err != nil:
		s.skip(key, SkipUnreadable)
	case int64(len(b)) > s.opt.MaxBytes: // grew while being read
		s.skip(key, s.tooLarge())
	default:
		file := File{
			Key: key, Size: int64(len(b)), ModTime: fi.ModTime(),
			Content: b, Checksum: teammem.EntryChecksum(string(b)),
		}
		s.files = append(s.files, file)
		if s.seen != nil {
			s.seen[key] = cachedFile{info: fi, ctime: changeTime(fi), readAt: readAt, file: file}
		}
	}
}

func (s *scanner) tooLarge() string {
	return fmt.Sprintf("%s%d bytes", tooLargePrefix, s.opt.MaxBytes)
}

// IgnoredName reports whether a file name is one Scan leaves out silently,
// WriteAtomic refuses and a watcher need not hear about: the auto-dream
// lock, WriteAtomic's temp files, macOS Finder's .DS_Store, and Claude
// Code's memory-store files, which neither a server nor an agent may plant.
func IgnoredName(name string) bool {
	return name == LockFileName || name == ".DS_Store" || strings.HasPrefix(name, TempPrefix) || isStoreFile(name)
}
