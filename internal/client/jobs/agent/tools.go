package agent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/llm"
)

// Output caps keep tool results within a model's context.
const (
	maxReadBytes   = 100_000
	maxGrepMatches = 200
	maxListEntries = 500
	maxLineChars   = 400
)

// Tools returns the tool definitions the sandbox serves.
func (s *Sandbox) Tools() []llm.Tool {
	obj := func(props string, required ...string) json.RawMessage {
		req, _ := json.Marshal(required)
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `}`)
	}
	str := func(name, desc string) string {
		return fmt.Sprintf("%q:{\"type\":\"string\",\"description\":%q}", name, desc)
	}
	grepDesc := "Search files of the memory directory for a regular expression (RE2 syntax); returns path:line: text."
	if len(s.ReadRoots) > 0 {
		grepDesc += " `path` may also name a transcript directory or file (" + strings.Join(s.ReadRoots, ", ") + "); search those narrowly, never read them whole."
	}
	return []llm.Tool{
		{Name: "list", Description: "List files and directories of the memory directory (recursively from `path`, default the root).",
			InputSchema: obj(str("path", "directory relative to the memory directory"))},
		{Name: "read", Description: "Read a file of the memory directory.", InputSchema: obj(str("path", "file relative to the memory directory"), "path")},
		{Name: "grep", Description: grepDesc, InputSchema: obj(str("pattern", "regular expression")+","+str("path", "where to search; default the memory directory")+","+
			str("glob", "only files whose path matches, e.g. *.md"), "pattern")},
		{Name: "glob", Description: "List memory files whose path matches a pattern; ** matches any number of directories.",
			InputSchema: obj(str("pattern", "e.g. **/*.md or team/*.md"), "pattern")},
		{Name: "write", Description: "Create or replace a file in the memory directory with the whole new content.",
			InputSchema: obj(str("path", "file relative to the memory directory")+","+str("content", "the complete file content"), "path", "content")},
		{Name: "edit", Description: "Replace text in a memory file you have read in this session. old_string must occur exactly once unless replace_all is true.",
			InputSchema: obj(str("path", "file relative to the memory directory")+","+str("old_string", "exact text to replace")+","+
				str("new_string", "replacement text")+`,"replace_all":{"type":"boolean"}`, "path", "old_string", "new_string")},
		{Name: "delete", Description: "Delete a file of the memory directory (for wrong or obsolete memories).",
			InputSchema: obj(str("path", "file relative to the memory directory"), "path")},
	}
}

// toolInput is the union of every tool's arguments.
type toolInput struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	Pattern    string `json:"pattern"`
	Glob       string `json:"glob"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// Call runs one tool and returns its textual result; isError marks
// failures and refusals, which the model sees and may recover from.
func (s *Sandbox) Call(name string, raw json.RawMessage) (result string, isError bool) {
	var in toolInput
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &in); err != nil {
			return fmt.Sprintf("the arguments of %s are not a JSON object of the documented fields: %v", name, err), true
		}
	}
	var out string
	var err error
	switch name {
	case "list":
		out, err = s.list(in.Path)
	case "read":
		out, err = s.read(in.Path)
	case "grep":
		out, err = s.grep(in.Pattern, in.Path, in.Glob)
	case "glob":
		out, err = s.glob(in.Pattern)
	case "write":
		out, err = s.write(in.Path, in.Content)
	case "edit":
		out, err = s.edit(in)
	case "delete":
		out, err = s.del(in.Path)
	default:
		err = s.deny("there is no tool %q; available: list, read, grep, glob, write, edit, delete (no shell)", name)
	}
	if err != nil {
		return err.Error(), true
	}
	return out, false
}

func (s *Sandbox) list(p string) (string, error) {
	dir := s.Root
	if strings.TrimSpace(p) != "" && strings.TrimSpace(p) != "." {
		key, err := s.key(p)
		if err != nil {
			return "", err
		}
		dir = filepath.Join(s.Root, filepath.FromSlash(key))
	}
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir || len(lines) >= maxListEntries {
			return nil
		}
		rel, _ := filepath.Rel(s.Root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			lines = append(lines, rel+" (symlink, not followed)")
		case d.IsDir():
			lines = append(lines, rel+"/")
		default:
			if info, err := d.Info(); err == nil {
				lines = append(lines, fmt.Sprintf("%s (%d bytes)", rel, info.Size()))
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(lines) == 0 {
		return "(empty)", nil
	}
	return strings.Join(lines, "\n"), nil
}

func (s *Sandbox) read(p string) (string, error) {
	key, err := s.key(p)
	if err != nil {
		return "", err
	}
	content, err := s.readFile(key)
	if err != nil {
		return "", err
	}
	if len(content) > maxReadBytes {
		content = content[:maxReadBytes] + "\n[... cut at 100000 bytes ...]"
	}
	return content, nil
}

// grep searches the memory directory, or a read-only root when path names one.
func (s *Sandbox) grep(pattern, p, glob string) (string, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", fmt.Errorf("pattern does not compile: %v", err)
	}
	root, prefix := s.Root, ""
	if strings.TrimSpace(p) != "" && strings.TrimSpace(p) != "." {
		if ro, ok := s.inReadRoot(p); ok && filepath.IsAbs(p) {
			root, prefix = ro, ro+string(filepath.Separator)
		} else {
			key, err := s.key(p)
			if err != nil {
				return "", err
			}
			root = filepath.Join(s.Root, filepath.FromSlash(key))
		}
	}
	var out []string
	_ = filepath.WalkDir(root, func(fp string, d fs.DirEntry, err error) error {
		if err != nil || len(out) >= maxGrepMatches || !d.Type().IsRegular() {
			return nil
		}
		name := fp
		if prefix == "" {
			rel, _ := filepath.Rel(s.Root, fp)
			name = filepath.ToSlash(rel)
		}
		if glob != "" && !globMatch(glob, name) && !globMatch(glob, path.Base(filepath.ToSlash(name))) {
			return nil
		}
		f, err := os.Open(fp)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 16<<20)
		for n := 1; sc.Scan() && len(out) < maxGrepMatches; n++ {
			if line := sc.Text(); re.MatchString(line) {
				if len(line) > maxLineChars {
					line = line[:maxLineChars] + "…"
				}
				out = append(out, fmt.Sprintf("%s:%d: %s", name, n, line))
			}
		}
		return nil
	})
	if len(out) == 0 {
		return "no matches", nil
	}
	if len(out) >= maxGrepMatches {
		out = append(out, "[... more matches: narrow the pattern ...]")
	}
	return strings.Join(out, "\n"), nil
}

func (s *Sandbox) glob(pattern string) (string, error) {
	files, _, err := memdir.Scan(s.Root, memdir.ScanOptions{})
	if err != nil {
		return "", err
	}
	var out []string
	for _, f := range files {
		if globMatch(pattern, f.Key) {
			out = append(out, f.Key)
		}
	}
	if len(out) == 0 {
		return "no files match", nil
	}
	return strings.Join(out, "\n"), nil
}

// globMatch matches slash-separated paths; "**" spans directories.
func globMatch(pattern, name string) bool {
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

func (s *Sandbox) write(p, content string) (string, error) {
	key, err := s.key(p)
	if err != nil {
		return "", err
	}
	if err := s.writeFile(key, content); err != nil {
		return "", err
	}
	return fmt.Sprintf("wrote %s (%d bytes)", key, len(content)), nil
}

func (s *Sandbox) edit(in toolInput) (string, error) {
	key, err := s.key(in.Path)
	if err != nil {
		return "", err
	}
	if !s.wasRead(key) {
		return "", fmt.Errorf("read %s before editing it", key)
	}
	content, err := s.readFile(key)
	if err != nil {
		return "", err
	}
	n := strings.Count(content, in.OldString)
	switch {
	case in.OldString == "":
		return "", fmt.Errorf("old_string is empty; use write to replace a whole file")
	case n == 0:
		return "", fmt.Errorf("old_string does not occur in %s", key)
	case n > 1 && !in.ReplaceAll:
		return "", fmt.Errorf("old_string occurs %d times in %s; give more context or set replace_all", n, key)
	}
	updated := strings.Replace(content, in.OldString, in.NewString, 1)
	if in.ReplaceAll {
		updated = strings.ReplaceAll(content, in.OldString, in.NewString)
	}
	if err := s.writeFile(key, updated); err != nil {
		return "", err
	}
	return fmt.Sprintf("edited %s", key), nil
}

func (s *Sandbox) del(p string) (string, error) {
	key, err := s.key(p)
	if err != nil {
		return "", err
	}
	if err := s.remove(key); err != nil {
		return "", err
	}
	return fmt.Sprintf("deleted %s", key), nil
}
