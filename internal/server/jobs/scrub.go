package jobs

import (
	"context"
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
func (ScrubArgs) InsertOpts() river.InsertOpts { return maintenanceOpts() }

// AddScrubs registers the scrub job on q: at start (on the leader) and
// every ScrubEvery. A scrub that readers still hold off is not an error
// of the job: the record stays, and the next run tries again. A failing
// database is, and river retries it. A rewrite of a large table may run
// up to 30 minutes.
func AddScrubs(q *Queue, st Scrubs) error {
	return addEvery(q, ScrubEvery, 30*time.Minute, ScrubArgs{}, func(ctx context.Context) error {
		err := st.ScrubsResume(ctx)
		if teammem.ErrorCode(err) == teammem.EUnavailable {
			q.log.DebugContext(ctx, "scrub put off", "reason", err.Error())
			return nil
		}
		return err
	})
}
