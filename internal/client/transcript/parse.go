package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrMalformed is wrapped by ParseLine when a line is not a JSON object with a string "type".
var ErrMalformed = errors.New("malformed transcript line")

// utf8BOM is stripped from the start of any line.
var utf8BOM = []byte("\xef\xbb\xbf")

// wireRecord mirrors the JSON fields of a record that Record exposes. Payloads nobody reads
// (toolUseResult, usage, snapshots, image data) are not declared, so the decoder skips them
// without allocating.
type wireRecord struct {
	Type              string                `json:"type"`
	UUID              string                `json:"uuid"`
	ParentUUID        string                `json:"parentUuid"`
	LogicalParentUUID string                `json:"logicalParentUuid"`
	IsSidechain       bool                  `json:"isSidechain"`
	IsMeta            bool                  `json:"isMeta"`
	IsCompactSummary  bool                  `json:"isCompactSummary"`
	IsAPIError        bool                  `json:"isApiErrorMessage"`
	Timestamp         string                `json:"timestamp"`
	SessionID         string                `json:"sessionId"`
	Cwd               string                `json:"cwd"`
	Version           string                `json:"version"`
	AgentID           string                `json:"agentId"`
	Origin            struct{ Kind string } `json:"origin"`
	Subtype           string                `json:"subtype"`
	CompactMetadata   *CompactMetadata      `json:"compactMetadata"`
	Attachment        struct{ Type string } `json:"attachment"`
	LeafUUID          string                `json:"leafUuid"`
	Message           *wireMessage          `json:"message"`

	// Candidates for Record.Value, chosen by type in value.
	Summary     string `json:"summary"`
	CustomTitle string `json:"customTitle"`
	AITitle     string `json:"aiTitle"`
	LastPrompt  string `json:"lastPrompt"`
	Tag         string `json:"tag"`
	AgentName   string `json:"agentName"`
	AgentColor  string `json:"agentColor"`
	Mode        string `json:"mode"`
	Operation   string `json:"operation"`
}

// wireMessage is the "message" object of user and assistant records.
type wireMessage struct {
	ID      string      `json:"id"`
	Role    string      `json:"role"`
	Model   string      `json:"model"`
	Content wireContent `json:"content"`
}

// wireBlock is one element of a content array.
type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   flexText        `json:"content"`
	IsError   bool            `json:"is_error"`
}

// wireContent decodes message.content, which is a string or an array of blocks. Its
// UnmarshalJSON never fails: an unexpected shape leaves the content empty instead of
// aborting the whole record.
type wireContent []Block

// UnmarshalJSON implements json.Unmarshaler.
func (c *wireContent) UnmarshalJSON(b []byte) error {
	switch firstByte(b) {
	case '"':
		var s string
		if json.Unmarshal(b, &s) == nil {
			*c = []Block{{Kind: BlockText, Text: s}}
		}
	case '[':
		var raw []wireBlock
		if err := json.Unmarshal(b, &raw); err != nil && !isTypeError(err) {
			return nil
		}
		blocks := make([]Block, 0, len(raw))
		for _, w := range raw {
			if w.Type != "" { // a non-object element decodes to an empty block
				blocks = append(blocks, w.block())
			}
		}
		*c = blocks
	}
	return nil
}

// block converts a wire block, keeping only the fields meaningful for its kind.
func (w *wireBlock) block() Block {
	b := Block{Kind: BlockKind(w.Type)}
	switch b.Kind {
	case BlockText:
		b.Text = w.Text
	case BlockThinking:
		b.Text = w.Thinking
	case BlockToolUse:
		b.ID, b.Name, b.Input = w.ID, w.Name, w.Input
	case BlockToolResult:
		b.ToolUseID, b.Text, b.IsError = w.ToolUseID, string(w.Content), w.IsError
	}
	return b
}

// flexText decodes a tool_result's content: a string, or an array whose text parts are
// joined by "\n" (image parts are dropped). Like wireContent it never fails.
type flexText string

// UnmarshalJSON implements json.Unmarshaler.
func (t *flexText) UnmarshalJSON(b []byte) error {
	switch firstByte(b) {
	case '"':
		var s string
		if json.Unmarshal(b, &s) == nil {
			*t = flexText(s)
		}
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil && !isTypeError(err) {
			return nil
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type != string(BlockText) {
				continue
			}
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(p.Text)
		}
		*t = flexText(sb.String())
	}
	return nil
}

// ParseLine parses one transcript line. Surrounding whitespace and a leading UTF-8 BOM are
// ignored. It returns an error wrapping ErrMalformed when the line is not valid JSON or has
// no string "type"; a field of an unexpected JSON type is left at its zero value instead.
func ParseLine(line []byte) (Record, error) {
	line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), utf8BOM))
	var w wireRecord
	if err := json.Unmarshal(line, &w); err != nil && !isTypeError(err) {
		return Record{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if w.Type == "" {
		return Record{}, fmt.Errorf("%w: no record type", ErrMalformed)
	}
	return w.record(), nil
}

// record converts the wire form into a Record.
func (w *wireRecord) record() Record {
	r := Record{
		Type:              Type(w.Type),
		UUID:              w.UUID,
		ParentUUID:        w.ParentUUID,
		LogicalParentUUID: w.LogicalParentUUID,
		IsSidechain:       w.IsSidechain,
		IsMeta:            w.IsMeta,
		IsCompactSummary:  w.IsCompactSummary,
		IsAPIError:        w.IsAPIError,
		SessionID:         w.SessionID,
		Cwd:               w.Cwd,
		Version:           w.Version,
		AgentID:           w.AgentID,
		Origin:            w.Origin.Kind,
		Subtype:           w.Subtype,
		AttachmentType:    w.Attachment.Type,
		LeafUUID:          w.LeafUUID,
		Value:             w.value(),
	}
	if ts, err := time.Parse(time.RFC3339Nano, w.Timestamp); err == nil {
		r.Timestamp = ts
	}
	if r.IsCompactBoundary() {
		r.Compact = w.CompactMetadata
	}
	if m := w.Message; m != nil {
		r.Role, r.MessageID, r.Model, r.Content = m.Role, m.ID, m.Model, m.Content
	}
	return r
}

// value picks the field that holds the main payload of w's type (see Record.Value).
func (w *wireRecord) value() string {
	switch Type(w.Type) {
	case TypeSummary, TypeTaskSummary:
		return w.Summary
	case TypeCustomTitle:
		return w.CustomTitle
	case TypeAITitle:
		return w.AITitle
	case TypeLastPrompt:
		return w.LastPrompt
	case TypeTag:
		return w.Tag
	case TypeAgentName:
		return w.AgentName
	case TypeAgentColor:
		return w.AgentColor
	case TypeMode:
		return w.Mode
	case TypeQueueOperation:
		return w.Operation
	}
	return ""
}

// isTypeError reports whether err only says that some value had an unexpected JSON type;
// the decoder has then filled every other field.
func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

// firstByte returns the first non-space byte of b, or 0.
func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}
