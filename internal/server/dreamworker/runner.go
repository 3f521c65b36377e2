package dreamworker

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/teammem/teammem/internal/server/jobs"
	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/teammem"
)

// Runner is the server's httpapi.DreamRunner: the allowed models, and the
// job queue a created dream is enqueued on. Build it with New before the
// API (which needs it), then Register it on the queue (which needs the
// API's Writer).
type Runner struct {
	cfg Config
	q   *jobs.Queue
	w   *Worker
}

// New returns a Runner of cfg; Enqueue fails until Register.
func New(cfg Config) *Runner { return &Runner{cfg: cfg.withDefaults()} }

// Models implements httpapi.DreamRunner.
func (r *Runner) Models() []string { return slices.Clone(r.cfg.Models) }

// Enqueue implements httpapi.DreamRunner: one river job per dream (a
// dream enqueued again while its job lives is not inserted twice).
func (r *Runner) Enqueue(ctx context.Context, d teammem.Dream) error {
	if r.q == nil {
		return errors.New("dreamworker: the runner is not registered on a job queue")
	}
	_, err := r.q.Insert(ctx, Args{DreamID: d.ID, OrgID: d.OrgID}, nil)
	return err
}

// RegisterParams are what the worker runs with.
type RegisterParams struct {
	Queue   *jobs.Queue
	Store   teammem.Store
	Writer  Writer
	Log     *slog.Logger
	Metrics *telemetry.DreamMetrics // nil: none recorded
}

// Register adds the dream worker and the reaper (at start and every
// Config.ReapEvery, on the leader) to p.Queue, before it starts.
func (r *Runner) Register(p RegisterParams) error {
	if len(r.cfg.Models) > 0 && r.cfg.NewModel == nil {
		return errors.New("dreamworker: models configured without a model constructor")
	}
	log := p.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r.q = p.Queue
	r.w = &Worker{store: p.Store, writer: p.Writer, cfg: r.cfg, log: log.With("component", "dreams"), metrics: p.Metrics}
	if err := jobs.AddWorker(p.Queue, river.Worker[Args](r.w)); err != nil {
		return err
	}
	if err := jobs.AddWorker(p.Queue, river.Worker[ReapArgs](&reaper{r: r})); err != nil {
		return err
	}
	p.Queue.AddPeriodic(r.cfg.ReapEvery, ReapArgs{}, true)
	return nil
}

// ReapArgs is the job of one reaper pass.
type ReapArgs struct{}

// Kind names the job in river's tables.
func (ReapArgs) Kind() string { return "teammem_dream_reap" }

// InsertOpts keeps one pass waiting at a time.
func (ReapArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueDefault, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByState: liveStates}}
}

// reaper fails the dreams whose replica died and enqueues the pending
// dreams again (an enqueue the API's create lost; a job discarded).
type reaper struct {
	river.WorkerDefaults[ReapArgs]
	r *Runner
}

// Work runs one pass.
func (rp *reaper) Work(ctx context.Context, _ *river.Job[ReapArgs]) error {
	return rp.r.Reap(ctx, rp.r.cfg.Now().Add(-rp.r.cfg.StaleAfter))
}

// reapBatch bounds the dreams one pass handles of each kind.
const reapBatch = 100

// Reap fails, with internal_error, every running dream whose heartbeat is
// older than cutoff, and enqueues every pending dream again. On SQLite,
// where one process owns the file, cmd/server calls it at start with the
// current time: every running dream then is an orphan of the process
// before.
func (r *Runner) Reap(ctx context.Context, cutoff time.Time) error {
	if r.w == nil {
		return errors.New("dreamworker: the runner is not registered on a job queue")
	}
	stale, err := r.w.store.DreamsStale(ctx, cutoff, reapBatch)
	if err != nil {
		return err
	}
	for _, d := range stale {
		if err := r.w.orphan(ctx, d); err != nil {
			return err
		}
	}
	pending, err := r.w.store.DreamsPending(ctx, reapBatch)
	if err != nil {
		return err
	}
	for _, d := range pending {
		if err := r.Enqueue(ctx, d); err != nil {
			return err
		}
	}
	return nil
}
