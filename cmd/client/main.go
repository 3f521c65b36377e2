// Command teammem is the developer-side client: it finds the memory
// directory Claude Code uses for the current repository, keeps it in sync
// with a teammem server, and runs memory extraction and consolidation next
// to the agent.
//
// Exit codes: 0 success; 1 failure (one line on stderr says why); 2 bad
// usage; 3 `scan` found secrets or `index --lint` found problems.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newApp(os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	err := app.root().ExecuteContext(ctx)
	os.Exit(exitCode(err, app))
}

// Exit codes.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitFindings = 3
)

// findingsError is returned by commands that completed but found problems.
type findingsError struct{ msg string }

func (e *findingsError) Error() string { return e.msg }

// usageError marks a mistake in the command line.
type usageError struct{ error }

func exitCode(err error, a *app) int {
	if err == nil {
		return exitOK
	}
	var fe *findingsError
	var ue *usageError
	switch {
	case errors.As(err, &fe):
		fmt.Fprintln(a.stderr, "teammem:", err)
		return exitFindings
	case errors.As(err, &ue):
		fmt.Fprintln(a.stderr, "teammem:", err)
		return exitUsage
	default:
		fmt.Fprintln(a.stderr, "teammem:", oneLine(err.Error()))
		return exitFailure
	}
}

func oneLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
