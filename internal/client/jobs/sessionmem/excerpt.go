package sessionmem

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/teammem/teammem/internal/client/transcript"
)

// Excerpt limits: an update sees the conversation since the last update,
// newest kept when it is longer than MaxExcerptChars.
const (
	MaxExcerptChars = 120_000
	maxTextChars    = 8_000 // one text block
	maxResultChars  = 1_500 // one tool result
	maxInputChars   = 400   // one tool call's input
)

// reminderRE matches the reminders Claude Code injects into messages.
var reminderRE = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

// Excerpt renders the main chain's user and assistant records after the
// record whose uuid is cursor (all of them when cursor is "" or absent)
// as a compact conversation: texts, tool calls with their inputs, and tool
// results, each cut to a bounded length. n counts the records rendered.
func Excerpt(path, cursor string) (text string, n int, err error) {
	rd, err := transcript.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer rd.Close()
	var parts []string
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", 0, err
		}
		if cursor != "" && rec.UUID == cursor {
			parts, n = nil, 0
			continue
		}
		if rec.IsSidechain || rec.IsMeta || (rec.Type != transcript.TypeUser && rec.Type != transcript.TypeAssistant) {
			continue
		}
		if p := renderRecord(&rec); p != "" {
			parts, n = append(parts, p), n+1
		}
	}
	return joinNewest(parts, MaxExcerptChars), n, nil
}

// joinNewest joins parts with newlines, leaving out the oldest ones when
// the whole would pass limit bytes, and says how many it left out.
func joinNewest(parts []string, limit int) string {
	size, start := 0, len(parts)
	for start > 0 && size+len(parts[start-1])+1 <= limit {
		start--
		size += len(parts[start]) + 1
	}
	if start == len(parts) && start > 0 { // a single part over the limit: keep its end
		start--
		p := parts[start]
		parts[start] = "[…]" + p[runeStart(p, len(p)-limit):]
	}
	out := strings.Join(parts[start:], "\n")
	if start > 0 {
		out = fmt.Sprintf("[… %d earlier messages left out for length …]\n", start) + out
	}
	return out
}

// renderRecord renders one record, "" when it holds nothing to show.
func renderRecord(rec *transcript.Record) string {
	role := string(rec.Type)
	if rec.IsCompactSummary {
		role = "summary of the earlier conversation"
	}
	var lines []string
	for _, b := range rec.Content {
		switch b.Kind {
		case transcript.BlockText:
			if t := strings.TrimSpace(reminderRE.ReplaceAllString(b.Text, "")); t != "" {
				lines = append(lines, clip(t, maxTextChars))
			}
		case transcript.BlockToolUse:
			lines = append(lines, fmt.Sprintf("[tool call %s] %s", b.Name, clip(string(b.Input), maxInputChars)))
		case transcript.BlockToolResult:
			kind := "tool result"
			if b.IsError {
				kind = "tool error"
			}
			if t := strings.TrimSpace(b.Text); t != "" {
				lines = append(lines, fmt.Sprintf("[%s] %s", kind, clip(t, maxResultChars)))
			}
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "[" + role + "] " + strings.Join(lines, "\n")
}

// clip cuts s to about limit bytes, keeping its start and its end.
func clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	head := s[:runeStart(s, limit*2/3)]
	tail := s[runeStart(s, len(s)-limit/3):]
	return fmt.Sprintf("%s […%d bytes…] %s", head, len(s)-len(head)-len(tail), tail)
}

// runeStart moves i back to the start of the rune it falls in.
func runeStart(s string, i int) int {
	if i <= 0 {
		return 0
	}
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return min(i, len(s))
}
