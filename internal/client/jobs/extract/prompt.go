package extract

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/teammem/teammem/internal/client/transcript"
)

// Size limits of the conversation excerpt shown to the model.
const (
	// MaxExcerptChars caps the whole excerpt; the newest messages are kept.
	MaxExcerptChars = 60_000
	// maxMessageChars caps one message, keeping its start and its end.
	maxMessageChars = 6_000
)

// promptParams is what varies between extraction prompts.
type promptParams struct {
	team     bool   // the memory dir has team/
	maxTurns int    // the turn budget
	messages int    // how many new messages the excerpt covers
	excerpt  string // the rendered messages
	manifest string // existing memories, one line each; "" when none
}

// systemPrompt is the stable part: the job, the tools, the taxonomy and the
// rules for saving. It does not depend on the session.
func systemPrompt(p promptParams) string {
	var b strings.Builder
	b.WriteString(promptRole)
	fmt.Fprintf(&b, promptTools, p.maxTurns)
	if p.team {
		b.WriteString(promptScopes)
	}
	b.WriteString(promptTypes)
	if p.team {
		b.WriteString(promptTypeScopes)
	}
	b.WriteString(promptExclusions)
	if p.team {
		b.WriteString(promptNoSecrets)
	}
	b.WriteString(promptSaving)
	if p.team {
		b.WriteString(promptSavingTeam)
	}
	return b.String()
}

// userPrompt is the per-run part: the new messages and what is stored.
func userPrompt(p promptParams) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Below are the %d messages of the session that no earlier extraction has seen, oldest first. Work\n"+
		"only from these.\n\n<conversation>\n%s\n</conversation>\n\n", p.messages, p.excerpt)
	if p.manifest != "" {
		b.WriteString("## Memories already stored\n\n" +
			"Each line: type, file (relative to the memory directory), when it last changed, and its description.\n\n")
		b.WriteString(p.manifest)
		b.WriteString("\n\nIf one of these already covers a subject, read it and update it rather than writing a second file about the same thing.\n\n")
	} else {
		b.WriteString("The memory directory holds no memories yet.\n\n")
	}
	b.WriteString("Decide what from this conversation deserves to be remembered, and record it now. If nothing does, say so in one sentence and call no tools.\n")
	return b.String()
}

const promptRole = `You keep the long-term memory of a coding agent. The agent starts every session knowing nothing about
earlier ones except what is stored in its memory directory: Markdown files holding one memory each, and an
index, MEMORY.md, that is put in front of the agent at the start of every session. You are shown the latest
part of a conversation between a developer and the agent. Your job is to notice what in it will still matter
in future sessions, and to store exactly that: who the developer is, how they want the agent to work, what
is going on in the project that the code does not show, and where to find things.

When the developer explicitly asked the agent to remember something, store it. When they asked it to forget
something, remove that memory (delete the file, or edit it, and drop or fix its index line).
`

const promptTools = `
## Tools and budget

All tools work inside the memory directory only, with paths relative to it: list, read, grep and glob to
look at what is stored; write to create or replace a file; edit to change part of a file you have read in
this run; delete to remove a memory that is wrong or no longer true. There is no shell, and nothing outside
the memory directory can be read or changed.

You have at most %d turns. Spend them like this: in your first turn, read every file you might change,
all in the same turn; in your second turn, make all your writes and edits, again in one turn. Do not go back
and forth between reading and writing. Do not try to check facts against the code or its history: you cannot
see them, and the conversation is your only source.
`

const promptScopes = `
## Personal and team memory

The memory directory has two parts. Files at its top level are personal: only this developer sees them, on
each of their machines. Files in team/ are shared: they are synced to everyone who works on this repository
and are loaded into their agents' sessions. Choose the part for each memory by who it is useful to, following
the rules given with each type below.
`

const promptTypes = `
## What kinds of memory there are

Every memory has exactly one of these four types.

user — about the developer: their role, what they are responsible for, what they know well and what is new
to them, how they like to work. Store it when you learn something about them that will still be true next
month ("I'm a data scientist, this is my first Go service"). It is used to pitch explanations and choices
at the right level for this person.

feedback — how the developer wants the agent to work: corrections ("stop mocking the database in tests"),
and approaches they confirmed when the choice was not obvious ("yes, one commit per change is right"). Store
it whenever the developer corrects or approves the agent's way of working, together with their reason. It is
used so that the developer never has to say the same thing twice. Write the rule first, then a line starting
with **Why:** and a line starting with **How to apply:**.

project — what is going on in the work that neither the code nor its history records: goals, decisions and
the reasons for them, deadlines, who owns what, constraints, incidents. Store it when the conversation
reveals such a fact, and write dates as absolute dates (a "next Friday" becomes the date it means). It is
used to understand why a request is made and what it must respect. Write the fact first, then a **Why:**
line and a **How to apply:** line.

reference — where information lives outside the repository: issue trackers, dashboards, runbooks, design
documents, chat channels, and what each is for. Store it when the developer points to such a place. It is
used to know where to look or what to cite.
`

const promptTypeScopes = `
Where each type goes:
- user memories are always personal.
- feedback is personal, unless it states a convention the whole project follows (a team rule about reviews
  or tests, say); then it goes in team/. Before adding personal feedback, make sure it does not contradict
  team feedback without saying so.
- project memories may be personal or team; prefer team/ when the fact matters to anyone working on the
  repository.
- reference memories usually go in team/.
`

const promptExclusions = `
## What never to store

- How the code is organised, what a function or file does, naming and layout conventions visible in the
  code: anyone can read the code.
- Git history: who changed what and when. git log answers that.
- How a particular bug was fixed or debugged: the fix is in the code, the story in the commit.
- Anything already written in CLAUDE.md or other documentation in the repository.
- The state of the current task: plans, to-do lists, what is half done. It is stale by the next session.

These hold even when the developer asks to remember such a thing; then store only what was surprising or
non-obvious about it, if anything.
`

const promptNoSecrets = `- Never put secrets in team/: no passwords, API keys, tokens, private keys, connection strings with
  credentials, or personal data. team/ is read by the whole team; the write tool refuses content that looks
  like a secret there.
`

const promptSaving = `
## How to store a memory

Two steps, both needed:

1. Write the memory to its own file, named after its subject (user_role.md, feedback_testing.md,
   project_release_freeze.md). The file starts, on its very first line, with this frontmatter:

---
name: <short title>
description: <one line on what this memory says, specific enough to judge later whether it is relevant>
type: <user, feedback, project or reference>
---

<the memory itself; for feedback and project: the rule or fact, then the **Why:** and **How to apply:** lines>

2. Add a line pointing to it to MEMORY.md in the same directory: - [Title](file.md) — a few words on why it
   matters. Keep the line under about 150 characters. MEMORY.md is only an index: it has no frontmatter and
   holds no memory content of its own. It is loaded into every session and cut off after 200 lines, so keep
   it short. Create it if it does not exist.

Keep one subject per file and organise by subject, not by date. Before creating a file, look for an existing
memory on the same subject and update it instead; keep its name, description and type accurate when you do,
and its index line too. When the conversation shows that a stored memory is wrong or out of date, correct it
or delete it together with its index line.
`

const promptSavingTeam = `
Personal and team memory each have their own index: MEMORY.md at the top for personal files, team/MEMORY.md
for files in team/. Put each index line in the index of the directory its file is in, with the link relative
to that index (a file team/project_freeze.md is listed in team/MEMORY.md as [Title](project_freeze.md)).
`

// systemReminderRE matches the reminders Claude Code injects into user
// messages: noise for extraction.
var systemReminderRE = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

// renderExcerpt renders msgs as a compact conversation, newest kept when
// the whole exceeds limit characters. Tool calls are shown by name (and the
// file they touched), tool results not at all.
func renderExcerpt(msgs []transcript.Message, limit int) string {
	var parts []string
	size, omitted := 0, 0
	for i := len(msgs) - 1; i >= 0; i-- {
		part := renderMessage(&msgs[i])
		if part == "" {
			continue
		}
		if size+len(part)+1 > limit && len(parts) > 0 {
			omitted = i + 1
			break
		}
		parts = append(parts, part)
		size += len(part) + 1
	}
	var b strings.Builder
	if omitted > 0 {
		fmt.Fprintf(&b, "[… %d earlier messages left out for length …]\n", omitted)
	}
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
		if i > 0 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// renderMessage renders one message as "[role] text" plus its tool calls,
// or "" when it holds neither (a bare tool result).
func renderMessage(m *transcript.Message) string {
	text := strings.TrimSpace(systemReminderRE.ReplaceAllString(m.Text, ""))
	if len(text) > maxMessageChars {
		head, tail := text[:runeStart(text, maxMessageChars*2/3)], text[runeStart(text, len(text)-maxMessageChars/3):]
		text = fmt.Sprintf("%s\n[… %d characters left out …]\n%s", head, len(text)-len(head)-len(tail), tail)
	}
	var tools []string
	for _, tu := range m.ToolUses {
		if tu.FilePath != "" {
			tools = append(tools, tu.Name+" "+tu.FilePath)
		} else {
			tools = append(tools, tu.Name)
		}
	}
	if text == "" && len(tools) == 0 {
		return ""
	}
	role := m.Role
	switch {
	case m.Role != string(transcript.TypeUser):
	case m.IsMeta || m.IsCompactSummary:
		role = "user (automatic, not typed by the developer)"
	case m.Origin != "":
		role = "user (from " + m.Origin + ")"
	}
	var b strings.Builder
	b.WriteString("[" + role + "]")
	switch {
	case text == "":
		b.WriteString(" (tools: " + strings.Join(tools, ", ") + ")")
	case len(tools) == 0:
		b.WriteString(" " + text)
	default:
		b.WriteString(" " + text + "\n  (tools: " + strings.Join(tools, ", ") + ")")
	}
	return b.String()
}

// runeStart moves i back to the start of the UTF-8 sequence it falls in, so
// that cutting s at i never splits a character.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
