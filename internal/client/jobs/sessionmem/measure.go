package sessionmem

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/teammem/teammem/internal/client/transcript"
)

// syntheticModel is the model of assistant records Claude Code makes up
// locally (interruptions, errors); their usage is not an API response's.
const syntheticModel = "<synthetic>"

// Scan measures a session's transcript for the gates, incrementally: Feed
// takes records in file order, and Advance feeds the lines a file gained
// since Offset. It is plain data, saved between runs with the session's
// state. The measures follow the reference (§7.2):
//
//   - the context size (Tokens) is the last API usage (input, output, cache
//     creation and cache read tokens) plus a chars/4 estimate of the main
//     chain's user and assistant records after the first record of that
//     response (Claude Code writes one record per content block, all with
//     the same message.id and usage); a compact boundary starts the count
//     over, since the context was replaced;
//   - ToolCalls counts tool_use blocks of assistant records after Cursor,
//     all of them when Cursor is "", and none while a set Cursor has not
//     been seen (the reference's "cursor not found" case);
//   - LastTurnHasTools reports whether the latest assistant record with
//     content holds a tool_use.
//
// The estimate counts text, thinking, tool_use names and inputs, and
// tool_result text; images and other blocks count nothing.
type Scan struct {
	// Offset is how many bytes of the file were consumed: whole lines only.
	Offset int64 `json:"offset"`
	// HasUsage reports that an API usage was seen since the last boundary.
	HasUsage bool `json:"has_usage"`
	// UsageTokens is that usage's total.
	UsageTokens int64 `json:"usage_tokens"`
	// UsageMessageID is the message.id of the response the usage is from.
	UsageMessageID string `json:"usage_message_id,omitempty"`
	// LastAssistantID is the message.id of the latest assistant record.
	LastAssistantID string `json:"last_assistant_id,omitempty"`
	// EstimateChars is the UTF-16 length of what the estimate covers.
	EstimateChars int64 `json:"estimate_chars"`
	// LastUUID is the uuid of the latest main-chain user or assistant record.
	LastUUID string `json:"last_uuid,omitempty"`
	// LastTurnHasTools: see the type's documentation.
	LastTurnHasTools bool `json:"last_turn_has_tools"`
	// Cursor is the uuid after which ToolCalls counts, "" for the start.
	Cursor string `json:"cursor,omitempty"`
	// CursorSeen reports that Cursor occurred in what was fed.
	CursorSeen bool `json:"cursor_seen"`
	// ToolCalls: see the type's documentation.
	ToolCalls int `json:"tool_calls"`
	// Messages counts the main chain's user and assistant records.
	Messages int `json:"messages"`
}

// Tokens returns the context size the gates compare, in tokens.
func (s *Scan) Tokens() int64 {
	return s.UsageTokens + int64(math.Round(float64(s.EstimateChars)/4))
}

// SetCursor starts the tool count over after the latest record, as an
// update does before it runs (reference §7.2).
func (s *Scan) SetCursor() {
	s.Cursor, s.CursorSeen, s.ToolCalls = s.LastUUID, true, 0
}

// restart forgets everything measured but the cursor, for a file that has
// to be read again from its start.
func (s *Scan) restart() {
	*s = Scan{Cursor: s.Cursor, CursorSeen: s.Cursor == ""}
}

// usageLine is the part of an assistant line the Record lacks.
type usageLine struct {
	Message struct {
		Usage *struct {
			Input         int64 `json:"input_tokens"`
			Output        int64 `json:"output_tokens"`
			CacheCreation int64 `json:"cache_creation_input_tokens"`
			CacheRead     int64 `json:"cache_read_input_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

// Feed adds one transcript line. Blank and malformed lines, sidechain
// records and metadata are ignored, as a transcript reader must.
func (s *Scan) Feed(line []byte) {
	rec, err := transcript.ParseLine(line)
	if err != nil || rec.IsSidechain {
		return
	}
	if rec.IsCompactBoundary() {
		s.HasUsage, s.UsageTokens, s.UsageMessageID, s.LastAssistantID, s.EstimateChars = false, 0, "", "", 0
		return
	}
	if rec.Type != transcript.TypeUser && rec.Type != transcript.TypeAssistant {
		return
	}
	s.Messages++
	s.LastUUID = rec.UUID
	if s.Cursor != "" && rec.UUID == s.Cursor {
		s.CursorSeen, s.ToolCalls = true, 0
	}
	s.addChars(&rec)
	s.noteAssistant(&rec, line)
}

// noteAssistant updates the usage, tool and last-turn measures for an
// assistant record.
func (s *Scan) noteAssistant(rec *transcript.Record, line []byte) {
	if rec.Type != transcript.TypeAssistant {
		return
	}
	tools := 0
	for _, b := range rec.Content {
		if b.Kind == transcript.BlockToolUse {
			tools++
		}
	}
	if len(rec.Content) > 0 {
		s.LastTurnHasTools = tools > 0
	}
	if s.Cursor == "" || s.CursorSeen {
		if rec.UUID != s.Cursor {
			s.ToolCalls += tools
		}
	}
	prevID := s.LastAssistantID
	s.LastAssistantID = rec.MessageID
	if rec.Model == syntheticModel || rec.IsAPIError {
		return
	}
	var u usageLine
	if json.Unmarshal(line, &u) != nil || u.Message.Usage == nil {
		return
	}
	if s.HasUsage && rec.MessageID != "" && rec.MessageID == s.UsageMessageID && prevID == rec.MessageID {
		return // a later record of the same response: the estimate already runs from its first
	}
	us := u.Message.Usage
	s.HasUsage, s.UsageMessageID = true, rec.MessageID
	s.UsageTokens = us.Input + us.Output + us.CacheCreation + us.CacheRead
	s.EstimateChars = 0 // the usage covers this record; the estimate starts after it
}

// addChars adds a record's content to the estimate.
func (s *Scan) addChars(rec *transcript.Record) {
	for _, b := range rec.Content {
		switch b.Kind {
		case transcript.BlockText, transcript.BlockThinking, transcript.BlockToolResult:
			s.EstimateChars += int64(utf16Len(b.Text))
		case transcript.BlockToolUse:
			s.EstimateChars += int64(utf16Len(b.Name) + utf16Len(string(b.Input)))
		}
	}
}

// Advance feeds the complete lines the transcript at path holds after
// Offset; a final line without its newline is left for the next call, as
// Claude Code may still be writing it. A file now shorter than Offset, or
// whose byte before Offset is not a newline, was replaced: it is read
// again from the start (the cursor is kept, so a cursor the new file
// lacks counts no tool calls).
func (s *Scan) Advance(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if s.Offset > 0 && !endsLine(f, s.Offset) {
		s.restart()
	}
	if _, err := f.Seek(s.Offset, io.SeekStart); err != nil {
		return fmt.Errorf("read transcript: %w", err)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var long []byte   // the start of a line longer than the buffer
	var pending int64 // bytes of the current line read so far
	skipping := false // the current line is over transcript.MaxLineSize
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			pending += int64(len(chunk))
			if !skipping {
				line := chunk
				if long != nil {
					line = append(long, chunk...)
				}
				s.Feed(bytes.TrimSuffix(line, []byte("\n")))
			}
			s.Offset += pending
			pending, long, skipping = 0, nil, false
		case errors.Is(err, bufio.ErrBufferFull):
			pending += int64(len(chunk))
			if !skipping && len(long)+len(chunk) > transcript.MaxLineSize {
				skipping, long = true, nil // consumed unread, as a Reader skips it
			} else if !skipping {
				long = append(long, chunk...)
			}
		case errors.Is(err, io.EOF):
			return nil // an unterminated tail waits for its newline
		default:
			return fmt.Errorf("read transcript: %w", err)
		}
	}
}

// endsLine reports whether the file is at least offset bytes long and its
// byte at offset-1 is a newline.
func endsLine(f *os.File, offset int64) bool {
	b := make([]byte, 1)
	n, err := f.ReadAt(b, offset-1)
	return n == 1 && err == nil && b[0] == '\n'
}
