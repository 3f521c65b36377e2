package sqlite

import (
	"context"

	"github.com/teammem/teammem/internal/teammem"
)

const userColumns = `id, org_id, handle, role, disabled, created_at`

func scanUser(row rowScanner) (teammem.User, error) {
	var u teammem.User
	var created int64
	if err := row.Scan(&u.ID, &u.OrgID, &u.Handle, &u.Role, &u.Disabled, &created); err != nil {
		return u, interpret(err)
	}
	u.CreatedAt = fromMicros(created)
	return u, nil
}

// UserCreate creates a user.
func (db *DB) UserCreate(ctx context.Context, orgID int64, p teammem.UserCreateParams) (teammem.User, error) {
	var u teammem.User
	err := db.writing(ctx, orgID, func() (err error) {
		u, err = scanUser(db.w.QueryRowContext(ctx, `INSERT INTO users (org_id, handle, role, created_at) VALUES (?, ?, ?, ?) RETURNING `+userColumns,
			orgID, p.Handle, p.Role, micros(now())))
		return err
	})
	return u, err
}

// UserGet returns a user by id.
func (db *DB) UserGet(ctx context.Context, orgID, userID int64) (teammem.User, error) {
	return scanUser(db.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE org_id = ? AND id = ?`, orgID, userID))
}

// UserGetByHandle returns a user by handle.
func (db *DB) UserGetByHandle(ctx context.Context, orgID int64, handle string) (teammem.User, error) {
	return scanUser(db.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE org_id = ? AND handle = ?`, orgID, handle))
}

// UserList lists an org's users, oldest first.
func (db *DB) UserList(ctx context.Context, orgID int64) ([]teammem.User, error) {
	rows, err := db.query(ctx, `SELECT `+userColumns+` FROM users WHERE org_id = ? ORDER BY id`, orgID)
	return collect(rows, err, scanUser)
}

// UserUpdate changes a user's role or disabled flag.
func (db *DB) UserUpdate(ctx context.Context, orgID, userID int64, p teammem.UserUpdateParams) (teammem.User, error) {
	var role *string
	if p.Role != nil {
		r := string(*p.Role)
		role = &r
	}
	// The writer's IMMEDIATE transaction serializes this with every other
	// change to users, so the owner count below is final.
	tx, err := db.begin(ctx, orgID)
	if err != nil {
		return teammem.User{}, err
	}
	defer tx.Rollback()
	u, err := scanUser(tx.QueryRowContext(ctx, `UPDATE users SET role = coalesce(?, role), disabled = coalesce(?, disabled)
		WHERE org_id = ? AND id = ? RETURNING `+userColumns, role, p.Disabled, orgID, userID))
	if err != nil {
		return u, err
	}
	if p.KeepOwner {
		var owners int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE org_id = ? AND role = 'owner' AND disabled = 0`, orgID).Scan(&owners); err != nil {
			return u, interpret(err)
		}
		if err := teammem.OwnerKept(u, owners); err != nil {
			return u, err
		}
	}
	return u, interpret(tx.Commit())
}
