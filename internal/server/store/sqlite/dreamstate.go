package sqlite

import (
	"context"

	"github.com/teammem/teammem/internal/server/store/dreamsql"
	"github.com/teammem/teammem/internal/teammem"
)

// dreamUpdate runs one transition (dreamsql.Update's sequence) in a write
// transaction, which SQLite's write lock orders against every other.
func (db *DB) dreamUpdate(ctx context.Context, orgID int64, id string, u dreamsql.Update) (teammem.Dream, error) {
	tx, err := db.begin(ctx, orgID)
	if err != nil {
		return teammem.Dream{}, err
	}
	defer tx.Rollback()
	d, err := dreamGet(ctx, tx, orgID, id)
	if err != nil {
		return d, err
	}
	if u.MaxRunning > 0 && d.Status == teammem.DreamPending {
		var running int
		if err := tx.QueryRowContext(ctx, dreamsql.Running, orgID).Scan(&running); err != nil {
			return d, interpret(err)
		}
		if running >= u.MaxRunning {
			return d, teammem.DreamOrgBusy(u.MaxRunning)
		}
	}
	res, err := tx.ExecContext(ctx, u.SQL(), dreamArgs(u.Args(orgID, id))...)
	if err != nil {
		return d, interpret(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return d, u.Miss(d)
	}
	if d, err = dreamGet(ctx, tx, orgID, id); err != nil {
		return d, err
	}
	return d, interpret(tx.Commit())
}
