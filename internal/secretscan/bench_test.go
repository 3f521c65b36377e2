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

// mustCorpusUnit returns realistic memory text holding many secrets: every
// memdir fixture file followed by every true-positive sample.
func mustCorpusUnit(tb testing.TB) string {
	tb.Helper()
	files := mustReadMemdirs(tb)
	var b strings.Builder
	for _, path := range slices.Sorted(maps.Keys(files)) {
		b.WriteString(files[path])
		b.WriteString("\n")
	}
	for _, smp := range append(mustReadTSV(tb, "tp.tsv"), mustReadJSONL(tb, "tp_multiline.jsonl")...) {
		b.WriteString(smp.text)
		b.WriteString("\n")
	}
	return b.String()
}

// mustCorpus repeats the corpus unit up to about corpusSize bytes.
func mustCorpus(tb testing.TB) string {
	tb.Helper()
	unit := mustCorpusUnit(tb)
	return strings.Repeat(unit, (corpusSize+len(unit)-1)/len(unit))
}

// TestEngineDigest logs a digest of every finding on the corpus and on each
// fixture. Run it with and without -tags gore2regex (go test -v -run Digest)
// to check that both regexp engines find exactly the same things.
func TestEngineDigest(t *testing.T) {
	if testing.Short() {
		t.Skip("scans the corpus; a few seconds with the stdlib engine")
	}
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
	corpus := s.Scan(mustCorpusUnit(t), nil)
	record("corpus", corpus)
	samples := mustReadTSV(t, "tp.tsv")
	samples = append(samples, mustReadJSONL(t, "tp_multiline.jsonl")...)
	samples = append(samples, mustReadTSV(t, "fp.tsv")...)
	for _, smp := range samples {
		record(smp.where, s.Scan(smp.text, nil))
	}
	files := mustReadMemdirs(t)
	for _, path := range slices.Sorted(maps.Keys(files)) {
		record(path, s.Scan(files[path], nil))
	}
	t.Logf("engine %s: %d corpus findings, digest %x", gitleaksregexp.Version, len(corpus), h.Sum(nil))
}

// BenchmarkScan measures scanning throughput; -tags gore2regex switches
// gitleaks to the WebAssembly RE2 engine.
func BenchmarkScan(b *testing.B) {
	s := mustScanner(b)
	corpus := mustCorpus(b)
	b.SetBytes(int64(len(corpus)))
	var n int
	for b.Loop() {
		n = len(s.Scan(corpus, nil))
	}
	b.ReportMetric(float64(n), "findings")
}

// BenchmarkScanFiles measures the everyday case: memory files scanned one at
// a time, so gitleaks' keyword prefilter skips most rules for each file.
func BenchmarkScanFiles(b *testing.B) {
	s := mustScanner(b)
	files := mustReadMemdirs(b)
	size := 0
	for _, content := range files {
		size += len(content)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, content := range files {
			s.Scan(content, nil)
		}
	}
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
