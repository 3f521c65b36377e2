package dream

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/client/transcript"
)

// Limits the prompt asks the model to keep; MEMORY.md past the first two is
// cut when Claude Code loads it (reference §2.5).
const (
	IndexMaxLines = 200
	IndexMaxBytes = 25_000
	IndexLineMax  = 150
)

// maxListed bounds the sessions and logs named in the prompt.
const maxListed = 50

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
const SystemPrompt = `You maintain a file-based memory that a coding assistant reads at the start of every session. You work only through the tools you are given: list, read, grep and glob to look, write, edit and delete to change files. There is no shell.

How the memory is laid out:
- Each memory is one Markdown topic file with YAML frontmatter: name, description (one specific line; it decides when the memory is recalled) and type, which is one of user (who the person is and how they work), feedback (how they want the work done: a rule, then "Why:" and "How to apply:" lines), project (facts about the work that the code does not show, also rule then "Why:"/"How to apply:") or reference (where to find things outside the repository).
- MEMORY.md in a directory is that directory's index: no frontmatter, one line per topic file, never the memory itself.
- team/ is shared with everyone on the repository and has its own MEMORY.md; everything else is private to this person.

What does not belong in memory: anything the code, its git history or CLAUDE.md already says; step-by-step fixes; the state of a task in progress; secrets, tokens and credentials, above all in team/.`

// BuildPrompt writes the consolidation request: where things are, the four
// phases (orient, gather, consolidate, prune and index), the limits of the
// index and the summary to end with, then the sessions and daily logs
// since the last consolidation.
func BuildPrompt(in PromptInput) string {
	var b strings.Builder
	writeSetting(&b, in)
	writePhases(&b, in)
	writeContext(&b, in)
	return b.String()
}

// writeSetting states what a dream is and where everything lives.
func writeSetting(b *strings.Builder, in PromptInput) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("# Dream: consolidate memory\n\n")
	p("This is a dream: a quiet pass over everything recent sessions left behind, to turn it into memories that are accurate, " +
		"merged and easy to find, and to clear out what has stopped being true. Nobody is waiting on you; be careful rather than fast.\n\n")
	p("Memory directory: %s\nIt already exists: read and write in it directly. Paths may be given relative to it.\n\n", in.MemoryDir)
	p("Team memory: %s is shared with the whole repository. You may correct, merge or trim team files that already exist. "+
		"Never create new files in team/, and never move or copy a private memory into it: what is private stays private. "+
		"The tools refuse new team files.\n\n", filepath.Join(in.MemoryDir, "team")+string(filepath.Separator))
	if in.TranscriptDir != "" {
		p("Session transcripts: %s\nThese are JSONL files, often several megabytes each. Never read one whole. "+
			"Search them with grep, giving that directory (or one file in it) as the path and a narrow pattern such as a "+
			"file name, an error message or a term you already suspect matters; a broad pattern only floods you with noise.\n\n", in.TranscriptDir)
	}
	p("Today is %s.\n\n", in.Now.Format("2006-01-02 (Monday)"))
}

// writePhases lays out the four phases and how to finish.
func writePhases(b *strings.Builder, in PromptInput) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## 1. Orient\n\n")
	p("- List the memory directory and read MEMORY.md (and team/MEMORY.md when it exists).\n")
	p("- Skim the topic files so that you improve what is there instead of writing a second copy of it.\n")
	p("- Note whether logs/ or sessions/ subdirectories exist and what they hold.\n\n")

	p("## 2. Gather recent signal\n\n")
	p("Look in this order and stop once you know what changed:\n\n")
	p("1. Daily logs, logs/YYYY/MM/YYYY-MM-DD.md, newest first: notes written down during the day, the most direct record of what happened.\n")
	p("2. Memories that have drifted: facts that a newer log, a newer memory or a recent session contradicts or has made obsolete.\n")
	p("3. The transcripts, only with narrow greps, and only for things the first two steps made you suspect are important. " +
		"Do not trawl through them looking for anything at all.\n\n")

	p("## 3. Consolidate\n\n")
	p("- Write or update topic files at the top level of the memory directory, following the conventions of the system prompt.\n")
	p("- Merge new facts into the file that already covers the topic; create a file only for a topic nothing covers.\n")
	p("- Replace relative dates (\"yesterday\", \"last week\", \"on Friday\") with absolute ones (YYYY-MM-DD), working from the date of the log or session they came from.\n")
	p("- When a fact turns out to be wrong, fix or delete it in the file where it is written; do not leave it standing and add a correction elsewhere.\n")
	p("- Delete memories that are obsolete, and merge duplicates into one.\n\n")

	p("## 4. Prune and index\n\n")
	p("- MEMORY.md must stay under %d lines and about %d KB; whatever is beyond that is cut off when it is loaded.\n", IndexMaxLines, IndexMaxBytes/1000)
	p("- One line per topic file, under about %d characters: `- [Title](file.md) — one-line hook`. The index points to memories; it never holds them.\n", IndexLineMax)
	p("- Remove lines whose file is gone or no longer worth loading; shorten lines longer than about 200 characters by moving the detail into the topic file.\n")
	p("- Add a line for every new topic file, and where two lines or files disagree, settle it.\n")
	p("- Keep team/MEMORY.md in step with team/ the same way.\n\n")

	p("## Finish\n\n")
	p("Stop calling tools when you are done and answer with a short summary of what changed: which files you created, updated or deleted, and why. " +
		"If nothing needed changing, say so in one sentence.\n\n")
	budget := in.MaxTurns
	if budget <= 0 {
		budget = DefaultMaxTurns
	}
	p("You have at most %d turns. A file must be read before it is edited; make independent reads in the same turn.\n", budget)
}

// writeContext lists the sessions and daily logs since the last consolidation.
func writeContext(b *strings.Builder, in PromptInput) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("\n## Additional context\n\n")
	if in.LastConsolidated.IsZero() {
		p("This memory has never been consolidated before.\n\n")
	} else {
		p("Last consolidation: %s.\n\n", in.LastConsolidated.Local().Format("2006-01-02 15:04"))
	}
	p("Sessions since the last consolidation (%d):\n", len(in.Sessions))
	for i, s := range in.Sessions {
		if i == maxListed {
			p("- … and %d older\n", len(in.Sessions)-maxListed)
			break
		}
		p("- %s (last active %s)\n", s.ID, s.ModTime.Local().Format("2006-01-02 15:04"))
	}
	if len(in.Logs) > 0 {
		p("\nDaily logs written since then (%d):\n", len(in.Logs))
		for i, l := range in.Logs {
			if i == maxListed {
				p("- … and %d older\n", len(in.Logs)-maxListed)
				break
			}
			p("- %s\n", l)
		}
	}
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
