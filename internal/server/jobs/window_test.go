package jobs_test

import (
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/jobs"
)

func TestParseWindow(t *testing.T) {
	good := map[string]jobs.Window{
		"02:00-05:00":  {2 * time.Hour, 5 * time.Hour},
		" 00:00-24:00": {0, 24 * time.Hour},
		"23:30-23:31":  {23*time.Hour + 30*time.Minute, 23*time.Hour + 31*time.Minute},
	}
	for in, want := range good {
		got, err := jobs.ParseWindow(in)
		if err != nil || got != want {
			t.Errorf("ParseWindow(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "02:00", "05:00-02:00", "02:00-02:00", "2:00-05:00", "02:60-05:00", "24:00-24:00", "25:00-26:00", "aa:bb-cc:dd", "23:00-01:00"} {
		if w, err := jobs.ParseWindow(in); err == nil {
			t.Errorf("ParseWindow(%q) = %v, want an error", in, w)
		}
	}
	if w, _ := jobs.ParseWindow(jobs.DefaultDreamWindow); w.String() != jobs.DefaultDreamWindow {
		t.Errorf("String() = %q", w.String())
	}
}

// TestWindowMinute: the minute lies in the window, is the same for the same
// org, repo and date (replicas and restarts agree), whatever the time of
// that day it is asked, and varies across repos and dates.
func TestWindowMinute(t *testing.T) {
	w, _ := jobs.ParseWindow("02:00-05:00")
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	seen := map[time.Duration]bool{}
	for i := range 60 {
		d := day.AddDate(0, 0, i)
		m := w.Minute(7, "acme/app", d.Add(13*time.Hour))
		if got := w.Minute(7, "acme/app", d.Add(time.Minute)); !got.Equal(m) {
			t.Fatalf("day %d: the minute moved with the time asked: %v, %v", i, m, got)
		}
		off := m.Sub(d)
		if off < 2*time.Hour || off >= 5*time.Hour || off%time.Minute != 0 {
			t.Fatalf("day %d: minute %v is not a minute inside the window", i, m)
		}
		seen[off] = true
	}
	if len(seen) < 10 {
		t.Errorf("60 days picked only %d distinct minutes", len(seen))
	}
	if w.Minute(7, "acme/app", day).Equal(w.Minute(7, "acme/web", day)) && w.Minute(7, "acme/app", day.AddDate(0, 0, 1)).Sub(day) == w.Minute(7, "acme/web", day.AddDate(0, 0, 1)).Sub(day) {
		t.Error("two repos share their minute two days running")
	}
}
