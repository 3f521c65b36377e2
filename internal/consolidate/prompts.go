package consolidate

import (
	"path/filepath"
	"strings"
	"time"
)

// DirectoryInput is what DirectoryPrompt needs to know about one client run.
type DirectoryInput struct {
	// MemoryDir is the directory the model works in.
	MemoryDir string
	// TranscriptDir holds the session transcripts; "" when there is none.
	TranscriptDir string
	// Now dates the run, so relative dates can become absolute.
	Now time.Time
	// LastConsolidated is the previous consolidation; zero: never.
	LastConsolidated time.Time
	// Sessions are the sessions since then, newest first.
	Sessions []Session
	// Logs are the daily logs changed since then, newest first.
	Logs []string
	// MaxTurns is the model's turn budget (0: DefaultMaxTurns).
	MaxTurns int
}

// DirectoryPrompt writes the consolidation request over a memory
// directory: where things are, the four phases, the limits of the index and
// the summary to end with, then the sessions and daily logs since the last
// consolidation. Send it with DirectorySystem.
func DirectoryPrompt(in DirectoryInput) string {
	var b strings.Builder
	p := printer{&b}
	p.f("# Dream: consolidate memory\n\n")
	p.f(dreamIntro)
	p.f("Memory directory: %s\nIt already exists: read and write in it directly. Paths may be given relative to it.\n\n", in.MemoryDir)
	p.f("Team memory: %s is shared with the whole repository. You may correct, merge or trim team files that already exist. "+
		"Never create new files in team/, and never move or copy a private memory into it: what is private stays private. "+
		"The tools refuse new team files.\n\n", filepath.Join(in.MemoryDir, "team")+string(filepath.Separator))
	if in.TranscriptDir != "" {
		p.f("Session transcripts: %s\nThese are JSONL files, often several megabytes each. Never read one whole. "+
			"Search them with grep, giving that directory (or one file in it) as the path and a narrow pattern such as a "+
			"file name, an error message or a term you already suspect matters; a broad pattern only floods you with noise.\n\n", in.TranscriptDir)
	}
	p.f("Today is %s.\n\n", in.Now.Format("2006-01-02 (Monday)"))
	p.phases(InDirectory, in.MaxTurns)

	p.f("\n## Additional context\n\n")
	if in.LastConsolidated.IsZero() {
		p.f("This memory has never been consolidated before.\n\n")
	} else {
		p.f("Last consolidation: %s.\n\n", in.LastConsolidated.Local().Format("2006-01-02 15:04"))
	}
	p.sessions("Sessions since the last consolidation", in.Sessions, func(s Session) string { return s.ID })
	if len(in.Logs) > 0 {
		p.f("\nDaily logs written since then (%d):\n", len(in.Logs))
		for i, l := range in.Logs {
			if i == maxListed {
				p.f("- … and %d older\n", len(in.Logs)-maxListed)
				break
			}
			p.f("- %s\n", l)
		}
	}
	return b.String()
}

// dreamIntro says what a dream is, on both sides.
const dreamIntro = "This is a dream: a quiet pass over everything recent sessions left behind, to turn it into memories that are accurate, " +
	"merged and easy to find, and to clear out what has stopped being true. Nobody is waiting on you; be careful rather than fast.\n\n"

// StoreInput is what StorePrompt needs to know about one server run.
type StoreInput struct {
	// StoreName names the memory store the model works in ("" to leave out).
	StoreName string
	// Now dates the run, so relative dates can become absolute.
	Now time.Time
	// Sessions are the sessions whose material is readable under
	// sessions/<ID>.md (a TreeToolbox's Sources), newest first.
	Sessions []Session
	// Instructions are the requester's guidance (0–4096 characters; empty:
	// none), quoted as given.
	Instructions string
	// MaxTurns is the model's turn budget (0: DefaultMaxTurns).
	MaxTurns int
}

// SessionPath returns where the material of session id is readable in a
// store dream, without a leading slash: "sessions/<id>.md".
func SessionPath(id string) string { return "sessions/" + id + ".md" }

// StorePrompt writes the consolidation request over a memory store: the
// store, the read-only session material, the date, the four phases, the
// sessions and the requester's guidance. Send it with StoreSystem.
func StorePrompt(in StoreInput) string {
	var b strings.Builder
	p := printer{&b}
	p.f("# Dream: consolidate memory\n\n")
	p.f(dreamIntro)
	if in.StoreName != "" {
		p.f("Memory store: %s\n", in.StoreName)
	} else {
		p.f("Memory store:\n")
	}
	p.f("Paths are absolute within the store, such as /MEMORY.md or /team/deploys.md; the leading slash may be left out. " +
		"This store is shared with the whole team: every memory you write is read by everyone who uses it, so keep it accurate " +
		"and free of anything personal or secret. No folder is special; team/ is an ordinary folder here.\n\n")
	p.f("Session material: files under /sessions/ (sessions/<session id>.md) hold what recent sessions noted down. " +
		"They are read-only: read and grep them, never write, edit or delete them, and never copy them whole into a memory.\n\n")
	p.f("Today is %s.\n\n", in.Now.Format("2006-01-02 (Monday)"))
	p.phases(InStore, in.MaxTurns)

	p.f("\n## Additional context\n\n")
	if len(in.Sessions) == 0 {
		p.f("No session material was given: consolidate the memories already in the store.\n")
	} else {
		p.sessions("Session material", in.Sessions, func(s Session) string { return "/" + SessionPath(s.ID) })
	}
	if in.Instructions != "" {
		p.f("\n## Guidance from the requester\n\n")
		p.f("The person who asked for this dream wrote the following. Follow it where it fits the conventions above; it cannot lift the limits or the read-only rules.\n\n")
		p.f("%s\n", in.Instructions)
	}
	return b.String()
}
