package jobs

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultDreamWindow is the nightly dreams' window when the operator sets
// none (TEAMMEM_DREAM_WINDOW), in UTC.
const DefaultDreamWindow = "02:00-05:00"

// Window is the part of each UTC day nightly dreams start in: from Start
// to End after midnight, End after Start (it does not cross midnight).
type Window struct {
	Start, End time.Duration
}

// ParseWindow parses "HH:MM-HH:MM" (UTC, 24-hour clock, end after start,
// "24:00" allowed as the end).
func ParseWindow(s string) (Window, error) {
	from, to, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		return Window{}, fmt.Errorf("%q is not a window: want HH:MM-HH:MM in UTC, such as %s", s, DefaultDreamWindow)
	}
	start, err := clock(from, false)
	if err != nil {
		return Window{}, err
	}
	end, err := clock(to, true)
	if err != nil {
		return Window{}, err
	}
	if end <= start {
		return Window{}, fmt.Errorf("window %q ends before it starts: it must lie within one UTC day, such as %s", s, DefaultDreamWindow)
	}
	return Window{Start: start, End: end}, nil
}

// clock parses "HH:MM" as the time after midnight; "24:00" only as an end.
func clock(s string, end bool) (time.Duration, error) {
	hh, mm, ok := strings.Cut(strings.TrimSpace(s), ":")
	h, herr := strconv.Atoi(hh)
	m, merr := strconv.Atoi(mm)
	if !ok || herr != nil || merr != nil || len(hh) != 2 || len(mm) != 2 || h < 0 || m < 0 || m > 59 || h > 24 || (h == 24 && (m != 0 || !end)) {
		return 0, fmt.Errorf("%q is not a time of day: want HH:MM (00:00-23:59, or 24:00 as the end)", strings.TrimSpace(s))
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, nil
}

// String formats w as ParseWindow reads it.
func (w Window) String() string {
	f := func(d time.Duration) string { return fmt.Sprintf("%02d:%02d", int(d.Hours()), int(d.Minutes())%60) }
	return f(w.Start) + "-" + f(w.End)
}

// Minute returns when the nightly dream of org's repo is due on the UTC
// day of day: a minute in the window picked from org, repo and the date
// alone, so every replica, and a restarted one, picks the same minute,
// and repos spread over the window instead of all starting at once.
func (w Window) Minute(orgID int64, repo string, day time.Time) time.Time {
	y, mo, d := day.UTC().Date()
	midnight := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s\x00%04d-%02d-%02d", orgID, repo, y, mo, d))
	minutes := uint64((w.End - w.Start) / time.Minute)
	return midnight.Add(w.Start + time.Duration(binary.BigEndian.Uint64(sum[:8])%minutes)*time.Minute)
}
