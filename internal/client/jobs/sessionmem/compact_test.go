package sessionmem_test

import (
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/teammem/teammem/internal/client/jobs/sessionmem"
)

// notesWith fills the template's Worklog and Learnings sections.
func notesWith(worklog, learnings string) string {
	n := strings.Replace(sessionmem.DefaultTemplate, "one line per step_\n", "one line per step_\n"+worklog+"\n", 1)
	return strings.Replace(n, "what to avoid next time_\n", "what to avoid next time_\n"+learnings+"\n", 1)
}

func TestCompactionContext(t *testing.T) {
	t.Parallel()
	const path = "/home/dev/.claude/projects/-x/s/session-memory/summary.md"
	short := notesWith("- ran go test", "- table tests pay off")
	got := sessionmem.CompactionContext(short, path, 0)
	if !strings.Contains(got, path) || !strings.Contains(got, "# Worklog\n_A terse step-by-step record of what was done, one line per step_\n- ran go test") ||
		strings.Contains(got, sessionmem.TruncatedMarker) || strings.Contains(got, "cut for length") {
		t.Fatalf("short notes:\n%s", got)
	}

	// One section over 8000 characters is cut at a line boundary.
	long := notesWith(filler(9000), "- keep")
	got = sessionmem.CompactionContext(long, path, 0)
	worklog := section(got, "# Worklog")
	if n := len(worklog); n > sessionmem.MaxCompactSectionChars+len("\n"+sessionmem.TruncatedMarker) || n < sessionmem.MaxCompactSectionChars-100 {
		t.Fatalf("worklog cut to %d characters", n)
	}
	if !strings.HasSuffix(worklog, "\n"+sessionmem.TruncatedMarker) || !strings.Contains(got, "- keep") {
		t.Fatalf("cut worklog ends %q", worklog[len(worklog)-60:])
	}
	for _, line := range strings.Split(worklog, "\n") {
		if line != sessionmem.TruncatedMarker && strings.HasPrefix(line, "w") && len(line) != 79 && !strings.HasSuffix(worklog, line) {
			t.Fatalf("a line was cut in the middle: %q", line)
		}
	}
	if !strings.Contains(got, "Some sections were cut for length; the complete notes are in "+path) {
		t.Fatal("no pointer to the full notes")
	}

	// Two long sections: each cut, and the whole stays within the hook limit.
	both := notesWith(filler(9000), filler(7000))
	got = sessionmem.CompactionContext(both, path, 0)
	if n := len(utf16.Encode([]rune(got))); n > sessionmem.HookContextLimit {
		t.Fatalf("context is %d characters, over %d", n, sessionmem.HookContextLimit)
	}
	if strings.Count(got, sessionmem.TruncatedMarker) != 2 || strings.Count(got, "\n# ") != 10 {
		t.Fatalf("want both long sections cut and all ten headings:\n%s", got)
	}
}

// section returns a section of rendered notes, from its heading to the
// line before the next heading or the closing note.
func section(s, header string) string {
	i := strings.Index(s, header+"\n")
	if i < 0 {
		return ""
	}
	rest := s[i:]
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func TestIsEmptyAndStructure(t *testing.T) {
	t.Parallel()
	if !sessionmem.IsEmpty("\ufeff"+sessionmem.DefaultTemplate+"\n\n", sessionmem.DefaultTemplate) {
		t.Fatal("the template with blank space and a BOM is not empty")
	}
	pre, sections := sessionmem.Split(sessionmem.DefaultTemplate)
	if strings.TrimSpace(pre) != "" || len(sections) != 10 {
		t.Fatalf("template: preamble %q, %d sections", pre, len(sections))
	}
	want := []string{"# Session Title", "# Current State", "# Task specification", "# Files and Functions", "# Workflow",
		"# Errors & Corrections", "# Codebase and System Documentation", "# Learnings", "# Key results", "# Worklog"}
	for i, s := range sections {
		if s.Header != want[i] || !strings.HasPrefix(s.Description, "_") || !strings.HasSuffix(s.Description, "_") {
			t.Errorf("section %d: %q %q", i, s.Header, s.Description)
		}
	}
	if !strings.HasPrefix(sessionmem.DefaultTemplate, "\n") || !strings.HasSuffix(sessionmem.DefaultTemplate, "\n") {
		t.Fatal("the template must start and end with a newline")
	}
}
