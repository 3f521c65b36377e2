// Package extract turns what happened in an agent session into memory files.
//
// It is teammem's counterpart of Claude Code's background memory extraction
// (reference §5), run as a short-lived command rather than inside the agent:
// each call reads the session transcript after this session's cursor, applies
// the skip rules, and when something is left to look at, hands the new
// messages to a model that may read and change the memory directory through
// an agent.Sandbox (no shell; writes only inside the memory directory; the
// secret guard on team/) for at most five turns.
//
// The rules, in order (Run documents each):
//
//   - another extraction of the same session holds its lock → "coalesced";
//   - no messages after the cursor → "no_messages";
//   - the agent itself wrote or edited a memory file → "direct_write";
//   - a memory file changed after the turn began, not by teammem →
//     "memory_changed" (Claude Code's own extractor, or the agent through
//     a shell, saved this turn's memories; with Options.SettleWait the run
//     also waits a bounded time for such a writer before its model call);
//   - no prose typed by the human → "no_prose";
//   - fewer than Every eligible turns since the last extraction → "throttled";
//   - no model configured → "no_model", reported as an error.
//
// In the long-running mode (Options.Mode ModeLog) the model appends to the
// day's log instead of editing topic files and MEMORY.md.
//
// The first four that apply advance the cursor (those messages need no
// extraction); a throttled or failed run leaves it, so the messages are
// looked at again next time. The rules that need no model come first, so a
// hook on a machine without a model skips quietly when there is nothing to
// do and says so only when a model call is due.
//
// Per-session state (cursor, turns since the last extraction, last run and
// outcome) is kept as JSON in a state directory outside the memory directory.
package extract
