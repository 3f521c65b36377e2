package sessionmem

import "fmt"

// Skip reasons, as in Report.SkipReason and the teammem_session_memory_skipped
// event. The set is closed: telemetry counts any other value as "other".
const (
	SkipDisabled      = "disabled"        // TEAMMEM_SESSION_MEMORY turned session memory off
	SkipClaudeCode    = "claude_code"     // Claude Code keeps this session's notes itself
	SkipNoModel       = "no_model"        // an update was due but no model is configured
	SkipNoTranscript  = "no_transcript"   // the session has no transcript (yet)
	SkipInProgress    = "in_progress"     // another update of the session holds its lock
	SkipInitThreshold = "init_threshold"  // the context has not reached Thresholds.Init
	SkipTokens        = "token_threshold" // fewer than Thresholds.Between tokens since the last update
	SkipToolCalls     = "tool_threshold"  // too few tool calls, and the last turn made some
	SkipNoChange      = "no_change"       // forced, but nothing was added since the last update
)

// SkipReasons lists every skip reason, for allowlists and documentation.
var SkipReasons = []string{SkipDisabled, SkipClaudeCode, SkipNoModel, SkipNoTranscript, SkipInProgress,
	SkipInitThreshold, SkipTokens, SkipToolCalls, SkipNoChange}

// Thresholds are the gates' numbers; the zero value of a field means the
// reference's default (§7.2).
type Thresholds struct {
	// Init is the context size, in tokens, the first update waits for.
	Init int64
	// Between is how many tokens must accrue between two updates.
	Between int64
	// ToolCalls is how many tool calls since the last update let one run
	// while the agent is still calling tools.
	ToolCalls int
}

// The reference's thresholds.
const (
	DefaultInit      = 10000
	DefaultBetween   = 5000
	DefaultToolCalls = 3
)

func (t Thresholds) withDefaults() Thresholds {
	if t.Init <= 0 {
		t.Init = DefaultInit
	}
	if t.Between <= 0 {
		t.Between = DefaultBetween
	}
	if t.ToolCalls <= 0 {
		t.ToolCalls = DefaultToolCalls
	}
	return t
}

// Decision is what the gates concluded for one measure.
type Decision struct {
	// Update reports that an update is due; otherwise Reason says why not.
	Update bool
	Reason string
	// Message explains the decision for people.
	Message string
	// Initialized is the session's initialised flag after this decision:
	// set for good once the context reached Thresholds.Init.
	Initialized bool
	// Baseline is the token count the next growth is measured from. It is
	// the state's, except after a compaction shrank the context below it:
	// then the current count, so growth is counted again from there.
	Baseline int64
	// Tokens, Growth, ToolCalls and LastTurnHasTools are the measures seen.
	Tokens           int64
	Growth           int64
	ToolCalls        int
	LastTurnHasTools bool
}

// Decide applies the reference's gates (§7.2) to a session whose
// initialised flag and token count at the last update are given:
//
//  1. not yet initialised: the context must hold Init tokens; once it
//     does the session is initialised for good;
//  2. at least Between tokens accrued since the last update;
//  3. and either ToolCalls tool calls since the last update, or none in
//     the last assistant turn (the agent has paused, so notes catch up).
//
// A context smaller than at the last update was compacted since: the
// reference does not say, so teammem measures growth from the new size.
func Decide(t Thresholds, initialized bool, baseline int64, s *Scan) Decision {
	t = t.withDefaults()
	d := Decision{Initialized: initialized, Baseline: baseline, Tokens: s.Tokens(), ToolCalls: s.ToolCalls, LastTurnHasTools: s.LastTurnHasTools}
	if s.Cursor != "" && !s.CursorSeen {
		d.ToolCalls = 0
	}
	if !d.Initialized {
		if d.Tokens < t.Init {
			return d.skip(SkipInitThreshold, fmt.Sprintf("the context holds ~%d tokens; the first update waits for %d", d.Tokens, t.Init))
		}
		d.Initialized = true
	}
	if d.Tokens < d.Baseline {
		d.Baseline = d.Tokens
	}
	d.Growth = d.Tokens - d.Baseline
	if d.Growth < t.Between {
		return d.skip(SkipTokens, fmt.Sprintf("~%d tokens since the last update; the next waits for %d", d.Growth, t.Between))
	}
	if d.ToolCalls < t.ToolCalls && d.LastTurnHasTools {
		return d.skip(SkipToolCalls, fmt.Sprintf("%d tool calls since the last update and the agent is still calling tools; the next waits for %d or a turn without tools",
			d.ToolCalls, t.ToolCalls))
	}
	d.Update = true
	d.Message = fmt.Sprintf("~%d tokens in context, %d since the last update, %d tool calls", d.Tokens, d.Growth, d.ToolCalls)
	return d
}

func (d Decision) skip(reason, msg string) Decision {
	d.Reason, d.Message = reason, msg
	return d
}
