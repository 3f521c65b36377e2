package postgres

import (
	"context"
	"fmt"

	"github.com/teammem/teammem/internal/teammem"
)

// ScrubsResume rewrites every table scrubs_pending says an erasure still
// owes a rewrite, past the erasure's transaction, as the scrubber does
// (scrub.go), and clears each row it honoured. The scrubber's in-process
// attempt right after an erasure stays: it coalesces erasures and paces
// the rewrites within seconds, where the jobs queue's scrub job, which
// calls this, runs once a minute; the row is what survives a restart.
// EUnavailable when a rewrite had to wait (an older snapshot, a reader
// holding the table's lock): the row stays for the next call.
func (db *DB) ScrubsResume(ctx context.Context) error {
	if db.scrubs.paused.Load() {
		return nil // tests that need the tables as they are (export_test.go)
	}
	rows, err := db.pool.Query(ctx, `SELECT table_name, xid FROM scrubs_pending`)
	if err != nil {
		return fmt.Errorf("list pending scrubs: %w", interpret(err))
	}
	due := map[string]uint64{}
	for rows.Next() {
		var t string
		var xid int64
		if err := rows.Scan(&t, &xid); err != nil {
			rows.Close()
			return fmt.Errorf("list pending scrubs: %w", interpret(err))
		}
		if t == tableEntries || t == tableVersions || t == tableProposals || t == tableSessionNotes { // a later version's table waits for it
			due[t] = uint64(xid)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list pending scrubs: %w", interpret(err))
	}
	if len(due) == 0 {
		return nil
	}
	if left := db.scrubPass(ctx, due); len(left) > 0 {
		return teammem.Errorf(teammem.EUnavailable, "%d table(s) still hold erased bytes: older snapshots or readers kept their rewrite off; the next run retries", len(left))
	}
	return nil
}
