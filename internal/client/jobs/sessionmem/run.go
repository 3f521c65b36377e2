package sessionmem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/teammem/teammem/internal/llm"
)

// Outcomes, as in Report.Outcome and the teammem_session_memory_run event.
const (
	OutcomeUpdated = "updated" // the model ran to completion
	OutcomeSkipped = "skipped" // a gate or the lock stopped it; SkipReason says which
	OutcomeDue     = "due"     // Check only: an update is due
	OutcomeError   = "error"   // reading, writing or the model failed
)

// DefaultMaxTurns bounds an update's model turns: one to edit, one to see
// the results, one more to fix a refused edit.
const DefaultMaxTurns = 3

// Options configure one check or update of a session's notes.
type Options struct {
	// SessionID names the session; it must pass ValidSessionID.
	SessionID string
	// TranscriptPath is the session's JSONL transcript.
	TranscriptPath string
	// NotesPath is the notes file (see NotesPath).
	NotesPath string
	// StateDir holds the session's state and lock; it must exist.
	StateDir string
	// Texts are the template and prompt; zero means the defaults.
	Texts Texts
	// Model edits the notes; nil skips a due update with SkipNoModel, and
	// ModelErr says why it is nil.
	Model    llm.Model
	ModelErr error
	// Thresholds tune the gates; zero fields mean the reference's.
	Thresholds Thresholds
	// Force skips the token and tool-call gates (before a compaction), but
	// not the lock, and not SkipNoChange when nothing was added.
	Force bool
	// Wait is how long Run waits for an in-flight update (see WaitIdle).
	Wait time.Duration
	// MaxTurns bounds the model's turns; 0 means DefaultMaxTurns.
	MaxTurns int
	// Now and PID default to the process's.
	Now func() time.Time
	PID int
}

// Report says what a check or an update found and did.
type Report struct {
	SessionID  string `json:"session_id"`
	NotesPath  string `json:"notes_path"`
	Outcome    string `json:"outcome"`
	SkipReason string `json:"skip_reason,omitempty"`
	// Message explains the outcome for people.
	Message string `json:"message,omitempty"`
	// The gates' measures.
	Tokens           int64 `json:"context_tokens"`
	Growth           int64 `json:"tokens_since_update"`
	ToolCalls        int   `json:"tool_calls_since_update"`
	LastTurnHasTools bool  `json:"last_turn_has_tools"`
	// Created reports that this update created the notes file.
	Created bool `json:"created,omitempty"`
	// Edits counts the edits applied, Denied the refusals.
	Edits  int      `json:"edits"`
	Denied []string `json:"denied,omitempty"`
	// BudgetReminder is what the prompt said about the budgets, if anything.
	BudgetReminder string `json:"budget_reminder,omitempty"`
	// NotesTokens is the notes' size after the update.
	NotesTokens int       `json:"notes_tokens,omitempty"`
	Turns       int       `json:"turns,omitempty"`
	Usage       llm.Usage `json:"-"`
	// Holder is the process holding the lock, for SkipInProgress.
	Holder *Holder `json:"holder,omitempty"`
	Error  string  `json:"error,omitempty"`
}

func (o Options) withDefaults() Options {
	if o.Texts.Template == "" {
		o.Texts.Template = DefaultTemplate
	}
	if o.Texts.Prompt == "" {
		o.Texts.Prompt = DefaultPrompt
	}
	if o.MaxTurns <= 0 {
		o.MaxTurns = DefaultMaxTurns
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PID == 0 {
		o.PID = os.Getpid()
	}
	return o
}

func (o Options) validate() error {
	switch {
	case !ValidSessionID(o.SessionID):
		return fmt.Errorf("session-memory: session id %q cannot name a file", o.SessionID)
	case o.TranscriptPath == "":
		return errors.New("session-memory: no transcript path")
	case !filepath.IsAbs(o.NotesPath):
		return fmt.Errorf("session-memory: notes path %q is not absolute", o.NotesPath)
	case o.StateDir == "":
		return errors.New("session-memory: no state directory")
	}
	return nil
}

// Check measures what the transcript gained and applies the gates without
// running the model, so a hook can decide cheaply whether to start an
// update. It saves the measuring progress (and the initialised flag), not
// the cursor. Outcome is OutcomeDue or OutcomeSkipped.
func Check(o Options) (Report, error) {
	o = o.withDefaults()
	rep := Report{SessionID: o.SessionID, NotesPath: o.NotesPath}
	if err := o.validate(); err != nil {
		return rep.failed(err), err
	}
	now := o.Now()
	if h, busy := CurrentHolder(o.StateDir, o.SessionID, now); busy {
		return rep.skip(SkipInProgress, fmt.Sprintf("process %d has been updating the notes since %s", h.PID, h.Started.Format(time.TimeOnly)), &h), nil
	}
	_, err := updateState(o.StateDir, o.SessionID, func(st *State) error {
		d, reason, err := o.measure(st)
		if err != nil {
			return err
		}
		rep.measured(d)
		if reason != "" {
			rep = rep.skip(reason, d.Message, nil)
			st.record(now, rep)
			return nil
		}
		rep.Outcome, rep.Message = OutcomeDue, d.Message
		return nil
	})
	if err != nil {
		return rep.failed(err), err
	}
	return rep, nil
}

// measure advances st's scan over what the transcript gained and applies
// the gates (or, with Force, only the "something new" check). It keeps the
// gates' bookkeeping in st and returns the skip reason, "" when due.
func (o Options) measure(st *State) (Decision, string, error) {
	st.NotesPath = o.NotesPath
	if err := st.Scan.Advance(o.TranscriptPath); errors.Is(err, fs.ErrNotExist) {
		return Decision{Message: "no transcript at " + o.TranscriptPath}, SkipNoTranscript, nil
	} else if err != nil {
		return Decision{}, "", err
	}
	d := Decide(o.Thresholds, st.Initialized, st.TokensAtLastUpdate, &st.Scan)
	st.Initialized, st.TokensAtLastUpdate = d.Initialized, d.Baseline
	if !o.Force {
		return d, d.Reason, nil
	}
	if st.Scan.LastUUID == "" || (st.Scan.Cursor == st.Scan.LastUUID && st.Scan.CursorSeen) {
		d.Message = "nothing was added to the conversation since the last update"
		return d, SkipNoChange, nil
	}
	d.Update, d.Reason, d.Message = true, "", fmt.Sprintf("forced: ~%d tokens in context, %d since the last update", d.Tokens, d.Growth)
	return d, "", nil
}

// record notes a run's outcome in the state.
func (st *State) record(now time.Time, rep Report) {
	st.LastRun, st.LastOutcome, st.LastSkipReason, st.LastMessage = now, rep.Outcome, rep.SkipReason, rep.Message
	if rep.Error != "" {
		st.LastMessage = rep.Error
	}
}

func (r *Report) measured(d Decision) {
	r.Tokens, r.Growth, r.ToolCalls, r.LastTurnHasTools = d.Tokens, d.Growth, d.ToolCalls, d.LastTurnHasTools
}

func (r Report) skip(reason, msg string, h *Holder) Report {
	r.Outcome, r.SkipReason, r.Message, r.Holder = OutcomeSkipped, reason, msg, h
	return r
}

func (r Report) failed(err error) Report {
	r.Outcome, r.Error = OutcomeError, err.Error()
	return r
}
