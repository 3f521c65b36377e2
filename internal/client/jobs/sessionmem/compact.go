package sessionmem

import (
	"fmt"
	"strings"
)

// Compaction limits.
const (
	// MaxCompactSectionChars is the longest section handed to a compacted
	// session (MaxSectionTokens × 4, reference §7.5), in UTF-16 code units.
	MaxCompactSectionChars = MaxSectionTokens * 4
	// HookContextLimit is the most text a hook may give Claude Code as
	// additionalContext: Claude Code's hooks reference caps each such value
	// at 10,000 characters and hands the model only a short preview and a
	// file path for a longer one (seen in anthropics/claude-code#44086 and
	// #94358). CompactionContext stays within it so the notes arrive whole.
	HookContextLimit = 10000
)

// TruncatedMarker is the line that ends a section cut for length (§7.5).
const TruncatedMarker = "[... section truncated for length ...]"

// CompactionContext renders notes for a session that was just compacted:
// a line saying what they are and where they live, then the notes, each
// section cut at a line boundary to at most MaxCompactSectionChars and
// ended with TruncatedMarker when cut. When the result would still pass
// limit (HookContextLimit when 0) every section is cut to one common,
// smaller length, the largest that fits. When anything was cut a closing
// line points to the full file. Lengths are in UTF-16 code units, the
// measure Claude Code applies.
func CompactionContext(notes, path string, limit int) string {
	if limit <= 0 {
		limit = HookContextLimit
	}
	pre, sections := Split(notes)
	render := func(cap int) (string, bool) {
		var b strings.Builder
		fmt.Fprintf(&b, "Session notes from before this conversation was compacted, kept by teammem in %s:\n", path)
		if p := trimJS(pre); p != "" {
			b.WriteString(p + "\n")
		}
		cut := false
		for _, s := range sections {
			text, c := cutSection(s.Header+"\n"+strings.TrimRight(s.Body, "\n"), cap)
			cut = cut || c
			b.WriteString("\n" + text + "\n")
		}
		if cut {
			fmt.Fprintf(&b, "\nSome sections were cut for length; the complete notes are in %s.\n", path)
		}
		return b.String(), cut
	}
	out, _ := render(MaxCompactSectionChars)
	if utf16Len(out) <= limit {
		return out
	}
	// The largest common cap that fits; a cap of a few lines always does
	// unless the headings alone are too long, and then the smallest is used.
	lo, hi := 0, MaxCompactSectionChars
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if s, _ := render(mid); utf16Len(s) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	out, _ = render(lo)
	return out
}

// cutSection keeps the lines of text while they fit in cap UTF-16 code
// units (newlines counted) and ends the kept part with TruncatedMarker. It
// reports whether anything was cut. The heading line is always kept.
func cutSection(text string, cap int) (string, bool) {
	if utf16Len(text) <= cap {
		return text, false
	}
	lines := strings.Split(text, "\n")
	kept, size := lines[:1], utf16Len(lines[0])
	for _, l := range lines[1:] {
		if size+1+utf16Len(l) > cap {
			break
		}
		kept = append(kept, l)
		size += 1 + utf16Len(l)
	}
	return strings.Join(kept, "\n") + "\n" + TruncatedMarker, true
}
