package extract

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/client/filelock"
	"github.com/teammem/teammem/internal/client/memdir"
)

// ownWritesFile records, in the state directory, the memory files teammem
// itself wrote (extraction, the dream) with the mtime each was left with,
// so that the mutual-exclusion check does not take them for another
// writer's.
const ownWritesFile = "own-writes.json"

// ownWrites maps a memory key to the mtime (UnixNano) teammem left it with.
type ownWrites map[string]int64

// RecordWrites notes that teammem wrote the given keys of the memory
// directory memDir, with the mtimes they have now. Keys that no longer
// exist are dropped, as are entries whose file changed since.
func RecordWrites(stateDir, memDir string, keys []string) error {
	unlock, err := filelock.Lock(filepath.Join(stateDir, ownWritesFile+".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	own := loadOwnWrites(stateDir)
	for _, k := range keys {
		if fi, err := os.Stat(filepath.Join(memDir, filepath.FromSlash(k))); err == nil {
			own[k] = fi.ModTime().UnixNano()
		} else {
			delete(own, k)
		}
	}
	for k, mt := range own {
		if fi, err := os.Stat(filepath.Join(memDir, filepath.FromSlash(k))); err != nil || fi.ModTime().UnixNano() != mt {
			delete(own, k)
		}
	}
	b, err := json.MarshalIndent(own, "", "  ")
	if err != nil {
		return err
	}
	_, err = memdir.WriteAtomic(stateDir, ownWritesFile, append(b, '\n'))
	return err
}

func loadOwnWrites(stateDir string) ownWrites {
	own := ownWrites{}
	if b, err := os.ReadFile(filepath.Join(stateDir, ownWritesFile)); err == nil {
		_ = json.Unmarshal(b, &own)
	}
	return own
}

// TurnGrace is how long after a turn's last message a memory change is
// still taken for that turn's: Claude Code's own extractor saves after the
// turn ends (it is given up to a minute in non-interactive runs, reference
// §5.1), and a slow model takes longer.
const TurnGrace = 10 * time.Minute

// turnWindow is when a turn's memories may be written: from its first
// message to TurnGrace after its last.
type turnWindow struct{ from, to time.Time }

// window returns the turn window of msgs' timestamps; ok is false when
// they have none.
func window(from, last time.Time) (turnWindow, bool) {
	if from.IsZero() || last.IsZero() {
		return turnWindow{}, false
	}
	return turnWindow{from, last.Add(TurnGrace)}, true
}

// changedSince returns the first memory file (as a key) modified within w
// by anyone but teammem, "" when there is none: the reference's mutual
// exclusion with the main agent and with Claude Code's own extractor,
// which both write memory files while or right after a turn runs. The
// consolidation lock, temp files and dot files do not count.
func changedSince(memDir, stateDir string, w turnWindow) string {
	own := loadOwnWrites(stateDir)
	found := ""
	_ = filepath.WalkDir(memDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" || !d.Type().IsRegular() {
			return nil
		}
		name := d.Name()
		if name == memdir.LockFileName || strings.HasPrefix(name, memdir.TempPrefix) || strings.HasPrefix(name, ".") {
			return nil
		}
		fi, err := d.Info()
		if err != nil || !fi.ModTime().After(w.from) || fi.ModTime().After(w.to) {
			return nil
		}
		rel, _ := filepath.Rel(memDir, p)
		key := filepath.ToSlash(rel)
		if mt, ok := own[key]; ok && mt == fi.ModTime().UnixNano() {
			return nil
		}
		found = key
		return nil
	})
	return found
}

// settle waits up to limit for another writer to change a memory file
// within w, looking once a second, and returns the first such key.
func settle(ctx context.Context, memDir, stateDir string, w turnWindow, limit time.Duration) string {
	deadline := time.Now().Add(limit)
	for {
		if k := changedSince(memDir, stateDir, w); k != "" {
			return k
		}
		left := time.Until(deadline)
		if left <= 0 {
			return ""
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(min(time.Second, left)):
		}
	}
}
