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
func (RetentionArgs) InsertOpts() river.InsertOpts { return maintenanceOpts() }

// AddRetention registers the retention sweep on q: at start (on the
// leader) and every RetentionEvery, as the server did before in process.
// A failed sweep is retried by river; a sweep of a large database may run
// up to 30 minutes.
func AddRetention(q *Queue, s Sweeper) error {
	return addEvery(q, RetentionEvery, 30*time.Minute, RetentionArgs{}, s.SweepRetention)
}
