package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/server/store/dreamsql"
	"github.com/teammem/teammem/internal/teammem"
)

// dreamUpdate runs one transition (dreamsql.Update's sequence) in a
// transaction holding the dream's row lock, and for a start the org's,
// which orders every start of the org.
func (db *DB) dreamUpdate(ctx context.Context, orgID int64, id string, u dreamsql.Update) (d teammem.Dream, err error) {
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if u.MaxRunning > 0 {
			if _, err := tx.Exec(ctx, `SELECT 1 FROM orgs WHERE id = $1 FOR UPDATE`, orgID); err != nil {
				return interpret(err)
			}
		}
		if d, err = dreamGet(ctx, tx, orgID, id, " FOR UPDATE"); err != nil {
			return err
		}
		if u.MaxRunning > 0 && d.Status == teammem.DreamPending {
			var running int
			if err := tx.QueryRow(ctx, numbered(dreamsql.Running), orgID).Scan(&running); err != nil {
				return interpret(err)
			}
			if running >= u.MaxRunning {
				return teammem.DreamOrgBusy(u.MaxRunning)
			}
		}
		tag, err := tx.Exec(ctx, numbered(u.SQL()), u.Args(orgID, id)...)
		if err != nil {
			return interpret(err)
		}
		if tag.RowsAffected() == 0 {
			return errUnchanged{u.Miss(d)}
		}
		d, err = dreamGet(ctx, tx, orgID, id, "")
		return err
	})
	var un errUnchanged
	if errors.As(err, &un) {
		return d, un.err
	}
	return d, interpret(err)
}

// errUnchanged rolls back a transition whose condition did not hold and
// carries Miss's verdict (nil: an idempotent repeat) out of BeginFunc.
type errUnchanged struct{ err error }

func (e errUnchanged) Error() string { return "unchanged" }
