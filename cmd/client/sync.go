package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/client/memdir"
	memsync "github.com/teammem/teammem/internal/client/memsync"
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/teammem"
)

// syncEnv is everything a sync command needs.
type syncEnv struct {
	loc    memdir.Location
	repo   string
	engine *memsync.Engine
}

// newSyncEnv resolves the directory, repo and credentials and opens state.
func (a *app) newSyncEnv() (*syncEnv, error) {
	loc, err := a.location()
	if err != nil {
		return nil, err
	}
	repo, server, key, err := a.repoServer(loc)
	if err != nil {
		return nil, err
	}
	cfgDir, err := a.configDir()
	if err != nil {
		return nil, err
	}
	states, err := memsync.OpenState(memsync.StateDir(cfgDir, loc.MemoryDir, repo, server))
	if err != nil {
		return nil, err
	}
	client := &apiclient.Client{BaseURL: server, Key: key, Repo: repo, UserAgent: "teammem-client",
		HTTP: &http.Client{Timeout: 30 * time.Second}, SessionID: a.session}
	e := &memsync.Engine{Client: client, MemoryDir: loc.MemoryDir, States: states, NewScanner: secretscan.New,
		Native: a.nativeReason(loc)}
	if isTerminal(a.stderr) && !a.jsonOut {
		e.Progress = func(scope teammem.Scope, phase string, done, total int) {
			fmt.Fprintf(a.stderr, "\r%s %s: %d/%d", phase, scope, done+1, total)
			if done+1 == total {
				fmt.Fprintln(a.stderr)
			}
		}
	}
	return &syncEnv{loc: loc, repo: repo, engine: e}, nil
}

// repoServer returns the repository's slug, checked, and the server and
// key to reach it with.
func (a *app) repoServer(loc memdir.Location) (repo, server, key string, err error) {
	if repo, err = a.repoSlug(loc); err != nil {
		return "", "", "", err
	}
	if err := teammem.ValidateRepoSlug(repo); err != nil {
		return "", "", "", fmt.Errorf("--repo: %s", teammem.ErrorMessage(err))
	}
	server, key, err = a.credentials()
	return repo, server, key, err
}

// scopesFlag parses --scope.
func scopesFlag(v string) ([]teammem.Scope, error) {
	switch v {
	case "all", "":
		return memsync.Scopes, nil
	case "team", "personal":
		return []teammem.Scope{teammem.Scope(v)}, nil
	}
	return nil, &usageError{fmt.Errorf("--scope %q: want team, personal or all", v)}
}

func (a *app) pullCmd() *cobra.Command {
	return a.transferCmd("pull", "Download changes from the server into the memory directory", true, false)
}

func (a *app) pushCmd() *cobra.Command {
	return a.transferCmd("push", "Upload local changes (edits, new files, deletions) to the server", false, true)
}

func (a *app) syncCmd() *cobra.Command {
	return a.transferCmd("sync", "Pull, then push: after it, both sides hold the same memory", true, true)
}

// transferCmd builds pull, push and sync: each scope in turn, every scope
// reported (failed ones too), and the first failure decides the exit code.
func (a *app) transferCmd(name, short string, pull, push bool) *cobra.Command {
	var scope string
	var allowMassDelete bool
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		Long: short + ".\n\nteam/ syncs with the repo's team memory; everything else in the memory directory with\n" +
			"your personal memory. Files over 250000 bytes, symlinks and files holding secrets are skipped\n" +
			"with a message. Edits made on both sides are merged line by line; nothing is lost.\n\n" +
			"A sync that would delete more than max(50, 10 % of the tracked files) on either side holds\n" +
			"those deletions and says so; --allow-mass-delete lets them go. A server restored from an older\n" +
			"backup, replaced, or missing the space never deletes local files: they are uploaded again.\n\n" +
			"Requests that fail for a passing reason (no answer, 5xx, 429) are tried up to 4 times, waiting\n" +
			"about 0.5, 1 and 2 s (longer when the server asks with Retry-After, up to 30 s). A scope that\n" +
			"still fails says what failed and how many local changes are pending; the exit code says why\n" +
			"(4: no teammem server answered, 5: the API key was refused; see teammem --help).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			scopes, err := scopesFlag(scope)
			if err != nil {
				return err
			}
			env, err := a.newSyncEnv()
			if err != nil {
				return err
			}
			env.engine.AllowMassDelete = allowMassDelete
			tel := a.newTelemetry(env.engine.Client)
			defer tel.flush(context.WithoutCancel(cmd.Context()))
			var results []scopeResult
			var failed error
			for _, s := range scopes {
				start := time.Now()
				rep, err := env.engine.Sync(cmd.Context(), s, pull, push)
				tel.syncEvents(rep, pull, push, time.Since(start), err)
				res := newScopeResult(env.engine, s, rep, err)
				results = append(results, res)
				if err != nil && failed == nil {
					failed = explain(res.failureLine(), err)
				}
			}
			if a.jsonOut {
				if err := a.printJSON(map[string]any{"repo": env.repo, "memory_dir": env.loc.MemoryDir, "scopes": results}); err != nil {
					return err
				}
			} else {
				for _, res := range results {
					a.printReport(res)
				}
			}
			return failed
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "all", "team, personal or all")
	cmd.Flags().BoolVar(&allowMassDelete, "allow-mass-delete", false, massDeleteUsage)
	return cmd
}

// scopeResult is what one scope's pull, push or sync did and, when it
// failed, what failed and what is still waiting to be pushed.
type scopeResult struct {
	*memsync.Report
	// Error is set when the scope failed; the report then holds what was
	// done before the failure.
	Error *apiclient.Failure `json:"error,omitempty"`
	// FailedStep is "pull", "push" or "sync" (neither step: the state).
	FailedStep string `json:"failed_step,omitempty"`
	// Pending counts local changes and deletions not on the server yet,
	// on failure; -1 when they could not be counted.
	Pending *int `json:"pending,omitempty"`
}

// newScopeResult pairs a report (nil when the scope failed before making
// one) with the failure, if any.
func newScopeResult(e *memsync.Engine, scope teammem.Scope, rep *memsync.Report, err error) scopeResult {
	if rep == nil {
		rep = &memsync.Report{Scope: scope}
	}
	res := scopeResult{Report: rep}
	if err == nil {
		return res
	}
	f := memsync.FailureOf(err)
	res.Error, res.FailedStep = &f, "sync"
	var se *memsync.StepError
	if errors.As(err, &se) {
		res.FailedStep = se.Step
	}
	n := pendingCount(e, scope)
	res.Pending = &n
	return res
}

// pendingCount is how many local changes a push would send, -1 if unknown.
func pendingCount(e *memsync.Engine, scope teammem.Scope) int {
	st, err := e.States.Load()
	if err != nil {
		return -1
	}
	changed, deleted, _, err := e.Pending(scope, st.Scope(scope))
	if err != nil {
		return -1
	}
	return len(changed) + len(deleted)
}

// failureLine is the one line saying what failed, e.g. "team: push failed —
// the API key is read-only; 1 change pending".
func (r scopeResult) failureLine() string {
	pending := "pending changes unknown"
	switch n := *r.Pending; {
	case n == 0:
		pending = "nothing pending"
	case n == 1:
		pending = "1 change pending"
	case n > 1:
		pending = fmt.Sprintf("%d changes pending", n)
	}
	return fmt.Sprintf("%s: %s failed — %s; %s", r.Scope, r.FailedStep, r.Error.Message, pending)
}

// printReport prints what one scope's sync did, for people. A failed scope
// says so first and never reads "up to date".
func (a *app) printReport(res scopeResult) {
	w, rep := a.stdout, res.Report
	if res.Error == nil && a.printScopeLeftAlone(rep) {
		return
	}
	summary := strings.Join(reportParts(rep), ", ")
	if res.Error != nil {
		fmt.Fprintln(w, res.failureLine())
		if summary != "" {
			fmt.Fprintf(w, "  done before that: %s\n", summary)
		}
	} else if n := rep.HeldDeletes(); n > 0 {
		// Never "up to date" nor "sync again": another plain sync holds
		// them again. Say what lets them go.
		done := ""
		if summary != "" {
			done = summary + "; "
		}
		fmt.Fprintf(w, "%s: %s%d deletions held by the mass-delete guard; version %d; run %s to let them go\n",
			rep.Scope, done, n, rep.Version, memsync.ReleaseDeletes)
	} else {
		check := "checksum matches the server"
		if !rep.Verified {
			check = "checksum does NOT match the server (run sync again)"
		}
		fmt.Fprintf(w, "%s: %s; version %d, %s\n", rep.Scope, first(summary, "up to date"), rep.Version, check)
	}
	for _, n := range rep.Notices() {
		fmt.Fprintf(w, "  %s\n", n)
	}
	a.printDirsLeftAlone(rep)
	for _, k := range rep.Merged {
		if !slices.Contains(rep.Overlapped, k) {
			fmt.Fprintf(w, "  merged %s (edited here and on the server, in different lines)\n", k)
		}
	}
	for _, k := range rep.KeptLocal {
		fmt.Fprintf(w, "  kept %s: deleted on the server but edited here; it will be uploaded again\n", k)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "  skipped %s: %s\n", s.Key, s.Message())
	}
}

// reportParts counts what a sync changed, e.g. "2 pulled".
func reportParts(rep *memsync.Report) []string {
	var parts []string
	add := func(keys []string, what string) {
		if len(keys) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", len(keys), what))
		}
	}
	add(rep.Pulled, "pulled")
	add(rep.RemovedLocal, "removed locally")
	add(rep.Pushed, "pushed")
	add(rep.DeletedRemote, "deleted on the server")
	add(rep.Merged, "merged")
	add(rep.HeldForReview, "held for review")
	if n := len(rep.Skipped); n > 0 {
		// Never "up to date" while a file was left out: each is named below.
		parts = append(parts, fmt.Sprintf("%d skipped", n))
	}
	return parts
}

// withTimeout bounds a command's work.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// massDeleteUsage documents --allow-mass-delete wherever it is offered.
const massDeleteUsage = "let this sync delete more than max(50, 10 % of the tracked files) on either side"
