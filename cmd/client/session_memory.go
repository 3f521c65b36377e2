package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/jobs/sessionmem"
	"github.com/teammem/teammem/internal/client/memdir"
)

// sessionMemoryFlags are the flags of `teammem session-memory`.
type sessionMemoryFlags struct {
	session    string
	transcript string
	sessionCwd string
	force      bool
	check      bool
	wait       time.Duration
	fromHook   bool
}

// sessionMemoryCmd is `teammem session-memory`: bring one session's notes
// up to date when the gates say so.
func (a *app) sessionMemoryCmd() *cobra.Command {
	var f sessionMemoryFlags
	cmd := &cobra.Command{
		Use:   "session-memory",
		Short: "Update a Claude Code session's running notes with your model when enough has happened",
		Long: "session-memory keeps <config home>/projects/<sanitized cwd>/<session>/session-memory/summary.md\n" +
			"up to date from the session's transcript, as Claude Code's session memory does: the first update\n" +
			"once the context holds 10,000 tokens, then whenever 5,000 more have accrued and either 3 tool calls\n" +
			"happened since the last update or the last turn made none. The model can only edit that file, and\n" +
			"never its headings or their italic lines. The notes are handed back to the session after a\n" +
			"compaction (see `teammem hook`). A skip prints its reason and exits 0.\n\n" +
			"The template and the instructions can be replaced by <config home>/session-memory/config/template.md\n" +
			"and prompt.md ({{notesPath}} and {{currentNotes}} are filled in). " + envSessionMemory + "=0 turns the\n" +
			"hooks' updates off. Needs a model, as extract does.",
		Example: "  teammem session-memory --session 5c0375b4-57a5-4f26-b12d-d022ee4e51b7\n" +
			"  teammem session-memory --transcript ~/.claude/projects/-home-me-src-app/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl --force --json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return a.runSessionMemory(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.session, "session", "", "session id (default: the transcript's file name)")
	fl.StringVar(&f.transcript, "transcript", "", "the session's JSONL transcript (default: <transcript dir>/<session>.jsonl)")
	fl.StringVar(&f.sessionCwd, "session-cwd", "", "the session's current directory, which keys its notes (default: the working directory)")
	fl.BoolVar(&f.force, "force", false, "update when anything was added since the last update, whatever the token and tool-call gates say")
	fl.BoolVar(&f.check, "check", false, "only apply the gates and say whether an update is due")
	fl.DurationVar(&f.wait, "wait", 0, "wait this long for another update of the session to finish first")
	fl.BoolVar(&f.fromHook, "from-hook", false, "log the outcome to hook.log and print nothing")
	_ = fl.MarkHidden("from-hook")
	return cmd
}

// sessionOptions returns the options for one session of loc's project; an
// empty transcript path means <loc.TranscriptDir>/<session>.jsonl, an empty
// cwd the project root.
func (a *app) sessionOptions(loc memdir.Location, session, transcriptPath, cwd string) (sessionmem.Options, error) {
	if !sessionmem.ValidSessionID(session) {
		return sessionmem.Options{}, &usageError{fmt.Errorf("session id %q cannot name a notes file", session)}
	}
	transcriptPath, err := sessionTranscript(loc, session, transcriptPath)
	if err != nil {
		return sessionmem.Options{}, err
	}
	stateDir, err := a.localStateDir(loc)
	if err != nil {
		return sessionmem.Options{}, err
	}
	if cwd == "" {
		cwd = loc.ProjectRoot
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return sessionmem.Options{}, err
	}
	return sessionmem.Options{SessionID: session, TranscriptPath: transcriptPath, StateDir: stateDir,
		NotesPath: sessionmem.NotesPath(loc.ConfigHome, cwd, session), Texts: sessionmem.LoadTexts(loc.ConfigHome)}, nil
}

// runSessionMemory runs the command.
func (a *app) runSessionMemory(ctx context.Context, f sessionMemoryFlags) error {
	if f.session == "" && f.transcript == "" {
		return &usageError{errors.New("give --session ID (the transcript is found in the project's transcript directory) or --transcript PATH")}
	}
	if f.session == "" {
		f.session = strings.TrimSuffix(filepath.Base(f.transcript), ".jsonl")
	}
	loc, err := a.location()
	if err != nil {
		return err
	}
	o, err := a.sessionOptions(loc, f.session, f.transcript, f.sessionCwd)
	if err != nil {
		return err
	}
	o.Force, o.Wait = f.force, f.wait
	for _, p := range o.Texts.Problems {
		fmt.Fprintln(a.stderr, "session-memory: using the default instead of", p)
	}
	var rep sessionmem.Report
	if f.check {
		rep, err = sessionmem.Check(o)
	} else {
		o.Model, o.ModelErr = a.extractModel()
		rep, err = sessionmem.Run(ctx, o)
		a.sessionMemoryTelemetry(ctx, rep)
	}
	if f.fromHook {
		a.logSessionMemory(rep, err)
		return nil
	}
	if a.jsonOut {
		if perr := a.printJSON(rep); perr != nil && err == nil {
			err = perr
		}
		return err
	}
	if err == nil {
		a.printSessionMemory(rep)
	}
	return err
}

// logSessionMemory writes a hook-started update's outcome to hook.log.
func (a *app) logSessionMemory(rep sessionmem.Report, err error) {
	log := a.openHookLog("session-memory")
	switch {
	case err != nil:
		log.printf("session %s: failed: %v", rep.SessionID, err)
	case rep.Outcome == sessionmem.OutcomeUpdated:
		log.printf("session %s: notes updated (%s): %s", rep.SessionID, rep.Message, rep.NotesPath)
	default:
		log.printf("session %s: not updated (%s): %s", rep.SessionID, first(rep.SkipReason, rep.Outcome), rep.Message)
	}
}

// printSessionMemory prints a report for people.
func (a *app) printSessionMemory(rep sessionmem.Report) {
	w := a.stdout
	switch rep.Outcome {
	case sessionmem.OutcomeUpdated:
		fmt.Fprintf(w, "Session notes updated: %s\n  %s\n", rep.NotesPath, rep.Message)
	case sessionmem.OutcomeDue:
		fmt.Fprintf(w, "An update is due: %s\n", rep.Message)
	default:
		fmt.Fprintf(w, "Session notes not updated (%s): %s\n", rep.SkipReason, rep.Message)
	}
	for _, d := range rep.Denied {
		fmt.Fprintf(a.stderr, "refused: %s\n", d)
	}
}

// sessionMemoryTelemetry sends teammem_session_memory_run, and
// teammem_session_memory_skipped for a skip (see engineTelemetry).
func (a *app) sessionMemoryTelemetry(ctx context.Context, rep sessionmem.Report) {
	a.engineTelemetry(ctx, "teammem_session_memory", map[string]any{"outcome": rep.Outcome, "edits": rep.Edits}, rep.SkipReason)
}
