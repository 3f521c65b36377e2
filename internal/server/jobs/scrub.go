package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/teammem/teammem/internal/teammem"
)

// ScrubEvery is how often the leader works the store's pending scrubs.
const ScrubEvery = time.Minute

// Scrubs is what the scrub job needs of a store: teammem.Store's
// ScrubsResume.
type Scrubs interface {
	ScrubsResume(ctx context.Context) error
}

// ScrubArgs is the job that finishes the scrubs erasures still owe (those
// an old reader put off, or a restart cut short), recorded durably by the
// erasures themselves.
type ScrubArgs struct{}

// Kind names the job in river's tables.
func (ScrubArgs) Kind() string { return "teammem_scrub_resume" }

// InsertOpts keeps one scrub job waiting at a time.
func (ScrubArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueDefault, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByState: waitingStates}}
}

// scrubWorker runs its store's ScrubsResume.
type scrubWorker struct {
	river.WorkerDefaults[ScrubArgs]
	st  Scrubs
	log *slog.Logger
}

// Work runs the pending scrubs. A scrub that readers still hold off is not
// an error of the job: the record stays, and the next run, a minute later,
// tries again. A failing database is, and river retries it.
func (w *scrubWorker) Work(ctx context.Context, _ *river.Job[ScrubArgs]) error {
	err := w.st.ScrubsResume(ctx)
	if teammem.ErrorCode(err) == teammem.EUnavailable {
		w.log.DebugContext(ctx, "scrub put off", "reason", err.Error())
		return nil
	}
	return err
}

// Timeout lets a rewrite of a large table run longer than river's default
// minute.
func (w *scrubWorker) Timeout(*river.Job[ScrubArgs]) time.Duration { return 30 * time.Minute }

// AddScrubs registers the scrub job on q: at start (on the leader) and
// every ScrubEvery.
func AddScrubs(q *Queue, st Scrubs) error {
	if err := AddWorker(q, &scrubWorker{st: st, log: q.log}); err != nil {
		return err
	}
	q.AddPeriodic(ScrubEvery, ScrubArgs{}, true)
	return nil
}
