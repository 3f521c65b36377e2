package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// Failure codes that are not the server's: the request got no usable
// answer, or the failure was on this machine.
const (
	CodeUnreachable = "unreachable"  // no answer (UnreachableError)
	CodeRedirect    = "redirect"     // a 3xx (RedirectError)
	CodeBadResponse = "bad_response" // an unusable answer (BadResponseError)
	CodeCanceled    = "canceled"     // interrupted or out of time
	CodeLocal       = "local"        // a failure on this machine (disk, state)
)

// Failure describes a failed sync or request for people and scripts.
type Failure struct {
	// Code is the server's error code (teammem's closed set, such as
	// forbidden or too_large) when the server answered with one, else one
	// of the Code constants above.
	Code    string `json:"code"`
	Message string `json:"message"`
	// Status is the HTTP status of the answer; 0 when there was none.
	Status int `json:"status"`
}

// KeyRefused reports whether the server refused the API key: 401 (not
// valid, revoked, expired) or 403 (may not do this).
func (f Failure) KeyRefused() bool {
	return f.Code == teammem.EUnauthorized || f.Code == teammem.EForbidden
}

// NoServer reports whether no teammem server answered: nothing answered,
// or what answered was a redirect or not a teammem response.
func (f Failure) NoServer() bool {
	return f.Code == CodeUnreachable || f.Code == CodeRedirect || f.Code == CodeBadResponse
}

// FailureOf classifies err, an error of a request or of the work around
// it. The message names the cause in words a user can act on.
func FailureOf(err error) Failure {
	var ae *APIError
	var ue *UnreachableError
	var re *RedirectError
	var be *BadResponseError
	var ce *ConflictError
	switch {
	case errors.As(err, &ae):
		return Failure{Code: ae.Code(), Message: apiMessage(ae), Status: ae.Status}
	case errors.As(err, &ue):
		return Failure{Code: CodeUnreachable, Message: ue.Error()}
	case errors.As(err, &re):
		return Failure{Code: CodeRedirect, Message: re.Error(), Status: re.Status}
	case errors.As(err, &be):
		return Failure{Code: CodeBadResponse, Message: be.Error(), Status: be.Status}
	case errors.As(err, &ce):
		return Failure{Code: teammem.EConflict, Message: ce.Error() + "; edits keep coming in, sync again", Status: http.StatusConflict}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Failure{Code: CodeCanceled, Message: "interrupted before it finished"}
	}
	return Failure{Code: CodeLocal, Message: err.Error()}
}

// apiMessage says what an error answer means, most specific first.
func apiMessage(e *APIError) string {
	if d, ok := e.forbidden(); ok {
		switch d.Reason {
		case wire.ForbiddenReadOnly:
			return "the API key is read-only"
		case wire.ForbiddenRole:
			return fmt.Sprintf("the API key may not do this: its user is a %s (%s needs %s or above)", d.Role, d.Action, d.Needs)
		case wire.ForbiddenUserDisabled:
			return "the API key's user is disabled"
		case wire.ForbiddenOrgDisabled:
			return "the API key's organization is disabled"
		}
	}
	switch {
	case e.Status == http.StatusUnauthorized:
		msg := "the API key was refused (revoked, expired or wrong)"
		if e.Err != nil && e.Err.Message != "" {
			msg = "the API key was refused: " + e.Err.Message
		}
		return msg + "; run teammem login with a valid key"
	case e.Status == http.StatusForbidden && e.Err != nil:
		return "the API key may not do this: " + e.Err.Message
	case e.Status == http.StatusForbidden:
		return "the API key may not do this (403)"
	case e.Err != nil && e.Status >= 500:
		return fmt.Sprintf("the server failed: %s (%d %s)", e.Err.Message, e.Status, e.Err.Code)
	case e.Err != nil:
		return fmt.Sprintf("the server refused: %s (%d %s)", e.Err.Message, e.Status, e.Err.Code)
	}
	return e.Error()
}
