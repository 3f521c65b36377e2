package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	gitleaksregexp "github.com/zricethezav/gitleaks/v8/regexp"

	"github.com/teammem/teammem/internal/secretscan"
)

// The scan comparison: our scanner, in process, against the gitleaks CLI
// on the same files, both with gitleaks' default rules, decoding depth 5
// and gitleaks:allow comments ignored. The corpus is the fixture memory
// directory repeated to the wanted size, with one true-positive sample
// appended to one file of each copy, so both must report the same findings.

// corpusFile is one file of the scan corpus.
type corpusFile struct {
	rel     string
	content string
}

// buildCorpus writes about mb megabytes of memory files under dir and
// returns them, plus one copy of the memory directory alone.
func buildCorpus(fixtures, dir string, mb float64) (corpus, memdir []corpusFile, err error) {
	memdir, err = readTree(filepath.Join(fixtures, "memdirs"))
	if err != nil {
		return nil, nil, err
	}
	samples, err := readTP(filepath.Join(fixtures, "secrets", "tp.tsv"))
	if err != nil {
		return nil, nil, err
	}
	size := 0
	for copyN := 0; float64(size) < mb*(1<<20); copyN++ {
		for i, f := range memdir {
			c := f.content
			if i == copyN%len(memdir) {
				c += "\n" + samples[copyN%len(samples)] + "\n"
			}
			rel := filepath.Join(fmt.Sprintf("copy-%03d", copyN), f.rel)
			if err := writeFile(filepath.Join(dir, rel), c); err != nil {
				return nil, nil, err
			}
			corpus = append(corpus, corpusFile{rel: rel, content: c})
			size += len(c)
		}
	}
	return corpus, memdir, nil
}

// readTree returns every file under root.
func readTree(root string) ([]corpusFile, error) {
	var out []corpusFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out = append(out, corpusFile{rel: rel, content: string(b)})
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("no files under %s", root)
	}
	return out, err
}

// readTP returns the samples of tp.tsv (rule_id<TAB>sample, header row).
func readTP(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if _, sample, ok := strings.Cut(line, "\t"); ok && i > 0 {
			out = append(out, sample)
		}
	}
	return out, nil
}

// writeFile writes content to path, creating its directories.
func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// findingKey identifies a finding the way secretscan reports one.
type findingKey struct {
	file, rule string
	line       int
}

// scanOurs scans files with workers goroutines and returns the time taken
// and the findings by rule id.
func scanOurs(sc *secretscan.Scanner, files []corpusFile, workers int) (time.Duration, map[string]int) {
	counts := make([]map[string]int, workers)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		counts[w] = map[string]int{}
		wg.Go(func() {
			for i := w; i < len(files); i += workers {
				for _, f := range sc.Scan(files[i].content, nil) {
					counts[w][f.RuleID]++
				}
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	total := map[string]int{}
	for _, c := range counts {
		for k, v := range c {
			total[k] += v
		}
	}
	return d, total
}

// runGitleaks runs the CLI on dir and returns its wall time and, when
// report is set, the distinct (file, rule, line) findings by rule id.
func runGitleaks(ctx context.Context, bin, dir, report string) (time.Duration, map[string]int, error) {
	args := []string{"dir", dir, "--no-banner", "--exit-code", "0", "--ignore-gitleaks-allow", "--max-decode-depth", "5",
		"--log-level", "error", "--report-format", "json", "--report-path", report}
	start := time.Now()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return d, nil, fmt.Errorf("gitleaks: %v\n%s", err, out)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		return d, nil, err
	}
	var found []struct {
		RuleID, File string
		StartLine    int
	}
	if err := json.Unmarshal(b, &found); err != nil {
		return d, nil, fmt.Errorf("gitleaks report: %w", err)
	}
	seen := map[findingKey]bool{}
	counts := map[string]int{}
	for _, f := range found {
		k := findingKey{f.File, f.RuleID, f.StartLine}
		if !seen[k] {
			seen[k] = true
			counts[f.RuleID]++
		}
	}
	return d, counts, nil
}

// runScan compares MB/s and findings.
func (b *bench) runScan(ctx context.Context) error {
	fixtures, err := b.fixturesDir()
	switch {
	case err != nil:
		b.rep.note("secret scan skipped: %v", err)
		return nil
	case fixtures == "":
		b.rep.note("secret scan skipped: no fixtures (set TEAMMEM_FIXTURES or --fixtures)")
		return nil
	case b.bins.leaksErr != nil:
		b.rep.note("secret scan skipped: %v", b.bins.leaksErr)
		return nil
	}
	if gitleaksregexp.Version == "stdlib" {
		b.rep.note("the bench was built without -tags gore2regex: our scanner ran on the stdlib engine, not the shipped one")
	}
	dir, empty := filepath.Join(b.tmp, "scan-corpus"), filepath.Join(b.tmp, "scan-empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return err
	}
	corpus, memdir, err := buildCorpus(fixtures, dir, b.opt.scanMB)
	if err != nil {
		return err
	}
	t0 := time.Now()
	sc, err := secretscan.New()
	if err != nil {
		return err
	}
	// The first New in this process compiles the rules, as every client
	// command and server start does.
	b.rep.set("scanner_build_ms", float64(time.Since(t0))/float64(time.Millisecond))
	mb := float64(treeBytes(corpus)) / (1 << 20)
	logf("scan corpus: %d files, %.2f MB", len(corpus), mb)
	oursDur, singleDur, oursFound := b.timeOurs(sc, corpus)
	leaksDur, leaksFound, err := b.timeGitleaks(ctx, dir, empty)
	if err != nil {
		return err
	}
	ours, leaks := mb/oursDur.Seconds(), mb/leaksDur.Seconds()
	b.rep.set("scan_corpus_mb", mb)
	b.rep.set("scan_mb_s", ours)
	b.rep.set("scan_gitleaks_mb_s", leaks)
	b.rep.set("scan_single_thread_mb_s", mb/singleDur.Seconds())
	b.rep.compare("secret scan MB/s vs gitleaks CLI", "scan_ratio", ours, leaks, "MB/s", atLeast(3))
	b.compareFindings(oursFound, leaksFound)
	changed := timeChangedOnly(sc, memdir)
	dirMB := float64(treeBytes(memdir)) / (1 << 20)
	b.rep.set("scan_changed_entry_ms", float64(changed)/float64(time.Millisecond))
	b.rep.compare(fmt.Sprintf("scan of a push, 1 of %d entries changed (effective MB/s)", len(memdir)), "scan_changed_ratio",
		dirMB/changed.Seconds(), leaks, "MB/s", none)
	return nil
}

// timeOurs returns the best time of our scanner on corpus with one worker
// per CPU (as gitleaks runs) and with one worker, and the findings. Best of
// a few runs: on a shared machine the fastest run is the least disturbed,
// and the first one also pays go-re2's start of a module per goroutine.
func (b *bench) timeOurs(sc *secretscan.Scanner, corpus []corpusFile) (parallel, single time.Duration, found map[string]int) {
	for i := range max(2, b.opt.rounds) {
		d, f := scanOurs(sc, corpus, runtime.GOMAXPROCS(0))
		d1, _ := scanOurs(sc, corpus, 1)
		if i == 0 || d < parallel {
			parallel, found = d, f
		}
		if i == 0 || d1 < single {
			single = d1
		}
	}
	return parallel, single, found
}

// timeGitleaks times the CLI on dir minus its time on an empty directory
// (startup and rule compilation), each the best of a few runs.
func (b *bench) timeGitleaks(ctx context.Context, dir, empty string) (time.Duration, map[string]int, error) {
	report := filepath.Join(b.tmp, "gitleaks.json")
	var full, idle []float64
	var found map[string]int
	for range max(2, b.opt.rounds) {
		d0, _, err := runGitleaks(ctx, b.bins.gitleaks, empty, report)
		if err != nil {
			return 0, nil, err
		}
		d1, f, err := runGitleaks(ctx, b.bins.gitleaks, dir, report)
		if err != nil {
			return 0, nil, err
		}
		idle, full, found = append(idle, d0.Seconds()), append(full, d1.Seconds()), f
	}
	b.rep.set("scan_gitleaks_startup_ms", slices.Min(idle)*1000)
	scan := slices.Min(full) - slices.Min(idle)
	if scan <= 0 {
		return 0, nil, fmt.Errorf("gitleaks took no longer on the corpus than on an empty directory; use a larger --scan-mb")
	}
	return time.Duration(scan * float64(time.Second)), found, nil
}

// compareFindings checks that both scanners found the same things.
func (b *bench) compareFindings(ours, leaks map[string]int) {
	sum := func(m map[string]int) (n int) {
		for _, v := range m {
			n += v
		}
		return n
	}
	b.rep.set("scan_findings", sum(ours))
	b.rep.set("scan_gitleaks_findings", sum(leaks))
	same := maps.Equal(ours, leaks)
	b.rep.set("scan_findings_match", same)
	if !same {
		var diff []string
		for _, r := range slices.Sorted(maps.Keys(mergeKeys(ours, leaks))) {
			if ours[r] != leaks[r] {
				diff = append(diff, fmt.Sprintf("%s ours %d gitleaks %d", r, ours[r], leaks[r]))
			}
		}
		b.rep.note("secret scan findings differ: %s", strings.Join(diff, "; "))
	}
	b.rep.addRow(row{name: "secret scan findings (ours / gitleaks)", ours: fmt.Sprint(sum(ours)), baseline: fmt.Sprint(sum(leaks)),
		ratio: "-"}, "scan_findings_match", boolValue(same), target{"=", 1})
}

// mergeKeys returns the keys of a and b.
func mergeKeys(a, b map[string]int) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// timeChangedOnly returns how long the server's scan of one push takes when
// one entry of memdir changed: one Scan of a median-sized file.
func timeChangedOnly(sc *secretscan.Scanner, memdir []corpusFile) time.Duration {
	files := slices.Clone(memdir)
	sort.Slice(files, func(i, j int) bool { return len(files[i].content) < len(files[j].content) })
	f := files[len(files)/2]
	const n = 50
	start := time.Now()
	for i := range n {
		sc.Scan(f.content+fmt.Sprintf("\n%d\n", i), nil) // changed content each time, as a push
	}
	return time.Since(start) / n
}

// treeBytes returns the total size of files.
func treeBytes(files []corpusFile) (n int) {
	for _, f := range files {
		n += len(f.content)
	}
	return n
}
