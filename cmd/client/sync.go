package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/memdir"
	"github.com/teammem/teammem/internal/secretscan"
	memsync "github.com/teammem/teammem/internal/sync"
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
	repo, err := a.repoSlug(loc)
	if err != nil {
		return nil, err
	}
	if err := teammem.ValidateRepoSlug(repo); err != nil {
		return nil, fmt.Errorf("--repo: %s", teammem.ErrorMessage(err))
	}
	server, key, err := a.credentials()
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
	client := &memsync.Client{BaseURL: server, Key: key, Repo: repo, UserAgent: "teammem-client",
		HTTP: &http.Client{Timeout: 30 * time.Second}}
	e := &memsync.Engine{Client: client, MemoryDir: loc.MemoryDir, States: states, NewScanner: secretscan.New}
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
			"backup, replaced, or missing the space never deletes local files: they are uploaded again.",
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
			var reports []*memsync.Report
			var failed error
			for _, s := range scopes {
				start := time.Now()
				rep, err := env.engine.Sync(cmd.Context(), s, pull, push)
				tel.syncEvents(rep, pull, push, time.Since(start), err)
				if rep != nil {
					reports = append(reports, rep)
				}
				if err != nil && failed == nil {
					failed = err
				}
			}
			if a.jsonOut {
				if err := a.printJSON(map[string]any{"repo": env.repo, "memory_dir": env.loc.MemoryDir, "scopes": reports}); err != nil {
					return err
				}
			} else {
				for _, rep := range reports {
					a.printReport(rep)
				}
			}
			return failed
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "all", "team, personal or all")
	cmd.Flags().BoolVar(&allowMassDelete, "allow-mass-delete", false, massDeleteUsage)
	return cmd
}

// printReport prints what one scope's sync did, for people.
func (a *app) printReport(rep *memsync.Report) {
	if a.printScopeLeftAlone(rep) {
		return
	}
	w := a.stdout
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
	summary := "up to date"
	if len(parts) > 0 {
		summary = strings.Join(parts, ", ")
	}
	check := "checksum matches the server"
	if !rep.Verified {
		check = "checksum does NOT match the server (run sync again)"
	}
	fmt.Fprintf(w, "%s: %s; version %d, %s\n", rep.Scope, summary, rep.Version, check)
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
		fmt.Fprintf(w, "  skipped %s: %s\n", s.Key, s.Reason)
	}
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
