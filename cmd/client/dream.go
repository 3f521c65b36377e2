package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/client/jobs/dream"
	"github.com/teammem/teammem/internal/client/jobs/extract"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/secretscan"
)

// dreamFlags are the dream command's flags; each overrides its variable.
type dreamFlags struct {
	minHours    float64
	minSessions int
	maxTurns    int
	session     string
	substantive bool
	force       bool
	dryRun      bool
	schedule    bool
	install     bool
	scheduler   string

	// dream --team (dream_team.go).
	team           bool
	model          string
	instructions   string
	updateExisting bool
	apply          bool
	discard        bool
}

// dreamCmd is `teammem dream`: check the gates, then consolidate. A skip is
// printed and exits 0 (the hook runs dream after every turn and most checks
// skip); a failed run exits 1 after rolling the lock back.
func (a *app) dreamCmd() *cobra.Command {
	var f dreamFlags
	cmd := &cobra.Command{
		Use:   "dream [--team [drm_id]]",
		Short: "Consolidate the memory directory with a model when enough has happened since the last time",
		Long: "dream reviews recent daily logs, memories and session transcripts with a model and turns them into\n" +
			"well-organised memories: it merges duplicates, fixes facts that turned out wrong, makes dates absolute\n" +
			"and prunes MEMORY.md. It never moves personal memories into team/.\n\n" +
			"Gates, cheapest first (each prints why it stopped, exit 0): TEAMMEM_DREAM=0 or autoDreamEnabled=false in\n" +
			"Claude Code's settings.json; fewer than --min-hours (TEAMMEM_DREAM_MIN_HOURS, 24) since the last\n" +
			"consolidation; sessions scanned less than 10 minutes ago; fewer than --min-sessions\n" +
			"(TEAMMEM_DREAM_MIN_SESSIONS, 5) sessions touched since then; another dream holding the lock.\n" +
			"--force skips the time, scan and session gates, never the lock.\n\n" +
			"A failed or interrupted run (Ctrl-C) rolls the lock back so the next attempt is not delayed.\n" +
			"--dry-run works on a copy and prints a diff. --schedule prints a crontab line for a nightly dream at a\n" +
			"random minute between 00:00 and 05:59 (the long-running mode's consolidation); --install-schedule\n" +
			"installs it in your crontab or as a systemd user timer (--scheduler cron|systemd).\n" +
			"Needs a model: TEAMMEM_LLM_PROVIDER, TEAMMEM_LLM_MODEL and the provider's key.\n\n" +
			"--team asks the server to dream the repository's team memory instead, with the server's model: --model\n" +
			"(default TEAMMEM_DREAM_MODEL; one the server allows), --instructions (at most 4,096 characters). It shows\n" +
			"progress (status, tokens, elapsed) until the dream ends, then prints each changed memory as a diff. The\n" +
			"dream writes a new store; nothing reaches the team store until it is applied: --apply applies it once it\n" +
			"completes (refused, nothing applied, when the team store changed meanwhile: the memories that changed are\n" +
			"listed), or later: teammem dream --team --apply drm_…, or Apply on the console's Dreams page.\n" +
			"teammem dream --team drm_… shows a dream (waiting for it to end); --discard drm_… discards its output.\n" +
			"--update-existing writes into the team store directly (no review). Ctrl-C while waiting for a dream this\n" +
			"run started cancels it on the server and exits 130. A failed or canceled dream exits 1 with its error.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.team {
				return a.runDreamTeam(cmd, f, args)
			}
			if err := checkLocalDreamFlags(cmd, args); err != nil {
				return err
			}
			if f.schedule || f.install {
				return a.dreamSchedule(f)
			}
			return a.runDream(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&f.minHours, "min-hours", dream.DefaultMinHours, "hours since the last consolidation before the next (fractions allowed; env TEAMMEM_DREAM_MIN_HOURS)")
	fl.IntVar(&f.minSessions, "min-sessions", dream.DefaultMinSessions, "sessions touched since the last consolidation (env TEAMMEM_DREAM_MIN_SESSIONS)")
	fl.IntVar(&f.maxTurns, "max-turns", dream.DefaultMaxTurns, "most model turns")
	fl.StringVar(&f.session, "session", "", "id of the current session, which the session gate does not count")
	fl.BoolVar(&f.substantive, "substantive", false, "count only sessions that edited files (env TEAMMEM_DREAM_SUBSTANTIVE=1)")
	fl.BoolVar(&f.force, "force", false, "skip the time, scan and session gates (never the lock)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "run on a copy and print a diff; change nothing")
	fl.BoolVar(&f.schedule, "schedule", false, "print a crontab line that runs dream nightly, then exit")
	fl.BoolVar(&f.install, "install-schedule", false, "install that nightly run (user crontab or systemd user timer), then exit")
	fl.StringVar(&f.scheduler, "scheduler", "", "with --install-schedule: cron or systemd (default: cron when crontab is installed)")
	fl.BoolVar(&f.team, "team", false, "dream the repository's team memory on the server (see above)")
	fl.StringVar(&f.model, "model", "", "with --team: the model id the server runs the dream with (env TEAMMEM_DREAM_MODEL)")
	fl.StringVar(&f.instructions, "instructions", "", "with --team: extra instructions for the dream (at most 4,096 characters)")
	fl.BoolVar(&f.updateExisting, "update-existing", false, "with --team: write into the team store directly instead of a store to review")
	fl.BoolVar(&f.apply, "apply", false, "with --team: apply the dream once it completes (this run's, or the drm_… id given)")
	fl.BoolVar(&f.discard, "discard", false, "with --team and a drm_… id: discard that dream's output")
	return cmd
}

// dreamConfig reads the configuration, then applies the flags given.
func (a *app) dreamConfig(cmd *cobra.Command, loc memdir.Location, f dreamFlags) (dream.Config, error) {
	cfg, err := dream.LoadConfig(a.getenv, loc.ConfigHome)
	if err != nil {
		return cfg, err
	}
	fl := cmd.Flags()
	switch {
	case fl.Changed("min-hours") && f.minHours < 0:
		return cfg, &usageError{fmt.Errorf("--min-hours %g: want 0 or more", f.minHours)}
	case fl.Changed("min-sessions") && f.minSessions < 0:
		return cfg, &usageError{fmt.Errorf("--min-sessions %d: want 0 or more", f.minSessions)}
	case f.maxTurns < 1:
		return cfg, &usageError{fmt.Errorf("--max-turns %d: want 1 or more", f.maxTurns)}
	}
	if fl.Changed("min-hours") {
		cfg.MinHours = f.minHours
	}
	if fl.Changed("min-sessions") {
		cfg.MinSessions = f.minSessions
	}
	if fl.Changed("substantive") {
		cfg.Substantive = f.substantive
	}
	cfg.Force, cfg.DryRun, cfg.MaxTurns = f.force, f.dryRun, f.maxTurns
	return cfg, nil
}

// runDream checks the gates and, when they pass, runs the consolidation.
func (a *app) runDream(cmd *cobra.Command, f dreamFlags) error {
	ctx := cmd.Context()
	loc, err := a.location()
	if err != nil {
		return err
	}
	cfg, err := a.dreamConfig(cmd, loc, f)
	if err != nil {
		return err
	}
	stateDir, err := a.localStateDir(loc)
	if err != nil {
		return err
	}
	d := &dream.Dreamer{Config: cfg, MemoryDir: loc.MemoryDir, TranscriptDir: loc.TranscriptDir, StateDir: stateDir, SessionID: f.session}
	// A missing model is reported before any gate runs, so that a user
	// learns at once that dreaming cannot work; a disabled dream needs none.
	if cfg.Enabled {
		if d.Model, d.Scanner, err = a.dreamTools(); err != nil {
			return err
		}
	}
	if isTerminal(a.stderr) && !a.jsonOut {
		d.OnTurn = func(turn int, _ string, calls int) {
			fmt.Fprintf(a.stderr, "dream: turn %d, %d tool calls\n", turn, calls)
		}
	}
	tel := a.dreamTelemetry()
	// The flush outlives a Ctrl-C: the failed run is still worth counting.
	defer tel.flush(context.WithoutCancel(ctx))

	plan, err := d.Check()
	var skip *dream.Skip
	if errors.As(err, &skip) {
		tel.add("teammem_dream_skipped", map[string]any{"reason": string(skip.Reason)})
		return a.printDreamSkip(skip)
	}
	if err != nil {
		return err
	}
	rep, err := d.Run(ctx, plan)
	tel.add("teammem_dream_run", map[string]any{"outcome": rep.Outcome, "files_touched": len(rep.Touched)})
	for _, msg := range rep.Denied {
		fmt.Fprintln(a.stderr, "dream: the sandbox refused:", msg)
	}
	if len(rep.Touched) > 0 && !cfg.DryRun {
		_ = extract.RecordWrites(stateDir, loc.MemoryDir, rep.Touched) // not another writer for the next extraction
	}
	if err != nil {
		// Files written before the failure stay written; say which.
		if len(rep.Touched) > 0 && !cfg.DryRun {
			fmt.Fprintf(a.stderr, "dream: changed before it stopped: %s\n", strings.Join(rep.Touched, ", "))
		}
		return err
	}
	return a.printDreamReport(loc, rep)
}

// dreamTools builds the model (from TEAMMEM_LLM_*) and the secret scanner.
func (a *app) dreamTools() (llm.Model, *secretscan.Scanner, error) {
	mc, err := llm.ConfigFromEnv(a.getenv)
	if err != nil {
		return nil, nil, fmt.Errorf("dream: %w", err)
	}
	model, err := llm.New(mc)
	if err != nil {
		return nil, nil, fmt.Errorf("dream: %w", err)
	}
	sc, err := secretscan.New()
	if err != nil {
		return nil, nil, err
	}
	return model, sc, nil
}

// dreamTelemetry returns the telemetry batch, nil when telemetry is off or
// there are no credentials to send it with.
func (a *app) dreamTelemetry() *telemetry {
	server, key, err := a.credentials()
	if err != nil {
		return nil
	}
	return a.newTelemetry(&apiclient.Client{BaseURL: server, Key: key})
}

// printDreamSkip reports which gate stopped the dream and why.
func (a *app) printDreamSkip(skip *dream.Skip) error {
	if a.jsonOut {
		return a.printJSON(map[string]any{"outcome": "skipped", "reason": skip.Reason, "message": skip.Message})
	}
	fmt.Fprintf(a.stdout, "dream skipped (%s): %s\n", skip.Reason, skip.Message)
	return nil
}

// printDreamReport prints a finished run: the files improved (or a dry
// run's diff), then the model's own summary.
func (a *app) printDreamReport(loc memdir.Location, rep dream.Report) error {
	if a.jsonOut {
		return a.printJSON(map[string]any{"outcome": rep.Outcome, "files_touched": nonNilKeys(rep.Touched), "summary": rep.Summary,
			"turns": rep.Turns, "hit_turn_limit": rep.HitTurnLimit, "diff": rep.Diff})
	}
	w := a.stdout
	switch {
	case rep.Outcome == dream.OutcomeDryRun && rep.Diff == "":
		fmt.Fprintf(w, "Dry run: no changes; nothing in %s was touched.\n", loc.MemoryDir)
	case rep.Outcome == dream.OutcomeDryRun:
		fmt.Fprint(w, rep.Diff)
		fmt.Fprintf(w, "\nDry run: the changes above were made to a copy; nothing in %s was touched.\n", loc.MemoryDir)
	case len(rep.Touched) == 0:
		fmt.Fprintln(w, "Dream finished: no memories changed.")
	default:
		fmt.Fprintf(w, "Improved %d %s:\n", len(rep.Touched), memoriesWord(len(rep.Touched)))
		for _, k := range rep.Touched {
			fmt.Fprintf(w, "  %s\n", k)
		}
	}
	if rep.HitTurnLimit {
		fmt.Fprintf(w, "(stopped at the limit of %d turns)\n", rep.Turns)
	}
	if rep.Summary != "" {
		fmt.Fprintf(w, "\n%s\n", rep.Summary)
	}
	return nil
}

// nonNilKeys keeps an empty key list a JSON array.
func nonNilKeys(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// memoriesWord is "memory" or "memories" for n.
func memoriesWord(n int) string {
	if n == 1 {
		return "memory"
	}
	return "memories"
}
