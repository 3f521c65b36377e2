package transcript

import (
	"encoding/json"
	"strings"
)

// ToolClass is the coarse category of a tool, used for statistics.
type ToolClass int

// Tool classes. ClassOther covers every tool not named below (Task, TodoWrite, WebFetch,
// MCP tools, ...).
const (
	ClassOther  ToolClass = iota
	ClassRead             // Read, NotebookRead, View, read_file
	ClassSearch           // Grep, Glob, LS, WebSearch
	ClassShell            // Bash
	ClassEdit             // Edit, MultiEdit, Write, NotebookEdit
)

// toolClasses maps lower-cased tool names to classes. Names are compared case-insensitively
// because hand-written and third-party transcripts use "bash" as well as "Bash".
var toolClasses = map[string]ToolClass{
	"read": ClassRead, "notebookread": ClassRead, "view": ClassRead, "read_file": ClassRead,
	"grep": ClassSearch, "glob": ClassSearch, "ls": ClassSearch, "websearch": ClassSearch,
	"bash": ClassShell,
	"edit": ClassEdit, "multiedit": ClassEdit, "write": ClassEdit, "notebookedit": ClassEdit,
}

// ClassifyTool returns the class of the tool called name.
func ClassifyTool(name string) ToolClass {
	return toolClasses[strings.ToLower(name)]
}

// editInput holds the input fields of the edit tools that carry changed text.
type editInput struct {
	FilePath  string `json:"file_path"`
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
	Content   string `json:"content"`    // Write
	NewSource string `json:"new_source"` // NotebookEdit
	EditMode  string `json:"edit_mode"`  // NotebookEdit: replace, insert or delete
	Edits     []struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	} `json:"edits"` // MultiEdit
}

// EditLines estimates the lines a tool call adds and removes from its input alone:
//
//   - Edit: lines of old_string removed, lines of new_string added (once, even with
//     replace_all, as the number of occurrences is not in the transcript);
//   - MultiEdit: the same summed over edits[];
//   - Write: lines of content added (the overwritten file is not in the transcript);
//   - NotebookEdit: lines of new_source added unless edit_mode is "delete".
//
// Other tools and undecodable inputs yield 0, 0.
func EditLines(name string, input json.RawMessage) (added, removed int) {
	if ClassifyTool(name) != ClassEdit || len(input) == 0 {
		return 0, 0
	}
	var in editInput
	if err := json.Unmarshal(input, &in); err != nil && !isTypeError(err) {
		return 0, 0
	}
	switch strings.ToLower(name) {
	case "edit":
		return countLines(in.NewString), countLines(in.OldString)
	case "multiedit":
		for _, e := range in.Edits {
			added += countLines(e.NewString)
			removed += countLines(e.OldString)
		}
		return added, removed
	case "write":
		return countLines(in.Content), 0
	case "notebookedit":
		if in.EditMode == "delete" {
			return 0, 0
		}
		return countLines(in.NewSource), 0
	}
	return 0, 0
}

// countLines returns the number of lines in s: 0 for "", else the newlines plus one for an
// unterminated last line ("a" and "a\n" are one line, "a\nb" two).
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// inputFilePath returns input.file_path when it is a string, else "".
func inputFilePath(input json.RawMessage) string {
	if len(input) == 0 {
		return ""
	}
	var in struct {
		FilePath string `json:"file_path"`
	}
	if err := json.Unmarshal(input, &in); err != nil && !isTypeError(err) {
		return ""
	}
	return in.FilePath
}
