package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json), the fields we read.
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events name the package this way
	Test       string
	Output     string
}

// testKey names a test within the run.
type testKey struct{ pkg, test string }

// Skip is a skipped test and the reason it gave.
type Skip struct {
	Package, Test, Reason string
}

// Report follows a `go test -json` stream: it writes what plain `go test` would show (each
// package's closing line, and the whole output of failing tests) and counts tests by
// outcome, skips by reason.
type Report struct {
	out   io.Writer
	trim  string               // import path prefix left out of package names
	buf   map[testKey][]string // output of tests still running
	Skips []Skip
	// Failed lists the failing tests as "package TestName".
	Failed []string
	// Passed, FailedN and Skipped count tests and subtests by outcome.
	Passed, FailedN, Skipped int
	// Packages counts packages by outcome: "ok", "fail", "skip" (no test files), and
	// packages that failed with no failing test (a build failure, a panic outside a test,
	// a timeout) as "broken".
	Packages map[string]int
	failedIn map[string]int // failing tests per package
}

// NewReport returns a Report writing to out; trim is removed from the front of package paths
// in the summary.
func NewReport(out io.Writer, trim string) *Report {
	return &Report{out: out, trim: trim, buf: map[testKey][]string{}, Packages: map[string]int{}, failedIn: map[string]int{}}
}

// Line handles one line of go test's output: a JSON event, or anything else (the go
// command's own messages), which is written as it is.
func (r *Report) Line(line string) {
	var ev event
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &ev) != nil || ev.Action == "" {
		fmt.Fprintln(r.out, line)
		return
	}
	r.event(ev)
}

// event handles one test2json event.
func (r *Report) event(ev event) {
	switch {
	case ev.Action == "build-output":
		fmt.Fprint(r.out, ev.Output)
	case ev.Test == "":
		r.packageEvent(ev)
	default:
		r.testEvent(ev)
	}
}

// packageEvent handles an event of a package as a whole.
func (r *Report) packageEvent(ev event) {
	switch ev.Action {
	case "output":
		// The per-package verdict lines ("ok", "FAIL", "?") and anything a test binary
		// printed outside a test; "PASS" only repeats the "ok" line.
		if ev.Output != "PASS\n" {
			fmt.Fprint(r.out, ev.Output)
		}
	case "pass":
		r.Packages["ok"]++
		r.drop(ev.Package, false)
	case "skip":
		r.Packages["skip"]++
		r.drop(ev.Package, false)
	case "fail":
		r.Packages["fail"]++
		if r.failedIn[ev.Package] == 0 {
			r.Packages["broken"]++
		}
		r.drop(ev.Package, true) // a test cut short by a panic or timeout: show what it said
	}
}

// testEvent handles an event of one test or subtest.
func (r *Report) testEvent(ev event) {
	k := testKey{ev.Package, ev.Test}
	switch ev.Action {
	case "output":
		r.buf[k] = append(r.buf[k], ev.Output)
	case "pass":
		r.Passed++
		if strings.HasPrefix(ev.Test, "Benchmark") {
			r.print(r.buf[k]) // a benchmark's result is its output
		}
		delete(r.buf, k)
	case "skip":
		r.Skipped++
		r.Skips = append(r.Skips, Skip{Package: r.short(ev.Package), Test: ev.Test, Reason: SkipReason(r.buf[k])})
		delete(r.buf, k)
	case "fail":
		r.FailedN++
		r.failedIn[ev.Package]++
		r.Failed = append(r.Failed, r.short(ev.Package)+" "+ev.Test)
		r.print(r.buf[k])
		delete(r.buf, k)
	}
}

// drop forgets the output of tests of pkg that never ended, printing it first when show.
func (r *Report) drop(pkg string, show bool) {
	var keys []testKey
	for k := range r.buf {
		if k.pkg == pkg {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b testKey) int { return strings.Compare(a.test, b.test) })
	for _, k := range keys {
		if show {
			r.print(r.buf[k])
		}
		delete(r.buf, k)
	}
}

// print writes a test's output without the "=== RUN" and similar progress lines that
// only -v output has.
func (r *Report) print(lines []string) {
	for _, l := range lines {
		if !isProgress(l) {
			fmt.Fprint(r.out, l)
		}
	}
}

// isProgress reports whether l is one of the lines go test -v prints as tests start, pause
// and resume.
func isProgress(l string) bool {
	for _, p := range []string{"=== RUN ", "=== PAUSE ", "=== CONT ", "=== NAME "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// short returns pkg without the trim prefix.
func (r *Report) short(pkg string) string {
	if s, ok := strings.CutPrefix(pkg, r.trim); ok && s != "" {
		return s
	}
	return pkg
}

// messageLine matches the first line of a t.Log, t.Error or t.Skip message in -v output:
// indentation, file:line, the message.
var messageLine = regexp.MustCompile(`^\s+[^\s:]+\.go:\d+: (.*)$`)

// NoReason stands for the reason of a test that skipped without giving one (t.SkipNow).
const NoReason = "(no reason given)"

// SkipReason returns the reason a skipped test gave, from its output: the first line of the
// last message it printed, which for t.Skip and t.Skipf is the skip's own. A test that
// logged something and then called t.SkipNow is reported with that log line; there is no
// telling the two apart in go test's output.
func SkipReason(output []string) string {
	for i := len(output) - 1; i >= 0; i-- {
		if m := messageLine.FindStringSubmatch(strings.TrimRight(output[i], "\n")); m != nil {
			return strings.TrimSpace(m[1])
		}
	}
	return NoReason
}

// SkipGroup is the skips that gave one reason.
type SkipGroup struct {
	Reason string
	Skips  []Skip
}

// SkipGroups groups the skips by reason, the most frequent reason first.
func (r *Report) SkipGroups() []SkipGroup {
	at := map[string]int{}
	var groups []SkipGroup
	for _, s := range r.Skips {
		i, ok := at[s.Reason]
		if !ok {
			i = len(groups)
			at[s.Reason] = i
			groups = append(groups, SkipGroup{Reason: s.Reason})
		}
		groups[i].Skips = append(groups[i].Skips, s)
	}
	slices.SortStableFunc(groups, func(a, b SkipGroup) int { return len(b.Skips) - len(a.Skips) })
	return groups
}

// maxNamed is how many skipped or failed tests the summary names before "and N more".
const maxNamed = 6

// WriteSummary writes the summary: the counts, each skip reason with how many tests gave it
// and which, and the failing tests, names sorted.
func (r *Report) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "tests: %d passed, %d failed, %d skipped\n", r.Passed, r.FailedN, r.Skipped)
	fmt.Fprintf(w, "packages: %d passed, %d failed", r.Packages["ok"], r.Packages["fail"])
	if n := r.Packages["skip"]; n > 0 {
		fmt.Fprintf(w, ", %d without tests", n)
	}
	fmt.Fprintln(w)
	for _, g := range r.SkipGroups() {
		fmt.Fprintf(w, "%d skipped: %s\n", len(g.Skips), g.Reason)
		var names []string
		for _, s := range g.Skips {
			names = append(names, s.Package+" "+s.Test)
		}
		slices.Sort(names)
		fmt.Fprintf(w, "    %s\n", named(names))
	}
	if len(r.Failed) > 0 {
		fmt.Fprintf(w, "failed: %s\n", named(slices.Sorted(slices.Values(r.Failed))))
	}
}

// named joins up to maxNamed names, saying how many more there are.
func named(names []string) string {
	if len(names) <= maxNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamed], ", "), len(names)-maxNamed)
}
