package dreamworker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/teammem"
)

// run is one dream from pending to its end: start it (the org's quota
// checked by the store), prepare the output, run the engine, end the row
// and release it.
func (w *Worker) run(ctx context.Context, d teammem.Dream) error {
	p, input, entries, err := w.load(ctx, d)
	if err != nil {
		return err
	}
	base := make(map[string]string, len(entries))
	for _, e := range entries {
		base[e.Key] = e.Checksum
	}
	sp := teammem.DreamStartParams{At: w.cfg.Now(), MaxRunning: w.cfg.OrgConcurrency, Base: base}
	if d.Behavior == teammem.DreamUpdateExisting {
		sp.OutputSpaceID, sp.OutputStoreUID = input.Space.ID, input.Space.UID
	}
	d, err = w.store.DreamStart(ctx, d.OrgID, d.ID, sp)
	switch teammem.ErrorCode(err) {
	case "":
	case teammem.ERateLimited:
		return river.JobSnooze(w.cfg.Snooze)
	case teammem.EConflict: // canceled, or started elsewhere meanwhile
		if d.Status.Final() {
			return w.release(ctx, d)
		}
		return nil
	default:
		return err
	}
	if w.metrics != nil {
		w.metrics.Running.Inc()
		defer w.metrics.Running.Dec()
	}
	started := time.Now()
	e := &execution{w: w, d: d, p: p, input: input, entries: entries}
	out := e.execute(ctx)
	return w.end(d, out, time.Since(started))
}

// load reads what a dream runs as and on: its creator's principal and its
// input store with content.
func (w *Worker) load(ctx context.Context, d teammem.Dream) (teammem.Principal, teammem.MemoryStore, []teammem.Entry, error) {
	// A creator who may no longer act is refused by the execution's
	// first check, which fails the started dream; here only the store's
	// own errors count.
	p, err := teammem.DreamActor(ctx, w.store, d, w.cfg.Now())
	if err != nil && teammem.ErrorCode(err) != teammem.EForbidden {
		return p, teammem.MemoryStore{}, nil, err
	}
	input, err := w.store.MemoryStoreGet(ctx, d.OrgID, d.InputStoreUID)
	if err != nil {
		return p, input, nil, err
	}
	entries, err := w.store.EntriesList(ctx, d.OrgID, input.Space.ID, true)
	return p, input, entries, err
}

// outcome is how a run ended.
type outcome struct {
	status  teammem.DreamStatus // completed, failed, or canceled (by the API)
	errType string
	message string
	usage   teammem.DreamUsage
}

// end records o on the dream's row, its metrics, and releases it. It
// uses a context of its own: a stopping server still records the end.
func (w *Worker) end(d teammem.Dream, o outcome, took time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if o.status == teammem.DreamCanceled {
		// Already canceled by the API: only the usage is still the run's.
		if _, err := w.store.DreamProgress(ctx, d.OrgID, d.ID, teammem.DreamProgressParams{At: w.cfg.Now(), Usage: o.usage}); err != nil &&
			teammem.ErrorCode(err) != teammem.EConflict {
			return err
		}
	} else {
		_, err := w.store.DreamFinish(ctx, d.OrgID, d.ID, teammem.DreamFinishParams{Status: o.status, At: w.cfg.Now(),
			Usage: o.usage, ErrorType: o.errType, ErrorMessage: o.message})
		switch {
		case teammem.ErrorCode(err) == teammem.EConflict:
			o.status = teammem.DreamCanceled // canceled after the last turn
		case err != nil:
			return err
		}
	}
	w.count(o.status, o.errType, took, o.usage)
	w.log.InfoContext(ctx, "dream ended", "dream", d.ID, "status", string(o.status), "error_type", o.errType,
		"input_tokens", o.usage.InputTokens, "output_tokens", o.usage.OutputTokens)
	cur, err := w.store.DreamGet(ctx, d.OrgID, d.ID)
	if err != nil {
		return err
	}
	return w.release(ctx, cur)
}

// execution is one running dream.
type execution struct {
	w       *Worker
	d       teammem.Dream
	p       teammem.Principal
	input   teammem.MemoryStore
	entries []teammem.Entry

	// cancel stops the run with a cause (errCanceled, errForbidden).
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	used    llm.Usage // so far, for the heartbeat
	refusal error     // why the creator may no longer act, once refused
}

// dreamUsage converts the engine's usage into the dream's.
func dreamUsage(u llm.Usage) teammem.DreamUsage {
	return teammem.DreamUsage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens),
		CacheCreationInputTokens: int64(u.CacheCreationTokens), CacheReadInputTokens: int64(u.CacheReadTokens)}
}

// execute prepares the output, runs the engine under the dream's time
// limit with a heartbeat beside it, and says how it ended.
func (e *execution) execute(parent context.Context) outcome {
	cfg := e.w.cfg
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	e.cancel = cancel
	ctx, stop := context.WithTimeoutCause(ctx, cfg.Timeout, errTimeout)
	defer stop()
	go e.heartbeat(ctx, cancel)

	if _, err := e.actor(ctx); err != nil {
		return e.failure(parent, ctx, err, llm.Usage{})
	}
	tree, buffer, err := e.prepare(ctx)
	if err != nil {
		return e.failure(parent, ctx, err, llm.Usage{})
	}
	if cfg.NewModel == nil || !slices.Contains(cfg.Models, e.d.Model) {
		return outcome{status: teammem.DreamFailed, errType: ErrorModel, message: fmt.Sprintf(
			"the server does not run model %q any more: set TEAMMEM_LLM_PROVIDER and TEAMMEM_LLM_MODEL, or list it in TEAMMEM_DREAM_MODELS", e.d.Model)}
	}
	model, err := cfg.NewModel(e.d.Model)
	if err != nil {
		return outcome{status: teammem.DreamFailed, errType: ErrorModel, message: "the dream's model cannot be used: " + err.Error()}
	}
	sources, sessions, err := e.sources(ctx)
	if err != nil {
		return e.failure(parent, ctx, err, llm.Usage{})
	}
	maxTurns := cfg.MaxTurns
	if maxTurns <= 0 {
		maxTurns = consolidate.DefaultMaxTurns
	}
	r := consolidate.Runner{Model: model, Toolbox: consolidate.NewTreeToolbox(ctx, tree, sources),
		System: consolidate.StoreSystem, MaxTurns: maxTurns, BeforeTurn: e.beforeTurn}
	res, err := r.Run(ctx, consolidate.StorePrompt(consolidate.StoreInput{StoreName: e.input.Name, Now: cfg.Now(),
		Sessions: sessions, Instructions: e.d.Instructions, MaxTurns: maxTurns}))
	if err == nil && buffer != nil {
		if _, err = e.actor(ctx); err == nil {
			err = e.propose(ctx, buffer)
		}
	}
	if err != nil {
		return e.failure(parent, ctx, err, res.Usage)
	}
	return outcome{status: teammem.DreamCompleted, usage: dreamUsage(res.Usage)}
}

// failure maps the error that stopped a run to the dream's end.
func (e *execution) failure(parent, ctx context.Context, err error, used llm.Usage) outcome {
	o := outcome{status: teammem.DreamFailed, usage: dreamUsage(used)}
	cause := context.Cause(ctx)
	switch {
	case errors.Is(err, errCanceled) || errors.Is(cause, errCanceled):
		o.status = teammem.DreamCanceled
	case errors.Is(err, errForbidden) || errors.Is(cause, errForbidden):
		o.errType, o.message = ErrorPermission, teammem.ErrorMessage(e.refused())
	case errors.Is(err, errBudget):
		o.errType = ErrorTokenBudget
		o.message = fmt.Sprintf("the dream used %d tokens, its budget is %d (TEAMMEM_DREAM_MAX_TOKENS)", budgetUsed(used), e.w.cfg.MaxTokens)
	case errors.Is(cause, errTimeout) && parent.Err() == nil:
		o.errType = ErrorTimeout
		o.message = fmt.Sprintf("the dream ran longer than its time limit of %s (TEAMMEM_DREAM_TIMEOUT)", e.w.cfg.Timeout)
	case parent.Err() != nil:
		o.errType, o.message = ErrorInternal, "the server stopped while the dream ran; create the dream again"
	case isModelError(err):
		o.errType, o.message = ErrorModel, "the model failed: "+err.Error()
	default:
		e.w.log.Error("dream failed", "dream", e.d.ID, "error", err.Error())
		o.errType, o.message = ErrorInternal, "the dream failed on the server: "+teammem.ErrorMessage(err)
	}
	return o
}

// isModelError reports whether err came from the model provider.
func isModelError(err error) bool {
	var le *llm.Error
	return errors.As(err, &le) || errors.Is(err, llm.ErrNotConfigured)
}

// beforeTurn runs before every model call: the heartbeat with the usage
// so far (which also reads a cancel), then the token budget.
func (e *execution) beforeTurn(ctx context.Context, _ int, used llm.Usage) error {
	e.mu.Lock()
	e.used = used
	e.mu.Unlock()
	if err := e.progress(ctx); err != nil {
		return err
	}
	if _, err := e.actor(ctx); err != nil {
		return err
	}
	if m := e.w.cfg.MaxTokens; m > 0 && budgetUsed(used) >= m {
		return errBudget
	}
	return nil
}

// progress records the heartbeat and usage so far; errCanceled when the
// API canceled the dream.
func (e *execution) progress(ctx context.Context) error {
	e.mu.Lock()
	u := dreamUsage(e.used)
	e.mu.Unlock()
	d, err := e.w.store.DreamProgress(ctx, e.d.OrgID, e.d.ID, teammem.DreamProgressParams{At: e.w.cfg.Now(), Usage: u})
	if err != nil && teammem.ErrorCode(err) != teammem.EConflict {
		return err
	}
	if d.Status == teammem.DreamCanceled {
		return errCanceled
	}
	return nil
}

// heartbeat keeps the row alive while a slow model turn runs, and stops
// the run at once (cancel) when the dream was canceled meanwhile.
func (e *execution) heartbeat(ctx context.Context, cancel context.CancelCauseFunc) {
	t := time.NewTicker(e.w.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if errors.Is(e.progress(ctx), errCanceled) {
				cancel(errCanceled)
				return
			}
		}
	}
}

// actor re-checks that the dream's creator may still act
// (teammem.DreamActor) and returns the creator's principal as it is now,
// which the run then writes as. Refused, it stops the run: the refusal is
// kept for the dream's error and the run's context ends with errForbidden,
// so neither another model turn nor another write follows.
func (e *execution) actor(ctx context.Context) (teammem.Principal, error) {
	p, err := teammem.DreamActor(ctx, e.w.store, e.d, e.w.cfg.Now())
	switch {
	case teammem.ErrorCode(err) == teammem.EForbidden:
		e.mu.Lock()
		e.refusal = err
		e.mu.Unlock()
		e.cancel(errForbidden)
		return p, fmt.Errorf("%w: %s", errForbidden, teammem.ErrorMessage(err))
	case err != nil:
		return p, err
	}
	e.mu.Lock()
	e.p = p
	e.mu.Unlock()
	return p, nil
}

// refused returns why the creator may no longer act, nil while it may.
func (e *execution) refused() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.refusal
}
