package memdir

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// DailyLogKey returns the key of the daily log for t's date in t's location
// (callers pass local time, as Claude Code uses):
// "logs/YYYY/MM/YYYY-MM-DD.md", zero-padded.
func DailyLogKey(t time.Time) string {
	return fmt.Sprintf("logs/%04d/%02d/%s.md", t.Year(), int(t.Month()), t.Format("2006-01-02"))
}

// AppendLog appends an entry for text to the daily log of t under root and
// returns the log's key. A new log starts with the heading "# YYYY-MM-DD"
// and a blank line. Each entry is one Markdown list item stamped with t's
// hour and minute, "- HH:MM text"; surrounding blank space is trimmed and
// further lines of text are indented by two spaces so they stay inside the
// item. Empty text is an error.
//
// The log is read and rewritten with WriteAtomic, so every containment and
// symlink check applies and a reader never sees half an entry; two processes
// appending at the same instant can lose one entry.
func AppendLog(root string, t time.Time, text string) (key string, err error) {
	key = DailyLogKey(t)
	entry := logEntry(t, text)
	if entry == "" {
		return key, fmt.Errorf("append to %q: empty log entry", key)
	}
	old, err := ReadFile(root, key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = []byte("# " + t.Format("2006-01-02") + "\n\n")
	case err != nil:
		return key, err
	case len(old) > 0 && old[len(old)-1] != '\n':
		old = append(old, '\n')
	}
	if _, err := WriteAtomic(root, key, append(old, entry...)); err != nil {
		return key, err
	}
	return key, nil
}

// logEntry formats text as one list item ending with a newline, or returns
// "" when text holds nothing but blank space.
func logEntry(t time.Time, text string) string {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t"); l != "" {
			lines[i] = "  " + l
		} else {
			lines[i] = ""
		}
	}
	return "- " + t.Format("15:04") + " " + strings.Join(lines, "\n") + "\n"
}
