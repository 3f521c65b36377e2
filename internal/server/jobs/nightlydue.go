package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/teammem/teammem/internal/teammem"
)

// due reports whether the team space sp of org passes the nightly gates
// at now (its minute has come already): no dream of it pending or
// running, the last one at least NightlyGap ago, and at least the org's
// team_dream_min_writes versions written into it since (since ever, when
// it never had a dream).
func (n *Nightly) due(ctx context.Context, org teammem.Org, sp teammem.Space, now time.Time) (bool, error) {
	busy, err := n.findDream(ctx, org.ID, sp.ID, []teammem.DreamStatus{teammem.DreamPending, teammem.DreamRunning})
	if err != nil || busy != nil {
		return false, err
	}
	last, err := n.findDream(ctx, org.ID, sp.ID, nil)
	if err != nil {
		return false, err
	}
	var since time.Time
	if last != nil {
		if now.Sub(last.CreatedAt) < NightlyGap {
			return false, nil
		}
		since = last.CreatedAt
	}
	min := org.Settings.TeamDreamMinWritesOrDefault()
	vs, err := n.cfg.Store.MemoryVersionsList(ctx, org.ID, sp.ID, teammem.MemoryVersionFilter{CreatedGTE: &since, Limit: min})
	if err != nil {
		return false, err
	}
	return len(vs) >= min, nil
}

// findDream returns the newest dream of org whose input is space, among
// those in statuses (none: any), archived or not; nil when there is none.
func (n *Nightly) findDream(ctx context.Context, orgID, space int64, statuses []teammem.DreamStatus) (*teammem.Dream, error) {
	f := teammem.DreamFilter{IncludeArchived: true, Statuses: statuses, Limit: 100}
	for {
		page, err := n.cfg.Store.DreamList(ctx, orgID, f)
		if err != nil {
			return nil, err
		}
		for i := range page {
			if page[i].InputSpaceID == space {
				return &page[i], nil
			}
		}
		if len(page) < f.Limit {
			return nil, nil
		}
		f.AfterCreatedAt, f.AfterID = page[len(page)-1].CreatedAt, page[len(page)-1].ID
	}
}

// create creates the nightly dream of repo r's team store for the date of
// now, audits it and enqueues it. A dream of that id already there (the
// job ran twice, or on two replicas) is no error: the other run made it.
func (n *Nightly) create(ctx context.Context, org teammem.Org, r teammem.RepoSummary, owner teammem.User, now time.Time) error {
	d := teammem.Dream{ID: NightlyDreamID(org.ID, r.Team.ID, now.Format(time.DateOnly)), OrgID: org.ID,
		InputSpaceID: r.Team.ID, InputStoreUID: r.Team.UID, Model: n.cfg.Models[0], ModelSpeed: teammem.DreamSpeedStandard,
		Behavior: teammem.DreamCreateNew, CreatedAt: now.Truncate(time.Microsecond), CreatorUserID: owner.ID}
	d, err := n.cfg.Store.DreamCreate(ctx, org.ID, d)
	if teammem.ErrorCode(err) == teammem.EConflict {
		return nil
	}
	if err != nil {
		return err
	}
	if err := n.cfg.Store.AuditAppend(context.WithoutCancel(ctx), org.ID, teammem.AuditEvent{ActorID: owner.ID, Action: "dream.created",
		Repo: r.Slug, Target: d.ID, Details: map[string]any{"api": "dream", "nightly": true, "input": d.InputStoreID(),
			"output_behavior": string(d.Behavior), "model": d.Model, "sessions": 0}}); err != nil {
		n.cfg.Log.ErrorContext(ctx, "audit append failed", "action", "dream.created", "error", err.Error())
	}
	if n.cfg.Created != nil {
		n.cfg.Created(org)
	}
	n.cfg.Log.InfoContext(ctx, "nightly dream created", "org", org.Slug, "repo", r.Slug, "dream", d.ID)
	if err := n.cfg.Enqueuer.Enqueue(ctx, d); err != nil {
		// The row is the truth: the runner's scan of pending dreams
		// enqueues it again.
		n.cfg.Log.ErrorContext(ctx, "enqueue nightly dream failed", "dream", d.ID, "error", err.Error())
	}
	return nil
}

// NightlyArgs is the job that creates the nightly dreams due.
type NightlyArgs struct{}

// Kind names the job in river's tables.
func (NightlyArgs) Kind() string { return "teammem_nightly_dreams" }

// InsertOpts keeps one nightly job waiting at a time.
func (NightlyArgs) InsertOpts() river.InsertOpts { return maintenanceOpts() }

// AddNightly registers the nightly dreams on q: at start (on the leader)
// and every NightlyEvery. A failed run is retried by river, and the next
// run comes NightlyEvery later anyway.
func AddNightly(q *Queue, n *Nightly) error {
	return addEvery(q, NightlyEvery, 10*time.Minute, NightlyArgs{}, n.Run)
}
