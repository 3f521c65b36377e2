package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	memsync "github.com/teammem/teammem/internal/sync"
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
}

type statusOutput struct {
	MemoryDir  string        `json:"memory_dir"`
	Source     string        `json:"memory_dir_source"`
	Repo       string        `json:"repo"`
	Server     string        `json:"server"`
	User       string        `json:"user,omitempty"`
	Org        string        `json:"org,omitempty"`
	Reachable  bool          `json:"server_reachable"`
	ServerNote string        `json:"server_error,omitempty"`
	Scopes     []scopeStatus `json:"scopes"`
}

func (a *app) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show paths, repo, server, last syncs, pending changes, checksum checks and the memory lifecycle",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := a.newSyncEnv()
			if err != nil {
				return err
			}
			e := env.engine
			out := statusOutput{MemoryDir: env.loc.MemoryDir, Source: env.loc.Source, Repo: env.repo, Server: e.Client.BaseURL}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			if me, err := e.Client.WhoAmI(ctx); err == nil {
				out.Reachable, out.User, out.Org = true, me.User.Handle, me.Org.Slug
			} else {
				out.ServerNote = err.Error()
			}
			st, err := e.States.Load()
			if err != nil {
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
				if out.Reachable {
					if head, _, err := e.Client.HeadIfChanged(ctx, scope, ""); err == nil {
						match := head.Checksum == ss.Checksum && len(s.Changed) == 0 && len(s.Deleted) == 0
						s.InSync, s.Server = &match, head.Checksum
					}
				}
				out.Scopes = append(out.Scopes, s)
			}
			lc := a.lifecycleStatus(env.loc)
			if a.jsonOut {
				return a.printJSON(statusJSON{out, lc})
			}
			a.printStatus(out)
			printLifecycle(a.stdout, lc)
			return nil
		},
	}
}

func scopeDir(env *syncEnv, scope teammem.Scope) string {
	if scope == teammem.ScopeTeam {
		return env.loc.TeamDir
	}
	return env.loc.MemoryDir + " (without team/)"
}

func (a *app) printStatus(o statusOutput) {
	w := a.stdout
	fmt.Fprintf(w, "memory dir  %s (%s)\n", o.MemoryDir, o.Source)
	fmt.Fprintf(w, "repo        %s\n", o.Repo)
	if o.Reachable {
		fmt.Fprintf(w, "server      %s (as %s in org %s)\n", o.Server, o.User, o.Org)
	} else {
		fmt.Fprintf(w, "server      %s — not reachable: %s\n", o.Server, o.ServerNote)
	}
	for _, s := range o.Scopes {
		last := "never"
		if s.LastSync != nil {
			last = s.LastSync.Format("2006-01-02 15:04:05") + " (" + time.Since(*s.LastSync).Round(time.Second).String() + " ago)"
		}
		fmt.Fprintf(w, "\n%s  %s\n", s.Scope, s.Dir)
		fmt.Fprintf(w, "  last sync   %s, version %d\n", last, s.Version)
		fmt.Fprintf(w, "  pending     %d changed, %d deleted\n", len(s.Changed), len(s.Deleted))
		for _, k := range s.Changed {
			fmt.Fprintf(w, "                changed %s\n", k)
		}
		for _, k := range s.Deleted {
			fmt.Fprintf(w, "                deleted %s\n", k)
		}
		for _, h := range s.Held {
			fmt.Fprintf(w, "  held back   %s: %s\n", h.Key, h.Reason)
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
			fmt.Fprintf(w, "  checksum    unknown (server not reachable)\n")
		case *s.InSync:
			fmt.Fprintf(w, "  checksum    matches the server\n")
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
