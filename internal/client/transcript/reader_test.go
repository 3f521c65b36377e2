package transcript

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// mustReadAll drains a Reader over input and returns its records and stats.
func mustReadAll(tb testing.TB, rd *Reader) ([]Record, ReadStats) {
	tb.Helper()
	var recs []Record
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return recs, rd.Stats()
		}
		if err != nil {
			tb.Fatalf("Next: %v", err)
		}
		recs = append(recs, rec)
	}
}

// recordTypes lists the types of recs.
func recordTypes(recs []Record) string {
	var s []string
	for _, r := range recs {
		s = append(s, string(r.Type))
	}
	return strings.Join(s, ",")
}

const (
	userLine = `{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}`
	asstLine = `{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hello"}]}}`
)

func TestReaderTolerance(t *testing.T) {
	long := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 200<<10) + `"}}`
	tests := []struct {
		name  string
		input string
		types string // types of the records returned, in order
		stats ReadStats
	}{
		{"empty", "", "", ReadStats{}},
		{"bom", "\xef\xbb\xbf" + userLine + "\n" + asstLine + "\n", "user,assistant",
			ReadStats{Lines: 2, Records: 2}},
		{"blank lines and crlf", "\n" + userLine + "\r\n   \r\n\t\n" + asstLine + "\r\n\n", "user,assistant",
			ReadStats{Lines: 6, Records: 2, Blank: 4}},
		{"bom only line", "\xef\xbb\xbf\n" + userLine + "\n", "user", ReadStats{Lines: 2, Records: 1, Blank: 1}},
		{"malformed lines", "{not json\n" + userLine + "\n[1,2]\n\"str\"\nnull\n{}\n{\"type\":5}\n{\"type\":\"\"}\n" +
			"{\"type\":\"user\"}}\n" + asstLine + "\n", "user,assistant",
			ReadStats{Lines: 10, Records: 2, Malformed: 8}},
		{"truncated final line", userLine + "\n" + asstLine[:40], "user",
			ReadStats{Lines: 2, Records: 1, Malformed: 1, Truncated: true}},
		{"unterminated but complete final line", userLine + "\n" + asstLine, "user,assistant",
			ReadStats{Lines: 2, Records: 2}},
		{"malformed line in the middle is not truncation", "{\"type\":\n" + userLine, "user",
			ReadStats{Lines: 2, Records: 1, Malformed: 1}},
		{"unknown type passed through", `{"type":"frame-link","sessionId":"s"}` + "\n" + userLine + "\n",
			"frame-link,user", ReadStats{Lines: 2, Records: 2, Unknown: 1}},
		{"line longer than the read buffer", long + "\n" + userLine + "\n", "user,user",
			ReadStats{Lines: 2, Records: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			recs, stats := mustReadAll(t, NewReader(strings.NewReader(tt.input)))
			if got := recordTypes(recs); got != tt.types {
				t.Errorf("types = %q, want %q", got, tt.types)
			}
			if stats != tt.stats {
				t.Errorf("stats = %+v, want %+v", stats, tt.stats)
			}
			// The same input delivered one byte at a time must read the same.
			recs, stats = mustReadAll(t, NewReader(iotest.OneByteReader(strings.NewReader(tt.input))))
			if got := recordTypes(recs); got != tt.types || stats != tt.stats {
				t.Errorf("one byte at a time: types %q stats %+v", got, stats)
			}
		})
	}
}

func TestReaderOversizedLines(t *testing.T) {
	big := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("y", 300<<10) + `"}}`
	small := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("y", 100) + `"}}`
	tests := []struct {
		name  string
		max   int
		input string
		types string
		stats ReadStats
	}{
		{"skipped in the middle", 1000, userLine + "\n" + big + "\n" + asstLine + "\n", "user,assistant",
			ReadStats{Lines: 3, Records: 2, Oversized: 1}},
		{"skipped at the end without newline", 1000, userLine + "\n" + big, "user",
			ReadStats{Lines: 2, Records: 1, Oversized: 1}},
		{"short line over a tiny cap", 100, small + "\n" + strings.Repeat(" ", 50) + "\n", "",
			ReadStats{Lines: 2, Oversized: 1, Blank: 1}},
		{"exactly at the cap", len(small), small + "\n" + small, "user,user", ReadStats{Lines: 2, Records: 2}},
		{"one over the cap", len(small) - 1, small + "\n" + small, "", ReadStats{Lines: 2, Oversized: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rd := NewReader(strings.NewReader(tt.input))
			rd.SetMaxLineSize(tt.max)
			recs, stats := mustReadAll(t, rd)
			if got := recordTypes(recs); got != tt.types || stats != tt.stats {
				t.Errorf("types %q stats %+v, want %q %+v", got, stats, tt.types, tt.stats)
			}
		})
	}
}

func TestReaderReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	rd := NewReader(io.MultiReader(strings.NewReader(userLine+"\n"), iotest.ErrReader(boom)))
	if rec, err := rd.Next(); err != nil || rec.Type != TypeUser {
		t.Fatalf("first Next = %v, %v", rec.Type, err)
	}
	for range 2 { // the error is sticky
		if _, err := rd.Next(); !errors.Is(err, boom) {
			t.Fatalf("Next error = %v, want %v", err, boom)
		}
	}
}

func TestReaderLineNumbers(t *testing.T) {
	t.Parallel()
	recs, _ := mustReadAll(t, NewReader(strings.NewReader("\n"+userLine+"\nbad\n"+asstLine+"\n")))
	if len(recs) != 2 || recs[0].Line != 2 || recs[1].Line != 4 {
		t.Fatalf("lines = %+v", recs)
	}
}

func TestOpenMissing(t *testing.T) {
	t.Parallel()
	if _, err := Open(t.TempDir() + "/nope.jsonl"); err == nil {
		t.Fatal("Open of a missing file succeeded")
	}
	if _, err := Summarize(t.TempDir() + "/nope.jsonl"); err == nil {
		t.Fatal("Summarize of a missing file succeeded")
	}
}
