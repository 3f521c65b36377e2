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

// Error is the one error type carrying a code from the closed set, a message
// safe to show to the caller and optional structured details for the body.
type Error struct {
	Code    string
	Message string
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

// ErrorDetails returns the details of the first *Error in err's chain.
func ErrorDetails(err error) map[string]any {
	var e *Error
	if errors.As(err, &e) {
		return e.Details
	}
	return nil
}
