package teammem

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// LintProblem is one thing `teammem index --lint` reports about a memory
// directory. Key is the file it concerns; Line is 1-based, 0 when none.
type LintProblem struct {
	Kind    string `json:"kind"`
	Key     string `json:"key"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// The kinds of lint problems.
const (
	LintOverLimit     = "over_limit"      // MEMORY.md is cut when loaded
	LintLongLine      = "long_line"       // an index line over ~200 characters
	LintMissingLink   = "missing_link"    // the index links to a file that does not exist
	LintNotIndexed    = "not_indexed"     // a topic file the index does not link to
	LintBadFront      = "bad_frontmatter" // frontmatter missing, unparsable or without a valid type
	LintDuplicateName = "duplicate_name"  // two topic files share a name
)

// maxIndexLineLint is the line length the lint flags (the prompts ask for
// index lines under ~150 characters and warn past ~200).
const maxIndexLineLint = 200

// LintIndex checks a memory directory given its MEMORY.md ("" when absent)
// and its files (keys relative to the directory). Topic files are the .md
// files other than MEMORY.md; links are resolved relative to the index.
func LintIndex(index string, hasIndex bool, files []TopicFile) []LintProblem {
	var out []LintProblem
	exists := map[string]bool{}
	for _, f := range files {
		exists[f.Key] = true
	}
	linked := map[string]bool{}
	if hasIndex {
		if tr := TruncateIndex(index); tr.Truncated() {
			out = append(out, LintProblem{Kind: LintOverLimit, Key: IndexName,
				Message: fmt.Sprintf("MEMORY.md is %d lines and %s; Claude Code loads only 200 lines and %s", tr.LineCount, FormatFileSize(tr.ByteCount), FormatFileSize(MaxIndexBytes))})
		}
		for i, line := range strings.Split(index, "\n") {
			if n := utf16Len(line); n > maxIndexLineLint {
				out = append(out, LintProblem{Kind: LintLongLine, Key: IndexName, Line: i + 1,
					Message: fmt.Sprintf("index line is %d characters; keep entries under ~150 and move detail into a topic file", n)})
			}
		}
		for _, l := range IndexLinks(index) {
			target := l.Target
			if l.Wiki && path.Ext(target) == "" {
				target += ".md"
			}
			target = path.Clean(target)
			linked[target] = true
			if !exists[target] && !exists[path.Base(target)] {
				out = append(out, LintProblem{Kind: LintMissingLink, Key: IndexName, Line: l.Line,
					Message: fmt.Sprintf("links to %s, which does not exist", l.Target)})
			} else if !exists[target] {
				linked[path.Base(target)] = true
			}
		}
	}
	names := map[string][]string{}
	for _, f := range files {
		if !IsTopicFile(f.Key) {
			continue
		}
		fm, _, ok := ParseFrontmatter(f.Content)
		switch {
		case !ok:
			out = append(out, LintProblem{Kind: LintBadFront, Key: f.Key, Message: "no frontmatter (name, description, type)"})
		case fm.Err != nil:
			out = append(out, LintProblem{Kind: LintBadFront, Key: f.Key, Message: "frontmatter is not valid YAML"})
		case fm.Type == "":
			out = append(out, LintProblem{Kind: LintBadFront, Key: f.Key, Message: "frontmatter has no valid type (user, feedback, project or reference)"})
		}
		if fm.Name != "" {
			names[fm.Name] = append(names[fm.Name], f.Key)
		}
		if hasIndex && !linked[f.Key] && !strings.HasPrefix(f.Key, "logs/") && !strings.HasPrefix(f.Key, "team/") {
			out = append(out, LintProblem{Kind: LintNotIndexed, Key: f.Key, Message: "not linked from MEMORY.md"})
		}
	}
	for name, keys := range names {
		if len(keys) > 1 {
			slices.Sort(keys)
			for _, k := range keys {
				out = append(out, LintProblem{Kind: LintDuplicateName, Key: k, Message: fmt.Sprintf("name %q is also used by %s", name, strings.Join(without(keys, k), ", "))})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b LintProblem) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return out
}

func without(s []string, v string) []string {
	var out []string
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}
