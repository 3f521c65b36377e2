package sessionmem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/llm"
)

// systemPrompt frames the update; the instructions proper are the prompt
// (DefaultPrompt or the override) in the user message.
const systemPrompt = `You keep the running notes of one Claude Code session: a Markdown file that lets the session carry
on where it was after its context has been compacted. You are shown the latest part of the conversation
between a developer and their coding agent, then the notes as they stand and how to update them. You can
only edit the notes file, with the edit tool.`

// Run brings a session's notes up to date when the gates say an update is
// due (or, with Force, when anything was added since the last one):
//
//  1. waits up to Wait for an in-flight update, then takes the session's
//     update lock; a live holder means SkipInProgress;
//  2. measures what the transcript gained and applies the gates; a skip
//     returns with its reason, having saved the measuring progress;
//  3. with no Model, skips with SkipNoModel and returns ModelErr wrapped;
//  4. sets the cursor (so tool calls count from here) and creates the notes
//     file from the template if needed;
//  5. runs the model on the conversation since the previous update, the
//     current notes and the budget reminders, with the edit tool alone;
//  6. records the context size it saw as the new baseline, and, when the
//     last turn made no tool calls, the last record as summarised.
//
// The Report is filled in even when the error is not nil.
func Run(ctx context.Context, o Options) (Report, error) {
	o = o.withDefaults()
	rep := Report{SessionID: o.SessionID, NotesPath: o.NotesPath}
	if err := o.validate(); err != nil {
		return rep.failed(err), err
	}
	if o.Wait > 0 {
		WaitIdle(ctx, o.StateDir, o.SessionID, o.Wait)
	}
	release, h, ok, err := acquire(o.StateDir, o.SessionID, o.PID, o.Now())
	if err != nil {
		return rep.failed(err), err
	}
	if !ok {
		rep = rep.skip(SkipInProgress, fmt.Sprintf("process %d has been updating the notes since %s", h.PID, h.Started.Format(time.TimeOnly)), &h)
		_, err := updateState(o.StateDir, o.SessionID, func(st *State) error { st.record(o.Now(), rep); return nil })
		return rep, err
	}
	defer release()

	var d Decision
	var prevCursor string
	var noModel error
	_, err = updateState(o.StateDir, o.SessionID, func(st *State) error {
		var reason string
		var err error
		if d, reason, err = o.measure(st); err != nil {
			return err
		}
		rep.measured(d)
		switch {
		case reason != "":
			rep = rep.skip(reason, d.Message, nil)
		case o.Model == nil:
			noModel = fmt.Errorf("session-memory needs a model: %w", cmpOr(o.ModelErr, llm.ErrNotConfigured))
			rep = rep.skip(SkipNoModel, noModel.Error(), nil)
			rep.Error = noModel.Error()
		default:
			prevCursor = st.Scan.Cursor
			if !st.Scan.CursorSeen {
				prevCursor = "" // the old cursor is gone: the whole conversation is new
			}
			st.Scan.SetCursor()
			rep.Outcome, rep.Message = OutcomeDue, d.Message
		}
		st.record(o.Now(), rep)
		return nil
	})
	switch {
	case err != nil:
		return rep.failed(err), err
	case noModel != nil:
		return rep, noModel
	case rep.Outcome != OutcomeDue:
		return rep, nil
	}
	rep, err = o.update(ctx, rep, prevCursor)
	_, saveErr := updateState(o.StateDir, o.SessionID, func(st *State) error {
		if err == nil {
			st.TokensAtLastUpdate, st.Updates, st.LastUpdate = d.Tokens, st.Updates+1, o.Now()
			if !d.LastTurnHasTools {
				st.LastSummarized = st.Scan.Cursor
			}
		}
		st.record(o.Now(), rep)
		return nil
	})
	return rep, errors.Join(err, saveErr)
}

// update creates the notes if needed and runs the model on them.
func (o Options) update(ctx context.Context, rep Report, since string) (Report, error) {
	created, err := EnsureNotes(o.NotesPath, o.Texts.Template)
	rep.Created = created
	if err != nil {
		return rep.failed(err), err
	}
	notes, err := os.ReadFile(o.NotesPath)
	if err != nil {
		return rep.failed(err), err
	}
	excerpt, _, err := Excerpt(o.TranscriptPath, since)
	if err != nil {
		err = fmt.Errorf("read transcript %s: %w", o.TranscriptPath, err)
		return rep.failed(err), err
	}
	rep.BudgetReminder = strings.TrimSpace(BudgetReminders(string(notes)))
	prompt := "<conversation>\n" + excerpt + "\n</conversation>\n\n" +
		Substitute(o.Texts.Prompt, map[string]string{"notesPath": o.NotesPath, "currentNotes": string(notes)}) +
		BudgetReminders(string(notes))
	box := &notesBox{path: o.NotesPath}
	ctx, cancel := context.WithTimeout(ctx, UpdateTimeout)
	defer cancel()
	runner := &consolidate.Runner{Model: o.Model, Toolbox: box, System: systemPrompt, MaxTurns: o.MaxTurns}
	res, err := runner.Run(ctx, prompt)
	rep.Turns, rep.Usage, rep.Edits, rep.Denied = res.Turns, res.Usage, box.Edits(), res.Denied
	if after, rerr := os.ReadFile(o.NotesPath); rerr == nil {
		rep.NotesTokens = EstimateTokens(string(after))
	}
	if err != nil {
		err = fmt.Errorf("update session notes: %w", err)
		return rep.failed(err), err
	}
	rep.Outcome = OutcomeUpdated
	rep.Message = fmt.Sprintf("%d edits; the notes are ~%d tokens", rep.Edits, rep.NotesTokens)
	return rep, nil
}

func cmpOr(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}
