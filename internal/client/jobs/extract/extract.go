package extract

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/teammem/teammem/internal/client/jobs/agent"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/client/transcript"
	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/teammem"
)

// Outcomes of a run, as in Report.Outcome and the teammem_extract_run event.
const (
	OutcomeSaved   = "saved"   // the model ran to completion (it may have found nothing to store)
	OutcomeSkipped = "skipped" // a skip rule applied; SkipReason says which
	OutcomeError   = "error"   // reading the transcript or the model failed
)

// Skip reasons, as in Report.SkipReason and the teammem_extract_skipped event.
const (
	SkipCoalesced   = "coalesced"    // another extraction of the session is running
	SkipNoMessages  = "no_messages"  // nothing after the cursor
	SkipDirectWrite = "direct_write" // the agent wrote memory files itself
	SkipNoProse     = "no_prose"     // nothing the developer typed
	SkipThrottled   = "throttled"    // fewer than Every eligible turns
	SkipNoModel     = "no_model"     // a model call was due but none is configured
	// SkipMemoryChanged: a memory file changed after the turn began, by
	// another writer (the agent, Claude Code's own extractor).
	SkipMemoryChanged = "memory_changed"
)

// DefaultMaxTurns is the model's turn budget (reference §5.3e).
const DefaultMaxTurns = 5

// Options configure one extraction.
type Options struct {
	// Location is the project's memory location; MemoryDir is where memories
	// go, and team memory is used when MemoryDir/team exists.
	Location memdir.Location
	// SessionID names the session; state is kept per session.
	SessionID string
	// TranscriptPath is the session's JSONL transcript.
	TranscriptPath string
	// Model answers the extraction prompt. When nil, Run still applies the
	// skip rules and fails only when a model call is due.
	Model llm.Model
	// ModelErr says why Model is nil (typically an error wrapping
	// llm.ErrNotConfigured); Run returns it, wrapped, when a model is needed.
	ModelErr error
	// Scanner guards team/ against secrets; nil means secretscan.New.
	Scanner *secretscan.Scanner
	// Every runs the model only on every Every-th eligible turn; 0 means 1.
	Every int
	// MaxTurns bounds the model's turns; 0 means DefaultMaxTurns.
	MaxTurns int
	// Now tells the time; nil means time.Now.
	Now func() time.Time
	// StateDir holds extract.json and the locks; it must exist and lie
	// outside the memory directory.
	StateDir string
	// Mode is ModeTopics ("" too) or ModeLog.
	Mode string
	// SettleWait is how long to wait, before a model call, for another
	// writer (Claude Code's own extractor, when it runs too) to change a
	// memory file; one that does makes the turn a memory_changed skip.
	SettleWait time.Duration
}

// Report says what one extraction did.
type Report struct {
	SessionID string `json:"session_id"`
	MemoryDir string `json:"memory_dir"`
	// Outcome is OutcomeSaved, OutcomeSkipped or OutcomeError.
	Outcome string `json:"outcome"`
	// SkipReason is one of the Skip constants when Outcome is skipped.
	SkipReason string `json:"skip_reason,omitempty"`
	// Messages counts the user and assistant messages after the cursor.
	Messages int `json:"messages"`
	// TurnsSince and Every explain a throttled run: eligible turns counted
	// so far, and how many are needed.
	TurnsSince int `json:"turns_since,omitempty"`
	Every      int `json:"every,omitempty"`
	// MemoriesSaved counts the files written, edited or deleted other than
	// the MEMORY.md indexes; TeamSaved how many of them are in team/.
	MemoriesSaved int `json:"memories_saved"`
	TeamSaved     int `json:"team_saved"`
	// Files lists every file touched, as paths relative to MemoryDir.
	Files []string `json:"files"`
	// Denied lists the sandbox's refusals.
	Denied []string `json:"denied,omitempty"`
	// Turns counts model turns; HitTurnLimit reports the budget ran out.
	Turns        int   `json:"turns"`
	HitTurnLimit bool  `json:"hit_turn_limit,omitempty"`
	Usage        Usage `json:"usage"`
	// Error describes a failure (Outcome error, or skipped for no_model).
	Error string `json:"error,omitempty"`
}

// Usage counts the model's tokens over the whole run.
type Usage struct {
	InputTokens         int `json:"input_tokens"`
	OutputTokens        int `json:"output_tokens"`
	CacheReadTokens     int `json:"cache_read_tokens"`
	CacheCreationTokens int `json:"cache_creation_tokens"`
}

// Run extracts memories from the session's new messages. It takes the
// session's lock without waiting (when another run holds it, Run returns a
// "coalesced" skip: that run, or the next one, covers these messages), then:
//
//  1. reads the messages after the cursor; all of them when there is no
//     cursor or it is no longer in the transcript (reference §5.3a);
//  2. skips, advancing the cursor, when there are none ("no_messages"), when
//     an assistant message calls Edit or Write on a path inside the memory
//     directory ("direct_write"; not checked when the cursor was lost), or
//     when the developer typed nothing ("no_prose");
//  3. counts the turn and skips without advancing the cursor while fewer
//     than Every turns were counted ("throttled");
//  4. runs the model in a sandbox rooted at the memory directory; on success
//     the cursor moves to the transcript's last message and the count
//     resets, on failure both stay, so the messages are tried again.
//
// The returned error is non-nil for a failure (Outcome error) and for a due
// model call without a model (Outcome skipped, SkipReason no_model); the
// Report is always filled in.
func Run(ctx context.Context, o Options) (Report, error) {
	o = o.withDefaults()
	rep := Report{SessionID: o.SessionID, MemoryDir: o.Location.MemoryDir, Files: []string{}}
	if err := o.validate(); err != nil {
		return rep.failed(err), err
	}
	now := o.Now()
	unlock, ok, err := lockSession(o.StateDir, o.SessionID)
	if err != nil {
		return rep.failed(err), err
	}
	if !ok {
		rep.Outcome, rep.SkipReason = OutcomeSkipped, SkipCoalesced
		err := updateSession(o.StateDir, o.SessionID, now, func(s *SessionState) {
			s.LastRun, s.LastOutcome, s.LastSkipReason = now, SkipCoalesced, ""
		})
		return rep, err
	}
	defer unlock()
	st, err := LoadState(o.StateDir)
	if err != nil {
		st = State{Sessions: map[string]SessionState{}} // see updateSession
	}
	sess := st.Sessions[o.SessionID]
	rep, err = o.run(ctx, rep, &sess)
	saveErr := updateSession(o.StateDir, o.SessionID, now, func(s *SessionState) {
		*s = sess
		s.LastRun, s.LastOutcome, s.LastSkipReason = now, rep.Outcome, rep.SkipReason
	})
	return rep, errors.Join(err, saveErr)
}

// run applies the skip rules and runs the model, updating sess.
func (o Options) run(ctx context.Context, rep Report, sess *SessionState) (Report, error) {
	msgs, found, lastUUID, err := transcript.MessagesAfter(o.TranscriptPath, sess.Cursor)
	if err != nil {
		err = fmt.Errorf("read transcript %s: %w", o.TranscriptPath, err)
		return rep.failed(err), err
	}
	rep.Messages = len(msgs)
	advance := func(reason string) (Report, error) {
		if lastUUID != "" {
			sess.Cursor = lastUUID
		}
		rep.Outcome, rep.SkipReason = OutcomeSkipped, reason
		return rep, nil
	}
	// A lost cursor (compaction rewrote the chain) means the new messages are
	// unknown; the reference then looks at none for direct writes.
	written := msgs
	if sess.Cursor != "" && !found {
		written = nil
	}
	// The turn began with its first new message; a memory file another
	// writer changed since (until TurnGrace after its last) means the
	// turn's memories are being saved by someone else.
	var win turnWindow
	var timed bool
	if len(msgs) > 0 {
		win, timed = window(msgs[0].Timestamp, msgs[len(msgs)-1].Timestamp)
	}
	switch {
	case len(msgs) == 0:
		return advance(SkipNoMessages)
	case transcript.WritesMemory(written, o.isMemPath):
		return advance(SkipDirectWrite)
	case timed && changedSince(o.Location.MemoryDir, o.StateDir, win) != "":
		return advance(SkipMemoryChanged)
	case !transcript.HasProse(msgs):
		return advance(SkipNoProse)
	}
	sess.TurnsSince++
	if sess.TurnsSince < o.Every {
		rep.Outcome, rep.SkipReason, rep.TurnsSince, rep.Every = OutcomeSkipped, SkipThrottled, sess.TurnsSince, o.Every
		return rep, nil
	}
	if o.Model == nil {
		err := fmt.Errorf("extract needs a model: %w", cmpOr(o.ModelErr, llm.ErrNotConfigured))
		rep = rep.failed(err)
		rep.Outcome, rep.SkipReason = OutcomeSkipped, SkipNoModel
		return rep, err
	}
	if o.SettleWait > 0 && timed && settle(ctx, o.Location.MemoryDir, o.StateDir, win, o.SettleWait) != "" {
		sess.TurnsSince = 0
		return advance(SkipMemoryChanged)
	}
	res, logged, err := o.runModel(ctx, msgs)
	rep.record(res)
	if o.Mode == ModeLog {
		rep.MemoriesSaved, rep.TeamSaved = logged, 0
	}
	if len(res.Touched) > 0 {
		_ = RecordWrites(o.StateDir, o.Location.MemoryDir, res.Touched) // at worst the next turn skips as memory_changed
	}
	if err != nil {
		err = fmt.Errorf("extract memories: %w", err)
		return rep.failed(err), err
	}
	sess.Cursor, sess.TurnsSince = lastUUID, 0
	rep.Outcome = OutcomeSaved
	return rep, nil
}

// runModel prompts the model with the new messages and the manifest and
// lets it work in the sandbox; in the long-running mode it also returns how
// many entries it appended to the daily log.
func (o Options) runModel(ctx context.Context, msgs []transcript.Message) (consolidate.Result, int, error) {
	// Like Claude Code, make sure the directory exists so the model can
	// write without checking; team/ is never created here, since its
	// presence is what turns team memory on.
	if err := os.MkdirAll(o.Location.MemoryDir, 0o755); err != nil {
		return consolidate.Result{}, 0, err
	}
	p := promptParams{
		team:     isDir(filepath.Join(o.Location.MemoryDir, "team")),
		maxTurns: o.MaxTurns,
		messages: len(msgs),
		excerpt:  renderExcerpt(msgs, MaxExcerptChars),
		manifest: Manifest(o.Location.MemoryDir),
	}
	if o.Mode == ModeLog {
		sb := &agent.Sandbox{Root: o.Location.MemoryDir}
		box := &logBox{sb: sb, root: o.Location.MemoryDir, now: o.Now}
		r := &consolidate.Runner{Model: o.Model, Toolbox: box, System: logSystemPrompt(p), MaxTurns: o.MaxTurns}
		res, err := r.Run(ctx, userPrompt(p))
		return res, box.entries, err
	}
	sc := o.Scanner
	if sc == nil && p.team {
		var err error
		if sc, err = secretscan.New(); err != nil {
			return consolidate.Result{}, 0, err
		}
	}
	r := &consolidate.Runner{
		Model:    o.Model,
		Toolbox:  &agent.Sandbox{Root: o.Location.MemoryDir, Scanner: sc},
		System:   systemPrompt(p),
		MaxTurns: o.MaxTurns,
	}
	res, err := r.Run(ctx, userPrompt(p))
	return res, 0, err
}

// record copies what the model did into the report.
func (r *Report) record(res consolidate.Result) {
	r.Turns, r.HitTurnLimit, r.Denied = res.Turns, res.HitTurnLimit, res.Denied
	r.Usage = Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens,
		CacheReadTokens: res.Usage.CacheReadTokens, CacheCreationTokens: res.Usage.CacheCreationTokens}
	r.Files = append(r.Files[:0], res.Touched...)
	for _, key := range res.Touched {
		if path.Base(key) == teammem.IndexName {
			continue
		}
		r.MemoriesSaved++
		if strings.HasPrefix(key, "team/") {
			r.TeamSaved++
		}
	}
}

// failed marks r as an error.
func (r Report) failed(err error) Report {
	r.Outcome, r.Error = OutcomeError, err.Error()
	return r
}

// isMemPath reports whether p lies inside the memory directory, lexically
// (no symlinks resolved) as Claude Code's isAutoMemPath does (reference
// §2.4); relative paths never do. team/ is inside it.
func (o Options) isMemPath(p string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	p = norm.NFC.String(filepath.Clean(p))
	return strings.HasPrefix(p, o.Location.MemoryDir+string(filepath.Separator))
}

func (o Options) withDefaults() Options {
	if o.Every <= 0 {
		o.Every = 1
	}
	if o.MaxTurns <= 0 {
		o.MaxTurns = DefaultMaxTurns
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Location.MemoryDir = filepath.Clean(o.Location.MemoryDir)
	return o
}

func (o Options) validate() error {
	switch {
	case strings.TrimSpace(o.SessionID) == "":
		return errors.New("extract: no session id")
	case o.TranscriptPath == "":
		return errors.New("extract: no transcript path")
	case !filepath.IsAbs(o.Location.MemoryDir):
		return fmt.Errorf("extract: memory directory %q is not an absolute path", o.Location.MemoryDir)
	case o.StateDir == "":
		return errors.New("extract: no state directory")
	case o.Mode != "" && o.Mode != ModeTopics && o.Mode != ModeLog:
		return fmt.Errorf("extract: memory mode %q: want %s or %s", o.Mode, ModeTopics, ModeLog)
	}
	return nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func cmpOr(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}
