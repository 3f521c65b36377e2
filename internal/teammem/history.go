package teammem

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// VersionRedactParams names the version VersionRedact erases and who
// erases it.
type VersionRedactParams struct {
	Key     string
	Version int64
	By      int64     // the user redacting
	At      time.Time // when; drivers keep microseconds
}

// PlanRedact decides whether version v of an entry may be redacted, given
// the entry's head (exists is false when the entry has no row at all: its
// tombstone was purged). It reports false, with no error, when v is
// already redacted: there is nothing left to erase.
//
// The content an entry holds now cannot be redacted from its history
// (EConflict): it would still be served by every pull and would come back
// with the next write anyway, so the caller must overwrite or delete the
// entry first. The rule compares content, not version numbers, so a
// restore that brought the same content back counts as live too. A
// deletion has no content (EInvalid).
func PlanRedact(v EntryVersion, head Entry, exists bool) (bool, error) {
	switch {
	case v.Redacted():
		return false, nil
	case v.Op == OpDelete:
		return false, Errorf(EInvalid, "version %d of %q records a deletion: it has no content to redact", v.Version, v.Key)
	case exists && !head.Deleted && head.Checksum == v.Checksum:
		return false, Errorf(EConflict, "version %d of %q holds the entry's current content: overwrite or delete the entry first, then redact the version",
			v.Version, v.Key).WithDetails(map[string]any{"key": v.Key, "version": v.Version, "live_version": head.Version})
	}
	return true, nil
}

// DefaultPurgeBatch is the most rows one purge transaction deletes: on
// SQLite every other writer, of every org, waits for that transaction.
const DefaultPurgeBatch = 1000

// VersionsPurgeParams says which versions of an org VersionsPurge deletes.
type VersionsPurgeParams struct {
	// Before, when not zero, deletes versions created before it.
	Before time.Time
	// MaxPerKey, when not 0, deletes all but the newest MaxPerKey versions
	// of each entry.
	MaxPerKey int
	// Batch is the most rows deleted per transaction (0: DefaultPurgeBatch).
	Batch int
}

// BatchSize returns Batch, or DefaultPurgeBatch when it is not set.
func (p VersionsPurgeParams) BatchSize() int {
	if p.Batch > 0 {
		return p.Batch
	}
	return DefaultPurgeBatch
}

// VersionsPurged counts what a purge deleted and in how many transactions.
type VersionsPurged struct {
	Versions int
	Batches  int
}

// Retention is the background sweep that bounds what the database keeps:
// tombstones past TombstoneRetention, and each org's entry history beyond
// its Limits (days and versions per entry).
type Retention struct {
	Store              Store
	Defaults           ServerDefaults
	TombstoneRetention time.Duration    // 0: tombstones are not purged
	Batch              int              // rows per purge transaction (0: DefaultPurgeBatch)
	Now                func() time.Time // nil: time.Now
}

// SweepResult counts what one sweep removed.
type SweepResult struct {
	Orgs       int // orgs whose history was swept
	Tombstones int
	Versions   int
	Batches    int // purge transactions of the history
}

// Sweep purges expired tombstones, then each org's history beyond its
// retention, then scrubs what it deleted (Store.HistoryScrub). An org that
// fails does not keep the others from being swept; the errors are
// returned together.
func (r *Retention) Sweep(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	var errs []error
	if r.TombstoneRetention > 0 {
		n, err := r.Store.TombstonesPurge(ctx, now.Add(-r.TombstoneRetention))
		if err != nil {
			errs = append(errs, fmt.Errorf("purge tombstones: %w", err))
		}
		res.Tombstones = n
	}
	orgs, err := r.Store.OrgList(ctx)
	if err != nil {
		return res, errors.Join(append(errs, fmt.Errorf("list orgs: %w", err))...)
	}
	for _, o := range orgs {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		p := o.HistoryPurge(r.Defaults, now)
		p.Batch = r.Batch
		n, err := r.Store.VersionsPurge(ctx, o.ID, p)
		res.Orgs++
		res.Versions += n.Versions
		res.Batches += n.Batches
		if err != nil {
			errs = append(errs, fmt.Errorf("purge history of org %s: %w", o.Slug, err))
		}
	}
	// Once for every org: on Postgres a scrub is a rewrite of the table.
	if res.Versions > 0 {
		if err := r.Store.HistoryScrub(ctx); err != nil {
			errs = append(errs, fmt.Errorf("scrub purged history: %w", err))
		}
	}
	return res, errors.Join(errs...)
}

// HistoryPurge returns the purge that applies the org's history retention
// at time now.
func (o Org) HistoryPurge(d ServerDefaults, now time.Time) VersionsPurgeParams {
	l := o.Limits(d)
	var p VersionsPurgeParams
	if l.HistoryRetentionDays > 0 {
		p.Before = now.Add(-time.Duration(l.HistoryRetentionDays) * 24 * time.Hour)
	}
	p.MaxPerKey = l.HistoryMaxVersions
	return p
}

// RestoreUpsert returns the write that restores version v of an entry: its
// content, as it was. A redacted version has no content left to restore
// (EGone), a deletion never had any (EInvalid).
func RestoreUpsert(v EntryVersion) (Upsert, error) {
	switch {
	case v.Redacted():
		by := ""
		if v.RedactedBy != "" {
			by = " by " + v.RedactedBy
		}
		return Upsert{}, Errorf(EGone, "version %d of %q was redacted%s on %s: its content is gone and cannot be restored",
			v.Version, v.Key, by, v.RedactedAt.UTC().Format(time.RFC3339)).
			WithDetails(map[string]any{"version": v.Version, "redacted_at": v.RedactedAt.UTC().Format(time.RFC3339Nano)})
	case v.Op == OpDelete:
		return Upsert{}, Errorf(EInvalid, "version %d of %q is a deletion; restore a version that has content", v.Version, v.Key)
	}
	return Upsert{Key: v.Key, Content: v.Content}, nil
}
