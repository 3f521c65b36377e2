package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/teammem"
)

// Mount names `teammem claude` puts in CLAUDE_MEMORY_STORES. They are
// explicit so that the directory never depends on the store id: the team
// store lives in team/teammem/, the personal store at the memory dir.
const (
	teamMount     = "teammem"
	personalMount = "teammem-personal"
)

// nativeRecord is what `teammem claude` (and `teammem proxy`) remember of a
// memory dir whose scopes Claude Code now syncs itself, in the dir's local
// state (never inside the memory dir). teammem's own sync leaves a
// recorded scope alone as a whole: the team space mounted at
// team/teammem/ would otherwise be pulled a second time into team/, and
// the personal space would be synced twice into the same files.
type nativeRecord struct {
	Server   string                 `json:"server"`
	Repo     string                 `json:"repo"`
	Team     *apiclient.MemoryStore `json:"team,omitempty"`
	Personal *apiclient.MemoryStore `json:"personal,omitempty"`
}

func (a *app) nativePath(loc memdir.Location) (string, error) {
	d, err := a.localStateDir(loc)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "native.json"), nil
}

// loadNative reads the record; a missing one is the zero record.
func (a *app) loadNative(loc memdir.Location) (nativeRecord, error) {
	var rec nativeRecord
	p, err := a.nativePath(loc)
	if err != nil {
		return rec, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("%s is not valid JSON: %v", p, err)
	}
	return rec, nil
}

func (a *app) saveNative(loc memdir.Location, rec nativeRecord) error {
	p, err := a.nativePath(loc)
	if err != nil {
		return err
	}
	return writeJSONFile(p, rec)
}

// writeJSONFile writes v as indented JSON to p (0600) through a temporary
// file renamed over it, so a reader sees the old file or the new one.
func writeJSONFile(p string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// store returns the record's store of scope, nil when that scope is not
// synced natively.
func (r nativeRecord) store(scope teammem.Scope) *apiclient.MemoryStore {
	if scope == teammem.ScopeTeam {
		return r.Team
	}
	return r.Personal
}

// nativeReason is the Engine.Native of a memory dir: it reads the record
// on every call, so that a running `teammem watch` stops touching a scope
// as soon as `teammem claude` hands it over. An unreadable record counts
// as native: teammem then does nothing rather than race Claude Code.
func (a *app) nativeReason(loc memdir.Location) func(teammem.Scope) (string, bool) {
	return func(scope teammem.Scope) (string, bool) {
		rec, err := a.loadNative(loc)
		if err != nil {
			return "the record of Claude Code's native sync is unreadable (" + err.Error() + ")", true
		}
		ms := rec.store(scope)
		if ms == nil {
			return "", false
		}
		dir := "team/" + teamMount
		if scope == teammem.ScopePersonal {
			dir = "the memory dir"
		}
		return fmt.Sprintf("synced natively by Claude Code through teammem claude (store %s at %s)", ms.ID, dir), true
	}
}
