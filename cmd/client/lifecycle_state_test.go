package main

import (
	"slices"
	"testing"
	"time"
)

// TestNotePartsOncePerRollingDay: a skip is said once in any 24 hours,
// also when the hooks run either side of midnight, and again a day later
// or when its reason changes.
func TestNotePartsOncePerRollingDay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	night := time.Date(2026, 12, 1, 23, 59, 59, 0, time.Local)
	say := func(at time.Time, reason string) []string {
		return noteParts(dir, at, map[string]string{partDream: reason})
	}
	if got := say(night, "no_model"); !slices.Equal(got, []string{partDream}) {
		t.Fatalf("first skip: %v", got)
	}
	if got := say(night.Add(2*time.Second), "no_model"); len(got) != 0 {
		t.Fatalf("after midnight: %v, want nothing", got)
	}
	if got := say(night.Add(24*time.Hour), "no_model"); !slices.Equal(got, []string{partDream}) {
		t.Fatalf("a day later: %v", got)
	}
	if got := say(night.Add(24*time.Hour+time.Minute), "claude_code"); !slices.Equal(got, []string{partDream}) {
		t.Fatalf("new reason: %v", got)
	}
	if got := loadLifecycle(dir).Skips[partDream]; got.Count != 1 || got.Reason != "claude_code" {
		t.Fatalf("state: %+v", got)
	}
}
