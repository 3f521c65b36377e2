package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Erasures record the scrub they are owed (scrubs_pending, one row 'wal'
// counting them) in their own transaction, so a scrub that readers put
// off, or that a restart cut short, still runs: ScrubsResume, which the
// jobs queue's scrub job calls every minute, scrubs while the row is
// there. The in-process attempt right after each erasure (scrub.go) stays:
// it finishes within the erasure's call when no reader is in the way, and
// its retries within milliseconds after the last old reader ends, where
// the job runs once a minute. A finished scrub deletes the row unless an
// erasure counted after it began raised it.

// scrubRecord records in tx, an erasure's transaction, that a scrub is owed.
func scrubRecord(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO scrubs_pending (table_name, xid) VALUES ('wal', 1)
		ON CONFLICT (table_name) DO UPDATE SET xid = xid + 1`)
	if err != nil {
		return fmt.Errorf("record the scrub: %w", interpret(err))
	}
	return nil
}

// scrubsOwed returns the count of erasures owed a scrub, 0 for none.
func (db *DB) scrubsOwed(ctx context.Context) (int64, error) {
	var n int64
	err := db.queryRow(ctx, `SELECT xid FROM scrubs_pending WHERE table_name = 'wal'`).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read pending scrubs: %w", interpret(err))
	}
	return n, nil
}

// ScrubsResume runs one scrub when an erasure's is still owed (see the top
// of this file). EUnavailable when readers kept it from finishing: the row
// stays for the next call, and the scrubber retries by itself meanwhile.
func (db *DB) ScrubsResume(ctx context.Context) error {
	owed, err := db.scrubsOwed(ctx)
	if err != nil || owed == 0 {
		return err
	}
	return db.HistoryScrub(ctx)
}
