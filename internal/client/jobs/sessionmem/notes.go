package sessionmem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/teammem/teammem/internal/client/memdir"
)

// NotesFile is the name of the notes file in a session's notes directory.
const NotesFile = "summary.md"

// NotesPath returns where Claude Code keeps a session's notes (reference
// §7.1): <configHome>/projects/<SanitizePath(cwd)>/<session>/session-memory/summary.md.
// The project key comes from the session's current working directory, not
// the directory it started in.
func NotesPath(configHome, cwd, session string) string {
	project := memdir.ProjectDir(configHome, norm.NFC.String(filepath.Clean(cwd)))
	return filepath.Join(project, session, "session-memory", NotesFile)
}

// EnsureNotes makes sure the notes file exists: its directory is created
// (0700) and, only when the file does not exist yet, it is created
// exclusively (O_EXCL, 0600) holding template. An existing file is left
// as it is. created reports whether this call created it.
func EnsureNotes(path, template string) (created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("session notes directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
			return false, fmt.Errorf("session notes %s is not a regular file", path)
		}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create session notes: %w", err)
	}
	_, err = f.WriteString(template)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return true, fmt.Errorf("write session notes: %w", err)
	}
	return true, nil
}

// ReadNotes returns the notes of a session, or "" and false when there are
// none: no file, nothing but the template, or nothing under any heading
// but its italic line (a file made from an earlier template).
func ReadNotes(path, template string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil || IsEmpty(string(b), template) || blank(string(b)) {
		return "", false
	}
	return string(b), true
}

// blank reports whether notes hold no text beyond headings and their
// italic descriptions.
func blank(notes string) bool {
	pre, sections := Split(notes)
	if trimJS(pre) != "" {
		return false
	}
	for _, s := range sections {
		body := trimJS(s.Body)
		if s.Description != "" {
			body = trimJS(strings.TrimPrefix(body, s.Description))
		}
		if body != "" {
			return false
		}
	}
	return true
}
