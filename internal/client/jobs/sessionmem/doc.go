// Package sessionmem keeps a session's running notes: one Markdown file per
// Claude Code session, updated by a model while the session runs, so that
// what the session learned survives a compaction of its context. It is
// teammem's counterpart of Claude Code's session memory (reference §7).
//
// The notes live where Claude Code keeps its own:
// <config home>/projects/<sanitized cwd>/<session id>/session-memory/summary.md
// (NotesPath), the directory 0700 and the file 0600, created exclusively with
// the template. The template has ten "# " sections, each with an italic line
// saying what belongs in it; an update may change only what is under them.
//
// An update is due by the reference's gates (Decide): the first once the
// session's context holds 10,000 tokens, later ones once 5,000 more tokens
// have accrued and either 3 tool calls happened since the last update or the
// last assistant turn made none. The context size is the last API usage in
// the transcript plus a chars/4 estimate of what follows it (Scan), measured
// incrementally, so a hook that fires after every tool call reads only the
// lines appended since the last one.
//
// Run takes the session's update lock (one update at a time, reclaimed when
// its holder died or after LockStale), checks the gates and runs the model
// with a single tool, edit, that can change nothing but the notes file and
// refuses any edit that alters a heading or an italic description. The
// prompt carries the reference's budget reminders: sections over ~2,000
// tokens and notes over ~12,000 tokens are named for condensing. Every skip
// has a reason from a closed set (the Skip constants).
//
// CompactionContext renders the notes for a compacted session: sections
// over 8,000 characters are cut at a line boundary with the reference's
// marker, and the whole is kept within what a hook may hand Claude Code.
package sessionmem
