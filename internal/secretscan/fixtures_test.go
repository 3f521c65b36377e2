package secretscan

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/testing/fixtures"
	"github.com/teammem/teammem/internal/testing/secrettest"
)

// sample is one fixture string and the rule it is about.
type sample struct {
	ruleID string
	text   string
	// where names the fixture file and row, for failure messages.
	where string
}

// sampleSet is what the scanner tests run on: true positives (one line or several),
// false positives for the rule they name, and realistic memory files that must come out
// clean.
type sampleSet struct {
	tp, fp []sample
	memdir map[string]string // file contents by path
	real   bool              // the real-world fixtures, not the repository's own samples
}

// forEachSet runs f on the repository's own samples (secrettest and testdata/memory) and,
// in a second subtest that skips without them, on the real-world fixtures.
func forEachSet(t *testing.T, f func(t *testing.T, set sampleSet)) {
	t.Helper()
	t.Run("testdata", func(t *testing.T) { f(t, testdataSet(t)) })
	t.Run("real-world", func(t *testing.T) { f(t, fixtureSet(t)) })
}

// testdataSet returns the repository's own samples.
func testdataSet(tb testing.TB) sampleSet {
	tb.Helper()
	convert := func(in []secrettest.Sample) []sample {
		out := make([]sample, len(in))
		for i, s := range in {
			out[i] = sample{ruleID: s.RuleID, text: s.Text, where: s.Where}
		}
		return out
	}
	return sampleSet{
		tp:     convert(secrettest.TruePositives()),
		fp:     convert(secrettest.FalsePositives()),
		memdir: mustReadTree(tb, filepath.Join("testdata", "memory")),
	}
}

// fixtureSet returns the real-world samples, skipping tb when the fixtures are absent.
func fixtureSet(tb testing.TB) sampleSet {
	tb.Helper()
	dir := fixtures.Dir(tb)
	return sampleSet{
		tp:     append(mustReadTSV(tb, dir, "tp.tsv"), mustReadJSONL(tb, dir, "tp_multiline.jsonl")...),
		fp:     mustReadTSV(tb, dir, "fp.tsv"),
		memdir: mustReadTree(tb, filepath.Join(dir, "memdirs")),
		real:   true,
	}
}

// mustReadTSV reads a rule_id<TAB>sample file under fixtures/secrets,
// skipping its header row.
func mustReadTSV(tb testing.TB, dir, name string) []sample {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "secrets", name))
	if err != nil {
		tb.Fatal(err)
	}
	var out []sample
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for i, line := range lines[1:] {
		id, text, ok := strings.Cut(line, "\t")
		if !ok {
			tb.Fatalf("%s row %d: no tab", name, i+2)
		}
		out = append(out, sample{ruleID: id, text: text, where: fmt.Sprintf("%s row %d", name, i+2)})
	}
	return out
}

// mustReadJSONL reads tp_multiline.jsonl under fixtures/secrets.
func mustReadJSONL(tb testing.TB, dir, name string) []sample {
	tb.Helper()
	f, err := os.Open(filepath.Join(dir, "secrets", name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for row := 1; sc.Scan(); row++ {
		var rec struct {
			RuleID string `json:"rule_id"`
			Sample string `json:"sample"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatalf("%s row %d: %v", name, row, err)
		}
		out = append(out, sample{ruleID: rec.RuleID, text: rec.Sample, where: fmt.Sprintf("%s row %d", name, row)})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// mustReadTree returns every file under root by its slash-separated path relative to root.
func mustReadTree(tb testing.TB, root string) map[string]string {
	tb.Helper()
	files := make(map[string]string)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatalf("no files under %s", root)
	}
	return files
}

// mustScanner returns the shared Scanner or fails the test.
func mustScanner(tb testing.TB) *Scanner {
	tb.Helper()
	s, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// ruleIDs returns the ids of every rule s applies.
func (s *Scanner) ruleIDs() map[string]bool {
	ids := make(map[string]bool, len(s.det.Config.Rules))
	for id := range s.det.Config.Rules {
		ids[id] = true
	}
	return ids
}
