package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/teammem"
)

const userColumns = `id, org_id, handle, role, disabled, created_at`

func scanUser(row pgx.Row) (teammem.User, error) {
	var u teammem.User
	var role string
	if err := row.Scan(&u.ID, &u.OrgID, &u.Handle, &role, &u.Disabled, &u.CreatedAt); err != nil {
		return u, interpret(err)
	}
	u.Role = teammem.Role(role)
	return u, nil
}

// UserCreate creates a user (ENotFound when the org does not exist).
func (db *DB) UserCreate(ctx context.Context, orgID int64, p teammem.UserCreateParams) (teammem.User, error) {
	return scanUser(db.pool.QueryRow(ctx, `INSERT INTO users (org_id, handle, role, created_at) VALUES ($1, $2, $3, $4)
		RETURNING `+userColumns, orgID, p.Handle, string(p.Role), now()))
}

// UserGet returns a user by id.
func (db *DB) UserGet(ctx context.Context, orgID, userID int64) (teammem.User, error) {
	return scanUser(db.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE org_id = $1 AND id = $2`, orgID, userID))
}

// UserGetByHandle returns a user by handle.
func (db *DB) UserGetByHandle(ctx context.Context, orgID int64, handle string) (teammem.User, error) {
	return scanUser(db.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE org_id = $1 AND handle = $2`, orgID, handle))
}

// UserList lists an org's users, oldest first.
func (db *DB) UserList(ctx context.Context, orgID int64) ([]teammem.User, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+userColumns+` FROM users WHERE org_id = $1 ORDER BY id`, orgID)
	return collect(rows, err, scanUser)
}

// UserUpdate changes a user's role or disabled flag.
func (db *DB) UserUpdate(ctx context.Context, orgID, userID int64, p teammem.UserUpdateParams) (teammem.User, error) {
	var role *string
	if p.Role != nil {
		r := string(*p.Role)
		role = &r
	}
	var u teammem.User
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if p.KeepOwner {
			// The org row's lock serializes changes to its users, and the
			// count below, a later statement, sees every one committed.
			if _, err := tx.Exec(ctx, `SELECT 1 FROM orgs WHERE id = $1 FOR UPDATE`, orgID); err != nil {
				return err
			}
		}
		var err error
		u, err = scanUser(tx.QueryRow(ctx, `UPDATE users SET role = coalesce($1, role), disabled = coalesce($2, disabled)
			WHERE org_id = $3 AND id = $4 RETURNING `+userColumns, role, p.Disabled, orgID, userID))
		if err != nil || !p.KeepOwner {
			return err
		}
		var owners int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM users WHERE org_id = $1 AND role = 'owner' AND NOT disabled`, orgID).Scan(&owners); err != nil {
			return err
		}
		return teammem.OwnerKept(u, owners)
	})
	return u, interpret(err)
}
