package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/client/subagentmem"
)

// agentsOutput is what `teammem agents --json` prints.
type agentsOutput struct {
	ConfigHome string              `json:"config_home"`
	Project    string              `json:"project"`
	Agents     []subagentmem.Agent `json:"agents"`
	// Applied lists the memories --apply initialized from their snapshot.
	Applied []appliedSnapshot `json:"applied"`
}

// appliedSnapshot is one memory --apply initialized.
type appliedSnapshot struct {
	Type  string            `json:"agent_type"`
	Scope subagentmem.Scope `json:"scope"`
	Dir   string            `json:"dir"`
	subagentmem.Result
}

// agentsCmd is `teammem agents`: the listing is read-only unless --apply,
// and even then only directories with no memory yet are written.
func (a *app) agentsCmd() *cobra.Command {
	var apply bool
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List subagent memories (user, project, local) and their snapshots",
		Long: "agents lists the memory of Claude Code's custom subagents: user scope in\n" +
			"<config home>/agent-memory/, project scope in .claude/agent-memory/ and local scope in\n" +
			".claude/agent-memory-local/, found from those directories, from agent definitions that\n" +
			"declare `memory:` and from snapshots in .claude/agent-memory-snapshots/<agent type>/.\n\n" +
			"For each it shows the number of Markdown files and what the project's snapshot means:\n" +
			"  none              no snapshot, or the memory is up to date with it\n" +
			"  initialize        a snapshot exists and the agent has no memory yet; --apply copies the\n" +
			"                    snapshot's files in and records it in .snapshot-synced.json\n" +
			"  update-available  the snapshot is newer than the memory; reported only, never applied:\n" +
			"                    review the snapshot and merge it by hand\n\n" +
			"A snapshot applies to the scope the agent's definition declares, else to user scope.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runAgents(apply)
		},
	}
	cmd.Flags().BoolVar(&apply, "apply", false, "initialize memories that have a snapshot and no memory yet (never overwrites a file)")
	return cmd
}

// runAgents lists agent memories and, with apply, seeds new ones.
func (a *app) runAgents(apply bool) error {
	loc, err := a.location()
	if err != nil {
		return err
	}
	// Claude Code looks in the directory it runs in, usually the checkout's
	// root; a worktree has its own .claude/, so not the canonical root.
	gitRoot, _ := memdir.FindGitRoot(loc.ProjectRoot)
	roots := subagentmem.Roots{ConfigHome: loc.ConfigHome, Project: subagentmem.ProjectRoot(loc.ProjectRoot, gitRoot)}
	agents, err := subagentmem.List(roots)
	if err != nil {
		return err
	}
	out := agentsOutput{ConfigHome: roots.ConfigHome, Project: roots.Project, Agents: agents, Applied: []appliedSnapshot{}}
	var failed error
	if apply {
		// Keep going past a failure so that one bad snapshot does not hold
		// back the others; the listing below shows the state after.
		out.Applied, failed = applySnapshots(agents)
		if out.Agents, err = subagentmem.List(roots); err != nil {
			return err
		}
	}
	if a.jsonOut {
		if err := a.printJSON(out); err != nil {
			return err
		}
	} else {
		a.printAgents(out, apply)
	}
	return failed
}

// applySnapshots initializes every memory whose decision is initialize and
// returns what it did; the error joins every failure.
func applySnapshots(agents []subagentmem.Agent) ([]appliedSnapshot, error) {
	applied := []appliedSnapshot{}
	var errs []error
	for _, ag := range agents {
		if ag.Decision != subagentmem.DecisionInitialize || ag.Snapshot == nil {
			continue
		}
		res, err := subagentmem.Initialize(ag.Snapshot.Dir, ag.Dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", ag.Type, ag.Scope, err))
			continue
		}
		applied = append(applied, appliedSnapshot{Type: ag.Type, Scope: ag.Scope, Dir: ag.Dir, Result: res})
	}
	return applied, errors.Join(errs...)
}

// printAgents prints the listing for people.
func (a *app) printAgents(o agentsOutput, applied bool) {
	w := a.stdout
	for _, ap := range o.Applied {
		fmt.Fprintf(w, "initialized %s (%s) from its snapshot of %s: %d files copied", ap.Type, ap.Scope, ap.SyncedFrom, len(ap.Copied))
		if len(ap.Kept) > 0 {
			fmt.Fprintf(w, ", %d kept as they were", len(ap.Kept))
		}
		fmt.Fprintln(w)
	}
	if len(o.Agents) == 0 {
		fmt.Fprintf(w, "no agent memory in %s or %s\n", o.ConfigHome, o.Project)
		return
	}
	// "-" for files: the directory does not exist yet.
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tSCOPE\tFILES\tSNAPSHOT\tDIR")
	for _, ag := range o.Agents {
		files := fmt.Sprint(ag.Files)
		if !ag.Exists {
			files = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ag.Type, ag.Scope, files, ag.Decision, ag.Dir)
	}
	tw.Flush()
	var pending, updates int
	for _, ag := range o.Agents {
		switch ag.Decision {
		case subagentmem.DecisionInitialize:
			pending++
		case subagentmem.DecisionUpdate:
			updates++
		}
	}
	if pending > 0 && !applied {
		fmt.Fprintf(w, "\n%d memories can be initialized from their snapshot: run `teammem agents --apply`\n", pending)
	}
	if updates > 0 {
		fmt.Fprintf(w, "\n%d snapshots are newer than the memory they seeded; teammem never overwrites memory:\n", updates)
		for _, ag := range o.Agents {
			if ag.Decision == subagentmem.DecisionUpdate {
				from := ag.Snapshot.SyncedFrom
				if from == "" {
					from = "no recorded snapshot"
				}
				fmt.Fprintf(w, "  %s (%s): snapshot of %s in %s (memory has %s)\n", ag.Type, ag.Scope, ag.Snapshot.UpdatedAt, ag.Snapshot.Dir, from)
			}
		}
	}
}
