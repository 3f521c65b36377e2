package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/client/jobs/dream"
	"github.com/teammem/teammem/internal/wire"
)

// dreamProgress shows a server dream's progress: one line rewritten in
// place on a terminal, else a plain line whenever the status or the token
// count changed (not on every poll).
type dreamProgress struct {
	w     io.Writer
	tty   bool
	quiet bool // --json: scripts read stdout only
	start time.Time
	last  string // the last line shown, without the elapsed time
	shown bool   // a terminal line is open
}

// show prints d's progress.
func (p *dreamProgress) show(d wire.Dream) {
	if p.quiet {
		return
	}
	u := d.Usage
	state := fmt.Sprintf("dream %s: %s, %d tokens (%d in, %d out, %d cache read, %d cache written)", d.ID, d.Status, u.Total(),
		u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
	elapsed := time.Since(p.start).Round(time.Second)
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r%s, %s elapsed\033[K", state, elapsed)
		p.shown = true
	case state != p.last:
		fmt.Fprintf(p.w, "%s, %s elapsed\n", state, elapsed)
	}
	p.last = state
}

// done ends a terminal's progress line.
func (p *dreamProgress) done() {
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
}

// finishDream reports a dream that ended: a failed or canceled one is an
// error; a completed one prints its diff and is applied when apply is set.
func (a *app) finishDream(ctx context.Context, c *apiclient.Client, d wire.Dream, apply bool) error {
	if d.Status != wire.DreamCompleted {
		msg := fmt.Sprintf("dream %s %s", d.ID, d.Status)
		if d.Error != nil {
			msg += fmt.Sprintf(": %s: %s", d.Error.Type, d.Error.Message)
		}
		return errors.New(msg)
	}
	if d.OutputBehavior.Type == wire.BehaviorUpdateExisting {
		if a.jsonOut {
			return a.printJSON(map[string]any{"dream": d})
		}
		fmt.Fprintf(a.stdout, "Dream %s completed: it wrote into the team store directly (%d tokens).\n", d.ID, d.Usage.Total())
		return nil
	}
	diff, err := c.DreamDiff(ctx, d.ID)
	if err != nil {
		return explain("the diff of dream "+d.ID+": "+apiclient.FailureOf(err).Message, err)
	}
	if !a.jsonOut {
		printDreamDiff(a.stdout, diff)
	}
	if apply {
		return a.applyDream(ctx, c, d, diff)
	}
	if a.jsonOut {
		return a.printJSON(map[string]any{"dream": d, "diff": diff})
	}
	switch d.Review.State {
	case wire.ReviewApplied:
		fmt.Fprintf(a.stdout, "\nDream %s was applied already.\n", d.ID)
	case wire.ReviewDiscarded:
		fmt.Fprintf(a.stdout, "\nDream %s was discarded.\n", d.ID)
	default:
		fmt.Fprintf(a.stdout, "\nNothing is applied yet. To apply: teammem dream --team --apply %s (or Apply on the console's Dreams page);\n"+
			"to discard: teammem dream --team --discard %s\n", d.ID, d.ID)
	}
	return nil
}

// applyDream applies a completed dream. A 409 lists the memories that
// changed meanwhile; nothing was applied.
func (a *app) applyDream(ctx context.Context, c *apiclient.Client, d wire.Dream, diff wire.DreamDiff) error {
	applied, err := c.DreamApply(ctx, d.ID)
	var ce *apiclient.DreamConflictError
	if errors.As(err, &ce) {
		fmt.Fprintf(a.stderr, "The team store changed since dream %s started; nothing was applied. Changed meanwhile:\n", d.ID)
		for _, p := range ce.ChangedPaths {
			fmt.Fprintf(a.stderr, "  %s\n", p)
		}
		return explain(fmt.Sprintf("dream %s not applied: %d %s changed since it started; start a new dream",
			d.ID, len(ce.ChangedPaths), memoriesWord(len(ce.ChangedPaths))), err)
	}
	if err != nil {
		return explain("apply dream "+d.ID+": "+apiclient.FailureOf(err).Message, err)
	}
	if a.jsonOut {
		return a.printJSON(map[string]any{"dream": applied, "diff": diff, "applied": true})
	}
	fmt.Fprintf(a.stdout, "\nApplied dream %s to the team store (%d %s); other clients get it on their next sync.\n",
		d.ID, len(diff.Changes), memoriesWord(len(diff.Changes)))
	return nil
}

// printDreamDiff prints each changed memory as a unified diff of its
// content before and after, under a line naming the change.
func printDreamDiff(w io.Writer, diff wire.DreamDiff) {
	if len(diff.Changes) == 0 {
		fmt.Fprintln(w, "The dream changed no memories.")
		return
	}
	counts := map[string]int{}
	for _, ch := range diff.Changes {
		counts[ch.Change]++
		head := fmt.Sprintf("%s %s", ch.Change, ch.Path)
		if len(ch.MergedFrom) > 0 {
			head += " (merged from " + strings.Join(ch.MergedFrom, ", ") + ")"
		}
		fmt.Fprintf(w, "=== %s\n", head)
		oldName, newName := "a"+ch.Path, "b"+ch.Path
		if ch.Before == nil {
			oldName = "/dev/null"
		}
		if ch.After == nil {
			newName = "/dev/null"
		}
		fmt.Fprint(w, dream.UnifiedDiff(oldName, newName, deref(ch.Before), deref(ch.After)))
	}
	var parts []string
	for _, kind := range []string{wire.ChangeAdded, wire.ChangeMerged, wire.ChangeRewritten, wire.ChangeDeleted} {
		if counts[kind] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[kind], kind))
		}
	}
	fmt.Fprintf(w, "\n%d %s changed: %s\n", len(diff.Changes), memoriesWord(len(diff.Changes)), strings.Join(parts, ", "))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
