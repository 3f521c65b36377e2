package secretscan

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	gitleaksregexp "github.com/zricethezav/gitleaks/v8/regexp"
)

// corpusSize is roughly how much text BenchmarkScan scans per iteration.
const corpusSize = 1 << 20

// corpusUnit returns realistic memory text holding many secrets: every
// memory file of set followed by every true-positive sample.
func corpusUnit(set sampleSet) string {
	var b strings.Builder
	for _, path := range slices.Sorted(maps.Keys(set.memdir)) {
		b.WriteString(set.memdir[path])
		b.WriteString("\n")
	}
	for _, smp := range set.tp {
		b.WriteString(smp.text)
		b.WriteString("\n")
	}
	return b.String()
}

// corpus repeats the corpus unit of set up to about corpusSize bytes.
func corpus(set sampleSet) string {
	unit := corpusUnit(set)
	return strings.Repeat(unit, (corpusSize+len(unit)-1)/len(unit))
}

// TestEngineDigest logs a digest of every finding on the corpus and on each
// sample and memory file. Run it with and without -tags gore2regex (go test
// -v -run Digest) to check that both regexp engines find exactly the same
// things.
func TestEngineDigest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: scans the corpus, a few seconds with the stdlib engine")
	}
	forEachSet(t, func(t *testing.T, set sampleSet) {
		s := mustScanner(t)
		h := sha256.New()
		record := func(name string, fs []Finding) {
			out, err := json.Marshal(fs)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "%s\t%s\n", name, out)
		}
		// One corpus unit is enough here: the benchmark corpus only repeats it,
		// and with the stdlib engine a whole megabyte takes over a minute.
		found := s.Scan(corpusUnit(set), nil)
		record("corpus", found)
		for _, smp := range append(append([]sample(nil), set.tp...), set.fp...) {
			record(smp.where, s.Scan(smp.text, nil))
		}
		for _, path := range slices.Sorted(maps.Keys(set.memdir)) {
			record(path, s.Scan(set.memdir[path], nil))
		}
		if len(found) == 0 {
			t.Error("no findings in the corpus")
		}
		t.Logf("engine %s: %d corpus findings, digest %x", gitleaksregexp.Version, len(found), h.Sum(nil))
	})
}

// forEachSetB is forEachSet for benchmarks.
func forEachSetB(b *testing.B, f func(b *testing.B, set sampleSet)) {
	b.Run("testdata", func(b *testing.B) { f(b, testdataSet(b)) })
	b.Run("real-world", func(b *testing.B) { f(b, fixtureSet(b)) })
}

// BenchmarkScan measures scanning throughput; -tags gore2regex switches
// gitleaks to the WebAssembly RE2 engine.
func BenchmarkScan(b *testing.B) {
	forEachSetB(b, func(b *testing.B, set sampleSet) {
		s := mustScanner(b)
		text := corpus(set)
		b.SetBytes(int64(len(text)))
		var n int
		for b.Loop() {
			n = len(s.Scan(text, nil))
		}
		b.ReportMetric(float64(n), "findings")
	})
}

// BenchmarkScanFiles measures the everyday case: memory files scanned one at
// a time, so gitleaks' keyword prefilter skips most rules for each file.
func BenchmarkScanFiles(b *testing.B) {
	forEachSetB(b, func(b *testing.B, set sampleSet) {
		s := mustScanner(b)
		size := 0
		for _, content := range set.memdir {
			size += len(content)
		}
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, content := range set.memdir {
				s.Scan(content, nil)
			}
		}
	})
}

// BenchmarkScanFilesUnicode is BenchmarkScanFiles at the views' worst
// case: each file has a zero-width and a no-break space after every "e", so
// it is rewritten twice and scanned twice (see normalize.go).
func BenchmarkScanFilesUnicode(b *testing.B) {
	forEachSetB(b, func(b *testing.B, set sampleSet) {
		s := mustScanner(b)
		var files []string
		size := 0
		for _, content := range set.memdir {
			files = append(files, strings.ReplaceAll(content, "e ", "e\u200b\u00a0"))
			size += len(content)
		}
		b.SetBytes(int64(size)) // the original bytes, comparable with BenchmarkScanFiles
		for b.Loop() {
			for _, content := range files {
				s.Scan(content, nil)
			}
		}
	})
}

// BenchmarkViews measures the normalising pass alone, what Scan adds to
// gitleaks' own work: on the benchmark corpus (plain, so it only surveys)
// and on the corpus of BenchmarkScanFilesUnicode (both views built).
func BenchmarkViews(b *testing.B) {
	forEachSetB(b, func(b *testing.B, set sampleSet) {
		text := corpus(set)
		for name, text := range map[string]string{"plain": text, "unicode": strings.ReplaceAll(text, "e ", "e\u200b\u00a0")} {
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					views(text)
				}
			})
		}
	})
}

// BenchmarkBuild measures the one-off cost of compiling the default rules,
// which New pays on its first call.
func BenchmarkBuild(b *testing.B) {
	for b.Loop() {
		if _, err := build(true); err != nil {
			b.Fatal(err)
		}
	}
}
