package dream

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/client/transcript"
	"github.com/teammem/teammem/internal/consolidate"
)

// Limits the prompt asks the model to keep (consolidate's index caps).
const (
	IndexMaxLines = consolidate.IndexMaxLines
	IndexMaxBytes = consolidate.IndexMaxBytes
	IndexLineMax  = consolidate.IndexLineMax
)

// PromptInput is what BuildPrompt needs to know about one run.
type PromptInput struct {
	// MemoryDir is the directory the model works in.
	MemoryDir string
	// TranscriptDir holds the session transcripts; "" when there is none.
	TranscriptDir string
	// Now dates the run, so relative dates can become absolute.
	Now time.Time
	// LastConsolidated is the previous consolidation; zero: never.
	LastConsolidated time.Time
	// Sessions are the sessions since then, newest first.
	Sessions []transcript.SessionFile
	// Logs are the daily logs changed since then, newest first.
	Logs []string
	// MaxTurns is the model's turn budget.
	MaxTurns int
}

// SystemPrompt sets the model up as the consolidation agent and states the
// memory conventions it must keep.
const SystemPrompt = consolidate.DirectorySystem

// BuildPrompt writes the consolidation request (consolidate.DirectoryPrompt):
// where things are, the four phases, the limits of the index and the
// summary to end with, then the sessions and daily logs since the last
// consolidation.
func BuildPrompt(in PromptInput) string {
	sessions := make([]consolidate.Session, len(in.Sessions))
	for i, s := range in.Sessions {
		sessions[i] = consolidate.Session{ID: s.ID, LastActive: s.ModTime}
	}
	maxTurns := in.MaxTurns
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	return consolidate.DirectoryPrompt(consolidate.DirectoryInput{MemoryDir: in.MemoryDir, TranscriptDir: in.TranscriptDir,
		Now: in.Now, LastConsolidated: in.LastConsolidated, Sessions: sessions, Logs: in.Logs, MaxTurns: maxTurns})
}

// dailyLogs returns the keys of the daily logs under dir/logs modified
// after since (all when since is zero), newest date first.
func dailyLogs(dir string, since time.Time) []string {
	var keys []string
	root := filepath.Join(dir, "logs")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		if fi, err := d.Info(); err == nil && (since.IsZero() || msTime(fi.ModTime()).After(since)) {
			if rel, err := filepath.Rel(dir, p); err == nil {
				keys = append(keys, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	return keys
}

// dirExists reports whether p is a directory.
func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
