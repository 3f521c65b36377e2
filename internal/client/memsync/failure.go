package memsync

import (
	"errors"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/teammem"
)

// The steps of a sync, in StepError.Step.
const (
	StepPull = "pull"
	StepPush = "push"
)

// StepError is a sync of one scope that failed in one step.
type StepError struct {
	Step  string // StepPull or StepPush
	Scope teammem.Scope
	Err   error
}

// Error reads "push team: <cause>".
func (e *StepError) Error() string { return e.Step + " " + string(e.Scope) + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *StepError) Unwrap() error { return e.Err }

// FailureOf classifies the error of a sync as apiclient.FailureOf does a
// request's, but a failure on this machine is described by its cause alone,
// never the step (the caller says which step failed).
func FailureOf(err error) apiclient.Failure {
	var se *StepError
	if errors.As(err, &se) {
		err = se.Err
	}
	return apiclient.FailureOf(err)
}
