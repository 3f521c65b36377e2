package memdir

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Claude Code 2.1.212 and later sync memory stores of their own, mounting
// the user store at the memory dir itself and each team store at
// team/<mount>/, and mark every mount with these files (memory-stores
// reference §2.2, §6.3). A directory holding either belongs to Claude Code's
// sync: teammem must neither read it for a push nor write into it, or the
// two syncs would fight over the same files.
const (
	// StoreManifestName is the mount's manifest, {"v":1,"partition":...}.
	StoreManifestName = ".memory-sync"
	// StoreBasisName is the mount's persisted record of the server's files.
	StoreBasisName = ".memory-sync-basis"
)

// StoreMarker returns the name of the memory-store file dir holds, the
// manifest before the basis, or "" when it holds neither. Any kind of file
// counts, a symlink included: presence alone says Claude Code mounted it.
func StoreMarker(dir string) string {
	for _, name := range []string{StoreManifestName, StoreBasisName} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return name
		}
	}
	return ""
}

// StoreReason is the reason Scan gives for a directory holding marker:
// SkipStore and the marker in parentheses.
func StoreReason(marker string) string { return SkipStore + " (" + marker + ")" }

// StoreDir returns the outermost directory on the way from root to key
// ('/'-separated, relative to root), root itself included and key itself
// excluded, that holds a memory-store file, and that file's name. The
// directory is relative to root, "." for root; ok is false when there is
// none. The directories need not exist, so it also decides keys a pull is
// about to create.
func StoreDir(root, key string) (dir, marker string, ok bool) {
	dir = "."
	for {
		if m := StoreMarker(filepath.Join(root, filepath.FromSlash(dir))); m != "" {
			return dir, m, true
		}
		rest := strings.TrimPrefix(key, dir+"/")
		if dir == "." {
			rest = key
		}
		first, _, more := strings.Cut(rest, "/")
		if !more {
			return "", "", false
		}
		dir = path.Join(dir, first)
	}
}

// isStoreFile reports whether name is one of the files Claude Code's store
// sync writes into a mount: the manifest, the basis, and the manifest's
// staging copies (.memory-sync.<random>.stage).
func isStoreFile(name string) bool {
	return strings.HasPrefix(name, StoreManifestName)
}
