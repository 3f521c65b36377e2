package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// RetentionEvery is how often the leader runs the retention sweep.
const RetentionEvery = time.Hour

// Sweeper runs one retention sweep (httpapi.Server.SweepRetention).
type Sweeper interface {
	SweepRetention(ctx context.Context) error
}

// RetentionArgs is the job of one retention sweep: expired tombstones and
// history beyond each org's retention.
type RetentionArgs struct{}

// Kind names the job in river's tables.
func (RetentionArgs) Kind() string { return "teammem_retention_sweep" }

// InsertOpts keeps one sweep waiting at a time: a sweep that is still
// queued covers the next one too.
func (RetentionArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueDefault, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByState: waitingStates}}
}

// retentionWorker runs the sweep of its Sweeper.
type retentionWorker struct {
	river.WorkerDefaults[RetentionArgs]
	sweep Sweeper
}

// Work runs one sweep; a failed one is retried by river.
func (w *retentionWorker) Work(ctx context.Context, _ *river.Job[RetentionArgs]) error {
	return w.sweep.SweepRetention(ctx)
}

// Timeout lets a sweep of a large database run longer than river's
// default minute.
func (w *retentionWorker) Timeout(*river.Job[RetentionArgs]) time.Duration { return 30 * time.Minute }

// AddRetention registers the retention sweep on q: at start (on the
// leader) and every RetentionEvery, as the server did before in process.
func AddRetention(q *Queue, s Sweeper) error {
	if err := AddWorker(q, &retentionWorker{sweep: s}); err != nil {
		return err
	}
	q.AddPeriodic(RetentionEvery, RetentionArgs{}, true)
	return nil
}
