package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/teammem/teammem/internal/client/memdir"
)

// teamFilesOutside lists the memory files in team/ outside the native
// mount team/<mount>/ (and outside any other store Claude Code mounted):
// the files teammem's own sync keeps the team space in. With the native
// sync pulling the same space into team/<mount>/, each would be there
// twice for the model to read.
func teamFilesOutside(memoryDir string) ([]string, error) {
	team := filepath.Join(memoryDir, "team")
	if _, err := os.Lstat(team); os.IsNotExist(err) {
		return nil, nil
	}
	files, _, err := memdir.Scan(team, memdir.ScanOptions{Exclude: []string{teamMount}, SkipStores: true, MaxBytes: 1 << 30})
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, f := range files {
		keys = append(keys, f.Key)
	}
	return keys, nil
}

// migrateRefusal is the message `teammem claude` stops with while team/
// holds files of teammem's own sync.
func migrateRefusal(keys []string) error {
	shown := keys
	more := ""
	if len(shown) > 10 {
		shown, more = shown[:10], fmt.Sprintf(" and %d more", len(keys)-10)
	}
	return &stateError{fmt.Errorf("team/ holds %d file(s) of teammem's own sync (%s%s); Claude Code's native sync keeps the team "+
		"memory in team/%s/, so the model would read both copies. Run teammem claude --migrate to sync them and move them into "+
		"team/%s/, or --no-migrate to start anyway", len(keys), "team/"+strings.Join(shown, ", team/"), more, teamMount, teamMount)}
}

// migrateTeam moves each key from team/ into team/<mount>/. A file already
// there with the same content just loses its duplicate; one with other
// content stops the move before anything moved, naming it.
func migrateTeam(memoryDir string, keys []string) ([]string, error) {
	team := filepath.Join(memoryDir, "team")
	mount := filepath.Join(team, teamMount)
	for _, k := range keys {
		src, dst := filepath.Join(team, filepath.FromSlash(k)), filepath.Join(mount, filepath.FromSlash(k))
		have, err := os.ReadFile(dst)
		if err != nil {
			continue
		}
		if want, err := os.ReadFile(src); err != nil || !bytes.Equal(have, want) {
			return nil, &stateError{fmt.Errorf("cannot migrate team/%s: team/%s/%s exists with other content; merge the two by hand and run again", k, teamMount, k)}
		}
	}
	var moved []string
	for _, k := range keys {
		src, dst := filepath.Join(team, filepath.FromSlash(k)), filepath.Join(mount, filepath.FromSlash(k))
		if _, err := os.Stat(dst); err == nil {
			if err := os.Remove(src); err != nil {
				return moved, err
			}
		} else {
			if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
				return moved, err
			}
			if err := os.Rename(src, dst); err != nil {
				return moved, err
			}
		}
		moved = append(moved, k)
		removeEmptyParents(team, filepath.Dir(src))
	}
	return moved, nil
}

// removeEmptyParents removes dir and its parents up to (not including)
// stop while they are empty.
func removeEmptyParents(stop, dir string) {
	for dir != stop && strings.HasPrefix(dir, stop+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}
