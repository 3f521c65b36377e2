package wire

import (
	"encoding/json"
	"errors"
	"maps"

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

// Err rebuilds the domain error the body describes, its reason included,
// so that a client can branch with teammem.ErrorCode, teammem.ErrorReason
// and errors.As like the server does.
func (o ErrorObject) Err() *teammem.Error {
	return &teammem.Error{Code: o.Type, Message: o.Message, Reason: o.reason(), Details: o.Details}
}

// refusals is this envelope's table of refusal reasons: the
// details.error_code each is sent with. The Claude Code endpoint and /v1
// answer errors in this one shape (the spec's "Errors"), so one table
// serves both; the codes are those Claude Code's client parses. A reason
// that has been sent without a code is named by its fixed message instead.
var refusals = map[teammem.Reason]struct{ code, message string }{
	teammem.ReasonTooManyEntries:    {code: "team_memory_too_many_entries"},   // 413, MaxEntries and ReceivedEntries
	teammem.ReasonEntryTooLarge:     {code: "team_memory_entry_too_large"},    // 413, Key is over MaxEntryBytes
	teammem.ReasonBodyTooLarge:      {code: "request_too_large"},              // 413, max_body_bytes
	teammem.ReasonSecretDetected:    {code: "team_memory_secret_detected"},    // 422, SkippedSecrets names them
	teammem.ReasonPoisoningDetected: {code: "team_memory_poisoning_detected"}, // 400, Findings names them
	teammem.ReasonHeldForReview:     {code: "team_memory_held_for_review"},    // 400, proposal_id
	teammem.ReasonTooManyStores:     {code: "memory_store_limit_reached"},     // 413, max_stores_per_org
	teammem.ReasonTooManyKeys:       {code: "too_many_keys"},                  // 409, max_keys_per_user
	teammem.ReasonArchived:          {message: teammem.MsgArchived},           // 400
}

// reasonByCode is refusals read backwards.
var reasonByCode = func() map[string]teammem.Reason {
	m := map[string]teammem.Reason{}
	for r, f := range refusals {
		if f.code != "" {
			m[f.code] = r
		}
	}
	return m
}()

// RefusalCode returns the details.error_code a refusal for reason is sent
// with, "" when it has none.
func RefusalCode(reason teammem.Reason) string { return refusals[reason].code }

// RefusalReason returns the reason a details.error_code names, ReasonNone
// for any other string.
func RefusalReason(code string) teammem.Reason { return reasonByCode[code] }

// ErrorDetails returns the details of err's error body: the *teammem.Error's
// details with the error_code of its reason, when that has one.
func ErrorDetails(err error) map[string]any {
	var te *teammem.Error
	if !errors.As(err, &te) {
		return nil
	}
	code := RefusalCode(te.Reason)
	if code == "" {
		return te.Details
	}
	d := make(map[string]any, len(te.Details)+1)
	maps.Copy(d, te.Details)
	d["error_code"] = code
	return d
}

// reason is the refusal reason the body names, by its error_code or, for a
// reason sent without one, by its message.
func (o ErrorObject) reason() teammem.Reason {
	if code, _ := o.Details["error_code"].(string); code != "" {
		return RefusalReason(code)
	}
	for r, f := range refusals {
		if f.code == "" && f.message == o.Message && o.Type == teammem.EInvalid {
			return r
		}
	}
	return teammem.ReasonNone
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

// RefusedDetails are the details of a write refused for what one or more
// of its entries hold (teammem.ReasonSecretDetected,
// ReasonPoisoningDetected or ReasonEntryTooLarge), so that a client can
// name each refused file and its reason.
type RefusedDetails struct {
	SkippedSecrets []teammem.SkippedSecret `json:"skippedSecrets,omitempty"`
	Findings       []teammem.PoisonFinding `json:"findings,omitempty"`
	Key            string                  `json:"key,omitempty"`
	MaxEntryBytes  int                     `json:"max_entry_bytes,omitempty"`
}
