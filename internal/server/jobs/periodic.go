package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// maintenanceOpts are the insert options of the periodic maintenance jobs
// (retention, scrubs, nightly dreams): the default queue, a few attempts,
// and one job of the kind waiting at a time, since a queued one covers
// the next run too.
func maintenanceOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueDefault, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByState: waitingStates}}
}

// funcWorker works the jobs of kind T by calling run, each for at most
// timeout (river's default is a minute).
type funcWorker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	run     func(ctx context.Context) error
	timeout time.Duration
}

// Work calls run; an error has river retry the job.
func (w *funcWorker[T]) Work(ctx context.Context, _ *river.Job[T]) error { return w.run(ctx) }

// Timeout is the job's time limit.
func (w *funcWorker[T]) Timeout(*river.Job[T]) time.Duration { return w.timeout }

// addEvery registers run as the worker of args' kind and schedules args at
// start (on the leader) and every interval.
func addEvery[T river.JobArgs](q *Queue, every, timeout time.Duration, args T, run func(ctx context.Context) error) error {
	if err := AddWorker(q, &funcWorker[T]{run: run, timeout: timeout}); err != nil {
		return err
	}
	q.AddPeriodic(every, args, true)
	return nil
}
