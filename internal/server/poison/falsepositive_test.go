package poison

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/testing/fixtures"
)

// ownMemoryDirs are the repository's own memory directories (written by us):
// every file is a legitimate memory, so every finding is a false positive.
var ownMemoryDirs = []string{
	"../../teammem/testdata/memory",
	"../../../cmd/client/testdata/memory",
}

// scanDir runs the checker on every Markdown file under dir and returns
// the finding count per rule and the number of files read.
func scanDir(t *testing.T, dir string) (map[string]int, int) {
	t.Helper()
	counts := map[string]int{}
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(dir, path)
		for _, f := range (Checker{}).CheckEntry(filepath.ToSlash(rel), string(b)) {
			counts[f.RuleID]++
			t.Logf("%s:%d: %s", rel, f.Line, f.RuleID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts, files
}

// report logs one line per rule, zero counts included, for the closing note.
func report(t *testing.T, what string, counts map[string]int, files int) {
	t.Helper()
	ids := make([]string, 0, len(Rules()))
	for _, r := range Rules() {
		ids = append(ids, r.ID)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		b.WriteString("\n  " + id + ": " + strconv.Itoa(counts[id]))
	}
	t.Logf("false positives on %s (%d files):%s", what, files, b.String())
}

// TestNoFalsePositivesOnOwnTestdata holds every rule to zero findings on
// the repository's own memory test data.
func TestNoFalsePositivesOnOwnTestdata(t *testing.T) {
	total := map[string]int{}
	files := 0
	for _, dir := range ownMemoryDirs {
		c, n := scanDir(t, dir)
		files += n
		for k, v := range c {
			total[k] += v
		}
	}
	report(t, "the repository's memory testdata", total, files)
	if files == 0 {
		t.Fatal("no memory files found in the repository's testdata")
	}
	for id, n := range total {
		t.Errorf("rule %s: %d false positives on the repository's own memory files", id, n)
	}
}

// TestFalsePositivesOnFixtures holds every rule to zero findings on
// real-world memory directories (shared/fixtures/memdirs), as issue 21
// point 8 asks of the broadened rules.
func TestFalsePositivesOnFixtures(t *testing.T) {
	dir := fixtures.Path(t, "memdirs")
	counts, files := scanDir(t, dir)
	report(t, "shared/fixtures/memdirs", counts, files)
	for id, n := range counts {
		t.Errorf("rule %s fired %d times on %d real memory files", id, n, files)
	}
}
