package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/wire"
)

// defaultDreamPoll is how often `dream --team` asks the server how its
// dream is doing.
const defaultDreamPoll = 2 * time.Second

// maxInstructions is the longest --instructions the Dreams API accepts, in
// characters.
const maxInstructions = 4096

// teamOnlyFlags are the flags of `dream --team`; localOnlyFlags those of
// the local dream. Neither set means anything to the other.
var (
	teamOnlyFlags  = []string{"model", "instructions", "update-existing", "apply", "discard"}
	localOnlyFlags = []string{"min-hours", "min-sessions", "max-turns", "session", "substantive", "force", "dry-run",
		"schedule", "install-schedule", "scheduler"}
)

// interruptedError is a `dream --team` stopped by Ctrl-C: exit 130, after
// msg says what became of the dream on the server.
type interruptedError struct{ msg string }

func (e *interruptedError) Error() string { return e.msg }

// runDreamTeam is `teammem dream --team [drm_id]`: start a dream of the
// repo's team store on the server (or, with an id, follow one), wait for it
// with progress, print its diff, and apply or discard it when asked.
func (a *app) runDreamTeam(cmd *cobra.Command, f dreamFlags, args []string) error {
	if err := checkDreamTeamFlags(cmd, f, args); err != nil {
		return err
	}
	c, err := a.teamClient()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if f.discard {
		return a.discardDream(ctx, c, args[0])
	}
	var d wire.Dream
	started := len(args) == 0
	if started {
		if d, err = a.startDream(ctx, c, f); err != nil {
			return err
		}
	} else if d, err = c.DreamGet(ctx, args[0]); err != nil {
		return explain("dream "+args[0]+": "+apiclient.FailureOf(err).Message, err)
	}
	// Ctrl-C cancels a dream this run started; one it only follows keeps
	// running.
	if d, err = a.waitDream(ctx, c, d, started); err != nil {
		return err
	}
	return a.finishDream(ctx, c, d, f.apply)
}

// checkDreamTeamFlags refuses flag combinations that mean nothing.
func checkDreamTeamFlags(cmd *cobra.Command, f dreamFlags, args []string) error {
	fl := cmd.Flags()
	for _, name := range localOnlyFlags {
		if fl.Changed(name) {
			return &usageError{fmt.Errorf("--%s is for the local dream; it does not go with --team", name)}
		}
	}
	switch {
	case f.apply && f.discard:
		return &usageError{errors.New("--apply and --discard exclude each other")}
	case f.discard && len(args) == 0:
		return &usageError{errors.New("--discard needs the dream's id: teammem dream --team --discard drm_…")}
	case len(args) == 1 && !apiclient.ValidDreamID(args[0]):
		return &usageError{fmt.Errorf("%q is not a dream id (drm_…)", args[0])}
	case len(args) == 1 && (fl.Changed("model") || fl.Changed("instructions") || fl.Changed("update-existing")):
		return &usageError{errors.New("--model, --instructions and --update-existing start a new dream; they do not go with a dream id")}
	case f.apply && f.updateExisting:
		return &usageError{errors.New("--update-existing writes into the team store itself: there is nothing to --apply")}
	case utf8.RuneCountInString(f.instructions) > maxInstructions:
		return &usageError{fmt.Errorf("--instructions has %d characters; at most %d", utf8.RuneCountInString(f.instructions), maxInstructions)}
	}
	return nil
}

// checkLocalDreamFlags refuses the flags of `dream --team` without it.
func checkLocalDreamFlags(cmd *cobra.Command, args []string) error {
	for _, name := range teamOnlyFlags {
		if cmd.Flags().Changed(name) {
			return &usageError{fmt.Errorf("--%s needs --team (it is about the server's dream of the team store)", name)}
		}
	}
	if len(args) > 0 {
		return &usageError{fmt.Errorf("unexpected argument %q: only dream --team takes a dream id", args[0])}
	}
	return nil
}

// teamClient is the API client of the current repository.
func (a *app) teamClient() (*apiclient.Client, error) {
	loc, err := a.location()
	if err != nil && a.repo == "" {
		return nil, err
	}
	repo, server, key, err := a.repoServer(loc)
	if err != nil {
		return nil, err
	}
	return &apiclient.Client{BaseURL: server, Key: key, Repo: repo, UserAgent: "teammem-client",
		HTTP: &http.Client{Timeout: 30 * time.Second}}, nil
}

// startDream creates the dream: the model from --model, else
// TEAMMEM_DREAM_MODEL.
func (a *app) startDream(ctx context.Context, c *apiclient.Client, f dreamFlags) (wire.Dream, error) {
	model := first(f.model, a.getenv("TEAMMEM_DREAM_MODEL"))
	if model == "" {
		return wire.Dream{}, &usageError{errors.New("dream --team needs a model: pass --model or set TEAMMEM_DREAM_MODEL " +
			"(an id the server allows in its TEAMMEM_DREAM_MODELS)")}
	}
	d, err := c.DreamCreate(ctx, apiclient.DreamParams{Model: model, Instructions: f.instructions, UpdateExisting: f.updateExisting})
	if err != nil {
		return wire.Dream{}, explain("start the dream: "+apiclient.FailureOf(err).Message, err)
	}
	if !a.jsonOut {
		fmt.Fprintf(a.stderr, "dream %s started on the server for the team memory of %s (model %s)\n", d.ID, c.Repo, model)
	}
	return d, nil
}

// discardDream discards a dream's output store.
func (a *app) discardDream(ctx context.Context, c *apiclient.Client, id string) error {
	d, err := c.DreamDiscard(ctx, id)
	if err != nil {
		return explain("discard dream "+id+": "+apiclient.FailureOf(err).Message, err)
	}
	if a.jsonOut {
		return a.printJSON(map[string]any{"dream": d})
	}
	fmt.Fprintf(a.stdout, "Discarded dream %s: the team store is unchanged and the dream's output store is archived.\n", d.ID)
	return nil
}

// waitDream polls d until it ends, showing progress on stderr. On Ctrl-C
// it cancels the dream on the server when cancel is set, then returns an
// interruptedError.
func (a *app) waitDream(ctx context.Context, c *apiclient.Client, d wire.Dream, cancel bool) (wire.Dream, error) {
	p := &dreamProgress{w: a.stderr, tty: isTerminal(a.stderr), quiet: a.jsonOut, start: time.Now()}
	poll := a.dreamPoll
	if poll <= 0 {
		poll = defaultDreamPoll
	}
	for {
		p.show(d)
		if wire.DreamFinal(d.Status) {
			p.done()
			return d, nil
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			p.done()
			return d, a.interrupted(ctx, c, d.ID, cancel)
		case <-t.C:
		}
		next, err := c.DreamGet(ctx, d.ID)
		switch {
		case ctx.Err() != nil:
			p.done()
			return d, a.interrupted(ctx, c, d.ID, cancel)
		case err != nil:
			p.done()
			return d, explain("dream "+d.ID+": "+apiclient.FailureOf(err).Message, err)
		}
		d = next
	}
}

// interrupted cancels dream id on the server (when cancel is set) after a
// Ctrl-C, and says what became of it.
func (a *app) interrupted(ctx context.Context, c *apiclient.Client, id string, cancel bool) error {
	if !cancel {
		return &interruptedError{fmt.Sprintf("interrupted: stopped waiting; dream %s goes on on the server", id)}
	}
	cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer stop()
	if _, err := c.DreamCancel(cctx, id); err != nil {
		return &interruptedError{fmt.Sprintf("interrupted: could not cancel dream %s on the server (%s); cancel it in the console",
			id, apiclient.FailureOf(err).Message)}
	}
	return &interruptedError{fmt.Sprintf("interrupted: canceled dream %s on the server", id)}
}
