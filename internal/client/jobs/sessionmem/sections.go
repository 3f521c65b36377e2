package sessionmem

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf16"
)

// Budgets of the notes (reference §7.4), in tokens of about four characters.
const (
	MaxSectionTokens = 2000
	MaxTotalTokens   = 12000
)

// Section is one "# " heading of the notes and what follows it.
type Section struct {
	// Header is the heading line, "# Current State".
	Header string
	// Description is the italic line right under the heading, "" if none.
	Description string
	// Body is every line after the heading up to the next one, the
	// description included, joined by "\n".
	Body string
}

// Tokens estimates the section's size as the reference does: its trimmed
// body's length in UTF-16 code units divided by four, rounded.
func (s Section) Tokens() int { return EstimateTokens(trimJS(s.Body)) }

// Split returns the text before the first heading and the sections, in
// order. A heading is any line starting with "# ", as in the reference; a
// "#" line inside a code block counts too, so the prompt forbids them.
func Split(notes string) (preamble string, sections []Section) {
	lines := strings.Split(notes, "\n")
	var pre []string
	var body []string
	flush := func() {
		if len(sections) > 0 {
			sections[len(sections)-1].Body = strings.Join(body, "\n")
		}
	}
	for _, line := range lines {
		if !strings.HasPrefix(line, "# ") {
			if len(sections) == 0 {
				pre = append(pre, line)
			} else {
				body = append(body, line)
			}
			continue
		}
		flush()
		sections = append(sections, Section{Header: strings.TrimRight(line, " \t\r")})
		body = nil
	}
	flush()
	for i := range sections {
		first, _, _ := strings.Cut(sections[i].Body, "\n")
		if first = strings.TrimRight(first, " \t\r"); isItalic(first) {
			sections[i].Description = first
		}
	}
	return strings.Join(pre, "\n"), sections
}

// isItalic reports whether a line is one italic span, _like this_ or *this*.
func isItalic(line string) bool {
	if len(line) < 3 {
		return false
	}
	return line[0] == '_' && line[len(line)-1] == '_' || line[0] == '*' && line[len(line)-1] == '*' && line[1] != '*'
}

// CheckStructure returns nil when after keeps before's structure: the same
// text before the first heading (blank space aside), the same headings in
// the same order, and under each the same italic description line. It
// returns an error saying what changed otherwise.
func CheckStructure(before, after string) error {
	preB, secB := Split(before)
	preA, secA := Split(after)
	if trimJS(preB) != trimJS(preA) {
		return fmt.Errorf("text was added above the first heading %q; write only under the headings", first(secB))
	}
	for i := 0; i < max(len(secB), len(secA)); i++ {
		switch {
		case i >= len(secA):
			return fmt.Errorf("the heading %q was removed or changed; headings must stay exactly as they are", secB[i].Header)
		case i >= len(secB):
			return fmt.Errorf("a new heading %q was added (inside %q); no line may start with \"# \" except the existing headings", secA[i].Header, secB[len(secB)-1].Header)
		case secA[i].Header != secB[i].Header:
			return fmt.Errorf("the heading %q was changed to %q; headings must stay exactly as they are", secB[i].Header, secA[i].Header)
		case secB[i].Description != "" && secA[i].Description != secB[i].Description:
			return fmt.Errorf("the italic line under %q was changed; it must stay %q", secB[i].Header, secB[i].Description)
		}
	}
	return nil
}

func first(s []Section) string {
	if len(s) == 0 {
		return ""
	}
	return s[0].Header
}

// EstimateTokens is the reference's rough token count: the length of s in
// UTF-16 code units (JavaScript's string length) divided by four, rounded.
func EstimateTokens(s string) int {
	return int(math.Round(float64(utf16Len(s)) / 4))
}

// utf16Len returns the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// BudgetReminders returns the paragraphs appended to the update prompt
// when the notes are over budget, "" when they are within it: a critical
// demand to condense when the whole is over MaxTotalTokens, and the
// sections over MaxSectionTokens, largest first, one line each.
func BudgetReminders(notes string) string {
	total := EstimateTokens(notes)
	_, sections := Split(notes)
	type over struct {
		header string
		tokens int
	}
	var big []over
	for _, s := range sections {
		if n := s.Tokens(); n > MaxSectionTokens {
			big = append(big, over{s.Header, n})
		}
	}
	slices.SortStableFunc(big, func(a, b over) int { return b.tokens - a.tokens })
	var b strings.Builder
	if total > MaxTotalTokens {
		fmt.Fprintf(&b, "\nCRITICAL: the notes are now ~%d tokens, over their limit of %d tokens. Condense them in this update "+
			"until they fit: cut the least important details of every section, and keep \"Current State\" and "+
			"\"Errors & Corrections\" accurate and complete.\n", total, MaxTotalTokens)
	}
	if len(big) > 0 {
		if total > MaxTotalTokens {
			b.WriteString("\nShorten these sections first, largest first:\n")
		} else {
			b.WriteString("\nThese sections are over their limit; condense them in this update, largest first:\n")
		}
		for _, o := range big {
			fmt.Fprintf(&b, "- %q is ~%d tokens (limit: %d)\n", o.header, o.tokens, MaxSectionTokens)
		}
	}
	return b.String()
}
