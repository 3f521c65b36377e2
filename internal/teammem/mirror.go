package teammem

import (
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// checkMirrorable refuses a write that would create a key no client could
// mirror on disk next to the space's other live keys: one that is a file
// where another key needs a directory, or the reverse ("f" and "f/g"), or
// one that equals another key, or one of its directories, under Unicode case
// folding and normalization (macOS and Windows would store them as one
// file). Only keys the write creates are checked, so a space already in
// such a state can still be edited and repaired.
func checkMirrorable(req WriteRequest, heads map[string]Entry) error {
	deleting := make(map[string]bool, len(req.Deletes))
	for _, d := range req.Deletes {
		deleting[d.Key] = true
	}
	var created []string
	for _, u := range req.Upserts {
		if h, ok := heads[u.Key]; !ok || h.Deleted {
			created = append(created, u.Key)
		}
	}
	if len(created) == 0 {
		return nil
	}
	idx := newKeyIndex()
	for k, h := range heads {
		if !h.Deleted && !deleting[k] {
			idx.add(k)
		}
	}
	for _, k := range created {
		if err := idx.conflict(k); err != nil {
			return err
		}
		idx.add(k)
	}
	return nil
}

// keyIndex holds a space's live keys as paths: every key as a file, every
// proper prefix of one as a directory, and both under their folded form.
type keyIndex struct {
	files  map[string]bool
	dirs   map[string]bool
	folded map[string]string // folded path (file or directory) → its spelling
}

func newKeyIndex() *keyIndex {
	return &keyIndex{files: map[string]bool{}, dirs: map[string]bool{}, folded: map[string]string{}}
}

var folder = cases.Fold()

// fold maps a path to the form case-insensitive, normalization-insensitive
// file systems compare.
func fold(p string) string { return folder.String(norm.NFC.String(p)) }

func (x *keyIndex) add(key string) {
	x.files[key] = true
	x.folded[fold(key)] = key
	for i := range len(key) {
		if key[i] == '/' {
			dir := key[:i]
			x.dirs[dir] = true
			x.folded[fold(dir)] = dir
		}
	}
}

// conflict returns why key cannot live next to the indexed keys, or nil.
func (x *keyIndex) conflict(key string) error {
	refuse := func(reason, other string) error {
		return Errorf(EInvalid, "invalid key %q: %s %q", truncateForMessage(key), reason, truncateForMessage(other)).
			WithDetails(map[string]any{"key": truncateForMessage(key), "reason": reason, "conflicts_with": truncateForMessage(other)})
	}
	if x.dirs[key] {
		return refuse("it is a directory of the live key under", key+"/")
	}
	for i := range len(key) {
		if key[i] != '/' {
			continue
		}
		dir := key[:i]
		if x.files[dir] {
			return refuse("its directory is the live key", dir)
		}
		if other, ok := x.folded[fold(dir)]; ok && other != dir {
			return refuse("its directory differs only in case or normalization from", other)
		}
	}
	if other, ok := x.folded[fold(key)]; ok && other != key {
		return refuse("it differs only in case or normalization from", other)
	}
	return nil
}
