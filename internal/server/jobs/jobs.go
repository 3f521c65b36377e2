// Package jobs is the server's durable job queue: riverqueue/river on the
// store's own database, Postgres (riverpgxv5 on the store's pool) or SQLite
// (riversqlite on a connection of its own to the store's file). Jobs are
// rows, so they survive a restart; replicas sharing a database claim each
// job once; periodic jobs are scheduled by the elected leader only.
//
// The API is small on purpose: New opens a Queue for a store, AddWorker
// registers the worker of one kind of job, AddPeriodic schedules a job
// every interval, Start and Stop run it, Insert enqueues a job. Only this
// package links river's drivers; workers import river itself for
// river.Worker, river.Job and river.InsertOpts.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/teammem/teammem/internal/teammem"
)

// The queues a Queue works.
const (
	// QueueDefault holds the maintenance jobs: retention sweeps and scrubs.
	QueueDefault = river.QueueDefault
	// QueueDreams holds the dreams; its workers are Config.DreamWorkers.
	QueueDreams = "dreams"
)

// DefaultDreamWorkers is the dreams queue's workers when Config sets none.
const DefaultDreamWorkers = 1

// Config tunes a Queue; the zero value is the server's defaults.
type Config struct {
	// DreamWorkers is how many dream jobs this replica runs at once
	// (TEAMMEM_DREAM_WORKERS); 0 means DefaultDreamWorkers.
	DreamWorkers int
	// DefaultWorkers is how many jobs of QueueDefault this replica runs at
	// once; 0 means 2.
	DefaultWorkers int
	// FetchPoll is how often an idle replica looks for new jobs; 0 means
	// one second. SQLite has no notifications, so a job inserted on
	// SQLite waits up to this long; on Postgres river is woken at once.
	FetchPoll time.Duration
}

// Queue is the job queue of one server replica.
type Queue struct {
	client  client
	workers *river.Workers
	log     *slog.Logger
	close   func() error // the driver's connection, when Queue opened one
}

// client is what Queue uses of a river.Client, whatever its driver's
// transaction type.
type client interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	PeriodicJobs() *river.PeriodicJobBundle
}

// New opens the queue of st's database. It migrates nothing (Migrate
// does, where the store's migrations run); it fails when st is neither
// driver or the database cannot be opened. Register workers, then Start.
func New(ctx context.Context, st teammem.Store, log *slog.Logger, cfg Config) (*Queue, error) {
	if cfg.DreamWorkers < 0 || cfg.DefaultWorkers < 0 || cfg.FetchPoll < 0 {
		return nil, errors.New("jobs: workers and poll interval must not be negative")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	q := &Queue{workers: river.NewWorkers(), log: log}
	rc := &river.Config{
		// River reports every start, election and stop at info: the
		// server's log keeps its warnings and errors.
		Logger:  slog.New(minLevel{log.Handler(), slog.LevelWarn}).With("component", "jobs"),
		Workers: q.workers,
		Queues: map[string]river.QueueConfig{
			QueueDefault: {MaxWorkers: cmpOr(cfg.DefaultWorkers, 2)},
			QueueDreams:  {MaxWorkers: cmpOr(cfg.DreamWorkers, DefaultDreamWorkers)},
		},
		FetchPollInterval: cmpOr(cfg.FetchPoll, time.Second),
		// Every job kind is registered before Start; a replica of another
		// version may know kinds this one does not and works them itself.
		SkipUnknownJobCheck: true,
	}
	if rc.FetchPollInterval < river.FetchCooldownDefault {
		rc.FetchCooldown = rc.FetchPollInterval
	}
	var err error
	if q.client, q.close, err = open(ctx, st, rc); err != nil {
		return nil, err
	}
	return q, nil
}

func cmpOr[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}

// AddWorker registers w as the worker of the jobs of kind T. Register every
// worker before Start; a kind registered twice is an error.
func AddWorker[T river.JobArgs](q *Queue, w river.Worker[T]) error {
	if err := river.AddWorkerSafely(q.workers, w); err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	return nil
}

// AddPeriodic schedules args every interval, on whichever replica is the
// leader; with runOnStart the leader inserts one at once, too (at every
// election). Its worker must be registered. Jobs of one periodic schedule
// are inserted by one replica only, so each runs once per interval.
func (q *Queue) AddPeriodic(every time.Duration, args river.JobArgs, runOnStart bool) {
	q.PeriodicWithOpts(every, args, nil, runOnStart)
}

// PeriodicWithOpts is AddPeriodic with opts for every job it inserts (a
// queue, a priority, uniqueness).
func (q *Queue) PeriodicWithOpts(every time.Duration, args river.JobArgs, opts *river.InsertOpts, runOnStart bool) {
	q.client.PeriodicJobs().Add(river.NewPeriodicJob(river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) { return args, opts },
		&river.PeriodicJobOpts{RunOnStart: runOnStart}))
}

// Start begins working jobs and, on the leader, scheduling the periodic
// ones. ctx is the jobs' context: cancelling it cancels running jobs, so
// pass one that lives until Stop.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.client.Start(ctx); err != nil {
		return fmt.Errorf("jobs: start: %w", err)
	}
	return nil
}

// Stop stops fetching jobs and waits for the running ones to finish; when
// ctx ends first it cancels them (river retries them later) and waits a
// few seconds more for them to return. Then it closes what New opened. A
// Queue that was never started is just closed.
func (q *Queue) Stop(ctx context.Context) error {
	err := q.client.Stop(ctx)
	if err != nil && ctx.Err() != nil {
		q.log.Warn("jobs still running at shutdown are cancelled; they are retried later")
		hard, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err = q.client.StopAndCancel(hard)
		cancel()
	}
	if q.close != nil {
		err = errors.Join(err, q.close())
		q.close = nil
	}
	return err
}

// Insert enqueues args (opts may be nil: the kind's InsertOpts, else the
// default queue). It returns the job's id; a unique job already there is
// not inserted again and its id is returned.
func (q *Queue) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (int64, error) {
	res, err := q.client.Insert(ctx, args, opts)
	if err != nil {
		return 0, fmt.Errorf("jobs: insert %s: %w", args.Kind(), err)
	}
	return res.Job.ID, nil
}

// waitingStates are the states of a job that has not finished yet: a
// unique job is not inserted again while one of its kind is in them.
var waitingStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
	rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}

// minLevel is a handler that drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

// Enabled reports whether the level is at least min and h takes it.
func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

// WithAttrs keeps the filter on the derived handler.
func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}

// WithGroup keeps the filter on the derived handler.
func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}
