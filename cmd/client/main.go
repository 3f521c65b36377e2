// Command teammem is the developer-side client: it finds the memory
// directory Claude Code uses for the current repository, keeps it in sync
// with a teammem server, and runs memory extraction and consolidation next
// to the agent.
//
// Exit codes (the root command's help and the README list the same):
//
//	0  success
//	1  failure (one line on stderr says why)
//	2  bad usage: unknown command, extra arguments, bad flag or value
//	3  scan found secrets, or index --lint found problems
//	4  no teammem server answered: unreachable (refused, DNS, timeout),
//	   a redirect, or an answer that is not a teammem response
//	5  the server refused the API key: 401 (not valid, revoked, expired)
//	   or 403 (read-only key, role too weak, user or org disabled)
//	6  refused because of the memory dir's state, which the command line
//	   alone cannot fix: teammem claude/proxy with files of teammem's own
//	   sync in team/ (run again with --migrate), or a file to migrate that
//	   differs from the one in team/teammem/ (merge them by hand)
//	130 interrupted (Ctrl-C) while dream --team waited for its dream, which
//	   was canceled on the server
//
// Codes 4 and 5 come from status, login, pull, push and sync (for sync,
// from the first scope that failed).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/teammem/teammem/internal/client/apiclient"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newApp(os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	err := app.root().ExecuteContext(ctx)
	os.Exit(exitCode(err, app))
}

// Exit codes, as the package doc describes them.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitFindings    = 3
	exitNoServer    = 4
	exitKeyRefused  = 5
	exitState       = 6
	exitInterrupted = 130
	exitCodesPhrase = "Exit codes: 0 success, 1 failure, 2 bad usage, 3 secrets found (scan) or lint problems (index --lint),\n" +
		"4 no teammem server answered (unreachable, a redirect, or not a teammem answer), 5 the server refused the API key\n" +
		"(401, or 403: read-only key, role too weak, disabled), 6 refused because of the memory dir's state (teammem\n" +
		"claude/proxy: files in team/ to --migrate, or to merge by hand), 130 interrupted while dream --team waited."
)

// findingsError is returned by commands that completed but found problems.
type findingsError struct{ msg string }

func (e *findingsError) Error() string { return e.msg }

// usageError marks a mistake in the command line.
type usageError struct{ error }

// Unwrap returns the mistake.
func (e *usageError) Unwrap() error { return e.error }

// stateError marks a refusal caused by the local state (the memory dir's
// files), not by the command line: running the same command again fails
// the same way until the user acts as the message says.
type stateError struct{ error }

// Unwrap returns the refusal.
func (e *stateError) Unwrap() error { return e.error }

// explained is an error whose message was written for people while the
// cause stays reachable for the exit code.
type explained struct {
	msg   string
	cause error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.cause }

// explain returns cause with msg as its message.
func explain(msg string, cause error) error { return &explained{msg: msg, cause: cause} }

// exitCode prints err (one line) and returns the process's exit code.
func exitCode(err error, a *app) int {
	if err == nil {
		return exitOK
	}
	var fe *findingsError
	var ue *usageError
	var ce *childExit
	var se *stateError
	var ie *interruptedError
	switch {
	case errors.As(err, &ie):
		fmt.Fprintln(a.stderr, "teammem:", err)
		return exitInterrupted
	case errors.As(err, &ce):
		return ce.code // claude has said why itself
	case errors.As(err, &fe):
		fmt.Fprintln(a.stderr, "teammem:", err)
		return exitFindings
	case errors.As(err, &ue):
		fmt.Fprintln(a.stderr, "teammem:", err)
		return exitUsage
	case errors.As(err, &se):
		fmt.Fprintln(a.stderr, "teammem:", err)
		return exitState
	}
	fmt.Fprintln(a.stderr, "teammem:", oneLine(err.Error()))
	return failureExit(err)
}

// failureExit is the exit code of a failed command: 4 or 5 when a request
// to the server failed that way, else 1.
func failureExit(err error) int {
	switch f := apiclient.FailureOf(err); {
	case f.NoServer():
		return exitNoServer
	case f.KeyRefused():
		return exitKeyRefused
	}
	return exitFailure
}

func oneLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
