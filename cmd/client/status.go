package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/apiclient"
	memsync "github.com/teammem/teammem/internal/client/memsync"
	"github.com/teammem/teammem/internal/teammem"
)

// scopeStatus is one scope's line of `teammem status`.
type scopeStatus struct {
	Scope      teammem.Scope  `json:"scope"`
	Dir        string         `json:"dir"`
	Version    int64          `json:"version"`
	LastSync   *time.Time     `json:"last_sync"`
	LastError  string         `json:"last_error,omitempty"`
	Changed    []string       `json:"pending_changes"`
	Deleted    []string       `json:"pending_deletions"`
	Held       []memsync.Skip `json:"held_back"`
	Suppressed string         `json:"push_suppressed,omitempty"`
	InSync     *bool          `json:"checksum_matches_server"`
	Server     string         `json:"server_checksum,omitempty"`
	// Safety notes: what the last sync reconciled or held, and merges
	// worth a review (see memsync.Report).
	Reset             string     `json:"reset,omitempty"`
	ResetAt           *time.Time `json:"reset_at,omitempty"`
	HeldLocalDeletes  []string   `json:"held_local_deletes"`
	HeldRemoteDeletes []string   `json:"held_remote_deletes"`
	DeleteLimit       int        `json:"delete_limit"`
	Overlapped        []string   `json:"overlapped"`
	// Native says why teammem's own sync leaves the scope alone (handed
	// over to Claude Code's native sync): then status gives no sync advice
	// for it.
	Native string `json:"native,omitempty"`
}

// statusOutput is what `teammem status` reports.
type statusOutput struct {
	MemoryDir string `json:"memory_dir"`
	Source    string `json:"memory_dir_source"`
	Repo      string `json:"repo"`
	Server    string `json:"server"`
	User      string `json:"user,omitempty"`
	Org       string `json:"org,omitempty"`
	// Reachable reports whether a teammem server answered, even if only to
	// refuse the key.
	Reachable bool `json:"server_reachable"`
	// ServerError is why the server check failed: code unreachable (or
	// redirect, bad_response) when no teammem server answered,
	// unauthorized or forbidden when it refused the key.
	ServerError *apiclient.Failure `json:"server_error,omitempty"`
	Scopes      []scopeStatus      `json:"scopes"`
	// Warnings and Excluded are what teammem refused or leaves alone (see
	// leftAlone).
	Warnings []string            `json:"warnings"`
	Excluded []memsync.Exclusion `json:"excluded_dirs"`
}

// statusCmd is `teammem status`. The local half (paths, state, pending
// changes) is printed whatever the server does; the server half says
// whether it answered and accepted the key, and the exit code says the
// same (4 unreachable, 5 key refused).
func (a *app) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show paths, repo, server, last syncs, pending changes, checksum checks and the memory lifecycle",
		Long: "status shows what is where and how it stands: paths, repo, server and user, each scope's last\n" +
			"sync, pending changes, held-back files, push suppression and whether the checksum matches the\n" +
			"server's. It prints everything it can, then exits 4 when no teammem server answered, 5 when the\n" +
			"server refused the API key, 1 for another server failure. Each request is tried at most twice.\n\n" +
			"It ends with the memory lifecycle: mode, model, hooks, who extracts and dreams, session notes.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := a.newSyncEnv()
			if err != nil {
				return err
			}
			e := env.engine
			// status reports how things stand now, quickly: one retry
			// rides out a blip, four would keep a dead server's answer
			// waiting for seconds.
			e.Client.Attempts = 2
			out := statusOutput{MemoryDir: env.loc.MemoryDir, Source: env.loc.Source, Repo: env.repo, Server: e.Client.BaseURL}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			me, serverErr := e.Client.WhoAmI(ctx)
			if serverErr == nil {
				out.Reachable, out.User, out.Org = true, me.User.Handle, me.Org.Slug
			} else {
				f := apiclient.FailureOf(serverErr)
				out.Reachable, out.ServerError = !f.NoServer(), &f
			}
			st, err := e.States.Load()
			if err != nil {
				return err
			}
			if out.Warnings, out.Excluded, err = leftAlone(env, st); err != nil {
				return err
			}
			for _, scope := range memsync.Scopes {
				ss := st.Scope(scope)
				s := scopeStatus{Scope: scope, Dir: scopeDir(env, scope), Version: ss.Version, LastError: ss.LastError, Suppressed: ss.Suppressed}
				if !ss.LastSync.IsZero() {
					t := ss.LastSync.Local()
					s.LastSync = &t
				}
				if s.Changed, s.Deleted, s.Held, err = e.Pending(scope, ss); err != nil {
					return err
				}
				s.safety(e, ss)
				if e.Native != nil {
					if why, ok := e.Native(scope); ok {
						s.Native = why
					}
				}
				if serverErr == nil {
					if head, _, err := e.Client.HeadIfChanged(ctx, scope, ""); err == nil {
						match := head.Checksum == ss.Checksum && len(s.Changed) == 0 && len(s.Deleted) == 0
						s.InSync, s.Server = &match, head.Checksum
					}
				}
				out.Scopes = append(out.Scopes, s)
			}
			lc := a.lifecycleStatus(env.loc)
			if a.jsonOut {
				err = a.printJSON(statusJSON{out, lc})
			} else {
				a.printStatus(out)
				printLifecycle(a.stdout, lc)
			}
			if err == nil && serverErr != nil {
				err = explain("server "+out.Server+": "+out.ServerError.Message, serverErr)
			}
			return err
		},
	}
}

// scopeDir says where a scope's files live locally.
func scopeDir(env *syncEnv, scope teammem.Scope) string {
	if scope == teammem.ScopeTeam {
		return env.loc.TeamDir
	}
	return env.loc.MemoryDir + " (without team/)"
}

// printStatus prints the status for people. The server line names which of
// "not reachable", "refuses the API key" or another failure it was.
func (a *app) printStatus(o statusOutput) {
	w := a.stdout
	fmt.Fprintf(w, "memory dir  %s (%s)\n", o.MemoryDir, o.Source)
	fmt.Fprintf(w, "repo        %s\n", o.Repo)
	switch f := o.ServerError; {
	case f == nil:
		fmt.Fprintf(w, "server      %s (as %s in org %s)\n", o.Server, o.User, o.Org)
	case f.NoServer():
		fmt.Fprintf(w, "server      %s — not reachable: %s\n", o.Server, f.Message)
	case f.KeyRefused():
		fmt.Fprintf(w, "server      %s — refuses the API key: %s\n", o.Server, f.Message)
	default:
		fmt.Fprintf(w, "server      %s — failed: %s\n", o.Server, f.Message)
	}
	printLeftAlone(w, o)
	for _, s := range o.Scopes {
		last := "never"
		if s.LastSync != nil {
			last = s.LastSync.Format("2006-01-02 15:04:05") + " (" + time.Since(*s.LastSync).Round(time.Second).String() + " ago)"
		}
		fmt.Fprintf(w, "\n%s  %s\n", s.Scope, s.Dir)
		if s.Native != "" {
			// teammem no longer syncs it: its own state is history, and
			// advice to run teammem sync would be wrong.
			fmt.Fprintf(w, "  native      %s; teammem's own sync leaves it alone (last own sync %s, version %d)\n", s.Native, last, s.Version)
			continue
		}
		fmt.Fprintf(w, "  last sync   %s, version %d\n", last, s.Version)
		fmt.Fprintf(w, "  pending     %d changed, %d deleted\n", len(s.Changed), len(s.Deleted))
		for _, k := range s.Changed {
			fmt.Fprintf(w, "                changed %s\n", k)
		}
		for _, k := range s.Deleted {
			fmt.Fprintf(w, "                deleted %s\n", k)
		}
		for _, h := range s.Held {
			fmt.Fprintf(w, "  held back   %s: %s\n", h.Key, h.Message())
		}
		if s.Reset != "" {
			fmt.Fprintf(w, "  reset       %s: %s\n", s.ResetAt.Format("2006-01-02 15:04:05"), memsync.ResetMessage(s.Reset))
		}
		if n := len(s.HeldLocalDeletes); n > 0 {
			fmt.Fprintf(w, "  held        %d deletions from the server (more than %d): run teammem sync --allow-mass-delete to apply them\n", n, s.DeleteLimit)
		}
		if n := len(s.HeldRemoteDeletes); n > 0 {
			fmt.Fprintf(w, "  held        %d local deletions (more than %d): run teammem sync --allow-mass-delete to send them\n", n, s.DeleteLimit)
		}
		for _, k := range s.Overlapped {
			fmt.Fprintf(w, "  review      merged with overlap: review %s\n", k)
		}
		if s.Suppressed != "" {
			fmt.Fprintf(w, "  pushes      SUPPRESSED (%s): delete a file or restart the watcher to retry\n", s.Suppressed)
		}
		if s.LastError != "" {
			fmt.Fprintf(w, "  last error  %s\n", s.LastError)
		}
		switch {
		case s.InSync == nil:
			fmt.Fprintf(w, "  checksum    unknown (the server check failed)\n")
		case *s.InSync:
			fmt.Fprintf(w, "  checksum    matches the server\n")
		case len(s.HeldLocalDeletes)+len(s.HeldRemoteDeletes) > 0:
			fmt.Fprintf(w, "  checksum    differs from the server: deletions are held (run %s)\n", memsync.ReleaseDeletes)
		default:
			fmt.Fprintf(w, "  checksum    differs from the server (run teammem sync)\n")
		}
	}
}

// safety fills in what the guard held, the last reset and the overlapping
// merges not yet looked at.
func (s *scopeStatus) safety(e *memsync.Engine, ss *memsync.ScopeState) {
	s.DeleteLimit = memsync.DeleteLimit(len(ss.Base))
	s.HeldLocalDeletes = append([]string{}, ss.HeldDeletes...)
	s.HeldRemoteDeletes = []string{}
	if len(s.Deleted) > s.DeleteLimit {
		s.HeldRemoteDeletes = s.Deleted
	}
	s.Overlapped = e.Overlaps(s.Scope, ss)
	if ss.Reset != "" {
		t := ss.ResetAt.Local()
		s.Reset, s.ResetAt = ss.Reset, &t
	}
}

// leftAlone returns what status reports beyond the sync state: the
// warnings of resolving the memory dir (settings from the repository that
// were ignored or refused) and the directories left to Claude Code's own
// memory-store sync, for both scopes.
func leftAlone(env *syncEnv, st *memsync.State) ([]string, []memsync.Exclusion, error) {
	warnings, excluded := append([]string{}, env.loc.Warnings...), []memsync.Exclusion{}
	for _, scope := range memsync.Scopes {
		ex, err := env.engine.Exclusions(scope, st.Scope(scope))
		if err != nil {
			return nil, nil, err
		}
		excluded = append(excluded, ex...)
	}
	return warnings, excluded, nil
}

// printLeftAlone prints leftAlone's findings, one line each.
func printLeftAlone(w io.Writer, o statusOutput) {
	for _, msg := range o.Warnings {
		fmt.Fprintf(w, "warning     %s\n", msg)
	}
	for _, ex := range o.Excluded {
		dir := ex.Dir
		if dir == "." {
			dir = "memory dir"
		}
		fmt.Fprintf(w, "left alone  %s: %s\n", dir, ex.Reason)
	}
}

// printScopeLeftAlone prints, for a sync whose whole scope Claude Code's
// own store sync owns, the one line there is to say about it, and reports
// whether it did.
func (a *app) printScopeLeftAlone(rep *memsync.Report) bool {
	for _, ex := range rep.Excluded {
		if ex.Dir == "." || ex.Dir == "team" {
			fmt.Fprintf(a.stdout, "%s: not synced: %s\n", rep.Scope, ex.Reason)
			return true
		}
	}
	return false
}

// printDirsLeftAlone prints the directories a sync left to Claude Code's
// own store sync.
func (a *app) printDirsLeftAlone(rep *memsync.Report) {
	for _, ex := range rep.Excluded {
		fmt.Fprintf(a.stdout, "  left alone %s: %s\n", ex.Dir, ex.Reason)
	}
}
