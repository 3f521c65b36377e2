package consolidate

import (
	"fmt"
	"path"
	"strings"
)

func (b *TreeToolbox) list(p string) (string, error) {
	dir, err := cleanPath(p)
	if err != nil {
		return "", b.deny("%v", err)
	}
	files, ro, err := b.files()
	if err != nil {
		return "", err
	}
	var lines []string
	for _, f := range files {
		if len(lines) >= MaxListEntries {
			lines = append(lines, "[... more files: list a folder ...]")
			break
		}
		if !under(f.Path, dir) {
			continue
		}
		line := fmt.Sprintf("/%s (%d bytes)", f.Path, f.Size)
		if ro[f.Path] {
			line += " (read-only session material)"
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return "(empty)", nil
	}
	return strings.Join(lines, "\n"), nil
}

func (b *TreeToolbox) read(p string) (string, error) {
	key, err := b.key(p)
	if err != nil {
		return "", err
	}
	text, err := b.content(key, true)
	if err != nil {
		return "", err
	}
	return CutRead(text), nil
}

func (b *TreeToolbox) grep(in ToolInput) (string, error) {
	re, err := grepRE(in.Pattern)
	if err != nil {
		return "", err
	}
	dir, err := cleanPath(in.Path)
	if err != nil {
		return "", b.deny("%v", err)
	}
	files, _, err := b.files()
	if err != nil {
		return "", err
	}
	var out []string
	for _, f := range files {
		if len(out) >= MaxGrepMatches {
			break
		}
		if !under(f.Path, dir) || !globOK(in.Glob, f.Path) {
			continue
		}
		text, err := b.content(f.Path, false)
		if err != nil {
			return "", err
		}
		for n, line := range strings.Split(text, "\n") {
			if len(out) >= MaxGrepMatches {
				break
			}
			if re.MatchString(line) {
				out = append(out, GrepLine("/"+f.Path, n+1, line))
			}
		}
	}
	if len(out) == 0 {
		return "no matches", nil
	}
	if len(out) >= MaxGrepMatches {
		out = append(out, "[... more matches: narrow the pattern ...]")
	}
	return strings.Join(out, "\n"), nil
}

func (b *TreeToolbox) glob(pattern string) (string, error) {
	pattern = strings.TrimPrefix(strings.TrimSpace(pattern), "/")
	files, _, err := b.files()
	if err != nil {
		return "", err
	}
	var out []string
	for _, f := range files {
		if MatchGlob(pattern, f.Path) {
			out = append(out, "/"+f.Path)
		}
	}
	if len(out) == 0 {
		return "no files match", nil
	}
	return strings.Join(out, "\n"), nil
}

// writable refuses sources and MEMORY.md content beyond the index caps.
func (b *TreeToolbox) writable(key, content string) error {
	if b.isSource(key) {
		return b.deny("refused: /%s is read-only session material; write what you learned from it into a memory file instead", key)
	}
	if path.Base(key) != "MEMORY.md" {
		return nil
	}
	lines := strings.Count(content, "\n")
	if content != "" && !strings.HasSuffix(content, "\n") {
		lines++
	}
	if lines > IndexMaxLines || len(content) > IndexMaxBytes {
		return b.deny("refused: /%s would have %d lines and %d bytes; an index must stay within %d lines and %d bytes. "+
			"Shorten its lines and move detail into the topic files", key, lines, len(content), IndexMaxLines, IndexMaxBytes)
	}
	return nil
}

func (b *TreeToolbox) put(key, content string) error {
	if err := b.writable(key, content); err != nil {
		return err
	}
	if err := b.tree.Write(b.ctx, key, content); err != nil {
		return b.treeErr("write", key, err)
	}
	b.touch(key)
	return nil
}

func (b *TreeToolbox) write(p, content string) (string, error) {
	key, err := b.key(p)
	if err != nil {
		return "", err
	}
	if err := b.put(key, content); err != nil {
		return "", err
	}
	return fmt.Sprintf("wrote /%s (%d bytes)", key, len(content)), nil
}

func (b *TreeToolbox) edit(in ToolInput) (string, error) {
	key, err := b.key(in.Path)
	if err != nil {
		return "", err
	}
	if b.isSource(key) {
		return "", b.writable(key, "")
	}
	b.mu.Lock()
	read := b.readKeys[key]
	b.mu.Unlock()
	if !read {
		return "", fmt.Errorf("read /%s before editing it", key)
	}
	text, err := b.content(key, true)
	if err != nil {
		return "", err
	}
	updated, err := Edit("/"+key, text, in)
	if err != nil {
		return "", err
	}
	if err := b.put(key, updated); err != nil {
		return "", err
	}
	return fmt.Sprintf("edited /%s", key), nil
}

func (b *TreeToolbox) del(p string) (string, error) {
	key, err := b.key(p)
	if err != nil {
		return "", err
	}
	if b.isSource(key) {
		return "", b.deny("refused: /%s is read-only session material and cannot be deleted", key)
	}
	if err := b.tree.Delete(b.ctx, key); err != nil {
		return "", b.treeErr("delete", key, err)
	}
	b.touch(key)
	return fmt.Sprintf("deleted /%s", key), nil
}
