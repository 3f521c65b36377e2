// Command bench measures teammem against the baselines of design §11, each
// in the same run on the same machine: pulls and probes against a bare
// net/http handler, pushes against a raw database transaction, the secret
// scanner against the gitleaks CLI, propagation against git, plus idle RSS,
// startup time and latency on a large generated database.
//
//	go run -tags gore2regex ./cmd/bench            full run (several minutes)
//	go run -tags gore2regex ./cmd/bench --quick    under a minute
//	go run -tags gore2regex ./cmd/bench --generate --database-url DSN --repos 10000 --entries 100 --orgs 100
//
// It prints a table, then, as the last line of stdout, one JSON object with
// every ratio and measurement. Progress goes to stderr.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if dir := os.Getenv(bareDirEnv); dir != "" {
		if err := serveBareChild(dir); err != nil {
			fmt.Fprintln(os.Stderr, "bench baseline:", err)
			os.Exit(1)
		}
		return
	}
	opt, err := parseOptions(os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if opt.generate {
		err = runGenerate(ctx, opt, os.Stdout)
	} else {
		err = run(ctx, opt)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// started is when the process started, for log timestamps.
var started = time.Now()

// logf prints a progress line to stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(started).Seconds(), fmt.Sprintf(format, args...))
}
