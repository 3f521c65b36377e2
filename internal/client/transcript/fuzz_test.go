package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/teammem/teammem/internal/testing/fixtures"
)

// FuzzParseLine feeds arbitrary lines to ParseLine and everything downstream of it: the
// Reader (the same bytes as a whole file), Stats, the message helpers and the prose and
// prompt predicates. None may panic, and a parsed record always has a type.
func FuzzParseLine(f *testing.F) {
	for _, seed := range []string{
		userLine, asstLine, "", "{", "\xef\xbb\xbf{}", `{"type":5}`, `{"type":"x","message":[]}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":1}]}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"MultiEdit","input":{"edits":[{"old_string":"a\n"}]}}]}}`,
		`{"type":"user","message":{"content":"<command-name>/x</command-name><command-args>` + "\xff" + `</command-args>"}}`,
		`{"type":"system","subtype":"compact_boundary","compactMetadata":{"preTokens":1e400}}`,
	} {
		f.Add([]byte(seed))
	}
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := ParseLine(line)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
		} else if rec.Type == "" {
			t.Fatal("parsed record without type")
		}
		st := NewStats()
		st.Add(&rec)
		_ = st.Summary()
		_ = Merge([]Record{rec, rec})
		msg := newMessage(&rec)
		_ = HasProse([]Message{msg})
		_ = WritesMemory([]Message{msg}, func(string) bool { return true })
		for _, b := range rec.Content {
			_, _ = EditLines(b.Name, b.Input)
		}
		display, _, _ := promptCandidate(string(line))
		if utf8.ValidString(string(line)) && !utf8.ValidString(display) {
			t.Fatalf("prompt display %q is not valid UTF-8", display)
		}

		sum, err := SummarizeReader(bytes.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		if r := sum.Read; r.Records+r.Blank+r.Malformed+r.Oversized != r.Lines {
			t.Fatalf("line accounting %+v", r)
		}
	})
}

// addFixtureSeeds adds the first lines of the testdata transcripts as seeds, and of some
// real-world ones when the fixtures are present. Without them the fuzz test still runs on the
// rest, so it looks them up without skipping.
func addFixtureSeeds(f *testing.F) {
	paths := []string{tdPath(tdLegacy), tdPath(tdInterrupted), tdPath(tdV2), tdChild}
	if dir, err := fixtures.Find(); err == nil {
		for _, name := range []string{fxSmall, fxAgentChild, fxSniffly} {
			paths = append(paths, filepath.Join(dir, "transcripts", name))
		}
	} else if !errors.Is(err, fixtures.ErrNotFound) {
		f.Fatal(err)
	}
	for _, p := range paths {
		file, err := os.Open(p)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(file)
		sc.Buffer(nil, 1<<20)
		for i := 0; i < 40 && sc.Scan(); i++ {
			f.Add(append([]byte(nil), sc.Bytes()...))
		}
		_ = file.Close()
	}
}

// TestLineAccounting checks the invariant the fuzzer relies on over a messy input.
func TestLineAccounting(t *testing.T) {
	t.Parallel()
	input := "\xef\xbb\xbf" + userLine + "\n\nbad\n" + asstLine + "\r\n{\"type\":\"zz\"}\n{\"type\":"
	rd := NewReader(bytes.NewReader([]byte(input)))
	_, r := mustReadAll(t, rd)
	if r.Records+r.Blank+r.Malformed+r.Oversized != r.Lines || r.Lines != 6 || !r.Truncated || r.Unknown != 1 {
		t.Fatalf("stats %+v", r)
	}
	if _, err := rd.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("Next after EOF = %v", err)
	}
}
