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
)

// sample is one fixture string and the rule it is about.
type sample struct {
	ruleID string
	text   string
	// where names the fixture file and row, for failure messages.
	where string
}

// fixturesDir returns the shared fixtures directory: $TEAMMEM_FIXTURES, or
// ../../../shared/fixtures since the repository is cloned next to shared/.
// Without either the test is skipped; a set but missing variable fails.
func fixturesDir(tb testing.TB) string {
	tb.Helper()
	if dir := os.Getenv("TEAMMEM_FIXTURES"); dir != "" {
		if _, err := os.Stat(dir); err != nil {
			tb.Fatalf("TEAMMEM_FIXTURES: %v", err)
		}
		return dir
	}
	dir := filepath.Join("..", "..", "..", "shared", "fixtures")
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("no fixtures at %s and TEAMMEM_FIXTURES unset", dir)
	}
	return dir
}

// mustReadTSV reads a rule_id<TAB>sample file under fixtures/secrets,
// skipping its header row.
func mustReadTSV(tb testing.TB, name string) []sample {
	tb.Helper()
	path := filepath.Join(fixturesDir(tb), "secrets", name)
	data, err := os.ReadFile(path)
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
func mustReadJSONL(tb testing.TB, name string) []sample {
	tb.Helper()
	f, err := os.Open(filepath.Join(fixturesDir(tb), "secrets", name))
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

// mustReadMemdirs returns every file under fixtures/memdirs by its path
// relative to that directory.
func mustReadMemdirs(tb testing.TB) map[string]string {
	tb.Helper()
	root := filepath.Join(fixturesDir(tb), "memdirs")
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
