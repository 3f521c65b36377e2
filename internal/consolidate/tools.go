package consolidate

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/teammem/teammem/internal/llm"
)

// Output caps keep tool results within a model's context.
const (
	MaxReadBytes   = 100_000
	MaxGrepMatches = 200
	MaxListEntries = 500
	MaxLineChars   = 400
)

// ToolNames lists the memory tools, in the order Tools declares them.
var ToolNames = []string{"list", "read", "grep", "glob", "write", "edit", "delete"}

// Tools returns the definitions of the memory tools, the same names and
// argument shapes on both sides so one prompt fits both. place names where
// the memory lives ("memory directory", "memory store"); grepNote, when not
// empty, is appended to the grep tool's description.
func Tools(place, grepNote string) []llm.Tool {
	obj := func(props string, required ...string) json.RawMessage {
		req, _ := json.Marshal(required)
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `}`)
	}
	str := func(name, desc string) string {
		return fmt.Sprintf("%q:{\"type\":\"string\",\"description\":%q}", name, desc)
	}
	file := "file relative to the " + place
	grepDesc := "Search files of the " + place + " for a regular expression (RE2 syntax); returns path:line: text."
	if grepNote != "" {
		grepDesc += " " + grepNote
	}
	return []llm.Tool{
		{Name: "list", Description: "List files and directories of the " + place + " (recursively from `path`, default the root).",
			InputSchema: obj(str("path", "directory relative to the "+place))},
		{Name: "read", Description: "Read a file of the " + place + ".", InputSchema: obj(str("path", file), "path")},
		{Name: "grep", Description: grepDesc, InputSchema: obj(str("pattern", "regular expression")+","+str("path", "where to search; default the "+place)+","+
			str("glob", "only files whose path matches, e.g. *.md"), "pattern")},
		{Name: "glob", Description: "List memory files whose path matches a pattern; ** matches any number of directories.",
			InputSchema: obj(str("pattern", "e.g. **/*.md or team/*.md"), "pattern")},
		{Name: "write", Description: "Create or replace a file in the " + place + " with the whole new content.",
			InputSchema: obj(str("path", file)+","+str("content", "the complete file content"), "path", "content")},
		{Name: "edit", Description: "Replace text in a memory file you have read in this session. old_string must occur exactly once unless replace_all is true.",
			InputSchema: obj(str("path", file)+","+str("old_string", "exact text to replace")+","+
				str("new_string", "replacement text")+`,"replace_all":{"type":"boolean"}`, "path", "old_string", "new_string")},
		{Name: "delete", Description: "Delete a file of the " + place + " (for wrong or obsolete memories).",
			InputSchema: obj(str("path", file), "path")},
	}
}

// ToolInput is the union of every memory tool's arguments.
type ToolInput struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	Pattern    string `json:"pattern"`
	Glob       string `json:"glob"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// DecodeToolInput parses a tool call's arguments; the error is worded for
// the model.
func DecodeToolInput(name string, raw json.RawMessage) (ToolInput, error) {
	var in ToolInput
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &in); err != nil {
			return in, fmt.Errorf("the arguments of %s are not a JSON object of the documented fields: %v", name, err)
		}
	}
	return in, nil
}

// Edit applies an edit tool call to content, the text of key; the error
// says why the edit cannot apply.
func Edit(key, content string, in ToolInput) (string, error) {
	n := strings.Count(content, in.OldString)
	switch {
	case in.OldString == "":
		return "", fmt.Errorf("old_string is empty; use write to replace a whole file")
	case n == 0:
		return "", fmt.Errorf("old_string does not occur in %s", key)
	case n > 1 && !in.ReplaceAll:
		return "", fmt.Errorf("old_string occurs %d times in %s; give more context or set replace_all", n, key)
	}
	if in.ReplaceAll {
		return strings.ReplaceAll(content, in.OldString, in.NewString), nil
	}
	return strings.Replace(content, in.OldString, in.NewString, 1), nil
}

// CutRead cuts a read tool's answer at MaxReadBytes, saying so.
func CutRead(text string) string {
	if len(text) > MaxReadBytes {
		return text[:MaxReadBytes] + fmt.Sprintf("\n[... cut at %d bytes ...]", MaxReadBytes)
	}
	return text
}

// GrepLine formats one grep match, cutting long lines.
func GrepLine(name string, n int, line string) string {
	if len(line) > MaxLineChars {
		line = line[:MaxLineChars] + "…"
	}
	return fmt.Sprintf("%s:%d: %s", name, n, line)
}

// MatchGlob reports whether the slash-separated name matches pattern, in
// which "**" spans any number of directories.
func MatchGlob(pattern, name string) bool {
	ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
	var match func(i, j int) bool
	match = func(i, j int) bool {
		for i < len(ps) {
			if ps[i] == "**" {
				for k := j; k <= len(ns); k++ {
					if match(i+1, k) {
						return true
					}
				}
				return false
			}
			if j >= len(ns) {
				return false
			}
			if ok, _ := path.Match(ps[i], ns[j]); !ok {
				return false
			}
			i, j = i+1, j+1
		}
		return j == len(ns)
	}
	return match(0, 0)
}
