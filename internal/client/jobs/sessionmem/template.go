package sessionmem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// DefaultTemplate is the notes file a session starts with: the reference's
// ten section headings (§7.3), each followed by an italic line saying what
// belongs there. Like the reference's it starts and ends with a newline.
const DefaultTemplate = `
# Session Title
_A distinctive title of 5 to 10 words that says what this session is about_

# Current State
_What is being worked on right now: pending tasks, the next steps, anything left half done_

# Task specification
_What the user asked for, in their own terms, with the design decisions and constraints agreed so far_

# Files and Functions
_The files and functions that matter for this work, with a few words on what each holds and why it matters_

# Workflow
_The commands usually run, in what order, and how to read their output_

# Errors & Corrections
_Errors met and how they were fixed, what the user corrected, approaches that failed and must not be tried again_

# Codebase and System Documentation
_The components of the system this work touches and how they fit together_

# Learnings
_What worked well, what did not, and what to avoid next time_

# Key results
_Results the user asked for, kept exactly as they were produced: tables, answers, numbers, text_

# Worklog
_A terse step-by-step record of what was done, one line per step_
`

// DefaultPrompt is the update instruction sent after the conversation
// excerpt, following the reference's intent (§7.4). {{notesPath}} and
// {{currentNotes}} are filled in by Substitute.
const DefaultPrompt = `These instructions come from the note-keeping process; they are not part of the conversation
above. Never mention them, or the fact that notes are being kept, in the notes.

Bring the session notes in {{notesPath}} up to date with the conversation above. This is what
they hold now:

<current_notes_content>
{{currentNotes}}
</current_notes_content>

Rules:
- Change the notes only with the edit tool, with file_path exactly {{notesPath}}. Make all your
  edits in a single reply, as parallel tool calls, and then stop. Nothing else can be written.
- Keep the structure: never change, remove or add a line that starts with "#", and never touch
  the italic line under each heading. Write only the content below them.
- Be specific and dense: file paths, function names, exact error messages, the commands that
  were run. No filler and no preamble.
- Put complete, exact outputs the user asked for under "Key results".
- Leave out what CLAUDE.md or the repository's own documentation already says.
- Keep every section under about 2000 tokens (some 8000 characters): when one grows past that,
  drop its least important details instead of adding more.
- Always rewrite "Current State" so that it describes where things stand at the end of the
  conversation.
- A section with nothing to say stays empty: leave its heading and italic line as they are.
`

// Override files, under <config home>/session-memory/config/.
const (
	TemplateFile = "template.md"
	PromptFile   = "prompt.md"
)

// Texts are the template and the update prompt a session uses.
type Texts struct {
	Template string
	Prompt   string
	// Overridden names the override files used, for reports.
	Overridden []string
	// Problems lists override files that exist but could not be read; the
	// default was used for each (the reference logs these).
	Problems []string
}

// LoadTexts returns the template and prompt: the files in
// <configHome>/session-memory/config/ when present, else the defaults. A
// missing file means the default; any other read error is reported in
// Problems and the default used. An empty file counts as missing, since
// notes without sections or an empty instruction cannot work.
func LoadTexts(configHome string) Texts {
	t := Texts{Template: DefaultTemplate, Prompt: DefaultPrompt}
	if configHome == "" {
		return t
	}
	dir := filepath.Join(configHome, "session-memory", "config")
	for _, o := range []struct {
		name string
		dst  *string
	}{{TemplateFile, &t.Template}, {PromptFile, &t.Prompt}} {
		b, err := os.ReadFile(filepath.Join(dir, o.name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			t.Problems = append(t.Problems, fmt.Sprintf("%s: %v", filepath.Join(dir, o.name), err))
		case strings.TrimSpace(string(b)) != "":
			*o.dst = string(b)
			t.Overridden = append(t.Overridden, filepath.Join(dir, o.name))
		}
	}
	return t
}

// placeholderRE matches a {{name}} placeholder.
var placeholderRE = regexp.MustCompile(`\{\{(\w+)\}\}`)

// Substitute replaces each {{name}} in s with vars[name] in a single pass:
// unknown names stay as they are, and replacement text is inserted
// literally, so a placeholder inside the notes is never expanded.
func Substitute(s string, vars map[string]string) string {
	return placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := vars[m[2:len(m)-2]]; ok {
			return v
		}
		return m
	})
}

// IsEmpty reports whether notes hold nothing beyond the template, compared
// with surrounding blank space trimmed (reference §7.4).
func IsEmpty(notes, template string) bool {
	return trimJS(notes) == trimJS(template)
}

// trimJS trims as JavaScript's trim does: Unicode white space and the BOM.
func trimJS(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' })
}
