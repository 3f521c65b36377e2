package consolidate

import (
	"fmt"
	"strings"
	"time"
)

// Limits the prompt asks the model to keep; MEMORY.md past the first two is
// cut when Claude Code loads it. TreeToolbox enforces the first two.
const (
	IndexMaxLines = 200
	IndexMaxBytes = 25_000
	IndexLineMax  = 150
)

// DefaultMaxTurns is a dream's turn budget when its input names none.
const DefaultMaxTurns = 30

// maxListed bounds the sessions and logs named in a prompt.
const maxListed = 50

// Where says where the memory lives, the one thing the two sides' prompts
// differ in.
type Where int

const (
	// InDirectory is the client's memory directory: private files, and
	// team/ shared with the repository.
	InDirectory Where = iota
	// InStore is a server memory store: one space shared with the whole
	// team, with read-only session material under sessions/.
	InStore
)

const (
	systemIntro = `You maintain a file-based memory that a coding assistant reads at the start of every session. You work only through the tools you are given: list, read, grep and glob to look, write, edit and delete to change files. There is no shell.

How the memory is laid out:
- Each memory is one Markdown topic file with YAML frontmatter: name, description (one specific line; it decides when the memory is recalled) and type, which is one of user (who the person is and how they work), feedback (how they want the work done: a rule, then "Why:" and "How to apply:" lines), project (facts about the work that the code does not show, also rule then "Why:"/"How to apply:") or reference (where to find things outside the repository).
- MEMORY.md in a directory is that directory's index: no frontmatter, one line per topic file, never the memory itself.
`
	systemNotInMemory = `

What does not belong in memory: anything the code, its git history or CLAUDE.md already says; step-by-step fixes; the state of a task in progress; secrets, tokens and credentials`
)

// DirectorySystem is the system prompt of a dream over the client's memory
// directory.
const DirectorySystem = systemIntro +
	`- team/ is shared with everyone on the repository and has its own MEMORY.md; everything else is private to this person.` +
	systemNotInMemory + `, above all in team/.`

// StoreSystem is the system prompt of a dream over a server memory store.
const StoreSystem = systemIntro +
	`- This store is shared with the whole team: every file in it, team/ included, is read by everyone who uses the store. Files under sessions/ are read-only session material, never memories.` +
	systemNotInMemory + `: this store is shared with the whole team.`

// System returns the system prompt for memory that lives in w.
func System(w Where) string {
	if w == InStore {
		return StoreSystem
	}
	return DirectorySystem
}

// Session is one session a dream draws on.
type Session struct {
	// ID names the session: a transcript id on the client, sesn_… on the server.
	ID string
	// LastActive is when it last wrote; zero: unknown.
	LastActive time.Time
}

// printer writes formatted text to a builder.
type printer struct{ b *strings.Builder }

func (p printer) f(format string, args ...any) { fmt.Fprintf(p.b, format, args...) }

// writeSessions lists sessions under a heading, at most maxListed of them.
func (p printer) sessions(heading string, sessions []Session, name func(Session) string) {
	p.f("%s (%d):\n", heading, len(sessions))
	for i, s := range sessions {
		if i == maxListed {
			p.f("- … and %d older\n", len(sessions)-maxListed)
			break
		}
		if s.LastActive.IsZero() {
			p.f("- %s\n", name(s))
			continue
		}
		p.f("- %s (last active %s)\n", name(s), s.LastActive.Local().Format("2006-01-02 15:04"))
	}
}

// phases lays out the four phases and how to finish, for memory in w.
func (p printer) phases(w Where, maxTurns int) {
	dir := w == InDirectory
	p.f("## 1. Orient\n\n")
	if dir {
		p.f("- List the memory directory and read MEMORY.md (and team/MEMORY.md when it exists).\n")
		p.f("- Skim the topic files so that you improve what is there instead of writing a second copy of it.\n")
		p.f("- Note whether logs/ or sessions/ subdirectories exist and what they hold.\n\n")
	} else {
		p.f("- List the memory store and read /MEMORY.md (and every other MEMORY.md the list shows).\n")
		p.f("- Skim the topic files so that you improve what is there instead of writing a second copy of it.\n")
		p.f("- Note whether a logs/ folder exists, and which session files under sessions/ you were given.\n\n")
	}

	p.f("## 2. Gather recent signal\n\n")
	p.f("Look in this order and stop once you know what changed:\n\n")
	if dir {
		p.f("1. Daily logs, logs/YYYY/MM/YYYY-MM-DD.md, newest first: notes written down during the day, the most direct record of what happened.\n")
		p.f("2. Memories that have drifted: facts that a newer log, a newer memory or a recent session contradicts or has made obsolete.\n")
		p.f("3. The transcripts, only with narrow greps, and only for things the first two steps made you suspect are important. " +
			"Do not trawl through them looking for anything at all.\n\n")
	} else {
		p.f("1. The session material, sessions/<session id>.md: what those sessions noted down, the most direct record of what happened. " +
			"Read or grep it; it is read-only and never becomes a memory file itself.\n")
		p.f("2. Daily logs, logs/YYYY/MM/YYYY-MM-DD.md, newest first, when the store has them.\n")
		p.f("3. Memories that have drifted: facts that the session material, a newer log or a newer memory contradicts or has made obsolete.\n\n")
	}

	p.f("## 3. Consolidate\n\n")
	if dir {
		p.f("- Write or update topic files at the top level of the memory directory, following the conventions of the system prompt.\n")
	} else {
		p.f("- Write or update topic files in the memory store, following the conventions of the system prompt; keep the paths memories already have.\n")
	}
	p.f("- Merge new facts into the file that already covers the topic; create a file only for a topic nothing covers.\n")
	p.f("- Replace relative dates (\"yesterday\", \"last week\", \"on Friday\") with absolute ones (YYYY-MM-DD), working from the date of the log or session they came from.\n")
	p.f("- When a fact turns out to be wrong, fix or delete it in the file where it is written; do not leave it standing and add a correction elsewhere.\n")
	p.f("- Delete memories that are obsolete, and merge duplicates into one.\n\n")

	p.f("## 4. Prune and index\n\n")
	p.f("- MEMORY.md must stay under %d lines and about %d KB; whatever is beyond that is cut off when it is loaded.\n", IndexMaxLines, IndexMaxBytes/1000)
	p.f("- One line per topic file, under about %d characters: `- [Title](file.md) — one-line hook`. The index points to memories; it never holds them.\n", IndexLineMax)
	p.f("- Remove lines whose file is gone or no longer worth loading; shorten lines longer than about 200 characters by moving the detail into the topic file.\n")
	p.f("- Add a line for every new topic file, and where two lines or files disagree, settle it.\n")
	if dir {
		p.f("- Keep team/MEMORY.md in step with team/ the same way.\n\n")
	} else {
		p.f("- Keep every other MEMORY.md in step with its folder the same way. A MEMORY.md over the limits is refused.\n\n")
	}

	p.f("## Finish\n\n")
	p.f("Stop calling tools when you are done and answer with a short summary of what changed: which files you created, updated or deleted, and why. " +
		"If nothing needed changing, say so in one sentence.\n\n")
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	p.f("You have at most %d turns. A file must be read before it is edited; make independent reads in the same turn.\n", maxTurns)
}
