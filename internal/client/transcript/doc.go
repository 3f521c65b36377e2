// Package transcript reads Claude Code session transcripts: the append-only JSONL files kept
// under <configHome>/projects/<project key>/<session id>.jsonl, one record per line, plus the
// subagent transcripts in <session id>/subagents/.
//
// Everything here streams. A Reader holds one line at a time (capped at MaxLineSize; longer
// lines are skipped and counted), so summarizing a multi-gigabyte transcript needs a few
// megabytes of memory. The reader follows the rules a transcript reader must obey: a UTF-8
// BOM, blank lines, malformed lines and a truncated final line are tolerated and counted,
// never fatal.
//
// Records of a type this package does not model (say a type added by a newer Claude Code)
// are passed through, not dropped: Next returns them with their raw Type string, Type.Known
// reports false, and the Reader counts them in ReadStats.Unknown. Consumers that only want
// known records check Known.
//
// On top of the reader sit:
//
//   - Merger and Merge, which group the N streamed records that share one assistant
//     message.id into one logical assistant message;
//   - Stats and Summarize, a record-by-record accumulator of counts, tool statistics and
//     the session's first prompt;
//   - MessagesAfter, WritesMemory and HasProse, the helpers memory extraction needs;
//   - ListSessions and Subagents, which find transcripts on disk.
//
// The package depends on the standard library only and never writes to the files it reads.
package transcript
