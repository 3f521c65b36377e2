package wire

import (
	"encoding/json"

	"github.com/teammem/teammem/internal/teammem"
)

// ErrorBody is the JSON body of every error response of the API:
// {"error": {"type": ..., "message": ..., "details": {...}}}.
type ErrorBody struct {
	Error ErrorObject `json:"error"`
}

// ErrorObject is a teammem.Error on the wire. Type is one of teammem's error
// codes and decides the status; Message is for people; Details carries
// structured data whose shape depends on the type (ConflictDetails for a
// batch's 409, ForbiddenDetails for a 403, and those the spec lists).
type ErrorObject struct {
	Type    string         `json:"type"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// Err rebuilds the domain error the body describes, so that a client can
// branch with teammem.ErrorCode and errors.As like the server does.
func (o ErrorObject) Err() *teammem.Error {
	return &teammem.Error{Code: o.Type, Message: o.Message, Details: o.Details}
}

// DecodeDetails decodes details (as a decoded ErrorObject holds them) into
// one of the typed details structs.
func DecodeDetails(details map[string]any, v any) error {
	raw, err := json.Marshal(details)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// ConflictDetails are the details of a batch's 409: the current state of
// every key whose base no longer held.
type ConflictDetails struct {
	Conflicts []teammem.Conflict `json:"conflicts"`
}

// Reasons a request was refused with 403, in ForbiddenDetails.Reason.
const (
	ForbiddenReadOnly     = teammem.ForbiddenReadOnly     // the key may only read and the request writes
	ForbiddenRole         = teammem.ForbiddenRole         // the user's role is below what the action needs
	ForbiddenUserDisabled = teammem.ForbiddenUserDisabled // the key's user is disabled
	ForbiddenOrgDisabled  = teammem.ForbiddenOrgDisabled  // the key's organization is disabled
)

// Reasons a key itself is refused (401), in the details of the error event
// that ends an event stream (see StreamEndedDetails). A stream also ends for
// ForbiddenUserDisabled and ForbiddenOrgDisabled.
const (
	RefusedKeyUnknown = "key_unknown" // no key has this secret (any more)
	RefusedKeyRevoked = "key_revoked" // the key was revoked
	RefusedKeyExpired = "key_expired" // the key's expires_at has passed
)

// StreamEndedDetails are the details of the "error" event with which the
// server ends an event stream whose key may no longer read: the key was
// revoked or expired, or its user or organization disabled. The client
// should not reconnect with the same key.
type StreamEndedDetails struct {
	Reason string `json:"reason"` // a Refused or Forbidden constant
}

// Map returns the details as the map a teammem.Error carries.
func (d StreamEndedDetails) Map() map[string]any { return map[string]any{"reason": d.Reason} }

// ForbiddenDetails are the details of a 403 refusing an API key, so a
// client can say why without reading the message.
type ForbiddenDetails struct {
	Reason string `json:"reason"` // one of the Forbidden constants
	// Role and Needs are set for ForbiddenRole: the user's role and the
	// weakest role the action needs.
	Role   teammem.Role `json:"role,omitempty"`
	Needs  teammem.Role `json:"needs,omitempty"`
	Action string       `json:"action,omitempty"` // for ForbiddenRole: the action refused, e.g. team.write
}

// Map returns the details as the map a teammem.Error carries.
func (d ForbiddenDetails) Map() map[string]any {
	m := map[string]any{"reason": d.Reason}
	if d.Role != "" {
		m["role"], m["needs"], m["action"] = d.Role, d.Needs, d.Action
	}
	return m
}

// The error_code values in the details of a write the server refused for
// what one of its entries holds (the same codes the Claude Code endpoint
// sends).
const (
	ErrorSecretDetected    = "team_memory_secret_detected"    // 422: secrets under the reject policy; SkippedSecrets names them
	ErrorPoisoningDetected = "team_memory_poisoning_detected" // 400: poisoning findings under poisoning: reject; Findings names them
	ErrorEntryTooLarge     = "team_memory_entry_too_large"    // 413: Key is over MaxEntryBytes
)

// RefusedDetails are the details of a write refused for what one or more
// of its entries hold (ErrorCode is one of the Error constants above), so
// that a client can name each refused file and its reason.
type RefusedDetails struct {
	ErrorCode      string                  `json:"error_code"`
	SkippedSecrets []teammem.SkippedSecret `json:"skippedSecrets,omitempty"`
	Findings       []teammem.PoisonFinding `json:"findings,omitempty"`
	Key            string                  `json:"key,omitempty"`
	MaxEntryBytes  int                     `json:"max_entry_bytes,omitempty"`
}
