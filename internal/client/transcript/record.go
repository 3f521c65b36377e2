package transcript

import (
	"encoding/json"
	"time"
)

// Type is the value of a record's "type" field. Records of types not listed below keep their
// raw string; Known reports false for them.
type Type string

// Chain record types: they carry uuid and parentUuid and form the conversation graph.
const (
	TypeUser       Type = "user"
	TypeAssistant  Type = "assistant"
	TypeAttachment Type = "attachment"
	TypeSystem     Type = "system"
)

// Non-chain (metadata) record types. TypeProgress only occurs in files written by old
// Claude Code versions.
const (
	TypeSummary               Type = "summary"
	TypeCustomTitle           Type = "custom-title"
	TypeAITitle               Type = "ai-title"
	TypeLastPrompt            Type = "last-prompt"
	TypeTaskSummary           Type = "task-summary"
	TypeTag                   Type = "tag"
	TypeAgentName             Type = "agent-name"
	TypeAgentColor            Type = "agent-color"
	TypeAgentSetting          Type = "agent-setting"
	TypeMode                  Type = "mode"
	TypeWorktreeState         Type = "worktree-state"
	TypePRLink                Type = "pr-link"
	TypeFileHistorySnapshot   Type = "file-history-snapshot"
	TypeAttributionSnapshot   Type = "attribution-snapshot"
	TypeQueueOperation        Type = "queue-operation"
	TypeSpeculationAccept     Type = "speculation-accept"
	TypeContentReplacement    Type = "content-replacement"
	TypeMarbleOrigamiCommit   Type = "marble-origami-commit"
	TypeMarbleOrigamiSnapshot Type = "marble-origami-snapshot"
	TypeProgress              Type = "progress"
)

// knownTypes is the closed set of types this package models (reference §9.3-§9.5).
var knownTypes = map[Type]bool{
	TypeUser: true, TypeAssistant: true, TypeAttachment: true, TypeSystem: true,
	TypeSummary: true, TypeCustomTitle: true, TypeAITitle: true, TypeLastPrompt: true,
	TypeTaskSummary: true, TypeTag: true, TypeAgentName: true, TypeAgentColor: true,
	TypeAgentSetting: true, TypeMode: true, TypeWorktreeState: true, TypePRLink: true,
	TypeFileHistorySnapshot: true, TypeAttributionSnapshot: true, TypeQueueOperation: true,
	TypeSpeculationAccept: true, TypeContentReplacement: true, TypeMarbleOrigamiCommit: true,
	TypeMarbleOrigamiSnapshot: true, TypeProgress: true,
}

// Known reports whether t is one of the record types this package models.
func (t Type) Known() bool { return knownTypes[t] }

// IsChain reports whether t is a chain type (user, assistant, attachment or system).
func (t Type) IsChain() bool {
	return t == TypeUser || t == TypeAssistant || t == TypeAttachment || t == TypeSystem
}

// System subtypes this package gives meaning to; Record.Subtype keeps any other value as is.
const (
	SubtypeCompactBoundary      = "compact_boundary"
	SubtypeMicrocompactBoundary = "microcompact_boundary"
)

// Record is one parsed transcript line. Fields absent from the line, or present with a JSON
// type other than the expected one, are left at their zero value. A Record owns all its
// data and stays valid after the Reader moves on.
type Record struct {
	// Line is the 1-based line number in the file, 0 when parsed outside a Reader.
	Line int
	// Type is the raw "type" field; never empty for a record a Reader returns.
	Type Type

	// Chain fields (§9.3). ParentUUID is "" for null (first record, compact boundaries).
	UUID              string
	ParentUUID        string
	LogicalParentUUID string
	IsSidechain       bool
	IsMeta            bool
	// IsCompactSummary marks the user record that holds a compaction summary.
	IsCompactSummary bool
	// IsAPIError marks synthetic assistant records that report an API error.
	IsAPIError bool
	// Timestamp is zero when the field is absent or not RFC 3339.
	Timestamp time.Time
	SessionID string
	Cwd       string
	Version   string
	// AgentID names the subagent that wrote a sidechain record.
	AgentID string
	// Origin is origin.kind of a user record; "" means typed by the human.
	Origin string

	// Subtype is the system record's subtype (api_error, compact_boundary, ...).
	Subtype string
	// Compact is compactMetadata of a compact_boundary record, nil otherwise.
	Compact *CompactMetadata
	// AttachmentType is attachment.type of an attachment record.
	AttachmentType string
	// LeafUUID is the leafUuid of a summary (or last-prompt) record.
	LeafUUID string
	// Value is the main string payload of a metadata record: summary and task-summary
	// "summary", custom-title "customTitle", ai-title "aiTitle", last-prompt "lastPrompt",
	// tag "tag", agent-name "agentName", agent-color "agentColor", mode "mode",
	// queue-operation "operation"; "" for other types.
	Value string

	// Role, MessageID, Model and Content come from the "message" object of user and
	// assistant records. MessageID is message.id, shared by streamed assistant records.
	Role      string
	MessageID string
	Model     string
	// Content holds the content blocks; a string content becomes one BlockText block.
	Content []Block
}

// CompactMetadata is the compactMetadata object of a compact boundary.
type CompactMetadata struct {
	// Trigger is "manual" or "auto".
	Trigger string `json:"trigger"`
	// PreTokens is the context size before compaction.
	PreTokens int64 `json:"preTokens"`
}

// IsCompactBoundary reports whether r is a system compact_boundary record.
func (r *Record) IsCompactBoundary() bool {
	return r.Type == TypeSystem && r.Subtype == SubtypeCompactBoundary
}

// BlockKind is a content block's "type".
type BlockKind string

// Content block kinds this package decodes; other kinds (server_tool_use, document, ...)
// keep their raw kind and no payload.
const (
	BlockText             BlockKind = "text"
	BlockThinking         BlockKind = "thinking"
	BlockRedactedThinking BlockKind = "redacted_thinking"
	BlockToolUse          BlockKind = "tool_use"
	BlockToolResult       BlockKind = "tool_result"
	BlockImage            BlockKind = "image"
)

// Block is one content block of a message. Only the fields of its Kind are set; image and
// redacted_thinking payloads are not kept.
type Block struct {
	Kind BlockKind
	// Text is the text of a text block, the reasoning of a thinking block, or the text parts
	// of a tool_result's content joined by "\n".
	Text string
	// ID, Name and Input describe a tool_use block. Input is the raw input object.
	ID    string
	Name  string
	Input json.RawMessage
	// ToolUseID and IsError describe a tool_result block.
	ToolUseID string
	IsError   bool
}

// HasToolResult reports whether any of r's content blocks is a tool_result.
func (r *Record) HasToolResult() bool {
	for i := range r.Content {
		if r.Content[i].Kind == BlockToolResult {
			return true
		}
	}
	return false
}
