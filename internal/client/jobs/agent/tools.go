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
	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/llm"
)

// Tools returns the definitions of the memory tools the sandbox serves.
func (s *Sandbox) Tools() []llm.Tool {
	note := ""
	if len(s.ReadRoots) > 0 {
		note = "`path` may also name a transcript directory or file (" + strings.Join(s.ReadRoots, ", ") + "); search those narrowly, never read them whole."
	}
	return consolidate.Tools("memory directory", note)
}

// Call runs one tool and returns its textual result; isError marks
// failures and refusals, which the model sees and may recover from.
func (s *Sandbox) Call(name string, raw json.RawMessage) (result string, isError bool) {
	in, err := consolidate.DecodeToolInput(name, raw)
	if err != nil {
		return err.Error(), true
	}
	var out string
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
		err = s.deny("there is no tool %q; available: %s (no shell)", name, strings.Join(consolidate.ToolNames, ", "))
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
		if err != nil || p == dir || len(lines) >= consolidate.MaxListEntries {
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
	return consolidate.CutRead(content), nil
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
		if err != nil || len(out) >= consolidate.MaxGrepMatches || !d.Type().IsRegular() {
			return nil
		}
		name := fp
		if prefix == "" {
			rel, _ := filepath.Rel(s.Root, fp)
			name = filepath.ToSlash(rel)
		}
		if glob != "" && !consolidate.MatchGlob(glob, name) && !consolidate.MatchGlob(glob, path.Base(filepath.ToSlash(name))) {
			return nil
		}
		f, err := os.Open(fp)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 16<<20)
		for n := 1; sc.Scan() && len(out) < consolidate.MaxGrepMatches; n++ {
			if line := sc.Text(); re.MatchString(line) {
				out = append(out, consolidate.GrepLine(name, n, line))
			}
		}
		return nil
	})
	if len(out) == 0 {
		return "no matches", nil
	}
	if len(out) >= consolidate.MaxGrepMatches {
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
		if consolidate.MatchGlob(pattern, f.Key) {
			out = append(out, f.Key)
		}
	}
	if len(out) == 0 {
		return "no files match", nil
	}
	return strings.Join(out, "\n"), nil
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

func (s *Sandbox) edit(in consolidate.ToolInput) (string, error) {
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
	updated, err := consolidate.Edit(key, content, in)
	if err != nil {
		return "", err
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
