package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// sessionIDPattern matches a session id: a UUID, compared case-insensitively (§6.2).
var sessionIDPattern = regexp.MustCompile(`(?i)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// IsSessionID reports whether s has the form of a session id (a UUID, any case).
func IsSessionID(s string) bool { return sessionIDPattern.MatchString(s) }

// SessionFile is a main session transcript found by ListSessions.
type SessionFile struct {
	// ID is the file's stem, the session id.
	ID   string
	Path string
	// ModTime is the modification time, the clock auto-dream's session gate compares.
	ModTime time.Time
	Size    int64
}

// ListSessions lists the session transcripts directly inside projectDir: regular files
// named <uuid>.jsonl (so agent-*.jsonl and anything in subdirectories are excluded), sorted
// by ID. Files that vanish or cannot be stat'ed while listing are left out; an error
// reading projectDir itself is returned (errors.Is(err, fs.ErrNotExist) when it is missing).
func ListSessions(projectDir string) ([]SessionFile, error) {
	entries, err := os.ReadDir(projectDir)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []SessionFile
	for _, e := range entries {
		stem, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !IsSessionID(stem) {
			continue
		}
		path := filepath.Join(projectDir, e.Name())
		fi, err := os.Stat(path) // follows symlinks, like the CLI's stat
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, SessionFile{ID: stem, Path: path, ModTime: fi.ModTime(), Size: fi.Size()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// SubagentFile is a subagent transcript of a session, with its sidecar metadata.
type SubagentFile struct {
	// AgentID is the id from the file name agent-<id>.jsonl.
	AgentID string
	Path    string
	// Subdir is the optional directory between subagents/ and the file, "" if none.
	Subdir  string
	ModTime time.Time
	Size    int64
	// HasMeta reports that the agent-<id>.meta.json sidecar exists and parsed; the three
	// fields below come from it and are "" otherwise.
	HasMeta      bool
	AgentType    string
	Description  string
	WorktreePath string
}

// subagentMeta is the sidecar agent-<id>.meta.json.
type subagentMeta struct {
	AgentType    string `json:"agentType"`
	Description  string `json:"description"`
	WorktreePath string `json:"worktreePath"`
}

// maxMetaSize caps the sidecar read; real ones are a few hundred bytes.
const maxMetaSize = 1 << 20

// Subagents lists the subagent transcripts of a session:
// <projectDir>/<sessionID>/subagents/[<subdir>/]agent-<id>.jsonl, sorted by path. Any
// non-empty <id> is accepted. A session without a subagents directory yields none and no
// error. sessionID must satisfy IsSessionID, which also keeps it from escaping projectDir.
func Subagents(projectDir, sessionID string) ([]SubagentFile, error) {
	if !IsSessionID(sessionID) {
		return nil, fmt.Errorf("list subagents: invalid session id %q", sessionID)
	}
	root := filepath.Join(projectDir, sessionID, "subagents")
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list subagents: %w", err)
	}
	var out []SubagentFile
	for _, e := range entries {
		if !e.IsDir() {
			out = appendSubagent(out, root, "", e.Name())
			continue
		}
		sub, err := os.ReadDir(filepath.Join(root, e.Name()))
		if err != nil {
			continue // a subdirectory that vanished or is unreadable hides only its own files
		}
		for _, f := range sub {
			if !f.IsDir() {
				out = appendSubagent(out, root, e.Name(), f.Name())
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// appendSubagent appends the transcript root/subdir/name if name is agent-<id>.jsonl.
func appendSubagent(out []SubagentFile, root, subdir, name string) []SubagentFile {
	id, ok := strings.CutPrefix(name, "agent-")
	if !ok {
		return out
	}
	if id, ok = strings.CutSuffix(id, ".jsonl"); !ok || id == "" {
		return out
	}
	dir := filepath.Join(root, subdir)
	path := filepath.Join(dir, name)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return out
	}
	sf := SubagentFile{AgentID: id, Path: path, Subdir: subdir, ModTime: fi.ModTime(), Size: fi.Size()}
	if meta, ok := readSubagentMeta(filepath.Join(dir, "agent-"+id+".meta.json")); ok {
		sf.HasMeta, sf.AgentType, sf.Description, sf.WorktreePath = true, meta.AgentType, meta.Description, meta.WorktreePath
	}
	return append(out, sf)
}

// readSubagentMeta reads a sidecar; ok is false when it is missing, too large or not JSON.
func readSubagentMeta(path string) (subagentMeta, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxMetaSize {
		return subagentMeta{}, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return subagentMeta{}, false
	}
	var m subagentMeta
	if err := json.Unmarshal(data, &m); err != nil && !isTypeError(err) {
		return subagentMeta{}, false
	}
	return m, true
}
