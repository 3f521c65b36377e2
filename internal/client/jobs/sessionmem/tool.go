package sessionmem

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/llm"
)

// EditTool is the name of the only tool an update's model may call.
const EditTool = "edit"

// maxNotesTokens refuses an edit that would make the notes absurdly large:
// the budgets are asked for in the prompt, this only stops a runaway.
const maxNotesTokens = 4 * MaxTotalTokens

// notesBox is the toolbox of an update: one tool, edit, on one file. Every
// other tool, any other path, and any edit that changes the notes'
// structure (headings, italic descriptions, text above the first heading)
// is refused, and the refusal is recorded.
type notesBox struct {
	path string

	mu     sync.Mutex
	edits  int
	denied []string
}

var _ consolidate.Toolbox = (*notesBox)(nil)

// Tools returns the edit tool's definition.
func (b *notesBox) Tools() []llm.Tool {
	schema := fmt.Sprintf(`{"type":"object","properties":{`+
		`"file_path":{"type":"string","description":"must be exactly %s"},`+
		`"old_string":{"type":"string","description":"exact text of the notes to replace; it must occur once unless replace_all is true"},`+
		`"new_string":{"type":"string","description":"the replacement text"},`+
		`"replace_all":{"type":"boolean"}},"required":["file_path","old_string","new_string"]}`, jsonEscape(b.path))
	return []llm.Tool{{
		Name:        EditTool,
		Description: "Replace text in the session notes file. Only " + b.path + " can be edited, and headings and their italic lines must stay as they are.",
		InputSchema: json.RawMessage(schema),
	}}
}

// jsonEscape returns s escaped for use inside a JSON string literal.
func jsonEscape(s string) string {
	q, _ := json.Marshal(s)
	return string(q[1 : len(q)-1])
}

// editInput is the edit tool's arguments.
type editInput struct {
	FilePath   string `json:"file_path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// Call runs one tool call.
func (b *notesBox) Call(name string, raw json.RawMessage) (string, bool) {
	if name != EditTool {
		return b.deny("there is no tool %q: the only tool is %s, on %s", name, EditTool, b.path), true
	}
	var in editInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return fmt.Sprintf("the arguments of %s are not a JSON object of file_path, old_string, new_string and replace_all: %v", EditTool, err), true
	}
	if in.FilePath != b.path {
		return b.deny("refused: %q is not the notes file; only %s can be edited", in.FilePath, b.path), true
	}
	msg, err := b.edit(in)
	if err != nil {
		return err.Error(), true
	}
	return msg, false
}

// edit applies one edit to the file on disk after checking it.
func (b *notesBox) edit(in editInput) (string, error) {
	data, err := os.ReadFile(b.path)
	if err != nil {
		return "", fmt.Errorf("cannot read the notes: %v", err)
	}
	old := string(data)
	n := strings.Count(old, in.OldString)
	switch {
	case in.OldString == "":
		return "", errors.New("old_string is empty: give the exact text to replace, such as a section's italic line followed by what is under it")
	case n == 0:
		return "", errors.New("old_string does not occur in the notes; copy it exactly from their current content")
	case n > 1 && !in.ReplaceAll:
		return "", fmt.Errorf("old_string occurs %d times in the notes; include more of the surrounding text, or set replace_all", n)
	}
	updated := strings.Replace(old, in.OldString, in.NewString, 1)
	if in.ReplaceAll {
		updated = strings.ReplaceAll(old, in.OldString, in.NewString)
	}
	if err := CheckStructure(old, updated); err != nil {
		return "", errors.New(b.deny("refused: %v", err))
	}
	if n := EstimateTokens(updated); n > maxNotesTokens {
		return "", errors.New(b.deny("refused: the notes would be ~%d tokens; keep them under %d", n, MaxTotalTokens))
	}
	if err := writeFileAtomic(b.path, []byte(updated)); err != nil {
		return "", fmt.Errorf("cannot write the notes: %v", err)
	}
	b.mu.Lock()
	b.edits++
	b.mu.Unlock()
	return "edited " + filepath.Base(b.path), nil
}

// deny records a refusal and returns its message.
func (b *notesBox) deny(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	b.mu.Lock()
	b.denied = append(b.denied, msg)
	b.mu.Unlock()
	return msg
}

// Touched returns the notes file's name once an edit succeeded.
func (b *notesBox) Touched() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.edits == 0 {
		return nil
	}
	return []string{filepath.Base(b.path)}
}

// Denied returns the refusals.
func (b *notesBox) Denied() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.denied...)
}

// Edits counts the edits applied.
func (b *notesBox) Edits() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.edits
}
