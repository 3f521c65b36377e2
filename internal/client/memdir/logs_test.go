package memdir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDailyLogKey(t *testing.T) {
	t.Parallel()
	tokyo := time.FixedZone("JST", 9*3600)
	tests := []struct {
		t    time.Time
		want string
	}{
		{time.Date(2025, 3, 7, 10, 0, 0, 0, time.UTC), "logs/2025/03/2025-03-07.md"},
		{time.Date(2024, 12, 31, 23, 59, 0, 0, time.UTC), "logs/2024/12/2024-12-31.md"},
		// The caller's location decides the date: 20:00 UTC is the next day in Tokyo.
		{time.Date(2024, 12, 31, 20, 0, 0, 0, time.UTC).In(tokyo), "logs/2025/01/2025-01-01.md"},
		{time.Date(987, 1, 2, 0, 0, 0, 0, time.UTC), "logs/0987/01/0987-01-02.md"},
	}
	for _, tt := range tests {
		if got := DailyLogKey(tt.t); got != tt.want {
			t.Errorf("DailyLogKey(%v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}

func TestAppendLog(t *testing.T) {
	t.Parallel()
	root := filepath.Join(RealTempDir(t), "memory")
	day := time.Date(2025, 3, 7, 9, 5, 0, 0, time.UTC)

	key, err := AppendLog(root, day, "  decided to use SQLite for tests\n")
	if err != nil || key != "logs/2025/03/2025-03-07.md" {
		t.Fatalf("AppendLog = %q, %v", key, err)
	}
	if _, err := AppendLog(root, day.Add(2*time.Hour+30*time.Minute), "two lines\r\n\r\nsecond  "); err != nil {
		t.Fatal(err)
	}
	MustContent(t, filepath.Join(root, "logs", "2025", "03", "2025-03-07.md"),
		"# 2025-03-07\n\n- 09:05 decided to use SQLite for tests\n- 11:35 two lines\n\n  second\n")

	// A log edited by hand without a final newline still gets whole lines.
	p := filepath.Join(root, "logs", "2025", "03", "2025-03-08.md")
	MustWrite(t, p, "# mine\nno newline")
	if _, err := AppendLog(root, day.Add(24*time.Hour), "next"); err != nil {
		t.Fatal(err)
	}
	MustContent(t, p, "# mine\nno newline\n- 09:05 next\n")

	if _, err := AppendLog(root, day, " \n\t"); err == nil {
		t.Error("empty entry accepted")
	}

	// The log path goes through the same containment as every key.
	evil := filepath.Join(RealTempDir(t), "memory")
	outside := RealTempDir(t)
	MustSymlink(t, outside, filepath.Join(evil, "logs"))
	if _, err := AppendLog(evil, day, "x"); !errors.Is(err, ErrUnsafeKey) {
		t.Errorf("AppendLog through an escaping symlink: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("wrote outside root: %v", entries)
	}
}
