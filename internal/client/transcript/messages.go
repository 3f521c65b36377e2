package transcript

import (
	"errors"
	"io"
	"time"
)

// Message is one logical user or assistant message of the main chain, reduced to what
// memory extraction looks at. Streamed assistant records sharing a message.id are merged
// into one Message (see Merger).
type Message struct {
	// Role is "user" or "assistant".
	Role string
	// UUID is the uuid of the last record merged into the message, so that it can serve
	// as an extraction cursor covering the whole message.
	UUID string
	// MessageID is message.id of an assistant message.
	MessageID string
	// Timestamp is the first record's timestamp.
	Timestamp time.Time
	// IsMeta reports a system-injected user message (isMeta).
	IsMeta bool
	// IsCompactSummary reports the user message holding a compaction summary.
	IsCompactSummary bool
	// Origin is origin.kind of a user message; "" means typed by the human.
	Origin string
	// Text joins the message's text blocks with "\n".
	Text string
	// ToolUses lists the tool_use blocks in order.
	ToolUses []ToolUse
	// ToolResults counts the tool_result blocks.
	ToolResults int
	// Records counts the transcript records merged into the message; summing it gives the
	// per-record message count the CLI uses for its extraction threshold.
	Records int
}

// ToolUse is a tool call made by an assistant message.
type ToolUse struct {
	ID   string
	Name string
	// FilePath is input.file_path when it is a string, else "".
	FilePath string
}

// MessagesAfter streams the transcript at path and returns the main-chain (not sidechain)
// user and assistant messages that follow the record (of any type) whose uuid is cursor (reference
// §5.3a). found reports whether the cursor was seen; when cursor is "" or not found, all
// messages are returned. If the uuid occurs more than once, messages after its last
// occurrence are returned. lastUUID is the uuid of the last main-chain user or assistant
// record of the file ("" if none), the cursor to store for the next call. Memory grows with
// the returned messages only: their text and tool names and paths, not tool inputs or results.
func MessagesAfter(path, cursor string) (msgs []Message, found bool, lastUUID string, err error) {
	rd, err := Open(path)
	if err != nil {
		return nil, false, "", err
	}
	defer rd.Close()
	return messagesAfter(rd, cursor)
}

// MessagesAfterReader is MessagesAfter over an already open stream.
func MessagesAfterReader(r io.Reader, cursor string) (msgs []Message, found bool, lastUUID string, err error) {
	return messagesAfter(NewReader(r), cursor)
}

// messagesAfter implements MessagesAfter.
func messagesAfter(rd *Reader, cursor string) (msgs []Message, found bool, lastUUID string, err error) {
	var m Merger
	at := map[int]int{} // merger group -> index in msgs
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return msgs, found, lastUUID, nil
		}
		if err != nil {
			return nil, false, "", err
		}
		if cursor != "" && rec.UUID == cursor {
			found, msgs, at = true, nil, map[int]int{}
			// The cursor record itself is not "after" the cursor, but later parts of the
			// same streamed message are.
			m.Group(&rec)
			if !rec.IsSidechain && (rec.Type == TypeUser || rec.Type == TypeAssistant) {
				lastUUID = rec.UUID
			}
			continue
		}
		if rec.IsSidechain || (rec.Type != TypeUser && rec.Type != TypeAssistant) {
			continue
		}
		lastUUID = rec.UUID
		group, continued := m.Group(&rec)
		if i, ok := at[group]; continued && ok {
			msgs[i].merge(&rec)
			continue
		}
		if group != 0 {
			at[group] = len(msgs)
		}
		msgs = append(msgs, newMessage(&rec))
	}
}

// newMessage converts a user or assistant record.
func newMessage(rec *Record) Message {
	msg := Message{
		Role:             string(rec.Type),
		MessageID:        rec.MessageID,
		Timestamp:        rec.Timestamp,
		IsMeta:           rec.IsMeta,
		IsCompactSummary: rec.IsCompactSummary,
		Origin:           rec.Origin,
	}
	msg.merge(rec)
	return msg
}

// merge appends a record's content to the message.
func (msg *Message) merge(rec *Record) {
	msg.UUID = rec.UUID
	msg.Records++
	if text := textOf(rec.Content); text != "" {
		if msg.Text != "" {
			msg.Text += "\n"
		}
		msg.Text += text
	}
	for i := range rec.Content {
		b := &rec.Content[i]
		switch b.Kind {
		case BlockToolUse:
			msg.ToolUses = append(msg.ToolUses, ToolUse{ID: b.ID, Name: b.Name, FilePath: inputFilePath(b.Input)})
		case BlockToolResult:
			msg.ToolResults++
		}
	}
}

// WritesMemory reports whether an assistant message calls Edit or Write on a path for which
// isMemPath returns true (reference §5.3b: the main agent wrote memory itself, so extraction
// is skipped). Pass the messages after the cursor, or none when the cursor was set but not
// found, as the reference prescribes.
func WritesMemory(msgs []Message, isMemPath func(string) bool) bool {
	for i := range msgs {
		if msgs[i].Role != string(TypeAssistant) {
			continue
		}
		for _, tu := range msgs[i].ToolUses {
			if (tu.Name == "Edit" || tu.Name == "Write") && tu.FilePath != "" && isMemPath(tu.FilePath) {
				return true
			}
		}
	}
	return false
}

// HasProse reports whether msgs contain a user message typed by the human. The upstream
// predicate is unknown (reference §5.3); this one errs towards prose, since a false "no" skips
// an extraction that would have found something. A user message is prose when:
//
//   - it is not isMeta, not a compact summary and holds no tool_result block;
//   - its origin.kind is not "task-notification", "coordinator" or "channel" (absent means
//     human, and unknown kinds are given the benefit of the doubt);
//   - its text, once Claude Code's wrappers are removed, has a non-blank line other than
//     "(no content)", "[Request interrupted by user…" or the local-command caveat.
//
// Wrappers removed whole: <command-name>, <command-message>, <local-command-stdout>,
// <local-command-stderr>, <local-command-caveat>, <bash-input>, <bash-stdout>,
// <bash-stderr>, <system-reminder>, <user-prompt-submit-hook>, <ide_opened_file>,
// <ide_selection>, <task-notification>. Wrappers whose content counts: <command-args>
// (what the human typed after a slash command) and <user-memory-input> ("#" notes). Any
// other tag is ordinary text. A "! cmd" shell escape is a command, not prose.
func HasProse(msgs []Message) bool {
	for i := range msgs {
		m := &msgs[i]
		if m.Role == string(TypeUser) && proseCandidate(m.IsMeta, m.IsCompactSummary, m.ToolResults > 0, m.Origin) &&
			isProseText(m.Text) {
			return true
		}
	}
	return false
}

// isProseRecord applies the HasProse predicate to one user record.
func isProseRecord(rec *Record) bool {
	return rec.Type == TypeUser && proseCandidate(rec.IsMeta, rec.IsCompactSummary, rec.HasToolResult(), rec.Origin) &&
		isProseText(textOf(rec.Content))
}

// proseCandidate holds the structural half of the prose predicate.
func proseCandidate(isMeta, compactSummary, toolResult bool, origin string) bool {
	return !isMeta && !compactSummary && !toolResult && !machineOrigins[origin]
}

// machineOrigins are the origin kinds of user messages not typed by the human.
var machineOrigins = map[string]bool{"task-notification": true, "coordinator": true, "channel": true}
