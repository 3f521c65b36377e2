package dreamworker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/teammem/teammem/internal/server/jobs"
	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/teammem"
)

// Args is the job of one dream. Jobs are unique by their args while one
// waits or runs, so enqueueing a dream again (the API, the reaper) is
// harmless.
type Args struct {
	DreamID string `json:"dream_id"`
	OrgID   int64  `json:"org_id"`
}

// Kind names the job in river's tables.
func (Args) Kind() string { return "teammem_dream" }

// liveStates are the job states in which a dream's job counts as live:
// another insert of the same dream is then a no-op.
var liveStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
	rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled}

// InsertOpts puts the job on the dreams queue, unique by dream while live.
// A job that fails (the database went away) is retried a few times; the
// dream row, not the job, says where the dream stands.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueDreams, MaxAttempts: 5,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: liveStates}}
}

// Worker is the river worker of dream jobs.
type Worker struct {
	river.WorkerDefaults[Args]
	store   teammem.Store
	writer  Writer
	cfg     Config
	log     *slog.Logger
	metrics *telemetry.DreamMetrics
}

// Timeout lets a dream run its own time limit (which ends it failed with
// "timeout") and a little more to record that, instead of river's minute.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return w.cfg.Timeout + 2*time.Minute }

// Work runs the dream of job, when it is still pending. A dream already
// final needs nothing but its release; a dream found running was started
// by an earlier attempt of this job whose process died: it fails with
// internal_error, since nothing of that run can be resumed. An org
// running its quota snoozes the job.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	d, err := w.store.DreamGet(ctx, job.Args.OrgID, job.Args.DreamID)
	switch {
	case teammem.ErrorCode(err) == teammem.ENotFound:
		return nil
	case err != nil:
		return err
	case d.Status.Final():
		return w.release(ctx, d)
	case d.Status == teammem.DreamRunning:
		return w.orphan(ctx, d)
	}
	return w.run(ctx, d)
}

// release records that no worker runs d any more.
func (w *Worker) release(ctx context.Context, d teammem.Dream) error {
	if d.ReleasedAt != nil {
		return nil
	}
	_, err := w.store.DreamRelease(ctx, d.OrgID, d.ID, w.cfg.Now())
	if teammem.ErrorCode(err) == teammem.EConflict {
		return nil // not final: whoever runs it releases it
	}
	return err
}

// orphanMessage is the error message of a dream whose replica died.
const orphanMessage = "the server running this dream stopped before it ended; create the dream again"

// orphan fails a running dream that no live worker runs, and releases it.
func (w *Worker) orphan(ctx context.Context, d teammem.Dream) error {
	now := w.cfg.Now()
	_, err := w.store.DreamFinish(ctx, d.OrgID, d.ID, teammem.DreamFinishParams{Status: teammem.DreamFailed, At: now,
		Usage: d.Usage, ErrorType: ErrorInternal, ErrorMessage: orphanMessage})
	if err != nil && teammem.ErrorCode(err) != teammem.EConflict {
		return err
	}
	if err == nil {
		w.count(teammem.DreamFailed, ErrorInternal, 0, teammem.DreamUsage{})
		w.log.WarnContext(ctx, "dream orphaned: its server stopped", "dream", d.ID)
	}
	d, err = w.store.DreamGet(ctx, d.OrgID, d.ID)
	if err != nil {
		return err
	}
	return w.release(ctx, d)
}

// count records a finished dream's metrics.
func (w *Worker) count(status teammem.DreamStatus, errType string, took time.Duration, u teammem.DreamUsage) {
	if w.metrics == nil {
		return
	}
	w.metrics.Finished.WithLabelValues(string(status), errType).Inc()
	if took > 0 {
		w.metrics.Duration.WithLabelValues(string(status)).Observe(took.Seconds())
	}
	for kind, n := range map[string]int64{"input": u.InputTokens, "output": u.OutputTokens,
		"cache_creation": u.CacheCreationInputTokens, "cache_read": u.CacheReadInputTokens} {
		w.metrics.Tokens.WithLabelValues(kind).Add(float64(n))
	}
}

// stopped reports whether err means the job's context ended: the server
// is stopping (or river's timeout hit).
func stopped(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
