// Command testreport turns the output of `go test -json` into what scripts/test shows: the
// output plain `go test` prints (a closing line per package, everything a failing test
// said) as it arrives, then a summary counting tests by outcome and skipped tests by the
// reason they gave, so that no skip goes unseen.
//
//	go test -json ./... 2>&1 | testreport -summary summary.txt -counts counts.txt
//
// The summary file holds lines such as
//
//	tests: 812 passed, 0 failed, 14 skipped
//	14 skipped: real-world fixtures not found; set TEAMMEM_FIXTURES
//
// and the counts file one line, "passed failed skipped broken", broken being the packages
// that failed without a failing test (a build failure, a panic outside a test). testreport
// itself exits 0 unless it cannot read its input or write its files: go test's exit status
// stays the verdict.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	summary := flag.String("summary", "", "write the summary to `file` (default: standard output)")
	counts := flag.String("counts", "", "write \"passed failed skipped broken\" to `file`")
	trim := flag.String("trim", "", "leave `prefix` out of package paths in the summary")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *summary, *counts, *trim); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(1)
	}
}

// run reads the go test stream from in, echoing it to out, and writes the summary and
// counts at the end of the stream.
func run(in io.Reader, out io.Writer, summaryPath, countsPath, trim string) error {
	w := bufio.NewWriter(out)
	r := NewReport(w, trim)
	rd := bufio.NewReaderSize(in, 1<<16)
	for {
		line, err := rd.ReadString('\n')
		if line != "" {
			r.Line(strings.TrimSuffix(line, "\n"))
			// Flush per line: the output is followed live, and a hung test should show
			// everything before it.
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	var sum strings.Builder
	r.WriteSummary(&sum)
	if summaryPath == "" {
		fmt.Fprint(w, sum.String())
	} else if err := os.WriteFile(summaryPath, []byte(sum.String()), 0o644); err != nil {
		return err
	}
	if countsPath != "" {
		line := fmt.Sprintf("%d %d %d %d\n", r.Passed, r.FailedN, r.Skipped, r.Packages["broken"])
		if err := os.WriteFile(countsPath, []byte(line), 0o644); err != nil {
			return err
		}
	}
	return w.Flush()
}
