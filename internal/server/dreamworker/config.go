// Package dreamworker runs dreams (issue 24) on the server: a river worker
// that starts one dream row, prepares its output store, runs the shared
// consolidation engine (internal/consolidate) with the server's model over
// that store through the one write path, and ends the row; a reaper that
// fails dreams whose replica died and re-enqueues pending ones; and the
// Runner that httpapi's POST /v1/dreams enqueues through.
//
// It is the only server package besides cmd/server that links
// internal/llm and the model SDKs.
//
// The error types a failed dream carries (error.type on the wire):
//   - "timeout": the dream ran longer than TEAMMEM_DREAM_TIMEOUT;
//   - "token_budget_exceeded": its usage reached TEAMMEM_DREAM_MAX_TOKENS;
//   - "model_error": the model provider failed (after its retries);
//   - "permission_error": its creator may no longer act (teammem.DreamActor:
//     the key revoked or expired, the user disabled or removed, the org
//     disabled, or read on the input or write on the target lost); checked
//     at start, before every model turn and before every write, so nothing
//     more is written once it stops;
//   - "internal_error": the server failed, or the replica running it
//     stopped (kill -9, crash) and the reaper found it.
package dreamworker

import (
	"context"
	"errors"
	"time"

	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/teammem"
)

// The error types of failed dreams (see the package doc).
const (
	ErrorTimeout     = teammem.DreamErrorTimeout
	ErrorTokenBudget = "token_budget_exceeded"
	ErrorModel       = "model_error"
	ErrorInternal    = teammem.DreamErrorInternal
	ErrorPermission  = teammem.DreamErrorPermission
)

// Defaults of Config's zero fields.
const (
	DefaultTimeout        = 30 * time.Minute
	DefaultHeartbeat      = 10 * time.Second
	DefaultSnooze         = 15 * time.Second
	DefaultOrgConcurrency = 1
)

// ModelFunc builds the model a dream names (one of Config.Models).
type ModelFunc func(id string) (llm.Model, error)

// Config tunes the dream worker; cmd/server fills it from TEAMMEM_LLM_*
// and TEAMMEM_DREAM_*.
type Config struct {
	// Models are the model ids a dream may name (TEAMMEM_DREAM_MODELS,
	// else TEAMMEM_LLM_MODEL); empty: no model, dreams are refused.
	Models []string
	// NewModel builds a model by id; required when Models is not empty.
	NewModel ModelFunc
	// MaxTokens is a dream's token budget, every kind counted
	// (TEAMMEM_DREAM_MAX_TOKENS); 0: none.
	MaxTokens int
	// Timeout bounds a dream's run (TEAMMEM_DREAM_TIMEOUT).
	Timeout time.Duration
	// OrgConcurrency is how many dreams of one org run at once
	// (TEAMMEM_DREAM_ORG_CONCURRENCY).
	OrgConcurrency int
	// MaxTurns bounds the model turns (consolidate.DefaultMaxTurns when 0).
	MaxTurns int
	// Heartbeat is how often a running dream's row is touched, between
	// turns and during a slow one.
	Heartbeat time.Duration
	// StaleAfter is how old a running dream's heartbeat gets before the
	// reaper fails it (TEAMMEM_DREAM_STALE_AFTER; 4 heartbeats when 0).
	StaleAfter time.Duration
	// ReapEvery is how often the leader runs the reaper (StaleAfter when
	// 0, so an orphan is found within two cutoffs).
	ReapEvery time.Duration
	// MaxStores is the org's store cap a create_new output store counts
	// against (TEAMMEM_MAX_STORES_PER_ORG); 0: none.
	MaxStores int
	// Snooze is how long a dream waits when its org runs its quota.
	Snooze time.Duration
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.StaleAfter <= 0 {
		c.StaleAfter = 4 * c.Heartbeat
	}
	if c.ReapEvery <= 0 {
		c.ReapEvery = c.StaleAfter
	}
	if c.Snooze <= 0 {
		c.Snooze = DefaultSnooze
	}
	if c.OrgConcurrency <= 0 {
		c.OrgConcurrency = DefaultOrgConcurrency
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// The reasons a run stops before the model is done; run.go maps them to
// the dream's end.
var (
	errCanceled = errors.New("dream canceled")
	errBudget   = errors.New("dream token budget exceeded")
	errTimeout  = errors.New("dream timed out")
	// errForbidden stops a run whose creator may no longer act
	// (teammem.DreamActor); execution.refusal says why.
	errForbidden = errors.New("dream creator may no longer act")
)

// budgetUsed is the usage counted against Config.MaxTokens: every token.
func budgetUsed(u llm.Usage) int {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheCreationTokens
}

// contextTimeout reports whether err is ctx's deadline (the dream's
// timeout) rather than a stop of the server.
func contextTimeout(ctx context.Context, err error) bool {
	return errors.Is(err, context.DeadlineExceeded) && errors.Is(context.Cause(ctx), errTimeout)
}
