package sessionmem_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/client/jobs/sessionmem"
)

// gateFile is a synthetic transcript of testdata/gates (see its README).
func gateFile(name string) string { return filepath.Join("testdata", "gates", name+".jsonl") }

// scanFile measures a whole file with a scan that starts at cursor.
func scanFile(t *testing.T, name, cursor string) sessionmem.Scan {
	t.Helper()
	s := sessionmem.Scan{Cursor: cursor}
	if err := s.Advance(gateFile(name)); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestScanMeasures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file      string
		cursor    string
		tokens    int64
		toolCalls int
		lastTools bool
	}{
		{"below_init", "", 9999, 0, false},
		{"init", "", 10000, 0, false},
		{"split", "", 12508, 1, true},
		{"tools", "", 16299, 4, true},
		{"tools", "tools-0003", 16299, 2, true},
		{"compacted", "", 2004, 0, false},
		{"resumed", "", 26000, 1, false},
		{"resumed", "resume-0004", 26000, 1, false},
		{"missing_cursor", "", 17125, 5, true},
		{"synthetic_sidechain", "", 11100, 0, false},
		{"astral", "", 10000, 0, false},
		{"partial", "", 12000, 0, false},
	} {
		t.Run(c.file+"@"+c.cursor, func(t *testing.T) {
			s := scanFile(t, c.file, c.cursor)
			if s.Tokens() != c.tokens || s.ToolCalls != c.toolCalls || s.LastTurnHasTools != c.lastTools {
				t.Fatalf("tokens %d, tool calls %d, last turn has tools %v; want %d, %d, %v (scan %+v)",
					s.Tokens(), s.ToolCalls, s.LastTurnHasTools, c.tokens, c.toolCalls, c.lastTools, s)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	var zero sessionmem.Thresholds
	for _, c := range []struct {
		name        string
		file        string
		cursor      string // the scan's cursor: where the last update stopped
		initialized bool
		baseline    int64
		update      bool
		reason      string
		newBaseline int64
	}{
		{"one token short of the first update", "below_init", "", false, 0, false, sessionmem.SkipInitThreshold, 0},
		{"first update at 10000 tokens", "init", "", false, 0, true, "", 0},
		{"first update counts emoji as two units", "astral", "", false, 0, true, "", 0},
		{"growth below 5000", "init", "", true, 5001, false, sessionmem.SkipTokens, 5001},
		{"growth of exactly 5000", "init", "", true, 5000, true, "", 5000},
		{"one tool call while the agent still works", "split", "", false, 0, false, sessionmem.SkipToolCalls, 0},
		{"three tool calls since the last update", "tools", "", true, 10000, true, "", 10000},
		{"two tool calls since the cursor", "tools", "tools-0003", true, 10000, false, sessionmem.SkipToolCalls, 10000},
		{"missing cursor counts no tool calls", "missing_cursor", "gone-0001", true, 1000, false, sessionmem.SkipToolCalls, 1000},
		{"no cursor yet counts every tool call", "missing_cursor", "", true, 1000, true, "", 1000},
		{"resumed: 6000 tokens since the update before the resume", "resumed", "resume-0004", true, 20000, true, "", 20000},
		{"resumed: 4000 tokens since", "resumed", "resume-0004", true, 22000, false, sessionmem.SkipTokens, 22000},
		{"resumed under a new session id: a fresh state", "resumed", "", false, 0, true, "", 0},
		{"compacted below the baseline: growth counts from the new size", "compacted", "", true, 149000, false, sessionmem.SkipTokens, 2004},
		{"compacted session never initialised", "compacted", "", false, 0, false, sessionmem.SkipInitThreshold, 0},
		{"synthetic and sidechain records add no usage", "synthetic_sidechain", "", true, 6100, true, "", 6100},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := scanFile(t, c.file, c.cursor)
			d := sessionmem.Decide(zero, c.initialized, c.baseline, &s)
			if d.Update != c.update || d.Reason != c.reason || d.Baseline != c.newBaseline {
				t.Fatalf("update %v, reason %q, baseline %d; want %v, %q, %d (%s)", d.Update, d.Reason, d.Baseline, c.update, c.reason, c.newBaseline, d.Message)
			}
			if !c.initialized && d.Initialized != (s.Tokens() >= sessionmem.DefaultInit) {
				t.Fatalf("initialized = %v at %d tokens", d.Initialized, s.Tokens())
			}
		})
	}
}

// TestScanIncremental: feeding a transcript a line at a time, as hooks see
// it grow, measures the same as reading it whole, and an unterminated last
// line waits for its newline.
func TestScanIncremental(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"split", "tools", "compacted", "resumed", "synthetic_sidechain"} {
		data, err := os.ReadFile(gateFile(name))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "t.jsonl")
		var s sessionmem.Scan
		for _, line := range strings.SplitAfter(string(data), "\n") {
			appendFile(t, path, line)
			if err := s.Advance(path); err != nil {
				t.Fatal(err)
			}
		}
		if whole := scanFile(t, name, ""); s != whole {
			t.Errorf("%s: incremental %+v, whole %+v", name, s, whole)
		}
	}

	path := filepath.Join(t.TempDir(), "partial.jsonl")
	data, _ := os.ReadFile(gateFile("partial"))
	appendFile(t, path, string(data))
	var s sessionmem.Scan
	if err := s.Advance(path); err != nil || s.Tokens() != 12000 || s.Offset >= int64(len(data)) {
		t.Fatalf("before the tail: %v, %+v", err, s)
	}
	tail, _ := os.ReadFile(filepath.Join("testdata", "gates", "partial_tail.txt"))
	appendFile(t, path, string(tail))
	if err := s.Advance(path); err != nil || s.Tokens() != 13000 || s.Offset != int64(len(data)+len(tail)) {
		t.Fatalf("after the tail: %v, %+v", err, s)
	}
}

// TestScanReplacedFile: a transcript replaced by a shorter one is read
// again from its start, keeping the cursor, which the new file lacks.
func TestScanReplacedFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	big, _ := os.ReadFile(gateFile("tools"))
	appendFile(t, path, string(big))
	s := sessionmem.Scan{}
	if err := s.Advance(path); err != nil {
		t.Fatal(err)
	}
	s.SetCursor()
	small, _ := os.ReadFile(gateFile("missing_cursor"))
	if err := os.WriteFile(path, small, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Advance(path); err != nil {
		t.Fatal(err)
	}
	if s.Tokens() != 17125 || s.CursorSeen || s.Cursor != "tools-0008" {
		t.Fatalf("after the replacement: %+v", s)
	}
	if d := sessionmem.Decide(sessionmem.Thresholds{}, true, 0, &s); d.ToolCalls != 0 || d.Reason != sessionmem.SkipToolCalls {
		t.Fatalf("decision %+v", d)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
