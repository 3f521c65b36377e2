package teammem

import (
	"errors"
	"fmt"
)

// Error codes form the closed set every failure is reported with. Each
// comment names the HTTP status internal/server/httpapi maps it to.
const (
	EInvalid            = "invalid"             // 400: the request is malformed or breaks a rule
	EUnauthorized       = "unauthorized"        // 401: no usable credential
	EForbidden          = "forbidden"           // 403: the credential may not do this
	ENotFound           = "not_found"           // 404: the thing does not exist (or is not visible)
	EConflict           = "conflict"            // 409: a base checksum or unique name no longer holds
	EGone               = "gone"                // 410: what was asked for was erased: purged history (do a full pull), redacted content
	EPreconditionFailed = "precondition_failed" // 412: If-Match did not match the current checksum
	ETooLarge           = "too_large"           // 413: a cap (entries, entry bytes, body bytes) was hit
	ESecretDetected     = "secret_detected"     // 422: content holds a secret and policy rejects it
	ERateLimited        = "rate_limited"        // 429: the caller writes too fast
	EUnavailable        = "unavailable"         // 503: the database cannot be reached right now
	EInternal           = "internal"            // 500: a bug or an unexpected failure
)

// Reason says which rule refused a request, finer than its code: several
// refusals share ETooLarge or EInvalid, and the clients, the memory stores'
// messages and the metrics tell them apart. Each error envelope maps a
// reason to its own wire form in one table beside its writer (wire for the
// JSON error body, internal/server/httpapi for the memory stores and the
// push metrics), so nothing outside those tables matches on wire strings.
type Reason uint8

// The refusal reasons; each comment names the code it comes with.
const (
	ReasonNone              Reason = iota // not a refusal with a reason of its own
	ReasonTooManyEntries                  // ETooLarge: the space would exceed its entry cap (TooManyEntries)
	ReasonEntryTooLarge                   // ETooLarge: an entry is over the size cap (EntryTooLarge)
	ReasonBodyTooLarge                    // ETooLarge: the request body is over the server's limit (BodyTooLarge)
	ReasonSecretDetected                  // ESecretDetected: content holds a secret the policy refuses
	ReasonPoisoningDetected               // EInvalid: poisoning findings under poisoning: reject (PoisonRejected)
	ReasonHeldForReview                   // EInvalid: a held write, to a dialect without proposals (Proposal.HeldError)
	ReasonArchived                        // EInvalid: the memory store is archived (StoreArchived)
	ReasonTooManyStores                   // ETooLarge: the org is at its memory store cap (TooManyStores)
	ReasonTooManyKeys                     // EConflict: the user is at its active key cap (TooManyKeys)
	reasonEnd
)

var reasonNames = [...]string{"none", "too_many_entries", "entry_too_large", "body_too_large", "secret_detected",
	"poisoning_detected", "held_for_review", "archived", "too_many_stores", "too_many_keys"}

// String names the reason for logs and test failures; it is no wire form.
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", r)
}

// Reasons lists every reason but ReasonNone, so that a test can check that
// each envelope's table names them all.
func Reasons() []Reason {
	out := make([]Reason, 0, reasonEnd-1)
	for r := ReasonNone + 1; r < reasonEnd; r++ {
		out = append(out, r)
	}
	return out
}

// Error is the one error type carrying a code from the closed set, a message
// safe to show to the caller, the reason of a refusal that has one and
// optional structured details for the body.
type Error struct {
	Code    string
	Message string
	Reason  Reason
	Details map[string]any
}

// Error returns the message, prefixed by the code when there is no message.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Message
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithDetails returns a copy of e carrying details.
func (e *Error) WithDetails(details map[string]any) *Error {
	c := *e
	c.Details = details
	return &c
}

// WithReason returns a copy of e carrying reason.
func (e *Error) WithReason(reason Reason) *Error {
	c := *e
	c.Reason = reason
	return &c
}

// ErrorCode returns the code of the first *Error in err's chain, EInternal for
// any other non-nil error and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	default:
		return EInternal
	}
}

// ErrorMessage returns the caller-safe message of err: the *Error's message,
// or a generic text for internal errors whose detail must stay in the log.
func ErrorMessage(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Message
	default:
		return "internal error"
	}
}

// ErrorReason returns the reason of the first *Error in err's chain,
// ReasonNone when there is none.
func ErrorReason(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ReasonNone
}

// ErrorDetails returns the details of the first *Error in err's chain.
func ErrorDetails(err error) map[string]any {
	var e *Error
	if errors.As(err, &e) {
		return e.Details
	}
	return nil
}
