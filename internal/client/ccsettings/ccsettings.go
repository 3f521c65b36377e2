// Package ccsettings edits Claude Code's settings.json for teammem: it puts
// teammem's hook entries in and takes them out again, and leaves every
// other key, value and hook as the user wrote it, in the order they wrote
// it (bar indentation). A file that is not valid JSON is never written.
package ccsettings

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Events are the Claude Code events teammem may register a hook in, in the
// order Install adds them to a settings file.
var Events = []string{"SessionStart", "Stop", "SessionEnd", "PostToolUse", "PreCompact"}

// EntryTimeout is the "timeout" (seconds) of teammem's hook entries: Claude
// Code kills a hook after it. The hook bounds its own work well below.
const EntryTimeout = 30

// FlagSuffixes are the flags `teammem hook install` may append to
// "<path>/teammem hook".
var FlagSuffixes = []string{" --sync-only", " --engine always"}

// Result says what Install or Uninstall did to a settings file.
type Result struct {
	// Changed reports whether the file was written.
	Changed bool
	// Removed counts the teammem entries taken out: all of them for
	// Uninstall; for Install, older ones (another path, other flags, or an
	// event no longer wanted) replaced or dropped.
	Removed int
}

// Install makes file run command in each of events: one matcher group per
// event, unless an entry of exactly that command is there already. Other
// teammem entries (another path or other flags), and teammem entries of
// Events not in events, are removed. A missing file (and its directory) is
// created; one that does not parse is left untouched and named in the error.
func Install(file, command string, events []string) (Result, error) {
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Result{}, err
	}
	out, removed, changed, err := installHooks(data, command, events)
	return finish(file, out, Result{Changed: changed, Removed: removed}, err)
}

// Uninstall removes every teammem hook entry (command, or any other
// "<path>/teammem hook") from file, with the matcher groups and events
// that leaves empty. A missing file is nothing to do.
func Uninstall(file, command string) (Result, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return Result{}, nil
	}
	if err != nil {
		return Result{}, err
	}
	out, removed, err := uninstallHooks(data, command)
	return finish(file, out, Result{Changed: removed > 0, Removed: removed}, err)
}

// finish writes an edit that changed something, or says why nothing was.
func finish(file string, out []byte, r Result, err error) (Result, error) {
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w; nothing was changed", file, err)
	}
	if r.Changed {
		if err := writeFile(file, out); err != nil {
			return Result{}, err
		}
	}
	return r, nil
}

// IsTeammemHook reports whether a hook command is teammem's: exactly ours
// (the command we would write), or any "<path>/teammem hook" with or
// without the flags install writes (an older install from another path or
// with other parts).
func IsTeammemHook(command, ours string) bool {
	c := strings.TrimSpace(command)
	if c == ours {
		return true
	}
	for _, flags := range FlagSuffixes {
		c = strings.TrimSuffix(c, flags)
	}
	prog, ok := strings.CutSuffix(c, " hook")
	if !ok {
		return false
	}
	prog = strings.TrimSpace(prog)
	if n := len(prog); n >= 2 && (prog[0] == '\'' && prog[n-1] == '\'' || prog[0] == '"' && prog[n-1] == '"') {
		prog = strings.ReplaceAll(prog[1:n-1], `'\''`, `'`)
	}
	return path.Base(filepath.ToSlash(prog)) == "teammem"
}
