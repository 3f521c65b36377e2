// Package agent holds the Sandbox, the memory directory's Toolbox that the
// client's model jobs run consolidate.Runner over: it lists, reads, greps
// and globs anywhere in the memory directory (and, when given, greps read-only roots
// such as the project's transcripts), and writes, edits and deletes only
// inside the memory directory — through the same symlink-safe containment
// the sync engine uses, and with the secret guard on team/. There is no
// shell. Every file touched is recorded.
package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/secretscan"
)

var _ consolidate.Toolbox = (*Sandbox)(nil)

// Sandbox is what a background agent may see and change.
type Sandbox struct {
	// Root is the memory directory; the only place writes may go.
	Root string
	// ReadRoots are extra directories the grep tool may search (read-only),
	// such as the project's transcript directory for a dream.
	ReadRoots []string
	// Scanner guards team/: a write whose result holds a secret is refused.
	Scanner *secretscan.Scanner
	// NoNewTeamFiles refuses creating files in team/ (the dream may improve
	// team memories but never promote personal ones into team/).
	NoNewTeamFiles bool

	mu       sync.Mutex
	readKeys map[string]bool // keys read, so edits can require a prior read
	touched  []string        // keys written, edited or deleted, in order
	denied   []string        // refusals, for the record
}

// Touched returns the keys written, edited or deleted, in first-touch order.
func (s *Sandbox) Touched() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.touched)
}

// Denied returns the refusals the sandbox issued.
func (s *Sandbox) Denied() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.denied)
}

func (s *Sandbox) touch(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.touched, key) {
		s.touched = append(s.touched, key)
	}
}

func (s *Sandbox) deny(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.denied = append(s.denied, msg)
	s.mu.Unlock()
	return errors.New(msg)
}

// key turns a tool's path argument (relative to the memory directory, or
// absolute inside it) into a memory key, refusing anything else.
func (s *Sandbox) key(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", s.deny("a path is required")
	}
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(s.Root, filepath.Clean(p))
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			return "", s.deny("%s is outside the memory directory %s; only files inside it may be changed", p, s.Root)
		}
		p = rel
	}
	p = filepath.ToSlash(filepath.Clean(p))
	if _, err := memdir.Target(s.Root, p); err != nil {
		return "", s.deny("%s is not a path inside the memory directory (%v)", p, err)
	}
	return p, nil
}

// isTeam reports whether key is inside team/.
func isTeam(key string) bool { return strings.HasPrefix(key, "team/") }

// guard refuses team/ content holding a secret, naming only the labels.
func (s *Sandbox) guard(key, content string) error {
	if !isTeam(key) || s.Scanner == nil {
		return nil
	}
	found := s.Scanner.Scan(content, nil)
	if len(found) == 0 {
		return nil
	}
	var labels []string
	for _, f := range found {
		if !slices.Contains(labels, f.Label) {
			labels = append(labels, f.Label)
		}
	}
	return s.deny("refused: the content for %s contains %s. Team memory is shared with everyone on the repository; remove the sensitive value and try again", key, strings.Join(labels, ", "))
}

// readFile reads a memory file through containment.
func (s *Sandbox) readFile(key string) (string, error) {
	b, err := memdir.ReadFile(s.Root, key)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s does not exist", key)
	}
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if s.readKeys == nil {
		s.readKeys = map[string]bool{}
	}
	s.readKeys[key] = true
	s.mu.Unlock()
	return string(b), nil
}

// writeFile writes a memory file after the team checks.
func (s *Sandbox) writeFile(key, content string) error {
	if s.NoNewTeamFiles && isTeam(key) {
		if _, err := memdir.ReadFile(s.Root, key); errors.Is(err, fs.ErrNotExist) {
			return s.deny("refused: %s would be a new team memory; a consolidation may improve team memories but never move personal ones into team/", key)
		}
	}
	if err := s.guard(key, content); err != nil {
		return err
	}
	if _, err := memdir.WriteAtomic(s.Root, key, []byte(content)); err != nil {
		return s.deny("cannot write %s: %v", key, err)
	}
	s.touch(key)
	s.mu.Lock()
	if s.readKeys == nil {
		s.readKeys = map[string]bool{}
	}
	s.readKeys[key] = true
	s.mu.Unlock()
	return nil
}

// wasRead reports whether key was read (or written) in this run.
func (s *Sandbox) wasRead(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readKeys[key]
}

// remove deletes a memory file.
func (s *Sandbox) remove(key string) error {
	removed, err := memdir.Remove(s.Root, key)
	if err != nil {
		return s.deny("cannot delete %s: %v", key, err)
	}
	if !removed {
		return fmt.Errorf("%s does not exist", key)
	}
	s.touch(key)
	return nil
}

// inReadRoot reports whether an absolute path lies in a read-only root.
func (s *Sandbox) inReadRoot(p string) (string, bool) {
	p = filepath.Clean(p)
	for _, r := range s.ReadRoots {
		if rel, err := filepath.Rel(r, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			if fi, err := os.Stat(p); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
				return p, true
			}
		}
	}
	return "", false
}
