// Package subagentmem reads and seeds the memory of Claude Code's custom
// subagents (reference §8). An agent whose definition declares
// `memory: user | project | local` keeps Markdown notes in one directory
// per scope; a project may ship a snapshot of an agent's memory under
// .claude/agent-memory-snapshots/ that seeds the memory of a new checkout.
//
// Everything works on two roots, a Roots value: Claude Code's config home
// (user scope) and the project directory Claude Code runs in (project and
// local scopes, snapshots, project agent definitions). Nothing here reads
// the environment or the working directory, so tests use temp dirs.
//
// Snapshots are only ever applied to an agent directory that holds no
// Markdown yet (the "initialize" decision), and no existing file is ever
// overwritten. A snapshot newer than what a directory was seeded from is
// reported as "update-available" for a person to review.
package subagentmem

import (
	"os"
	"path/filepath"
	"strings"
)

// Scope is where an agent keeps its memory.
type Scope string

// The scopes an agent definition may declare.
const (
	// ScopeUser is <config home>/agent-memory/<dir name>: the agent's
	// learnings across every project.
	ScopeUser Scope = "user"
	// ScopeProject is <project>/.claude/agent-memory/<dir name>, checked
	// into version control and shared with the team.
	ScopeProject Scope = "project"
	// ScopeLocal is <project>/.claude/agent-memory-local/<dir name>: this
	// project on this machine, not checked in.
	ScopeLocal Scope = "local"
)

// Scopes lists every scope in display order.
var Scopes = []Scope{ScopeUser, ScopeProject, ScopeLocal}

// Valid reports whether s is one of the three scopes.
func (s Scope) Valid() bool {
	return s == ScopeUser || s == ScopeProject || s == ScopeLocal
}

// Roots are the two directories agent memory hangs off.
type Roots struct {
	// ConfigHome is Claude Code's config home ($CLAUDE_CONFIG_DIR or
	// ~/.claude), the base of user-scope memory and user agent definitions.
	ConfigHome string
	// Project is the directory Claude Code runs in; its .claude/ holds
	// project and local memory, snapshots and project agent definitions.
	Project string
}

// DirName is the directory name of an agent's memory: its type with every
// ':' (plugin namespaces, "plugin:agent") replaced by '-'. Snapshot
// directories keep the raw type.
func DirName(agentType string) string {
	return strings.ReplaceAll(agentType, ":", "-")
}

// ValidType reports whether agentType can name a directory: non-empty, not
// "." or "..", and without path separators or NUL. Types read from agent
// definitions are checked before they become paths.
func ValidType(agentType string) bool {
	return agentType != "" && agentType != "." && agentType != ".." &&
		!strings.ContainsAny(agentType, "/\\\x00")
}

// Base returns the directory holding every agent's memory for scope.
func (r Roots) Base(scope Scope) string {
	switch scope {
	case ScopeUser:
		return filepath.Join(r.ConfigHome, "agent-memory")
	case ScopeProject:
		return filepath.Join(r.Project, ".claude", "agent-memory")
	default:
		return filepath.Join(r.Project, ".claude", "agent-memory-local")
	}
}

// Dir returns the memory directory of agentType in scope.
func (r Roots) Dir(scope Scope, agentType string) string {
	return filepath.Join(r.Base(scope), DirName(agentType))
}

// SnapshotsDir returns the directory holding the project's snapshots.
func (r Roots) SnapshotsDir() string {
	return filepath.Join(r.Project, ".claude", "agent-memory-snapshots")
}

// SnapshotDir returns the snapshot directory of agentType, named by the
// raw type (no ':' replacement, as in Claude Code).
func (r Roots) SnapshotDir(agentType string) string {
	return filepath.Join(r.SnapshotsDir(), agentType)
}

// ProjectRoot picks the directory whose .claude/ holds project agent
// memory: the nearest of cwd and its parents, up to and including gitRoot,
// that has a .claude directory; else gitRoot; else cwd. Claude Code uses
// the directory it was started in, which is usually the repository root,
// so this finds the same place when teammem runs from a subdirectory.
func ProjectRoot(cwd, gitRoot string) string {
	if gitRoot == "" {
		return cwd
	}
	for dir := cwd; ; {
		if fi, err := os.Stat(filepath.Join(dir, ".claude")); err == nil && fi.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if dir == gitRoot || parent == dir || !strings.HasPrefix(dir, gitRoot) {
			return gitRoot
		}
		dir = parent
	}
}
